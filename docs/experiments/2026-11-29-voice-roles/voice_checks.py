"""The SICK TRAIN pairs of the real val split whose voice changes with the roles kept
(`voice_changed` = 1 in the feature cache run.sh writes), read by each checkpoint: correct
ones (NoContr) and errors built on such a base, each counted as read as NoContr
(P(NoContr) >= 0.5, `predict_proba`).

    python voice_checks.py REAL_VAL_PARQUET VAL_FEATURES_PARQUET NAME=CKPT ...
"""

import sys

import pandas as pd

from evaluator.cli.bench.realtext import THRESHOLD
from evaluator.hub import load
from evaluator.inference import predict_proba

val = pd.read_parquet(sys.argv[1])
voice_changed = pd.read_parquet(sys.argv[2], columns=["id", "voice_changed"])
checkpoints = dict(arg.split("=", 1) for arg in sys.argv[3:])
pairs = val.merge(voice_changed, on="id", validate="one_to_one")
voice = pairs[(pairs.source == "sick") & (pairs.voice_changed == 1)]
correct = voice[voice.label == "NoContr"]
errors = voice[voice.label != "NoContr"]
print(
    f"{len(voice)} SICK val pairs with voice_changed = 1: {len(correct)} NoContr, {len(errors)} errors"
)
print("| checkpoint | correct read as NoContr | errors read as NoContr |")
print("|---|---|---|")
for name, checkpoint in checkpoints.items():
    model = load(checkpoint)
    read = [
        int((predict_proba(model, list(f.ref), list(f.gen))[:, 0] >= THRESHOLD).sum())
        for f in (correct, errors)
    ]
    print(f"| {name} | {read[0]} / {len(correct)} | {read[1]} / {len(errors)} |")
