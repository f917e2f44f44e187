"""Does reading the grounding fact (meta.knowledge) rank USR outputs' uses_knowledge better
than the reference-based metrics? Seed 0's train part of evaluate's split (80 % by group),
so nothing of seed 0's test part is looked at."""
import gzip
import json

import numpy as np
from scipy.stats import kendalltau

from evaluator.features import compute_features
from evaluator.finetune.datamodule import split_rows
from evaluator.human_data import load_records
from mismatch_core.resources import data_dir

names = [
    "rouge1_p", "rouge1_r", "rouge1_f", "bertscore_p", "bertscore_r", "bertscore_f", "chrf",
    "wordnet_changed",
]  # fmt: skip
for dataset in ("usr_topicalchat", "usr_personachat"):
    path = data_dir() / "human" / "dialogue" / f"{dataset}.jsonl.gz"
    records = load_records(path)
    raw = [json.loads(line) for line in gzip.open(path)]
    knowledge = {value["id"]: value["meta"].get("knowledge") for value in raw}
    train, _ = split_rows(records, np.arange(len(records)), 0, 0.2)
    rows = [
        records[i]
        for i in train
        if "uses_knowledge" in records[i].scores and knowledge.get(records[i].id)
    ]
    z = np.array([r.scores["uses_knowledge"] for r in rows])
    fact = compute_features([knowledge[r.id] for r in rows], [r.gen for r in rows], names)
    ref = compute_features([r.refs[0] for r in rows], [r.gen for r in rows], names)
    print(f"{dataset}: {len(rows)} train records of seed 0")
    for n in names:
        by_fact, by_ref = (kendalltau(values[n], z).statistic for values in (fact, ref))
        print(f"  {n:16s} vs fact {by_fact:+.3f}   vs ref {by_ref:+.3f}")
