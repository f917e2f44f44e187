"""Are the error spans in the right place? (`mismatch bench spans` runs and reports these.)

Two parts, measurement only:
- `spans_on_synth`: held-out synthetic pairs (a ``mismatch synth`` folder's val split, a
  seeded sample per class). Character F1 of the predicted spans against the gold regions the
  rule changed (``synth.spans.error_regions``), summed over the pairs of a class; MissInfo is
  scored on the ``missing`` reference words, where the omitted words could be placed in the
  reference. NoContr: the share of pairs given any span.
- `spans_on_bases`: highly rated held-out real outputs, each with every applicable error rule
  applied (the real bases of ``evaluator.bench.realtext``). The top span (the most probable;
  for MissInfo the top missing item) must overlap the changed characters, and the spans'
  character precision is set beside the baseline's.
The baseline marks every word of gen that a word-level diff (difflib) does not match in the
reference, and for MissInfo every reference word not matched in gen: it finds the change, but
also every harmless rewording. Spans are what ``mismatch predict`` returns, so a pair the
model reads as NoContr has none.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from synth.spans import word_changes

Region = tuple[int, int]


# --- pure computations -------------------------------------------------------------------


def char_counts(predicted: list[Region], gold: list[Region]) -> tuple[int, int, int]:
    """(true positive, false positive, false negative) characters of predicted against gold
    regions (overlapping regions counted once)."""
    mine = _characters(predicted)
    truth = _characters(gold)
    return len(mine & truth), len(mine - truth), len(truth - mine)


def f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")


def overlaps(region: Region, gold: list[Region]) -> bool:
    return any(region[0] < end and start < region[1] for start, end in gold)


def word_diff_regions(ref: str, gen: str) -> tuple[list[Region], list[Region]]:
    """The baseline: (gen words not matched in ref, ref words not matched in gen), each run of
    unmatched words one region."""
    ref_words, gen_words, changes = word_changes(ref, gen)
    gen_regions, ref_regions = [], []
    for _, i1, i2, j1, j2 in changes:
        if j2 > j1:
            gen_regions.append((gen_words[j1][0], gen_words[j2 - 1][1]))
        if i2 > i1:
            ref_regions.append((ref_words[i1][0], ref_words[i2 - 1][1]))
    return gen_regions, ref_regions


def _characters(regions: list[Region]) -> set[int]:
    return {i for start, end in regions for i in range(start, end)}


# --- scoring -----------------------------------------------------------------------------


class SpanCase:
    """One scored pair: its class, gold regions and the predicted and baseline regions on the
    side its class is scored on (gen; the reference for MissInfo)."""

    def __init__(self, code: str, gold: list[Region], ours: list[Region], baseline: list[Region]):
        self.code = code
        self.gold = gold
        self.ours = ours  # most probable first
        self.baseline = baseline


def span_cases(evaluator, refs, gens, codes, gold_regions) -> list[SpanCase | None]:
    """Predict every pair once and pair its spans with the gold; None where the gold is
    unknown (an omission not placed in the reference)."""
    predictions = evaluator.predict(refs, gens, progress=len(gens) > 1024)
    cases: list[SpanCase | None] = []
    for ref, gen, code, gold, prediction in zip(
        refs, gens, codes, gold_regions, predictions, strict=True
    ):
        if gold is None:
            cases.append(None)
            continue
        gen_baseline, ref_baseline = word_diff_regions(ref, gen)
        if code == "MissInfo":
            ours = [(m["ref_start"], m["ref_end"]) for m in prediction.missing]
            cases.append(SpanCase(code, gold.ref, ours, ref_baseline))
        else:
            ours = [(s["start"], s["end"]) for s in prediction.spans]
            cases.append(SpanCase(code, gold.gen, ours, gen_baseline))
    return cases


def f1_by_class(cases: list[SpanCase]) -> dict:
    """Per error class: pairs, character F1 of ours and of the baseline; NoContr: the share
    of pairs given any span."""
    out: dict = {}
    for code in dict.fromkeys(case.code for case in cases):
        mine = [case for case in cases if case.code == code]
        if code == "NoContr":
            out[code] = {
                "pairs": len(mine),
                "any_span": {
                    "ours": float(np.mean([bool(c.ours) for c in mine])),
                    "baseline": float(np.mean([bool(c.baseline) for c in mine])),
                },
            }
            continue
        row: dict = {"pairs": len(mine)}
        for who in ("ours", "baseline"):
            counts = np.sum([char_counts(getattr(c, who), c.gold) for c in mine], axis=0)
            row[who] = f1(*map(int, counts))
        out[code] = row
    return out


# --- parts -------------------------------------------------------------------------------


def read_synth_pairs(path: Path) -> pd.DataFrame:
    """The labelled pairs of the synth part, checked before the model loads: each ``detail``
    must read as its rule's record (a missing or bad one was a traceback)."""
    from evaluator.training.spans import check_span_pairs
    from mismatch_core.errors import DataError
    from mismatch_core.pairs import read_pairs

    pairs = read_pairs(path, labelled=True)
    if pairs.empty:
        raise DataError(f"{path}: no pairs")
    check_span_pairs(pairs, path)
    return pairs


