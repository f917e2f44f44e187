"""A `mismatch adapt chains`-shaped folder of DA-ranked links from WMT15-17 (training side).

Each WMT15/16/17 DA output of a group that no `mismatch evaluate` seed tests on (and sharing
no text with a tested record: ``real_bases.untested_records``) is a row; each row is
linked (``parent``) to up to ``--links`` other outputs of the same dataset and language pair
rated at least ``--gap`` DA z above it, each link a copy of the row with its own id. `mismatch
adapt train --graded` then asks that the better output's NoContr logit sit a margin above.
The label column says NoContr for every row only because the pairs reader needs one; the
hinge reads no label. WMT21 DA is left out: no metric ranks it (the rating-mix record).

    python ranked_links.py --out DIR [--gap 0.5] [--links 3] [--seed 7] [--parent-min Z]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

import pandas as pd

from evaluator.training.real_bases import GRADED_COLUMNS, untested_records
from mismatch_core.atomic import atomic_directory
from mismatch_core.groups import group_position
from mismatch_core.taxonomy import index_of

DATASETS = ("wmt15", "wmt16", "wmt17")  # of real_bases.BASE_SOURCES


def pair_id(ref: str, gen: str, tag: str) -> str:
    return "da-" + hashlib.sha256(f"{tag}\n{ref}\n{gen}".encode()).hexdigest()[:20]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--human-dir", type=Path, default=Path("../shared/data/human"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gap", type=float, default=0.5)
    parser.add_argument("--links", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--parent-min",
        type=float,
        default=float("-inf"),
        help="a better output must be rated at least this DA z (0.5: a real base)",
    )
    parser.add_argument("--val-fraction", type=float, default=0.1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    splits: dict[str, list[dict]] = {"train": [], "val": []}
    counts = {}
    records = untested_records(args.human_dir)
    for name in DATASETS:
        rows = records[name]
        by_lp: dict[str, list] = {}
        for r in rows:
            by_lp.setdefault(f"{name}:{r.meta.get('lp', '?')}", []).append(r)
        for lp, members in by_lp.items():
            for split in ("train", "val"):
                part = [r for r in members
                        if (group_position("val", r.group) < args.val_fraction) == (split == "val")]  # fmt: skip
                base = {}
                for r in part:
                    row = {"ref": r.refs[0], "gen": r.gen, "label": "NoContr",
                           "label_id": index_of("NoContr"), "source": lp, "group": r.group,
                           "rule": "da_ranked", "parent": ""}  # fmt: skip
                    row["id"] = pair_id(r.refs[0], r.gen, "base")
                    row["detail"] = json.dumps({"da_z": r.scores["da_z"]})
                    if row["id"] not in base:
                        base[row["id"]] = (row, r.scores["da_z"])
                        splits[split].append(row)
                values = list(base.values())
                links = 0
                for row, z in values:
                    better = [
                        other for other, oz in values if oz >= max(z + args.gap, args.parent_min)
                    ]
                    for k, other in enumerate(rng.sample(better, min(args.links, len(better)))):
                        copy = {**row, "id": pair_id(row["ref"], row["gen"], f"link{k}"),
                                "parent": other["id"]}  # fmt: skip
                        splits[split].append(copy)
                        links += 1
                counts[f"{lp}:{split}"] = (len(values), links)
    with atomic_directory(args.out, ("train.parquet", "val.parquet")) as staging:
        for split, rows in splits.items():
            frame = pd.DataFrame(rows)[GRADED_COLUMNS]
            frame.to_parquet(staging / f"{split}.parquet", index=False)
    for key, (n, links) in sorted(counts.items()):
        print(f"{key}: {n} outputs, {links} links")
    print({split: len(rows) for split, rows in splits.items()})


if __name__ == "__main__":
    main()
