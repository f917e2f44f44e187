"""A uniform weight soup of continuation runs that differ only in their seed (one NoContr
weight): each run keeps its epoch by the adapt rule, the soup averages the kept weights, and
the soup's figures are read on the same training-side val splits.

    python soup.py BASE OUT WEIGHT SEED...   (the session-37 continuation pairs and caches)
"""

import json
import sys
from pathlib import Path

from evaluator.hub import load, save_from_checkpoint
from evaluator.training.continued import (
    ContinueSettings,
    continue_run,
    load_split_inputs,
    selection_score,
    val_figures,
)

base, out, weight = sys.argv[1], sys.argv[2], float(sys.argv[3])
seeds = [int(s) for s in sys.argv[4:]]
pairs = Path("/work/data/s37/pipe")
checkpoint = load(base)
data = {}
for name, folder, features in (
    ("real", pairs / "real", pairs / "f_real"),
    ("synth", pairs / "synth30k", pairs / "f_synth30k"),
):
    for split, inputs in load_split_inputs(checkpoint, folder, features).items():
        data[f"{name}_{split}"] = inputs
states, runs = [], []
for seed in seeds:
    settings = ContinueSettings(nocontr_weights=(weight,), seed=seed)
    model, _, chosen = continue_run(base, None, data, settings, weight, log=lambda line: None)
    states.append({k: v.clone() for k, v in model.state_dict().items()})
    runs.append({"seed": seed, **chosen})
    print(runs[-1], flush=True)
model.load_state_dict({k: sum(s[k] for s in states) / len(states) for k in states[0]})
real_acc, real_recall = val_figures(model, data["real_val"])
synth_acc, _ = val_figures(model, data["synth_val"])
soup = {
    "seeds": seeds,
    "nocontr_weight": weight,
    "real_val_acc": round(real_acc, 4),
    "real_val_nocontr": round(real_recall, 4),
    "synth_val_acc": round(synth_acc, 4),
    "score": selection_score(real_acc, synth_acc, real_recall),
}
print(soup, flush=True)
training = dict(checkpoint.config.get("training") or {})
training["continued"] = {"from": base, "soup": soup, "runs": runs}
save_from_checkpoint(
    checkpoint, model, out, training=training, metrics=dict(checkpoint.config.get("metrics") or {})
)
Path(out + ".json").write_text(json.dumps({"runs": runs, "soup": soup}, indent=1))
