"""One links folder from graded chains and DA-ranked links (both `mismatch adapt chains`
shaped), read by `mismatch adapt train --graded ... --graded-against base`: a chain's copy
ranks below its real base, a DA link's worse output below the better one (one step).
With --agree FEATURES_DIR, only DA links whose better output agrees with its reference on
numbers, names and negation (features ``numbers_agree``, ``entities_agree``,
``negation_agree`` all 1, read from FEATURES_DIR, the features of the combined pairs).

    python combine.py CHAINS_DIR RANKED_DIR OUT_DIR [--agree FEATURES_DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from mismatch_core.atomic import atomic_directory

AGREEMENT = ["numbers_agree", "entities_agree", "negation_agree"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chains", type=Path)
    parser.add_argument("ranked", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--agree", type=Path, default=None)
    args = parser.parse_args()
    with atomic_directory(args.out, ("train.parquet", "val.parquet")) as staging:
        for split in ("train", "val"):
            chains = pd.read_parquet(args.chains / f"{split}.parquet")
            ranked = pd.read_parquet(args.ranked / f"{split}.parquet")
            if args.agree is not None:
                features = pd.read_parquet(args.agree / f"{split}.parquet")
                features = features.set_index("id") if "id" in features.columns else features
                agrees = features.loc[ranked["id"], AGREEMENT].min(axis=1).to_numpy() >= 1
                kept = set(ranked.loc[agrees, "id"])
                ranked = ranked[(ranked["parent"] == "") | ranked["parent"].isin(kept)]
            frame = pd.concat([chains, ranked], ignore_index=True)
            if not frame["id"].is_unique:
                raise SystemExit(f"{split}: a pair id is in both folders")
            frame.to_parquet(staging / f"{split}.parquet", index=False)
            links = int((frame["parent"] != "").sum())
            print(f"{split}: {len(chains)} chain rows, {len(ranked)} DA rows, {links} links")


if __name__ == "__main__":
    main()
