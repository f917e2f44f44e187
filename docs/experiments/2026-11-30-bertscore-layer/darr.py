"""WMT19 DARR (measurement only): bertscore_f of MiniLM at layer 4 (chosen on WMT15-17 train
partitions, probe.py) and at layer 6 (the shipped BERTScore-MiniLM), Kendall-like tau per lp."""
import sys
import time

import numpy as np

from evaluator.cli.bench.realtext import kendall_like_tau
from evaluator.features import compute_features
from evaluator.realtext_data import DARR, load_darr
from mismatch_core.resources import data_dir

limit = int(sys.argv[1]) or None
by_lp = load_darr(data_dir() / DARR, limit, 13)
pairs = [p for ps in by_lp.values() for p in ps]
texts = list(dict.fromkeys([(p.ref, p.better) for p in pairs] + [(p.ref, p.worse) for p in pairs]))
index = {t: i for i, t in enumerate(texts)}
lps = np.array([p.lp for p in pairs])
print({lp: len(ps) for lp, ps in by_lp.items()}, len(texts), "distinct", flush=True)
for layer in (4, 6):
    start = time.time()
    f = compute_features([r for r, _ in texts], [g for _, g in texts], ["bertscore_f"], num_layers=layer)["bertscore_f"].to_numpy()
    better = np.array([f[index[(p.ref, p.better)]] for p in pairs])
    worse = np.array([f[index[(p.ref, p.worse)]] for p in pairs])
    taus = {lp: kendall_like_tau(better[lps == lp], worse[lps == lp]) for lp in by_lp}
    print(f"layer {layer}:", {lp: round(t, 4) for lp, t in taus.items()}, "mean", round(float(np.mean(list(taus.values()))), 4), f"{time.time() - start:.0f}s", flush=True)
