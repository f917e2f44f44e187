"""`mismatch bench realtext`: a checkpoint on real text, beside sentBLEU, chrF and BERTScore-MiniLM.

The parts (sick, bases, darr) and what each measures: ``evaluator.bench.realtext``. This
module reads the options, runs the parts and prints their reports (the JSON holds every
figure, per class and per rule too; the report names, for P(NoContr) and a task checkpoint's
rating, the five rules each drops least).

Defaults: up to 150 held-out bases per dataset and 1,500 DARR pairs per language pair (seeded
samples; all 51,700 DARR pairs would take several times as long). A 1,500 sample moved chrF's
mean tau by 0.04 from its value on all pairs (0.252 vs 0.289): compare metrics within one run,
and use --darr-limit 0 for final figures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from evaluator.bench.realtext import (
    BASELINES,
    OURS,
    THRESHOLD,
    Scorer,
    bench_bases,
    bench_darr,
    bench_sick,
)
from evaluator.cli.bench.parts import (
    check_part_options,
    parse_parts,
    run_parts,
    table,
    write_result,
)
from mismatch_core.resources import DEFAULT_CHECKPOINT, DEFAULT_ENCODER
from mismatch_core.taxonomy import ERROR_CODES, MEANING_ERROR_CODES

PARTS = ("sick", "bases", "darr")
DEFAULT_DARR_LIMIT = 1500  # pairs per language pair; 0 = all 51,700
DEFAULT_BASES_LIMIT = 150  # real bases per dataset; 0 = all held-out
MIN_RULE_PAIRS = 20  # a rule's drop on fewer pairs says little; the report lists the rest in JSON
WEAKEST_RULES = 5


# --- report ------------------------------------------------------------------------------


def percent(value: float) -> str:
    return "—" if np.isnan(value) else f"{100 * value:.1f}%"


def sick_report(result: dict) -> str:
    return "\n".join(
        [
            f"SICK TRIAL: {result['pairs']} pairs, {result['paraphrases']} two-way entailments, "
            f"{result['contradictions']} contradictions (a = ref, b = gen)",
            f"two-way entailments read as NoContr (P(NoContr) >= {THRESHOLD}): "
            f"{percent(result['paraphrase_nocontr_recall'])}",
            f"contradictions read as NoContr: {percent(result['contradiction_read_as_nocontr'])}",
            table(
                ["metric", "AUROC paraphrase vs contradiction"],
                [[m, f"{v:.3f}"] for m, v in result["auroc"].items()],
            ),
        ]
    )


def bases_report(result: dict) -> str:
    metrics = list(result["drop"])
    counts = ", ".join(f"{name} {n}" for name, n in result["bases"].items())
    by_dataset = ", ".join(
        f"{name} {percent(v)}" for name, v in result["base_nocontr_recall_by_dataset"].items()
    )
    rows = [
        [
            code,
            str(row["pairs"]),
            str(row["bases"]),
            *[percent(row["drop"][m]) for m in metrics],
            percent(row["top_error_is_class"]),
        ]
        for code, row in result["per_class"].items()
    ]
    rows.append(
        [
            "all",
            str(result["pairs"]),
            str(sum(result["bases"].values())),
            *[percent(result["drop"][m]) for m in metrics],
            f"{percent(result['top_error_is_class_mean_over_classes'])} (class mean)",
        ]
    )
    rows.append(
        [
            "meaning",
            str(result["meaning_pairs"]),
            "",
            *[percent(result["drop_meaning"][m]) for m in metrics],
            f"(all but {', '.join(c for c in ERROR_CODES if c not in MEANING_ERROR_CODES)})",
        ]
    )
    errors = ", ".join(f"{rule} {n}" for rule, n in sorted(result["rule_errors"].items())) or "none"
    counted = [(r, row) for r, row in result["per_rule"].items() if row["pairs"] >= MIN_RULE_PAIRS]
    ours = [m for m in metrics if m == OURS or m.startswith("rating (")]
    weakest_lines = []
    for metric in ours:  # the checkpoint's own scores: P(NoContr) and a task's rating
        weakest = sorted(counted, key=lambda item: item[1]["drop"][metric])[:WEAKEST_RULES]
        missed = ", ".join(
            f"{rule} {percent(row['drop'][metric])} ({row['pairs']} pairs, "
            f"{percent(row['read_as_nocontr'])} read as NoContr)"
            for rule, row in weakest
        )
        weakest_lines.append(
            f"rules whose errors {metric} drops least ({MIN_RULE_PAIRS}+ pairs; per rule in "
            f"the JSON): {missed or 'none'}"
        )
    return "\n".join(
        [
            f"Real bases (held-out groups): {counts}; {result['pairs']} perturbed pairs",
            f"unperturbed bases read as NoContr: {percent(result['base_nocontr_recall'])} "
            f"({by_dataset})",
            "drop: share of pairs with score(ref, base) > score(ref, perturbed); top error = "
            "class: share whose top error class (NoContr excluded) is the rule's class",
            table(
                ["class", "pairs", "bases", *[f"drop {m}" for m in metrics], "top error = class"],
                rows,
            ),
            *weakest_lines,
            f"rules that raised: {errors}",
        ]
    )


def darr_report(result: dict) -> str:
    lps = list(result["pairs"])
    counts = ", ".join(f"{lp} {n}" for lp, n in result["pairs"].items())
    rows = [
        [m, *[f"{result['tau'][m][lp]:.3f}" for lp in lps], f"{result['tau'][m]['mean']:.3f}"]
        for m in result["tau"]
    ]
    return "\n".join(
        [
            f"WMT19 DARR: {counts} pairs; {result['distinct_scored']} distinct (ref, gen) scored",
            "Kendall-like tau (ties discordant):",
            table(["metric", *lps, "mean"], rows),
        ]
    )


REPORTS: dict[str, Callable[[dict], str]] = {
    "sick": sick_report,
    "bases": bases_report,
    "darr": darr_report,
}


# --- command -----------------------------------------------------------------------------


def bench_realtext(args: argparse.Namespace) -> None:
    from evaluator.cli import CommandError
    from evaluator.cli.scoring import check_json_output, checkpoint_inputs
    from evaluator.hub import load
    from evaluator.realtext_data import DARR, SICK_TRIAL, bases_trained_on
    from evaluator.signature import signature
    from mismatch_core.checkpoint_files import resolve_checkpoint
    from mismatch_core.resources import data_dir

    parts = parse_parts(args.parts, PARTS)
    root = data_dir()  # a missing data folder: one line, from the command's entry point
    paths = {"sick": root / SICK_TRIAL, "darr": root / DARR}
    check_part_options(
        parts,
        [("--bases-limit", args.bases_limit, "bases"), ("--darr-limit", args.darr_limit, "darr")],
    )
    if args.out:
        inputs = [*paths.values(), *checkpoint_inputs(args.checkpoint)]
        check_json_output("--out", Path(args.out), inputs, "the report")
    for part in ("sick", "darr"):
        if part in parts and not paths[part].is_file():
            raise CommandError(f"{paths[part]}: no such file")
    name, revision = resolve_checkpoint(args.checkpoint or DEFAULT_CHECKPOINT)
    scorer = Scorer(load(name, revision))
    trained_on = bases_trained_on(scorer.checkpoint.config.get("training"))
    left_out = {}
    if "bases" in parts and scorer.rating and trained_on:
        why = (
            f"{name} was fitted on {', '.join(trained_on)} (its training record), whose "
            "held-out groups the bases part scores, so its figures there would not be held out"
        )
        if args.parts is not None:  # asked for
            raise CommandError(f"{why}; leave the part out (--parts sick,darr)")
        parts.remove("bases")
        left_out["bases"] = why
        print(f"bases part left out: {why}", file=sys.stderr, flush=True)
    darr_limit = DEFAULT_DARR_LIMIT if args.darr_limit is None else args.darr_limit or None
    bases_limit = DEFAULT_BASES_LIMIT if args.bases_limit is None else args.bases_limit or None
    result: dict = {
        "checkpoint": str(name),
        "signature": signature(scorer.checkpoint, THRESHOLD).to_dict(),
        "threshold": THRESHOLD,
        "seed": args.seed,
        "bases_limit": bases_limit,
        "darr_limit": darr_limit,
        "baselines": {
            m: f"{column} ({DEFAULT_ENCODER})" if column.startswith("bert") else column
            for m, column in BASELINES.items()
        },
        "seconds": {},
        **({"left_out": left_out} if left_out else {}),
    }
    print(f"realtext bench: checkpoint {name}; threshold {THRESHOLD}; seed {args.seed}", flush=True)
    print(f"signature {result['signature']['signature']}", flush=True)
    if scorer.rating:
        print(
            f"{scorer.rating}: the task's mean rating, each criterion on [0, 1] "
            "(a classification task: the good class's probability)",
            flush=True,
        )
    runs = {
        "sick": lambda: bench_sick(scorer, paths["sick"]),
        "bases": lambda: bench_bases(scorer, root / "human", bases_limit, args.seed),
        "darr": lambda: bench_darr(scorer, paths["darr"], darr_limit, args.seed),
    }
    run_parts(parts, runs, REPORTS, result)
    write_result(args.out, result)
