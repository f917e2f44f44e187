"""A changed verb (synth's PredErr/wrong_verb) on the probe texts, split by whether the verb
was in the progressive ("is cutting" -> "is slicing"): the share each base given reads as
NoContr. The SICK contradictions the twin bases let through are of this kind.

    python docs/experiments/2026-12-03-verb-form-detector/changed_verbs.py CHECKPOINT...
"""

import random
import sys
from pathlib import Path

import numpy as np

from evaluator import Evaluator
from synth.perturb.base import Context
from synth.perturb.predicate import wrong_verb

sys.path.insert(0, str(Path(__file__).parent))
from verb_form_kinds import probe_docs  # noqa: E402

docs = probe_docs()
pairs, progressive = [], []
for k, doc in enumerate(docs):
    change = wrong_verb(doc, Context(rng=random.Random(k), other_doc=lambda: None))
    if change is None:
        continue
    pairs.append((doc.text, change.text))
    progressive.append(any(t.idx == change.span[0] and t.tag_ == "VBG" for t in doc))
progressive = np.array(progressive)
for checkpoint in sys.argv[1:]:
    read = Evaluator.from_pretrained(checkpoint).predict(
        [[ref] for ref, _ in pairs], [gen for _, gen in pairs], progress=False, spans=False
    )
    nocontr = np.array([reading.score for reading in read]) >= 0.5
    print(
        f"{checkpoint}: {nocontr.mean():.1%} of {len(pairs)} read as NoContr; an -ing verb "
        f"{nocontr[progressive].mean():.1%} of {progressive.sum()}, another "
        f"{nocontr[~progressive].mean():.1%} of {(~progressive).sum()}"
    )
