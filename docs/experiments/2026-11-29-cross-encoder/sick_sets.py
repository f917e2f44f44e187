"""The SICK TRAIN sets of this record: what a cross-encoder trains on and what stays held out.

Held out: the real val split's SICK paraphrases and contradictions (by their rule) and the
contradictions no training pair of the base holds (`other`); training: every other SICK
TRAIN pair, both directions, labelled 0 (two-way entailment), 1 (neither) or 2 (contradiction).
"""

from pathlib import Path

import pandas as pd

from evaluator.training.real_bases import sick_rows
from mismatch_core.jsonl import iter_jsonl

CONTRADICTION_RULES = ("sick_contradiction", "sick_substitution")


def paraphrases(val: pd.DataFrame) -> pd.Series:
    """The val split's SICK two-way entailments (a mask)."""
    return (val.rule == "real_base") & (val.source == "sick")


def contradictions(val: pd.DataFrame) -> pd.Series:
    """The val split's SICK contradictions (a mask)."""
    return val.rule.isin(CONTRADICTION_RULES)


def sick_sets(
    val: pd.DataFrame, sick_train: Path
) -> tuple[list[tuple[str, str, int]], dict[str, pd.DataFrame]]:
    """(training examples as (ref, gen, label), {"para", "con", "oth": held-out frames})."""
    val_groups = set(val[val.source == "sick"].group)
    _, held = sick_rows(sick_train, substitutions=True)
    held_groups = {row["group"] for row in held}
    records = [value for _, value in iter_jsonl(sick_train)]
    other_ids = {
        v["id"] for v in records if v["contradiction"] and f"sick:{v['id']}" not in held_groups
    }
    train = [
        (ref, gen, 0 if v["paraphrase"] else 2 if v["contradiction"] else 1)
        for v in records
        if f"sick:{v['id']}" not in val_groups and v["id"] not in other_ids
        for ref, gen in ((v["a"], v["b"]), (v["b"], v["a"]))
    ]
    other = [{"ref": v["a"], "gen": v["b"]} for v in records if v["id"] in other_ids]
    held_out = {
        "para": val[paraphrases(val)],
        "con": val[contradictions(val)],
        "oth": pd.DataFrame(other),
    }
    return train, held_out
