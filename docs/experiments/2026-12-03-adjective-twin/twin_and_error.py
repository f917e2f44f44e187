"""A base on the same texts rewritten two ways: an adjective traded for a near-synonym on the
same side of its scale (NoContr/same_value_adjective, harmless) and one swapped across the
scale (AttrErr, the error). Texts: a seeded sample of the synthetic corpora's texts
(training-side material), each rule applied where it can be.

    python docs/experiments/2026-12-03-adjective-twin/twin_and_error.py [SAMPLE] [CHECKPOINT]
"""

import random
import sys
from collections import Counter

from evaluator import Evaluator
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.resources import data_dir, load_spacy
from synth.perturb.attribute import same_value_adjective, swap_attribute
from synth.perturb.base import Context

sample = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
checkpoint = sys.argv[2] if len(sys.argv) > 2 else "checkpoints/mismatch-base"
texts = [
    record["text"]
    for name in ("coco", "multi30k", "squad", "webnlg")
    for _, record in iter_jsonl(data_dir() / "corpora" / f"{name}.jsonl.gz")
]
docs = list(load_spacy().pipe(random.Random(13).sample(texts, sample), batch_size=64))
evaluator = Evaluator.from_pretrained(checkpoint)
for rule in (same_value_adjective, swap_attribute):
    pairs = [
        (doc.text, change.text)
        for k, doc in enumerate(docs)
        if (change := rule(doc, Context(rng=random.Random(k)))) is not None
        and (rule is not swap_attribute or change.rule == "AttrErr/scale")
    ]
    read = evaluator.predict(
        [[ref] for ref, _ in pairs], [gen for _, gen in pairs], progress=False, spans=False
    )
    nocontr = sum(p.score >= 0.5 for p in read)
    top = Counter(max(p.mismatch, key=p.mismatch.get) for p in read)
    print(
        f"{rule.__name__}: {len(pairs)} of {sample} texts rewritten; read as NoContr "
        f"(P(NoContr) >= 0.5) {nocontr} ({nocontr / max(len(pairs), 1):.1%}); most likely "
        f"class {dict(top.most_common(4))}"
    )
