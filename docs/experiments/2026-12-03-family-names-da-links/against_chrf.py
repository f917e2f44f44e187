"""A combined links folder (combine.py's) keeping only the DA links that chrF gets wrong:
the worse output's chrF to the reference at least the better one's. Chains and the DA rows
without a parent are kept. Asks whether P(NoContr) can learn from DA what surface closeness
does not say, without the links that reward a near-copy of the reference.

    python against_chrf.py COMBINED_DIR FEATURES_DIR OUT_DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from mismatch_core.atomic import atomic_directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("combined", type=Path)
    parser.add_argument("features", type=Path, help="the combined folder's features (chrf)")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    with atomic_directory(args.out, ("train.parquet", "val.parquet")) as staging:
        for split in ("train", "val"):
            frame = pd.read_parquet(args.combined / f"{split}.parquet")
            chrf = pd.read_parquet(args.features / f"{split}.parquet").set_index("id")["chrf"]
            link = (frame["rule"] == "da_ranked") & (frame["parent"] != "")
            worse, better = frame.loc[link, "id"], frame.loc[link, "parent"]
            wrong = chrf.loc[worse].to_numpy() >= chrf.loc[better].to_numpy()
            keep = ~link
            keep[link[link].index[wrong]] = True
            frame[keep].to_parquet(staging / f"{split}.parquet", index=False)
            print(f"{split}: {int(link.sum())} DA links, {int(wrong.sum())} kept (chrF wrong)")


if __name__ == "__main__":
    main()
