"""probe.py's readings of the outputs of four sentences or more only (a subgroup, descriptive:
it decides nothing). Usage, from the repository root:
  python docs/experiments/2026-11-30-sentence-reading/probe_long.py
"""

import importlib.util
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from evaluator import Evaluator
from evaluator.human_data import load_records
from evaluator.realtext_data import bench_split
from mismatch_core.resources import data_dir

spec = importlib.util.spec_from_file_location("probe", Path(__file__).with_name("probe.py"))
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)

records, _ = bench_split(load_records(data_dir() / "human/data2text/webnlg2020.jsonl.gz"))
long = [r for r in records if len(probe.sentences(r.gen)) >= 4]
reader = probe.Reader(Evaluator.from_pretrained("checkpoints/mismatch-base"))
reader.read([p for r in long for p in reader.pairs(r.refs, r.gen)])
rating = np.array([r.scores["correctness"] for r in long])
good = rating >= 90
print(f"{len(long)} outputs of 4+ sentences, {good.sum()} rated >= 90, {(rating < 50).sum()} below 50")
for name in probe.NAMES:
    scores = np.array([reader.readings(r.refs, r.gen)[name][0] for r in long])
    print(
        f"  {name:3}: recall (>= 90 read NoContr) {np.mean(scores[good] >= 0.5):.3f}, "
        f"tau-b with correctness {kendalltau(scores, rating).statistic:.3f}"
    )
