"""Training-side checks of this record: the unnamed contradictions (`mismatch adapt unnamed`)
of each split, read by each checkpoint.

    python unnamed_checks.py UNNAMED_DIR OUT_DIR NAME=CKPT ...

Each checkpoint reads both splits in one `mismatch predict --no-spans`; the table gives, per
split, how many pairs read as NoContr (P(NoContr) >= the bench's threshold).
"""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from evaluator.cli.bench.realtext import THRESHOLD
from mismatch_core.jsonl import iter_jsonl

unnamed, out = Path(sys.argv[1]), Path(sys.argv[2])
checkpoints = dict(arg.split("=", 1) for arg in sys.argv[3:])
out.mkdir(parents=True, exist_ok=True)
splits = {split: pd.read_parquet(unnamed / f"{split}.parquet") for split in ("train", "val")}
pairs = out / "unnamed.jsonl"
with open(pairs, "w") as f:
    for split, frame in splits.items():
        for r in frame.itertuples():
            f.write(json.dumps({"id": f"{split}:{r.id}", "ref": r.ref, "gen": r.gen}) + "\n")

print("| checkpoint | train pairs read as NoContr | val pairs read as NoContr |")
print("|---|---|---|")
for label, checkpoint in checkpoints.items():
    predicted = out / f"unnamed.{label}.jsonl"
    subprocess.run(
        ["mismatch", "predict", "--input", str(pairs), "--checkpoint", checkpoint, "--no-spans",
         "--output", str(predicted)],
        check=True, capture_output=True,
    )  # fmt: skip
    read = {split: [] for split in splits}
    for _, row in iter_jsonl(predicted):
        read[row["id"].split(":", 1)[0]].append(row["mismatch"]["NoContr"] >= THRESHOLD)
    cells = [
        f"{sum(flags)} / {len(flags)} ({100 * sum(flags) / len(flags):.1f} %)"
        for flags in read.values()
    ]
    print(f"| {label} | {' | '.join(cells)} |")
