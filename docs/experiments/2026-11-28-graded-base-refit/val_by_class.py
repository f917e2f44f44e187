"""Synthetic val accuracy of base checkpoints per class and per error base (ref, paraphrase,
rewrite chain): where a continued base loses near-copy errors.

PYTHONPATH=. python val_by_class.py PAIRS_DIR FEATURES_DIR CHECKPOINT [CHECKPOINT ...]
(FEATURES_DIR: what `mismatch features` wrote for PAIRS_DIR, with every column the
checkpoints read.)"""

import json
import sys
from pathlib import Path

import pandas as pd

from evaluator.hub import load
from evaluator.training.continued import _val_logits, load_split_inputs

pairs_dir, features_dir = Path(sys.argv[1]), Path(sys.argv[2])
frame = pd.read_parquet(pairs_dir / "val.parquet")
frame["base"] = [json.loads(d).get("base", "-") if d else "-" for d in frame["detail"]]
names = sys.argv[3:]
for path in names:
    checkpoint = load(path)
    val = load_split_inputs(checkpoint, pairs_dir, features_dir)["val"]
    frame[path] = (_val_logits(checkpoint.model, val).argmax(-1) == val.labels).numpy()
pd.set_option("display.width", 250)
pd.set_option("display.max_columns", None)
pd.set_option("display.max_rows", 200)
print(f"{len(frame)} val pairs; accuracy", frame[names].mean().round(4).to_dict())
print(frame.groupby("label")[names].mean().round(4))
by_base = frame.groupby(["label", "base"])
print(by_base[names].mean().round(4).assign(pairs=by_base.size()))
