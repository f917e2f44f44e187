"""Forty broken verb forms (seed 1) among those that move the shipped detector by 1 logit or
less, each with its change in context, to read by eye.

    python docs/experiments/2026-12-03-verb-form-detector/quiet_forms.py
"""

import difflib
import random
import sys
from pathlib import Path

from evaluator.features.encoder_pass import encode_distinct

sys.path.insert(0, str(Path(__file__).parent))
from verb_form_kinds import corpus_pairs  # noqa: E402

pairs = corpus_pairs()["verb_form"]
encoded = encode_distinct(
    [t for pair in pairs for t in pair], keep_tokens=False, keep_disfluency=True
)
quiet = [(ref, gen) for ref, gen in pairs if encoded[gen].disfluency - encoded[ref].disfluency <= 1]
print(f"{len(quiet)} of {len(pairs)} broken forms move the detector by 1 or less")
for ref, gen in random.Random(1).sample(quiet, 40):
    a, b = ref.split(), gen.split()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if op != "equal":
            print(f"- {' '.join(a[max(0, i1 - 4) : i2 + 3])}  ->  {' '.join(b[j1:j2])}")
