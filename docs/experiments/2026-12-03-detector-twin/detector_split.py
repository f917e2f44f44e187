"""The disfluency detector on 3,000 corpus texts (seed 13) rewritten two ways: the simple-aspect
twin (NoContr/simple_aspect, harmless) and a broken verb form (GramErr/verb_form). Prints the
detector's `disfluency` feature (gen's logit minus the text's) per rewrite and the AUROC of
broken against harmless. The texts are training-side material (the synthetic corpora). The
detector read is the one at checkpoints/disfluency-detector of the checkout on PYTHONPATH.

    python docs/experiments/2026-12-03-detector-twin/detector_split.py [SAMPLE]
"""

import random
import sys

import numpy as np
from sklearn.metrics import roc_auc_score

from evaluator.features.encoder_pass import encode_distinct
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.resources import data_dir, load_spacy
from synth.perturb.base import Context
from synth.perturb.grammar import verb_form
from synth.perturb.paraphrase_syntax import progressive_to_simple

sample = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
texts = [
    record["text"]
    for name in ("coco", "multi30k", "squad", "webnlg")
    for _, record in iter_jsonl(data_dir() / "corpora" / f"{name}.jsonl.gz")
]
docs = list(load_spacy().pipe(random.Random(13).sample(texts, sample), batch_size=64))
rewrites = {
    rule.__name__: [
        (doc.text, change.text)
        for k, doc in enumerate(docs)
        if (change := rule(doc, Context(rng=random.Random(k)))) is not None
    ]
    for rule in (progressive_to_simple, verb_form)
}
encoded = encode_distinct(
    [text for pairs in rewrites.values() for pair in pairs for text in pair],
    keep_tokens=False,
    keep_disfluency=True,
)
diffs = {
    name: np.array([encoded[gen].disfluency - encoded[ref].disfluency for ref, gen in pairs])
    for name, pairs in rewrites.items()
}
for name, diff in diffs.items():
    print(
        f"{name}: {len(diff)} texts, feature mean {diff.mean():+.2f}, above 0: {(diff > 0).mean():.1%}"
    )
harmless, broken = diffs["progressive_to_simple"], diffs["verb_form"]
labels = [0] * len(harmless) + [1] * len(broken)
print(f"AUROC broken vs harmless: {roc_auc_score(labels, np.r_[harmless, broken]):.3f}")
