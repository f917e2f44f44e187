"""Fit one task's export recipe on one base with several seeds, one checkpoint per seed.

    python fit_seeds.py TASK BASE CACHE_DIR OUT SEEDS
    e.g. python fit_seeds.py summarization checkpoints/mismatch-base data/human_features out 0,1,2,3,4,5

The fit is the one `mismatch evaluate --export-dir` and `mismatch finetune` ship (every record,
10 % of the groups for early stopping); `mismatch evaluate` exports seed 0, which reproduces the
shipped checkpoint bit for bit.
"""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.train import export, fit

task, base, cache_dir, out = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
seeds = [int(s) for s in sys.argv[5].split(",")]
settings = load_settings(task, None)
prepared = prepare(task, base, replace(settings, cache_dir=cache_dir))
for seed in seeds:
    rows = np.arange(len(prepared.records))
    module, data, val_loss = fit(prepared, rows, settings, seed, checkpoint=base)
    target = export(module, data, out / f"s{seed}", metrics={"val_loss": val_loss})
    print(task, seed, f"val_loss {val_loss:.4f}", target, flush=True)
