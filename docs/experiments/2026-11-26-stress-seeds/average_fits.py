"""One checkpoint whose ratings are the mean of K fitted checkpoints' ratings (prototype).

    git apply rating_hidden.patch   # a rating head wider than the default 256 units
    python average_fits.py OUT FIT_1 FIT_2 ...

The fits share the frozen base and differ only in their rating parts. The mean of their
ratings is one rating head K times as wide (hidden units side by side, each fit's output rows
scaled by 1/K and by its criterion's learned share), with the metric maps (each mixed with its
ridge fit by that share) and the mismatch maps averaged; the learned share becomes 1.
"""

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

RATED = ("rating_head.", "metric_rating.", "ridge_rating.", "mismatch_rating.", "learned_share")

out, sources = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
states = [load_file(p / "model.safetensors") for p in sources]
count = len(states)
new = {}
for key, value in states[0].items():
    if not key.startswith(RATED):
        assert all(torch.equal(value, state[key]) for state in states), key
        new[key] = value
shares = [state["learned_share"] for state in states]
pairs = list(zip(shares, states, strict=True))
new["rating_head.0.weight"] = torch.cat([s["rating_head.0.weight"] for s in states])
new["rating_head.0.bias"] = torch.cat([s["rating_head.0.bias"] for s in states])
new["rating_head.3.weight"] = torch.cat(
    [share[:, None] * s["rating_head.3.weight"] / count for share, s in pairs], 1
)
new["rating_head.3.bias"] = sum(share * s["rating_head.3.bias"] for share, s in pairs) / count
for part in ("weight", "bias"):
    mix = [(share[:, None] if part == "weight" else share, s) for share, s in pairs]
    new[f"metric_rating.{part}"] = (
        sum(k * s[f"metric_rating.{part}"] + (1 - k) * s[f"ridge_rating.{part}"] for k, s in mix)
        / count
    )
    new[f"ridge_rating.{part}"] = sum(s[f"ridge_rating.{part}"] for s in states) / count
    new[f"mismatch_rating.{part}"] = sum(s[f"mismatch_rating.{part}"] for s in states) / count
new["learned_share"] = torch.ones_like(shares[0])
config = json.loads((sources[0] / "config.json").read_text())
config["architecture"]["rating_hidden"] = new["rating_head.0.weight"].shape[0]
config["training"]["mean of the ratings of"] = ", ".join(str(p) for p in sources)
out.mkdir(parents=True, exist_ok=True)
save_file({k: v.contiguous() for k, v in new.items()}, out / "model.safetensors")
(out / "config.json").write_text(json.dumps(config, indent=2))
print(out, config["architecture"]["rating_hidden"])
