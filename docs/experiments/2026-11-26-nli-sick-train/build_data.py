"""MNLI dev matched + SICK TRAIN (as dataset sick-train) in the NLI task's file format."""

import gzip
import json
from pathlib import Path

src = "../shared/data/human/nli/mnli_dev_matched.jsonl.gz"
out = "data/nli_sick/human/nli/mnli_dev_matched.jsonl.gz"
rows = [json.loads(line) for line in gzip.open(src, "rt")]
n = len(rows)
for line in gzip.open("../shared/data/sick/sick_train.jsonl.gz", "rt"):
    p = json.loads(line)
    label = p["label"].lower()
    rows.append(
        {
            "id": p["id"],
            "task": "nli",
            "dataset": "sick-train",
            "ref": p["a"],
            "gen": p["b"],
            "src": None,
            "system": None,
            "group": p["id"],
            "scores": {k: float(k == label) for k in ("entailment", "neutral", "contradiction")},
            "meta": {"label": label},
        }
    )
Path(out).parent.mkdir(parents=True, exist_ok=True)
with gzip.open(out, "wt") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(n, len(rows) - n)
