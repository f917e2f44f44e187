"""A base on the same texts rewritten two ways: an adjective traded for one of the same value
(NoContr/same_value_adjective, harmless) and one swapped across its scale (AttrErr/scale, the
error), the latter for every scale and for the words the harmless trade takes. Texts: a
seeded sample of the synthetic corpora's texts (training-side material), each rule applied
where it can be.

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
from synth.perturb.lexicon_attributes import SAME_VALUE_ADJECTIVES

sample = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
checkpoint = sys.argv[2] if len(sys.argv) > 2 else "checkpoints/mismatch-base"
texts = [
    record["text"]
    for name in ("coco", "multi30k", "squad", "webnlg")
    for _, record in iter_jsonl(data_dir() / "corpora" / f"{name}.jsonl.gz")
]
docs = list(load_spacy().pipe(random.Random(13).sample(texts, sample), batch_size=64))
evaluator = Evaluator.from_pretrained(checkpoint)
changes = {
    rule: [(doc.text, rule(doc, Context(rng=random.Random(k)))) for k, doc in enumerate(docs)]
    for rule in (same_value_adjective, swap_attribute)
}
rewrites = {
    "same_value_adjective": [(t, c.text) for t, c in changes[same_value_adjective] if c],
    "AttrErr/scale": [
        (t, c.text) for t, c in changes[swap_attribute] if c and c.rule == "AttrErr/scale"
    ],
    "AttrErr/scale of the same words": [
        (t, c.text)
        for t, c in changes[swap_attribute]
        if c and c.rule == "AttrErr/scale" and c.old.lower() in SAME_VALUE_ADJECTIVES
    ],
}
for name, pairs in rewrites.items():
    read = evaluator.predict(
        [[ref] for ref, _ in pairs], [gen for _, gen in pairs], progress=False, spans=False
    )
    nocontr = sum(p.score >= 0.5 for p in read)
    top = Counter(max(p.mismatch, key=p.mismatch.get) for p in read)
    print(
        f"{name}: {len(pairs)} of {sample} texts rewritten; read as NoContr "
        f"(P(NoContr) >= 0.5) {nocontr} ({nocontr / max(len(pairs), 1):.1%}); most likely "
        f"class {dict(top.most_common(4))}"
    )
