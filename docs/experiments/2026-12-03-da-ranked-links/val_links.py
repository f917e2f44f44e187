"""Share of the DA-ranked val links (training side) that each checkpoint orders right, beside
chrF, sentence BLEU and BERTScore-F read from the same feature cache (a tie counts wrong).

    python val_links.py LINKS_DIR FEATURES_DIR CHECKPOINT...
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from evaluator.hub import load
from evaluator.training.continued import graded_below, load_graded_links


def main() -> None:
    links_dir, features_dir, *checkpoints = sys.argv[1:]
    pairs = pd.read_parquet(Path(links_dir) / "val.parquet")
    features = pd.read_parquet(Path(features_dir) / "val.parquet")
    features = features.set_index("id") if "id" in features.columns else features
    children = pairs[pairs["parent"] != ""]
    print(f"{len(children)} val links")
    for column in ("chrf", "bleu", "bertscore_f"):
        above = features.loc[children["parent"], column].to_numpy()
        below = features.loc[children["id"], column].to_numpy()
        print(f"{column:12s} {(below < above).mean():.3f}")
    for path in checkpoints:
        checkpoint = load(path)
        links = load_graded_links(checkpoint, Path(links_dir), Path(features_dir))
        print(f"{path:12s} {graded_below(checkpoint.model.eval(), links['val']):.3f}")


if __name__ == "__main__":
    main()
