"""Training-side checks of this record: the unnamed contradictions (`mismatch adapt unnamed`)
of each split, read by each checkpoint.

    python unnamed_checks.py UNNAMED_DIR NAME=CKPT ...

Each checkpoint is loaded once and reads both splits (`predict_proba`, what `mismatch
predict` reports); the table gives, per split, how many pairs read as NoContr (P(NoContr) >=
the bench's threshold).
"""

import sys
from pathlib import Path

import pandas as pd

from evaluator.cli.bench.realtext import THRESHOLD
from evaluator.hub import load
from evaluator.inference import predict_proba

unnamed = Path(sys.argv[1])
checkpoints = dict(arg.split("=", 1) for arg in sys.argv[2:])
splits = {split: pd.read_parquet(unnamed / f"{split}.parquet") for split in ("train", "val")}

print("| checkpoint | train pairs read as NoContr | val pairs read as NoContr |")
print("|---|---|---|")
for label, checkpoint in checkpoints.items():
    model = load(checkpoint)
    cells = []
    for frame in splits.values():
        read = predict_proba(model, list(frame.ref), list(frame.gen))[:, 0] >= THRESHOLD
        cells.append(f"{read.sum()} / {len(read)} ({100 * read.mean():.1f} %)")
    print(f"| {label} | {' | '.join(cells)} |")
