"""A uniform weight soup of base checkpoints of one architecture, saved with the first one's
scaler and feature settings, and the soup's figures by the continued training's epoch rule on
the shipped base's val splits (training side only).

    python soup.py OUT PAIRS_DIR CKPT CKPT ...

PAIRS_DIR holds the continuation inputs (real, f_real, synth30k, f_synth30k), as
docs/experiments/2026-11-29-token-head/run.sh builds them.
"""

import sys
from pathlib import Path

from evaluator.hub import load, save_from_checkpoint
from evaluator.training.continued import load_split_inputs, selection_score, val_figures

out, pairs, paths = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
first = load(paths[0])
states = [first.model.state_dict(), *(load(path).model.state_dict() for path in paths[1:])]
if any(state.keys() != states[0].keys() for state in states):
    sys.exit("the checkpoints differ in their tensors; a soup needs one architecture")
model = first.model
model.load_state_dict({k: sum(s[k] for s in states) / len(states) for k in states[0]})
figures = {}
for name, folder in (("real", "real"), ("synth", "synth30k")):
    val = load_split_inputs(first, pairs / folder, pairs / f"f_{folder}")["val"]
    figures[name] = val_figures(model, val)
(real_acc, real_recall), (synth_acc, _) = figures["real"], figures["synth"]
soup = {
    "members": paths,
    "real_val_acc": round(real_acc, 4),
    "real_val_nocontr": round(real_recall, 4),
    "synth_val_acc": round(synth_acc, 4),
    "score": round(selection_score(real_acc, synth_acc, real_recall), 4),
}
print(soup)
# the card tells the soup's own figures, not the first member's
metrics = {key: value for key, value in soup.items() if key != "members"}
save_from_checkpoint(first, model, out, training={"soup": soup}, metrics=metrics)
