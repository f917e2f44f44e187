"""`mismatch bench spans`: are the error spans in the right place?

The parts (synth, bases) and what each measures: ``evaluator.bench.spans``. This module reads
the options, runs the parts and prints their reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluator.bench.spans import read_synth_pairs, spans_on_bases, spans_on_synth
from evaluator.cli.bench.parts import table
from mismatch_core.resources import DEFAULT_CHECKPOINT

PARTS = ("synth", "bases")
DEFAULT_PER_CLASS = 150  # synthetic val pairs per class
DEFAULT_BASES_LIMIT = 150  # real bases per dataset, as in bench realtext


# --- report ------------------------------------------------------------------------------


def synth_report(result: dict) -> str:
    rows = []
    for code, row in result["per_class"].items():
        if code == "NoContr":
            continue
        rows.append([code, str(row["pairs"]), f"{row['ours']:.3f}", f"{row['baseline']:.3f}"])
    rows.append(
        [  # the mean over the error classes above: their pairs (not NoContr's, nor unplaced)
            "mean over classes",
            str(sum(int(row[1]) for row in rows)),
            f"{result['mean_f1']['ours']:.3f}",
            f"{result['mean_f1']['baseline']:.3f}",
        ]
    )
    lines = [
        f"Held-out synthetic pairs: {result['pairs']} from {result['pairs_file']} "
        f"({result['missinfo_unplaced']} MissInfo pairs whose omission has no place in ref "
        "left out)",
        table(["class", "pairs", "char F1 ours", "char F1 word diff"], rows),
    ]
    if "NoContr" in result["per_class"]:
        row = result["per_class"]["NoContr"]
        lines.append(
            f"NoContr pairs given any span: ours {100 * row['any_span']['ours']:.1f}%, "
            f"word diff {100 * row['any_span']['baseline']:.1f}% ({row['pairs']} pairs)"
        )
    return "\n".join(lines)


def bases_report(result: dict) -> str:
    def line(name: str, row: dict) -> list[str]:
        return [
            name,
            str(row["pairs"]),
            f"{100 * row['top_span_hit']:.1f}%",
            f"{100 * row['with_spans']:.1f}%",
            f"{row['precision']['ours']:.3f}",
            f"{row['precision']['baseline']:.3f}",
            f"{row['f1']['ours']:.3f}",
            f"{row['f1']['baseline']:.3f}",
        ]

    rows = [line(code, row) for code, row in result["per_class"].items()]
    rows.append(line("all", result["all"]))
    counts = ", ".join(f"{name} {n}" for name, n in result["bases"].items())
    return "\n".join(
        [
            f"Real bases with one applied error: {counts}; {result['pairs']} perturbed pairs "
            f"({result['unplaced']} left out: the change has no place to mark)",
            f"top span overlaps the change, mean over classes: "
            f"{100 * result['top_span_hit_mean_over_classes']:.1f}%",
            table(
                [
                    "class",
                    "pairs",
                    "top span hit",
                    "with spans",
                    "precision ours",
                    "precision word diff",
                    "char F1 ours",
                    "char F1 word diff",
                ],
                rows,
            ),
        ]
    )


# --- command -----------------------------------------------------------------------------


def bench_spans(args: argparse.Namespace) -> None:
    from evaluator.cli import CommandError
    from evaluator.cli.bench.parts import (
        check_part_options,
        parse_parts,
        run_parts,
        write_result,
    )
    from evaluator.cli.scoring import check_json_output, checkpoint_inputs
    from evaluator.evaluator import Evaluator
    from evaluator.signature import signature
    from evaluator.tasks import human_root
    from mismatch_core.checkpoint_files import resolve_checkpoint

    if args.parts is None:  # the synthetic part when its pairs are given
        parts = list(PARTS) if args.synth_pairs is not None else ["bases"]
    else:
        parts = parse_parts(args.parts, PARTS)
    if "synth" in parts and args.synth_pairs is None:
        raise CommandError("the synth part needs --synth-pairs (a mismatch synth val.parquet)")
    own_pairs = args.pairs if args.target == "spans" else None  # `all`: other targets read it
    check_part_options(
        parts,
        [
            ("--synth-pairs", args.synth_pairs, "synth"),
            ("--pairs", own_pairs, "synth"),
            ("--bases-limit", args.bases_limit, "bases"),
        ],
    )
    if args.out:
        synth_pairs = None if args.synth_pairs is None else Path(args.synth_pairs)
        inputs = [synth_pairs, *checkpoint_inputs(args.checkpoint)]
        check_json_output("--out", Path(args.out), inputs, "the report")
    labelled = read_synth_pairs(Path(args.synth_pairs)) if "synth" in parts else None
    name, revision = resolve_checkpoint(args.checkpoint or DEFAULT_CHECKPOINT)
    evaluator = Evaluator.from_pretrained(name, revision=revision)
    if not evaluator.has_spans:
        raise CommandError(f"{name} has no span tagger (see mismatch spans train)")
    per_class = args.pairs or DEFAULT_PER_CLASS
    bases_limit = DEFAULT_BASES_LIMIT if args.bases_limit is None else args.bases_limit or None
    result: dict = {
        "checkpoint": str(name),
        "signature": signature(evaluator.checkpoint, evaluator.threshold).to_dict(),
        "seed": args.seed,
        "seconds": {},
    }
    print(f"spans bench: checkpoint {name}; seed {args.seed}", flush=True)
    print(f"signature {result['signature']['signature']}", flush=True)
    runs = {
        "synth": lambda: spans_on_synth(
            evaluator, labelled, Path(args.synth_pairs), per_class, args.seed
        ),
        "bases": lambda: spans_on_bases(evaluator, human_root(), bases_limit, args.seed),
    }
    run_parts(parts, runs, {"synth": synth_report, "bases": bases_report}, result)
    write_result(args.out, result)