def spans_on_synth(evaluator, pairs: pd.DataFrame, path: Path, per_class: int, seed: int) -> dict:
    from synth.spans import error_regions

    sample = pd.concat(
        [
            frame.sample(min(per_class, len(frame)), random_state=seed)
            for _, frame in pairs.groupby("label", sort=False)
        ],
        ignore_index=True,
    )
    gold = [error_regions(r.ref, r.gen, r.label, r.detail) for r in sample.itertuples(index=False)]
    known = [g if g.ref is not None else None for g in gold]
    cases = span_cases(
        evaluator, sample["ref"].tolist(), sample["gen"].tolist(), sample["label"].tolist(), known
    )
    by_class = f1_by_class([case for case in cases if case is not None])
    errors = [code for code in by_class if code != "NoContr"]
    return {
        "pairs_file": str(path),
        "pairs": len(sample),
        "missinfo_unplaced": int(sum(case is None for case in cases)),
        "per_class": by_class,
        "mean_f1": {
            who: float(np.mean([by_class[code][who] for code in errors]))
            for who in ("ours", "baseline")
        },
    }


def spans_on_bases(evaluator, human_dir: Path, limit: int | None, seed: int) -> dict:
    from evaluator.realtext_data import real_base_set
    from synth.spans import changed_regions

    base_set = real_base_set(human_dir, limit, seed)
    by_dataset, refs, bases = base_set.by_dataset, base_set.refs, base_set.gens
    items = base_set.perturbations.items
    gold = []
    for item in items:
        regions = changed_regions(
            bases[item.base], item.text, refs[item.base], omission=item.code == "MissInfo"
        )
        empty = not (regions.ref if item.code == "MissInfo" else regions.gen)
        gold.append(None if regions.ref is None or empty else regions)
    cases = span_cases(
        evaluator,
        [refs[item.base] for item in items],
        [item.text for item in items],
        [item.code for item in items],
        gold,
    )
    scored = [case for case in cases if case is not None]
    per_class = {}
    for code in dict.fromkeys(case.code for case in scored):
        mine = [case for case in scored if case.code == code]
        per_class[code] = _hits_and_precision(mine)
    return {
        "bases": {name: len(rs) for name, rs in by_dataset.items()},
        "pairs": len(scored),
        "unplaced": int(sum(case is None for case in cases)),
        "all": _hits_and_precision(scored),
        "per_class": per_class,
        "top_span_hit_mean_over_classes": float(
            np.mean([row["top_span_hit"] for row in per_class.values()])
        ),
    }


def _hits_and_precision(cases: list[SpanCase]) -> dict:
    counts = {
        who: np.sum([char_counts(getattr(c, who), c.gold) for c in cases], axis=0)
        for who in ("ours", "baseline")
    }
    return {
        "pairs": len(cases),
        "top_span_hit": float(
            np.mean([bool(c.ours) and overlaps(c.ours[0], c.gold) for c in cases])
        ),
        "with_spans": float(np.mean([bool(c.ours) for c in cases])),
        "precision": {
            who: float(tp / (tp + fp)) if tp + fp else float("nan")
            for who, (tp, fp, _) in counts.items()
        },
        "f1": {who: f1(*map(int, value)) for who, value in counts.items()},
    }
