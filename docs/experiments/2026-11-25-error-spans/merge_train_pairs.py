"""Run D's training pairs: seed 13's train split plus the seed-14 pairs whose group seed 13
puts in train (its val split is the bench's held-out set), exact duplicates dropped."""

import os

import pandas as pd

from synth.corpora import split_of

DATA = "/work/data/spans"

first = pd.read_parquet(f"{DATA}/synth/train.parquet")
second = pd.concat([pd.read_parquet(f"{DATA}/synth14/{s}.parquet") for s in ("train", "val")])
keep = second["group"].map(lambda group: split_of(group, 13, 0.2) == "train")
second = second[keep]
second = second[
    ~second.set_index(["ref", "gen"]).index.isin(first.set_index(["ref", "gen"]).index)
]
both = pd.concat([first, second], ignore_index=True)
both["id"] = [f"train-{i:07d}" for i in range(len(both))]
os.makedirs(f"{DATA}/synth_both", exist_ok=True)
both.to_parquet(f"{DATA}/synth_both/train.parquet", index=False)
print(len(first), int(keep.sum()), len(second), len(both))
val_groups = set(pd.read_parquet(f"{DATA}/synth/val.parquet")["group"])
print("groups shared with seed 13's val split:", len(val_groups & set(both["group"])))
