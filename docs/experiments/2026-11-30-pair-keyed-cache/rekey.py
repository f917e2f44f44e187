"""One-off: rekey feature caches from record ids to pair texts (pair_key), in place."""
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.features import pair_key

folder = Path(sys.argv[1])
for pairs_path in sorted(folder.glob("*.pairs.parquet")):
    stem = pairs_path.name[: -len(".pairs.parquet")]
    cache_path = folder / f"{stem}.parquet"
    if not cache_path.is_file():
        print("no cache for", pairs_path.name)
        continue
    pairs = pd.read_parquet(pairs_path)
    new_ids = {old: pair_key(ref[0] if not isinstance(ref, str) else ref, gen)
               for old, ref, gen in zip(pairs["id"], pairs["ref"], pairs["gen"], strict=True)}
    table = pq.read_table(cache_path)
    frame = table.to_pandas()
    before = len(frame)
    frame = frame[frame["id"].isin(new_ids.keys())].copy()
    frame["id"] = frame["id"].map(new_ids)
    frame = frame.drop_duplicates("id", ignore_index=True)
    out = pa.Table.from_pandas(frame, preserve_index=False)
    out = out.replace_schema_metadata({**(out.schema.metadata or {}), **(table.schema.metadata or {})})
    tmp = cache_path.with_suffix(".tmp")
    pq.write_table(out, tmp)
    tmp.replace(cache_path)
    pairs_path.unlink()  # rewritten by build_inputs with the new ids
    print(f"{stem}: {before} rows -> {len(frame)}")
