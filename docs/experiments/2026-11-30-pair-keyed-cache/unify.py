"""A copy of an id-keyed cache whose rows of one (ref, gen) pair all hold the rekeyed cache's
single value: the old code run on it isolates what keying by texts changes.
Usage: python unify.py OLD_DIR NEW_DIR OUT_DIR STEM..."""

import shutil
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.features import pair_key

old_dir, new_dir, out_dir = (Path(a) for a in sys.argv[1:4])
out_dir.mkdir(parents=True, exist_ok=True)
for stem in sys.argv[4:]:
    for file in old_dir.glob(f"{stem}.*"):
        shutil.copy(file, out_dir / file.name)
    pairs = pd.read_parquet(old_dir / f"{stem}.pairs.parquet")
    table = pq.read_table(old_dir / f"{stem}.parquet")
    old = table.to_pandas().set_index("id")
    new = pd.read_parquet(new_dir / f"{stem}.parquet").set_index("id")
    keys = {i: pair_key(r[0], g) for i, r, g in zip(pairs["id"], pairs["ref"], pairs["gen"], strict=True)}
    ids = [i for i in old.index if i in keys]
    old.loc[ids, new.columns] = new.loc[[keys[i] for i in ids], new.columns].to_numpy()
    out = pa.Table.from_pandas(old.reset_index(), preserve_index=False)
    out = out.replace_schema_metadata({**(out.schema.metadata or {}), **table.schema.metadata})
    pq.write_table(out, out_dir / f"{stem}.parquet")
