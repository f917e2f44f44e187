"""Val accuracy and NoContr recall of base checkpoints on one pair set's val split.

PYTHONPATH=. python val_figures.py PAIRS_DIR FEATURES_DIR CHECKPOINT [CHECKPOINT ...]
(FEATURES_DIR: what `mismatch features` wrote for PAIRS_DIR, with every column the
checkpoints read.)"""

import sys
from pathlib import Path

from evaluator.hub import load
from evaluator.training.continued import load_split_inputs, val_figures

pairs_dir, features_dir = Path(sys.argv[1]), Path(sys.argv[2])
for path in sys.argv[3:]:
    checkpoint = load(path)
    val = load_split_inputs(checkpoint, pairs_dir, features_dir)["val"]
    accuracy, recall = val_figures(checkpoint.model, val)
    print(f"{path}: {len(val)} val pairs, accuracy {accuracy:.4f}, NoContr recall {recall:.4f}")
