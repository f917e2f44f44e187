"""Pretraining pairs on divergent real bases (issue #23, Build 1), training-side data only.

Bases: the highly rated outputs (WMT15/16/17 DA z >= 0.5, WebNLG 2020 correctness >= 90) of
groups that no `mismatch evaluate` seed (0, 1, 2; 20 % test each) tests on, so neither the
realtext bench (seed 0's test part) nor any seed's task test part holds a text the base saw;
a record sharing a reference or output (stripped) with any tested record is left out too. Also
SICK TRAIN pairs that entail each other both ways, read in both directions, and, as NegErr,
SICK TRAIN contradictions whose two sentences differ in their count of negation words (both
directions: a dropped or an added negation). Each base is kept
as itself (NoContr) and with every applicable synth error rule applied (the bench's
``perturb_bases``); errors are capped per class so GramErr and RepErr do not swamp the rest.
A tenth of the groups (hashed) is the val split that chooses the epoch.

    python docs/experiments/2026-11-26-real-base-pretrain/build_pairs.py OUT_DIR
writes OUT_DIR/train.parquet and OUT_DIR/val.parquet in the synth schema.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from evaluator.human_data import load_records, split_by_group
from evaluator.realtext_data import BASE_SOURCES, perturb_bases
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.taxonomy import index_of

HUMAN = Path("../shared/data/human")
SICK_TRAIN = Path("../shared/data/sick/sick_train.jsonl.gz")
EVALUATE_SEEDS = (0, 1, 2)
TEST_FRACTION = 0.2
CAP_PER_CLASS = 1500
SEED = 23
NEGATION = re.compile(r"\b(?:no|not|nobody|none|never|nothing|nowhere)\b|n't", re.IGNORECASE)


def clean_bases() -> list[tuple[str, str, str, str]]:
    """(source, group, ref, base) of highly rated outputs no evaluate seed tests on."""
    out = []
    for source in BASE_SOURCES:
        records = load_records(HUMAN / source.file)
        tested = set()
        for seed in EVALUATE_SEEDS:
            tested |= {r.group for r in split_by_group(records, seed, TEST_FRACTION)[1]}
        tested_texts = {t.strip() for r in records if r.group in tested for t in (*r.refs, r.gen)}
        kept = [
            r
            for r in records
            if r.group not in tested
            and r.scores.get(source.criterion, float("-inf")) >= source.minimum
            and tested_texts.isdisjoint(t.strip() for t in (*r.refs, r.gen))
        ]
        print(f"{source.name}: {len(kept)} bases", file=sys.stderr)
        out += [(source.name, f"{source.name}:{r.group}", r.refs[0], r.gen) for r in kept]
    return out


def sick_bases() -> list[tuple[str, str, str, str]]:
    out = []
    for _, value in iter_jsonl(SICK_TRAIN):
        if value["paraphrase"]:
            group = f"sick:{value['id']}"
            out += [
                ("sick", group, value["a"], value["b"]),
                ("sick", group, value["b"], value["a"]),
            ]
    print(f"sick: {len(out)} bases", file=sys.stderr)
    return out


def sick_negations() -> list[dict]:
    """SICK TRAIN contradictions that add or drop a negation, as NegErr rows."""
    rows = []
    for _, value in iter_jsonl(SICK_TRAIN):
        a, b = value["a"], value["b"]
        if value["contradiction"] and len(NEGATION.findall(a)) != len(NEGATION.findall(b)):
            for ref, gen in ((a, b), (b, a)):
                rows.append(
                    {
                        "ref": ref,
                        "gen": gen,
                        "label": "NegErr",
                        "source": "sick",
                        "group": f"sick:{value['id']}",
                        "rule": "sick_contradiction",
                        "detail": json.dumps({"base": "real"}),
                    }
                )
    print(f"sick negations: {len(rows)} pairs", file=sys.stderr)
    return rows


def main(out_dir: Path) -> None:
    bases = clean_bases() + sick_bases()
    sources, groups, refs, gens = (list(column) for column in zip(*bases, strict=True))
    rows = [
        {
            "ref": r,
            "gen": g,
            "label": "NoContr",
            "source": s,
            "group": gr,
            "rule": "real_base",
            "detail": json.dumps({"base": "real"}),
        }
        for s, gr, r, g in bases
    ]
    errors = []
    for item in perturb_bases(refs, gens, groups, SEED).items:
        errors.append(
            {
                "ref": refs[item.base],
                "gen": item.text,
                "label": item.code,
                "source": sources[item.base],
                "group": groups[item.base],
                "rule": item.rule,
                "detail": json.dumps({"base": "real", "base_text": gens[item.base]}),
            }
        )
    rng = random.Random(SEED)
    rng.shuffle(errors)
    taken: Counter = Counter()
    for row in errors:
        if taken[row["label"]] < CAP_PER_CLASS:
            taken[row["label"]] += 1
            rows.append(row)
    rows += sick_negations()
    frame = pd.DataFrame(rows).drop_duplicates(subset=["ref", "gen"]).reset_index(drop=True)
    frame["label_id"] = [index_of(label) for label in frame["label"]]
    val = [
        int.from_bytes(hashlib.sha256(f"val:{g}".encode()).digest()[:8], "big") / 2**64 < 0.1
        for g in frame["group"]
    ]
    frame["split"] = ["val" if v else "train" for v in val]
    out_dir.mkdir(parents=True, exist_ok=True)
    for split in ("train", "val"):
        part = frame[frame["split"] == split].drop(columns="split").reset_index(drop=True)
        part.insert(0, "id", [f"real-{split}-{i:07d}" for i in range(len(part))])
        part.to_parquet(out_dir / f"{split}.parquet", index=False)
        print(split, len(part), dict(Counter(part["label"])), file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
