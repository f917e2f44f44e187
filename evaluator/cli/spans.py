"""`mismatch spans`: give a checkpoint a span tagger, trained on synthetic and real-base pairs.

    mismatch spans train --checkpoint checkpoints/mismatch-base --pairs data/synth \
        --real-bases ../shared/data/human --tokens data/tokens --out checkpoints/mismatch-base
    mismatch spans copy --from checkpoints/mismatch-base --to checkpoints/mismatch-translation

``train`` fits the tagger on the pairs of ``PAIRS/train.parquet``, with ``--real-bases`` also
on errors applied to real outputs of the human-rating groups fine-tuning trains on (a tenth of
all groups held out to choose the epoch), and writes the checkpoint with it; the rest of the
model is unchanged. ``copy`` puts a trained tagger into other checkpoints on the same encoder
(the task checkpoints fitted on that base), so ``mismatch predict --task T`` gives spans too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import asdict
from pathlib import Path

from mismatch_core.groups import group_position
from mismatch_core.resources import DEFAULT_CHECKPOINT

DEV_FRACTION = 0.1  # training groups held out to choose the epoch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from evaluator.training.span_settings import SpanTraining

    defaults = SpanTraining()
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    train = modes.add_parser(
        "train",
        help="fit a span tagger and write the checkpoint with it",
        formatter_class=parser.formatter_class,
    )
    train.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="checkpoint to extend")
    train.add_argument("--pairs", required=True, type=Path, help="mismatch synth output folder")
    train.add_argument(
        "--tokens",
        required=True,
        type=Path,
        help="token store folder (filled with the texts it lacks)",
    )
    train.add_argument("--out", required=True, type=Path, help="checkpoint folder to write")
    train.add_argument(
        "--real-bases",
        type=Path,
        default=None,
        metavar="HUMAN_DIR",
        help="also train on errors applied to the real outputs of the training groups of the "
        "human-rating sets in this folder (e.g. ../shared/data/human)",
    )
    train.add_argument(
        "--max-pairs",
        type=int,
        default=None,
        help="seeded sample of PAIRS/train.parquet (real-base pairs are all kept)",
    )
    train.add_argument("--dim", type=int, default=defaults.dim, help="the tagger's hidden width")
    train.add_argument("--epochs", type=int, default=defaults.epochs, help="most epochs")
    train.add_argument(
        "--batch-size", type=int, default=defaults.batch_size, help="pairs per training step"
    )
    train.add_argument(
        "--learning-rate", type=float, default=defaults.learning_rate, help="AdamW learning rate"
    )
    train.add_argument(
        "--patience",
        type=int,
        default=defaults.patience,
        help="epochs without a lower dev loss before training stops",
    )
    train.add_argument(
        "--seed",
        type=int,
        default=defaults.seed,
        help="seed of the tagger's start, the samples and the real-base errors",
    )
    copy = modes.add_parser(
        "copy",
        help="put a trained span tagger into other checkpoints",
        formatter_class=parser.formatter_class,
    )
    copy.add_argument("--from", dest="source", required=True, help="checkpoint with a tagger")
    copy.add_argument("--to", nargs="+", required=True, type=Path, help="checkpoint folders")


def run(args: argparse.Namespace) -> int:
    return _train(args) if args.mode == "train" else _copy(args)


def _train(args: argparse.Namespace) -> int:
    import pandas as pd

    from evaluator.cli import CommandError
    from evaluator.features.embeddings import claim_stores, store_sources
    from evaluator.features.token_store import TokenStore
    from evaluator.hub import load, save_from_checkpoint
    from evaluator.signature import folder_signature, signature
    from evaluator.training.data import ensure_tokens
    from evaluator.training.span_settings import SpanTraining
    from evaluator.training.spans import (
        check_span_pairs,
        span_examples,
        tagger_real_bases,
        train_span_tagger,
        with_span_tagger,
    )
    from mismatch_core.atomic import is_within
    from mismatch_core.checkpoint_files import export_problem
    from mismatch_core.errors import DataError
    from mismatch_core.pairs import read_pairs
    from mismatch_core.resources import portable_path

    if args.max_pairs is not None and args.max_pairs < 1:
        raise CommandError(f"--max-pairs must be at least 1, got {args.max_pairs}")
    try:  # the settings are checked before anything is read
        settings = SpanTraining(
            dim=args.dim,
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=args.learning_rate,
            patience=args.patience,
            seed=args.seed,
        )
    except ValueError as error:
        raise CommandError(f"span training: {error}") from None
    checkpoint = _load(load, args.checkpoint)
    start = signature(checkpoint)  # which checkpoint this run extended
    pairs = read_pairs(args.pairs / "train.parquet", labelled=True)
    check_span_pairs(pairs, args.pairs / "train.parquet")
    problem = export_problem(args.out)
    if problem:
        raise CommandError(f"--out: {problem}")
    if is_within(args.tokens, args.out) or is_within(args.out, args.tokens):
        # the store's shards made --out a folder no checkpoint replaces, so a whole training
        # run ended in a refusal to save; a checkpoint inside the store broke the store
        raise CommandError(
            f"--tokens {args.tokens} and --out {args.out} overlap; keep the token store and the "
            "checkpoint in separate folders"
        )
    try:
        model = with_span_tagger(checkpoint, settings.dim, settings.seed)
    except ValueError as error:  # a fine-tuned encoder (no token states)
        raise CommandError(f"cannot add a span tagger to {args.checkpoint}: {error}") from None
    if args.max_pairs is not None and args.max_pairs < len(pairs):
        pairs = pairs.sample(args.max_pairs, random_state=settings.seed).reset_index(drop=True)
    real_pairs = 0
    if args.real_bases is not None:
        try:
            real = tagger_real_bases(args.real_bases, settings.seed)
        except (DataError, OSError) as error:
            raise CommandError(f"--real-bases {args.real_bases}: {error}") from None
        real_pairs = len(real)
        print(f"real bases: {real_pairs} pairs", file=sys.stderr, flush=True)
        pairs = pd.concat([pairs[list(real.columns)], real], ignore_index=True)
    dev_mask = (
        pairs["group"].map(lambda g: group_position("spans-dev", g)) < DEV_FRACTION
    ).to_numpy()
    if dev_mask.all() or not dev_mask.any():  # checked before the encoder pass (an
        # IndexError after it, on a split with no pair)
        raise CommandError(
            f"{args.pairs / 'train.parquet'}: {int((~dev_mask).sum())} train and "
            f"{int(dev_mask.sum())} dev pairs; training needs both (a tenth of the groups is "
            "held out)"
        )
    config = checkpoint.model.config
    texts = [*pairs["ref"], *pairs["gen"]]
    try:
        store = TokenStore(args.tokens)
        claim_stores(store_sources(config.encoder, checkpoint.num_layers, tokens=store))
    except ValueError as error:  # an unreadable store, or one another encoder filled
        raise CommandError(str(error)) from None
    try:
        added = ensure_tokens(
            store,
            texts,
            config.encoder,
            settings.batch_size,
            checkpoint.num_layers,
            "cpu",  # the tagger trains on the CPU
        )
        print(f"token store {args.tokens}: {added} texts encoded", file=sys.stderr, flush=True)
        train = span_examples(pairs[~dev_mask].reset_index(drop=True), store, config.encoder)
        dev = span_examples(pairs[dev_mask].reset_index(drop=True), store, config.encoder)
    except ValueError as error:  # states that do not fit the pairs' wordpieces
        raise CommandError(f"{args.tokens}: {error}") from None
    print(f"span tagger: {len(train)} train pairs, {len(dev)} dev pairs", file=sys.stderr)
    try:
        history = train_span_tagger(
            model, train, dev, settings, log=lambda line: print(line, file=sys.stderr, flush=True)
        )
    except FloatingPointError as error:  # the training diverged: no tagger worth keeping
        raise CommandError(str(error)) from None
    training = dict(checkpoint.config.get("training") or {})
    training["span_tagger"] = {  # paths named as from the repository: the same files from any
        # working folder, and so the same signature
        **asdict(settings),
        "from_signature": str(start),
        "pairs": portable_path(args.pairs),
        "pairs_sha256": _sha256(args.pairs / "train.parquet"),
        "real_bases": None if args.real_bases is None else portable_path(args.real_bases),
        "real_base_pairs": real_pairs,
        "train_pairs": len(train),
        "dev_pairs": len(dev),
        **history,
    }
    metrics = checkpoint.config.get("metrics")
    out = save_from_checkpoint(checkpoint, model, args.out, training=training, metrics=metrics)
    written = {"out": str(out), "signature": str(folder_signature(out))}
    print(json.dumps({**training["span_tagger"], **written}, indent=2))
    return 0


def _copy(args: argparse.Namespace) -> int:
    from evaluator.cli import CommandError
    from evaluator.hub import load, save_from_checkpoint
    from evaluator.signature import folder_signature
    from evaluator.training.spans import copy_span_tagger
    from mismatch_core.atomic import same_path
    from mismatch_core.checkpoint_files import export_problem
    from mismatch_core.errors import CheckpointError
    from mismatch_core.resources import local_path, portable_path

    try:
        source = _load(load, args.source)
        # a tagger made outside `spans train` (tests, library use) has no training record
        record = (source.config.get("training") or {}).get("span_tagger") or {}
        copies = []  # every target is loaded and checked before any is written
        folders: list[Path] = []
        for given in args.to:
            # the folder that is read is the one replaced (checkpoints/... from any folder, as
            # every command finds it); a Hub id has no folder of the user's to replace
            target_path = local_path(given)
            if target_path is None:
                raise CommandError(f"--to {given}: no such checkpoint folder")
            if target_path.resolve() in folders:
                continue  # one folder named twice is written once
            if same_path(target_path, source.path):
                raise CommandError(f"--to {given} is the --from checkpoint; name another")
            folders.append(target_path.resolve())
            problem = export_problem(target_path)
            if problem:
                raise CommandError(f"--to: {problem}")
            target = load(target_path)
            copies.append((target_path, target, copy_span_tagger(source, target)))
        for target_path, target, model in copies:
            training = dict(target.config.get("training") or {})
            training["span_tagger"] = {**record, "copied_from": portable_path(args.source)}
            metrics = target.config.get("metrics")
            written = save_from_checkpoint(
                target, model, target_path, training=training, metrics=metrics
            )
            print(f"span tagger copied into {written}, signature {folder_signature(written)}")
    except (CheckpointError, ValueError) as error:
        raise CommandError(str(error)) from None
    return 0


def _load(load, name):
    from mismatch_core.checkpoint_files import resolve_checkpoint

    path, revision = resolve_checkpoint(str(name))
    return load(path, revision)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
