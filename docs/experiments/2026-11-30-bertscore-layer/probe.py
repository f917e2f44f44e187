"""BERTScore (MiniLM) read at each layer against WMT15-17 DA z, on the groups training may use
(realtext_data.bench_split's train partition): which layer ranks translations best?"""
import random
import sys
import time

import numpy as np
from scipy.stats import kendalltau

from evaluator.features import compute_features
from evaluator.human_data import load_records
from evaluator.realtext_data import bench_split
from mismatch_core.resources import data_dir

per_year = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
rows = {}
for year in ("wmt15", "wmt16", "wmt17"):
    train, _ = bench_split(load_records(data_dir() / "human" / "translation" / f"{year}_da.jsonl.gz"))
    train = [r for r in train if "da_z" in r.scores]
    random.Random(13).shuffle(train)
    rows[year] = train[:per_year]
names = ["bertscore_p", "bertscore_r", "bertscore_f"]
print("year", "layer", *names, "chrf", sep="\t")
for year, records in rows.items():
    refs = [r.refs[0] for r in records]
    gens = [r.gen for r in records]
    z = np.array([r.scores["da_z"] for r in records])
    chrf = compute_features(refs, gens, ["chrf"])["chrf"].to_numpy()
    tau_chrf = kendalltau(chrf, z).statistic
    for layer in range(1, 7):
        start = time.time()
        values = compute_features(refs, gens, names, num_layers=layer)
        taus = [kendalltau(values[n].to_numpy(), z).statistic for n in names]
        print(year, layer, *[f"{t:.4f}" for t in taus], f"{tau_chrf:.4f}", f"{time.time() - start:.0f}s", sep="\t", flush=True)
