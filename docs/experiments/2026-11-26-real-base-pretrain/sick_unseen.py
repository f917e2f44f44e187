"""SICK TRIAL figures on the pairs whose sentences the continued base never trained on.

SICK reuses sentences across pairs: many TRIAL sentences also occur in SICK TRAIN, which the
continued base trained on (as real bases, as NegErr pairs, and through the synthetic replay's
SICK source). This reads the TRIAL pairs with neither sentence in any training or val pair of
those sets and reports, per checkpoint, the bench's three SICK figures on them.

    python sick_unseen.py REAL_PAIRS_DIR SYNTH_PAIRS_DIR CHECKPOINT...
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator import Evaluator
from evaluator.cli.bench.realtext import auroc
from evaluator.features.compute import compute_features
from evaluator.realtext_data import SICK_TRIAL, load_sick
from mismatch_core.resources import data_dir


def trained_texts(*folders: Path) -> set[str]:
    texts: set[str] = set()
    for folder in folders:
        for split in ("train", "val"):
            frame = pd.read_parquet(folder / f"{split}.parquet", columns=["ref", "gen"])
            texts |= {t.strip() for t in pd.concat([frame["ref"], frame["gen"]])}
    return texts


def main(real: Path, synth: Path, checkpoints: list[str]) -> None:
    seen = trained_texts(real, synth)
    pairs = [
        p
        for p in load_sick(data_dir() / SICK_TRIAL)
        if (p.paraphrase or p.contradiction) and not {p.ref.strip(), p.gen.strip()} & seen
    ]
    para = np.array([p.paraphrase for p in pairs])
    refs, gens = [p.ref for p in pairs], [p.gen for p in pairs]
    print(f"unseen TRIAL pairs: {para.sum()} two-way entailments, {(~para).sum()} contradictions")
    bertscore = compute_features(refs, gens, names=["bertscore_f"])["bertscore_f"].to_numpy()
    print(f"BERTScore-MiniLM AUROC {auroc(bertscore[para], bertscore[~para]):.3f}")
    for path in checkpoints:
        scores = np.array(
            [
                p.score
                for p in Evaluator.from_pretrained(path).predict(
                    refs, gens, progress=False, spans=False
                )
            ]
        )
        print(
            f"{path}: NoContr recall {np.mean(scores[para] >= 0.5):.1%}, contradictions as "
            f"NoContr {np.mean(scores[~para] >= 0.5):.1%}, AUROC {auroc(scores[para], scores[~para]):.3f}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
