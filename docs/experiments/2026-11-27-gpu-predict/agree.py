"""Device side: the shipped base on the GPU and on the CPU over the same pairs; how far apart.
Usage: python3 agree.py PAIRS.jsonl (writes $OUT/agree.json)."""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from evaluator.cli.bench.predict import input_pairs
from evaluator.evaluator import Evaluator
from mismatch_core.resources import DEFAULT_CHECKPOINT, REPO_ROOT


def spans(prediction) -> list[tuple]:
    return [(s["start"], s["end"], s["label"]) for s in prediction.spans or []]


def top(prediction) -> str:
    return max(prediction.mismatch, key=prediction.mismatch.get)


refs, gens = input_pairs(Path(sys.argv[1]), None)
found = {}
for device in ("cuda", "cpu"):
    evaluator = Evaluator.from_pretrained(REPO_ROOT / DEFAULT_CHECKPOINT, device=device)
    evaluator.predict(refs[:8], gens[:8], progress=False)
    start = time.perf_counter()
    found[device] = evaluator.predict(refs, gens, progress=False)
    print(device, f"{time.perf_counter() - start:.1f} s for {len(refs)} pairs", flush=True)
pairs = list(zip(found["cpu"], found["cuda"], strict=True))
score = np.abs([a.score - b.score for a, b in pairs])
classes = np.abs(
    [np.subtract(list(a.mismatch.values()), list(b.mismatch.values())) for a, b in pairs]
)
report = {
    "pairs": len(refs),
    "max_abs_score_diff": float(score.max()),
    "max_abs_class_prob_diff": float(classes.max()),
    "same_labels": sum(a.labels == b.labels for a, b in pairs),
    "same_top_class": sum(top(a) == top(b) for a, b in pairs),
    "same_spans": sum(spans(a) == spans(b) for a, b in pairs),
}
print(json.dumps(report, indent=1))
with open(os.path.join(os.environ.get("OUT", "/tmp"), "agree.json"), "w") as f:
    json.dump(report, f, indent=1)
