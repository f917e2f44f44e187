"""Per cache: pairs, distinct (ref, gen) pairs, and how far the features of one pair kept under
two record ids differ (old caches keyed by id, beside the same caches rekeyed by rekey.py).
Usage: python duplicates.py OLD_DIR NEW_DIR STEM..."""

import sys

import numpy as np
import pandas as pd

from evaluator.features import pair_key

old_dir, new_dir = sys.argv[1:3]
for stem in sys.argv[3:]:
    pairs = pd.read_parquet(f"{old_dir}/{stem}.pairs.parquet")
    old = pd.read_parquet(f"{old_dir}/{stem}.parquet").set_index("id").loc[pairs["id"]]
    keys = [pair_key(r[0], g) for r, g in zip(pairs["ref"], pairs["gen"], strict=True)]
    new = pd.read_parquet(f"{new_dir}/{stem}.parquet").set_index("id").loc[keys]
    columns = [c for c in old.columns if c in new.columns]
    gap = np.abs(old[columns].to_numpy(float) - new[columns].to_numpy(float))
    print(
        f"{stem}: {len(pairs)} pairs, {len(set(keys))} distinct, "
        f"{int((np.nanmax(gap, axis=1) > 0).sum())} rows differ, at most {np.nanmax(gap):.2g}"
    )
