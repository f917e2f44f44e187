"""`make demo`'s pairs (examples/pairs.jsonl) read by the shipped base and by the combined
reading of this record (each reference of a multi-reference row read on its own).

    python demo.py CKPT PAIRS_DIR BOTH_WAYS_NPZ XENC_DIR [int8]

`int8` as in bench_xenc.py.
"""

import sys
from pathlib import Path

import numpy as np
from combined import Combined
from cross_encoder import CrossEncoder

from evaluator.hub import load
from evaluator.inference import predict_proba
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.resources import REPO_ROOT
from mismatch_core.taxonomy import CODES

checkpoint, pairs, both_ways = load(sys.argv[1]), Path(sys.argv[2]), np.load(sys.argv[3])
if str(both_ways["checkpoint"]) != sys.argv[1]:
    sys.exit(f"{sys.argv[3]} holds the readings of {both_ways['checkpoint']}, not {sys.argv[1]}")
if sys.argv[5:] not in ([], ["int8"]):
    sys.exit(f"the last argument may only be int8, got {sys.argv[5:]}")
int8 = sys.argv[5:] == ["int8"]
xenc = CrossEncoder(Path(sys.argv[4]), int8)
readings = Path(sys.argv[4]) / ("readings_int8.npz" if int8 else "readings.npz")
combined = Combined.fit_on_val(pairs, both_ways, readings)
rows = []
for _, value in iter_jsonl(REPO_ROOT / "examples" / "pairs.jsonl"):
    refs = value["ref"] if isinstance(value["ref"], list) else [value["ref"]]
    rows += [(value["id"], index, ref, value["gen"]) for index, ref in enumerate(refs)]
refs, gens = [r[2] for r in rows], [r[3] for r in rows]
base = predict_proba(checkpoint, refs, gens)
same = xenc.same_meaning(refs, gens)
read = combined.with_shares(base, same)
print("| pair | reference | base P(NoContr), top error | cross-encoder P(same) | combined P(NoContr), top error |")  # fmt: skip
print("|---|---|---|---|---|")
for (pair, index, _, _), b, x, c in zip(rows, base, same, read, strict=True):
    top_b, top_c = CODES[1 + int(np.argmax(b[1:]))], CODES[1 + int(np.argmax(c[1:]))]
    print(f"| {pair} | {index} | {b[0]:.3f}, {top_b} | {x:.3f} | {c[0]:.3f}, {top_c} |")
