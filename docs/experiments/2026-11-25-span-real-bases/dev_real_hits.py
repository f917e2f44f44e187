"""Top-span hit and precision on the dev real-base pairs: the training groups that
`mismatch spans train --real-bases` holds out to choose the epoch (never the bench's held-out
groups). Used to choose between span-tagger runs.

    python dev_real_hits.py ../shared/data/human CHECKPOINT [CHECKPOINT ...]
"""

import json
import sys
from pathlib import Path

from evaluator.cli.bench.spans import _hits_and_precision, span_cases
from evaluator.cli.spans import DEV_FRACTION
from evaluator.evaluator import Evaluator
from evaluator.training.spans import tagger_real_bases
from synth.corpora import split_of
from synth.spans import changed_regions

SEED = 13  # the training seed: tagger_real_bases draws the same perturbations


def main(human_dir: str, checkpoints: list[str]) -> None:
    pairs = tagger_real_bases(Path(human_dir), SEED)
    in_dev = pairs["group"].map(lambda g: split_of(g, "spans-dev", DEV_FRACTION)) == "val"
    dev = pairs[in_dev & (pairs["label"] != "NoContr")]
    gold = []
    for row in dev.itertuples(index=False):
        base = json.loads(row.detail)["base_text"]
        regions = changed_regions(base, row.gen, row.ref, omission=row.label == "MissInfo")
        empty = not (regions.ref if row.label == "MissInfo" else regions.gen)
        gold.append(None if regions.ref is None or empty else regions)
    for checkpoint in checkpoints:
        evaluator = Evaluator.from_pretrained(checkpoint)
        refs, gens, labels = dev["ref"].tolist(), dev["gen"].tolist(), dev["label"].tolist()
        scored = [c for c in span_cases(evaluator, refs, gens, labels, gold) if c is not None]
        overall = _hits_and_precision(scored)
        print(
            checkpoint,
            len(scored),
            "hit",
            round(overall["top_span_hit"], 4),
            "prec",
            round(overall["precision"]["ours"], 4),
            "with",
            round(overall["with_spans"], 4),
        )
        codes = sorted({c.code for c in scored})
        hits = {
            code: _hits_and_precision([c for c in scored if c.code == code])["top_span_hit"]
            for code in codes
        }
        print({code: round(hit, 3) for code, hit in hits.items()})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
