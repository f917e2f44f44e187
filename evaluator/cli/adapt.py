"""`mismatch adapt`: continue a base's mismatch training on divergent real bases.

    mismatch adapt pairs --out data/real_bases
    for s in train val; do
      mismatch features --pairs data/real_bases/$s.parquet --out data/features/real_bases/$s.parquet \
        --embeddings data/features/real_bases/embeddings.parquet \
        --alignments data/features/real_bases/alignments.parquet
    done
    (the same for the synthetic pairs, into data/features/synth; add
    --tokens data/features/real_bases/tokens, and the same for synth, for --add-token-branch)
    mismatch adapt train --checkpoint BASE \
        --real data/real_bases --real-features data/features/real_bases \
        --synth data/synth --synth-features data/features/synth --out checkpoints/mismatch-base

    graded chains (each added error must lower P(NoContr)), one more pairs folder:
    mismatch adapt chains --real data/real_bases --out data/graded
    (mismatch features for its splits, into data/features/graded, as above)
    mismatch adapt train ... --graded data/graded --graded-features data/features/graded

``pairs`` writes real-base pairs (``evaluator.training.real_bases``: highly rated real outputs
of groups no ``mismatch evaluate`` seed tests on, and SICK TRAIN, each as itself and with synth
errors applied). ``train`` runs ``evaluator.training.continued`` once per NoContr weight and
writes the best run's checkpoint; the span tagger and the scaler are kept. ``chains`` writes,
per split of a ``pairs`` folder, its real bases with chains of one, two and three errors
(``real_bases.graded_chains``), which ``train --graded`` ranks (each copy below its parent, or
with ``--graded-against base`` below its chain's base). With
``--add-token-branch`` each run first grafts the token-level comparison branch onto the
checkpoint (``continued.with_token_branch``), and ``--add-features`` adds metric columns
(``continued.with_features``), with ``--head-only`` read by the mismatch head alone. The
shipped base
was continued from the synthetic-only base (``checkpoints/mismatch-base`` at commit 313acf9);
``--checkpoint checkpoints/mismatch-base`` today continues the continued one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from mismatch_core.resources import DEFAULT_CHECKPOINT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from evaluator.training.continue_settings import GRADED_AGAINST, ContinueSettings

    defaults = ContinueSettings()
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    pairs = modes.add_parser(
        "pairs",
        help="write real-base pairs (train.parquet, val.parquet)",
        formatter_class=parser.formatter_class,
    )
    pairs.add_argument("--out", required=True, type=Path, help="folder to write")
    pairs.add_argument(
        "--human", type=Path, default=None, help="human-rating data folder (default: <data>/human)"
    )
    pairs.add_argument(
        "--sick",
        type=Path,
        default=None,
        help="SICK TRAIN jsonl.gz (default: <data>/sick/sick_train.jsonl.gz)",
    )
    pairs.add_argument("--seed", type=int, default=23, help="seed of the applied errors")
    pairs.add_argument(
        "--cap-per-class",
        type=int,
        default=1500,
        help="error pairs per class from the applied rules (SICK contradictions come on top)",
    )
    pairs.add_argument(
        "--sick-substitutions",
        action="store_true",
        help="add SICK TRAIN contradictions that swap or substitute one content word, "
        "labelled by that word's class (besides the negation ones)",
    )
    chains = modes.add_parser(
        "chains",
        help="write graded chains on the real bases of a pairs folder",
        formatter_class=parser.formatter_class,
    )
    chains.add_argument(
        "--real", required=True, type=Path, help="`mismatch adapt pairs` output folder"
    )
    chains.add_argument("--out", required=True, type=Path, help="folder to write")
    chains.add_argument("--depth", type=int, default=3, help="errors in the longest copy")
    chains.add_argument("--seed", type=int, default=31, help="seed of the applied errors")
    train = modes.add_parser(
        "train",
        help="continue training and write the best run",
        formatter_class=parser.formatter_class,
    )
    train.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="checkpoint to continue")
    for name, what in (("real", "`mismatch adapt pairs`"), ("synth", "`mismatch synth`")):
        train.add_argument(f"--{name}", required=True, type=Path, help=f"{what} output folder")
        train.add_argument(
            f"--{name}-features",
            required=True,
            type=Path,
            help="what mismatch features wrote for it: train.parquet, val.parquet, "
            "embeddings.parquet, alignments.parquet, and tokens/ for a token-level branch",
        )
    train.add_argument("--out", required=True, type=Path, help="checkpoint folder to write")
    train.add_argument(
        "--epochs", type=int, default=defaults.epochs, help="epochs per run (the best is kept)"
    )
    train.add_argument(
        "--learning-rate", type=float, default=defaults.learning_rate, help="AdamW learning rate"
    )
    train.add_argument(
        "--nocontr-weights",
        default=",".join(str(w) for w in defaults.nocontr_weights),
        help="comma-separated NoContr class weights, one run each",
    )
    train.add_argument(
        "--batch-size", type=int, default=defaults.batch_size, help="pairs per training step"
    )
    train.add_argument(
        "--seed", type=int, default=defaults.seed, help="seed of initialisation and batch order"
    )
    train.add_argument(
        "--add-token-branch",
        action="store_true",
        help="graft the token-level comparison branch onto the checkpoint first "
        "(needs tokens/ in both features folders)",
    )
    train.add_argument(
        "--add-features",
        default="",
        help="comma-separated metric columns the checkpoint does not read yet, to add "
        "(e.g. disfluency; both features folders must hold them)",
    )
    train.add_argument(
        "--graded",
        type=Path,
        default=None,
        help="`mismatch adapt chains` output folder: each copy must score below its parent",
    )
    train.add_argument(
        "--graded-features", type=Path, default=None, help="what mismatch features wrote for it"
    )
    train.add_argument(
        "--graded-weight",
        type=float,
        default=None,
        help="weight of the graded chains' hinge beside the class loss (with --graded; default 1)",
    )
    train.add_argument(
        "--graded-margin",
        type=float,
        default=None,
        help="how far a copy's NoContr logit must sit below its parent's (with --graded; "
        f"default {defaults.graded_margin})",
    )
    train.add_argument(
        "--graded-against",
        choices=GRADED_AGAINST,
        default=None,
        help="rank each copy below its parent, or below its chain's base by one margin per "
        f"error, so no copy with an error is pushed toward NoContr (with --graded; default "
        f"{defaults.graded_against})",
    )
    train.add_argument(
        "--head-only",
        action="store_true",
        help="the added columns are read by the mismatch head alone, through one linear "
        "term per class, and only that term trains (the rest of the checkpoint stays as it "
        "is; it has few weights: raise --learning-rate, e.g. to 0.03)",
    )


def run(args: argparse.Namespace) -> int:
    commands = {"pairs": _pairs, "chains": _chains, "train": _train}
    return commands[args.mode](args)


def _split_files() -> tuple[str, ...]:
    from evaluator.training.data import SPLITS

    return tuple(f"{split}.parquet" for split in SPLITS)


def _check_out(out: Path) -> None:
    """Refuse a folder the split files would clobber before any work is done."""
    from evaluator.cli import CommandError
    from mismatch_core.pairs import pair_folder_problem

    problem = pair_folder_problem(out, _split_files())
    if problem:
        raise CommandError(f"--out: {problem}")


def _write_splits(out: Path, splits: dict) -> None:
    """Both splits or neither: the folder is swapped in whole."""
    from mismatch_core.atomic import atomic_directory

    with atomic_directory(out, _split_files()) as staging:
        for split, frame in splits.items():
            frame.to_parquet(staging / f"{split}.parquet", index=False)


def _pairs(args: argparse.Namespace) -> int:
    from evaluator.cli import CommandError
    from evaluator.tasks import human_root
    from evaluator.training.real_bases import real_base_pairs
    from mismatch_core.config import check_seed
    from mismatch_core.errors import DataError
    from mismatch_core.resources import data_dir

    _check_out(args.out)
    if args.cap_per_class < 1:
        raise CommandError(f"--cap-per-class must be positive, got {args.cap_per_class}")
    try:  # as chains and train check it (-5 or 2**70 were taken)
        check_seed(args.seed, "--seed")
    except ValueError as error:
        raise CommandError(str(error)) from None
    human = human_root(args.human)
    sick = args.sick or data_dir() / "sick" / "sick_train.jsonl.gz"
    try:
        splits = real_base_pairs(
            human, sick, args.seed, args.cap_per_class, sick_substitutions=args.sick_substitutions
        )
    except (DataError, OSError, ValueError) as error:
        raise CommandError(str(error)) from None
    _write_splits(args.out, splits)
    for split, frame in splits.items():
        counts = class_counts(frame["label"])
        print(f"{split}: {len(frame)} pairs ({counts}) -> {args.out / f'{split}.parquet'}")
    return 0


def _chains(args: argparse.Namespace) -> int:
    from evaluator.cli import CommandError
    from evaluator.training.data import SPLITS
    from evaluator.training.real_bases import graded_chains, read_real_bases
    from mismatch_core.atomic import same_path
    from mismatch_core.config import check_seed
    from mismatch_core.errors import DataError

    _check_out(args.out)
    if same_path(args.out, args.real):
        raise CommandError(f"--out {args.out} is the --real folder this run reads; name another")
    if args.depth < 1:
        raise CommandError(f"--depth must be at least 1, got {args.depth}")
    try:
        check_seed(args.seed, "--seed")
        splits = {
            split: graded_chains(read_real_bases(args.real, split), args.depth, args.seed)
            for split in SPLITS
        }
    except (DataError, ValueError) as error:
        raise CommandError(str(error)) from None
    _write_splits(args.out, splits)
    for split, frame in splits.items():
        copies = frame[frame["parent"] != ""]
        print(
            f"{split}: {len(frame) - len(copies)} bases, {len(copies)} copies "
            f"({class_counts(copies['label'])}) -> {args.out / f'{split}.parquet'}"
        )
    return 0


def class_counts(labels: pd.Series) -> str:
    """'NoContr 120, EntErr 30, ...': the pairs of each class, most first, as printed."""
    counts = labels.value_counts()
    return ", ".join(f"{label} {count}" for label, count in counts.items()) or "none"


def _train(args: argparse.Namespace) -> int:
    from evaluator.cli import CommandError
    from evaluator.features.registry import metrics_for
    from evaluator.hub import load, save_from_checkpoint
    from evaluator.signature import folder_signature, signature
    from evaluator.training.continue_settings import ContinueSettings
    from evaluator.training.continued import (
        continue_run,
        load_graded_links,
        load_split_inputs,
        with_features,
    )
    from mismatch_core.checkpoint_files import export_problem, resolve_checkpoint

    try:
        weights = tuple(float(w) for w in args.nocontr_weights.split(",") if w.strip())
    except ValueError:
        raise CommandError(f"--nocontr-weights: not numbers: {args.nocontr_weights!r}") from None
    problem = export_problem(args.out)
    if problem:
        raise CommandError(f"--out: {problem}")
    added = tuple(name.strip() for name in args.add_features.split(",") if name.strip())
    try:
        metrics_for(added)
    except ValueError as error:
        raise CommandError(f"--add-features: {error}") from None
    if args.head_only and not added:
        raise CommandError("--head-only needs --add-features")
    if (args.graded is None) != (args.graded_features is None):
        raise CommandError("--graded and --graded-features go together")
    graded_options = (args.graded_weight, args.graded_margin, args.graded_against)
    if args.graded is None and any(option is not None for option in graded_options):
        raise CommandError("--graded-weight, --graded-margin and --graded-against need --graded")
    if args.head_only and args.add_token_branch:
        raise CommandError("--head-only trains the added columns alone; drop --add-token-branch")
    folders = {"--real": args.real, "--synth": args.synth, "--graded": args.graded}
    for option, folder in folders.items():
        if folder is not None and not Path(folder).is_dir():  # else its features are named missing
            raise CommandError(f"{option} {folder}: no such folder of pairs")
    graded_weight = 0.0 if args.graded is None else 1.0
    if args.graded_weight is not None:
        graded_weight = args.graded_weight
    graded_margin = ContinueSettings.graded_margin
    if args.graded_margin is not None:
        graded_margin = args.graded_margin
    graded_against = args.graded_against or ContinueSettings.graded_against
    try:
        settings = ContinueSettings(
            epochs=args.epochs,
            learning_rate=args.learning_rate,
            nocontr_weights=weights,
            batch_size=args.batch_size,
            seed=args.seed,
            add_token_branch=args.add_token_branch,
            add_features=added,
            head_only=args.head_only,
            graded_weight=graded_weight,
            graded_margin=graded_margin,
            graded_against=graded_against,
        )
    except ValueError as error:  # "<setting> must ...": name the option that set it
        field = str(error).split()[0]
        option = f"--{field.replace('_', '-')}: " if hasattr(args, field) else "adapt train: "
        raise CommandError(f"{option}{error}") from None
    path, revision = resolve_checkpoint(str(args.checkpoint))
    checkpoint = load(path, revision)
    start = signature(checkpoint)  # the start: its name and the sha256 of its config and weights
    checkpoint = with_features(
        checkpoint,
        added,
        [(args.real, args.real_features), (args.synth, args.synth_features)],
        args.head_only,
    )
    data = {
        f"{name}_{split}": pairs
        for name, folder, features in (
            ("real", args.real, args.real_features),
            ("synth", args.synth, args.synth_features),
        )
        for split, pairs in load_split_inputs(
            checkpoint, folder, features, args.add_token_branch
        ).items()
    }
    graded = None
    if args.graded is not None:
        graded = load_graded_links(
            checkpoint, args.graded, args.graded_features, args.add_token_branch, graded_against
        )
    sizes = ", ".join(f"{name} {len(pairs)}" for name, pairs in data.items())
    print(f"pairs: {sizes}", file=sys.stderr, flush=True)
    runs = []
    for weight in weights:
        model, history, chosen = continue_run(
            path,
            revision,
            data,
            settings,
            weight,
            log=lambda line: print(line, file=sys.stderr),
            graded=graded,
        )
        runs.append((chosen, model, history))
    chosen, model, _ = max(runs, key=lambda run: run[0]["score"])
    training = dict(checkpoint.config.get("training") or {})
    training["continued"] = {
        "from": str(args.checkpoint),
        "from_signature": str(start),
        "real_pairs": {s: len(data[f"real_{s}"]) for s in ("train", "val")},
        "synthetic_pairs": {s: len(data[f"synth_{s}"]) for s in ("train", "val")},
        "graded_links": None if graded is None else {s: len(graded[s]) for s in graded},
        "settings": {**vars(settings), "nocontr_weights": list(weights)},
        "runs": [history for _, _, history in runs],
        "chosen": chosen,
        # the record of the run that made the start, when the start was itself continued
        "before": training.get("continued"),
        # the start's figures, on its own data: kept out of the metrics, which are this model's
        "start_metrics": checkpoint.config.get("metrics") or {},
    }
    metrics = {
        f"continued {k}": v for k, v in chosen.items() if k.endswith(("_acc", "_nocontr", "_below"))
    }
    out = save_from_checkpoint(checkpoint, model, args.out, training=training, metrics=metrics)
    written = {"chosen": chosen, "out": str(out), "signature": str(folder_signature(out))}
    print(json.dumps(written, indent=2))
    return 0
