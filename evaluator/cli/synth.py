"""`mismatch synth`: build the synthetic pair set, or print an audit sample of one."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from evaluator.cli import CommandError
from mismatch_core.config import check_seed
from synth.config import SynthConfig, dump_config, load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=Path,
        help="output directory (train/val parquet, manifest.json); required unless --print_config",
    )  # fmt: skip
    parser.add_argument(
        "--config", type=Path,
        help="YAML with SynthConfig fields (the shipped recipe: configs/synth.yaml; without one, "
        "the code's defaults, which stop at another min_round_yield)",
    )  # fmt: skip
    parser.add_argument(
        "--print_config", "--print-config", action="store_true",
        help="print the full config (defaults, then --config, then the flags) as YAML and exit "
        "(LightningCLI's spelling, as pretrain and finetune take it; or with a hyphen)",
    )  # fmt: skip
    parser.add_argument("--num-pairs", type=int, help="total pairs over both splits")
    parser.add_argument(
        "--seed", type=int,
        help="generation seed (default: the config's, 13); with --audit, the sample's (0 unless given)",
    )  # fmt: skip
    parser.add_argument("--processes", type=int, help="worker processes (default 2)")
    parser.add_argument("--audit", type=int, metavar="N", help="print N random pairs per class of OUT/train.parquet and exit")
    parser.add_argument(
        "--audit-by", choices=("class", "rule"), default="class",
        help="with --audit: N pairs per class, or per rule (NoContr rewrite families, chains, real paraphrases)",
    )  # fmt: skip
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    if args.out is None and not args.print_config:
        raise CommandError("--out is required")
    if args.audit is not None:
        if args.out is None:
            raise CommandError("--audit reads OUT/train.parquet; give --out")
        if args.audit < 1:
            raise CommandError(f"--audit must be at least 1, got {args.audit}")
        unread = [
            flag
            for flag, value in (
                ("--config", args.config),
                ("--print_config", args.print_config or None),
                ("--num-pairs", args.num_pairs),
                ("--processes", args.processes),
            )
            if value is not None
        ]
        if unread:
            raise CommandError(
                f"--audit reads the pairs already in --out: leave out {', '.join(unread)}"
            )
        try:
            check_seed(args.seed or 0, "--seed")
        except ValueError as error:
            raise CommandError(str(error)) from None
        return audit(args.out, args.audit, args.seed or 0, args.audit_by)
    config = load_config(args.config)
    least = smallest_run(config)
    if args.num_pairs is not None and args.num_pairs < least:  # before the config's own checks
        raise CommandError(
            f"--num-pairs must be at least {least} (one pair per class in each split at "
            f"val_fraction {config.val_fraction}), got {args.num_pairs}"
        )
    overrides = {"num_pairs": args.num_pairs, "seed": args.seed, "processes": args.processes}
    try:
        config = dataclasses.replace(config, **{k: v for k, v in overrides.items() if v is not None})
    except ValueError as error:  # "<field> must be ...": name the flag that set it
        field = str(error).split()[0]
        flag = f"--{field.replace('_', '-')}: " if field in overrides else ""
        raise CommandError(f"{flag}{error}") from None
    if config.num_pairs < least:
        raise CommandError(
            f"num_pairs (--num-pairs) must be at least {least} (one pair per class in each split at "
            f"val_fraction {config.val_fraction}), got {config.num_pairs}"
        )
    if args.print_config:
        print(dump_config(config), end="")
        return 0

    from tqdm import tqdm

    from synth.generate import generate
    from synth.output import pair_set_problem, write

    problem = pair_set_problem(args.out)  # before the pairs are made, not after
    if problem:
        raise CommandError(f"--out: {problem}")

    bar = tqdm(total=config.num_pairs, unit="pair", disable=args.quiet, file=sys.stderr)

    def progress(done: int) -> None:
        bar.update(done - bar.n)

    train, val, manifest = generate(config, progress=progress)
    bar.close()
    write(args.out, train, val, manifest)
    if manifest["shortfall"]:
        short = ", ".join(f"{code} {count}" for code, count in manifest["shortfall"].items())
        print(
            f"warning: {manifest['num_pairs']} of {config.num_pairs} pairs were possible from these "
            f"corpora and rules; missing per class: {short}",
            file=sys.stderr,
        )
    summary = {k: manifest[k] for k in ("num_pairs", "splits", "per_class", "shortfall", "per_source_share", "seconds", "pairs_per_second")}
    print(json.dumps(summary, indent=1))
    return 0


def smallest_run(config: SynthConfig) -> int:
    """The fewest pairs whose quotas give every class at least one pair in each split."""
    from mismatch_core.taxonomy import CODES
    from synth.quotas import class_needs

    splits = ("train", "val") if config.val_fraction > 0 else ("train",)
    total = len(CODES)
    while True:  # the config's other checks need not hold at these sizes
        need = class_needs(total, config.val_fraction)
        if all(need[(split, code)] >= 1 for split in splits for code in CODES):
            return total
        total += len(CODES)


def audit(out_dir: Path, per_class: int, seed: int, by: str = "class") -> int:
    """Print per_class random pairs of every class (or of every rule, ``by="rule"``) with the
    rule, the base the error stands on and what changed."""
    import pandas as pd

    from mismatch_core.pairs import LABEL_COLUMNS, PAIR_COLUMNS

    path = out_dir / "train.parquet"
    if not path.is_file():
        raise CommandError(f"{path} does not exist; run `mismatch synth --out {out_dir}` first")
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as error:  # pyarrow's errors derive from these
        raise CommandError(f"{path} cannot be read as parquet: {error}") from None
    shown = (*PAIR_COLUMNS, *LABEL_COLUMNS, "rule", "detail")
    missing = [c for c in shown if c not in frame]
    if missing:
        raise CommandError(f"{path} is not a mismatch synth output: no column(s) {', '.join(missing)}")
    for key, rows in frame.groupby("label_id" if by == "class" else "rule", sort=True):
        sample = rows.sample(min(per_class, len(rows)), random_state=seed)
        print(f"\n=== {sample['label'].iloc[0] if by == 'class' else key} ({len(rows)} pairs) ===")
        for row in sample.itertuples():
            detail = _detail(path, row.id, row.detail)
            rules = f" {detail['rules']}" if "rules" in detail else ""
            print(f"[{row.id}] {row.rule} ({detail.get('base')}{rules}) {detail.get('old', '')!r} -> {detail.get('new', '')!r}")
            print(f"  ref: {row.ref}")
            if "base_text" in detail:
                print(f"  base ({detail.get('base_chrf')}): {detail['base_text']}")
            print(f"  gen: {row.gen}")
    return 0


def _detail(path: Path, pair_id: str, text: object) -> dict:
    """A pair's ``detail`` column, read (CommandError naming the pair where it cannot be)."""
    from mismatch_core.pairs import detail_problem

    problem = detail_problem(text)
    if problem:
        raise CommandError(f"{path}: pair {pair_id!r}: detail {problem}")
    return json.loads(str(text))
