"""`mismatch features`: compute (and cache) metric features for a pairs parquet."""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluator.cli import CommandError, check_device
from evaluator.features.cache import foreign_cache_problem, update_feature_cache
from evaluator.features.registry import DEFAULT_FEATURES, metrics_for
from mismatch_core.atomic import is_within, output_problem, same_path
from mismatch_core.resources import DEFAULT_ENCODER, encoder_path, hub_reachable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairs", type=Path, required=True, help="pairs parquet (id, ref, gen)")
    parser.add_argument(
        "--out", type=Path, required=True, help="feature cache parquet (id, features, pair_key)"
    )
    parser.add_argument(
        "--features",
        default=",".join(DEFAULT_FEATURES),
        help="comma-separated feature names (default: the default set)",
    )
    parser.add_argument(
        "--embeddings", type=Path, help="also keep mean-pooled embeddings of every text here"
    )
    parser.add_argument(
        "--alignments",
        type=Path,
        help="also keep the alignment vector of every (ref, gen) pair here (model input)",
    )
    parser.add_argument(
        "--tokens",
        type=Path,
        help="also keep the token states of every text in this folder (token-level model input)",
    )
    parser.add_argument("--batch-size", type=int, default=64, help="encoder batch size")
    parser.add_argument(
        "--device", default="cpu", help="where the encoder pass runs: cpu (default) or cuda"
    )
    parser.add_argument("--chunk-size", type=int, default=4096, help="pairs per saved chunk")
    parser.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help="encoder for BERTScore/embeddings"
    )
    parser.add_argument(
        "--num-layers", type=int, default=None, help="BERTScore layer (default: the last)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    names = [name.strip() for name in args.features.split(",") if name.strip()]
    if not names:
        raise CommandError("--features names no feature")
    for value, flag in ((args.batch_size, "--batch-size"), (args.chunk_size, "--chunk-size")):
        if value < 1:
            raise CommandError(f"{flag} must be a positive integer, got {value}")
    outputs = {
        "--out": (args.out, "file"),
        "--embeddings": (args.embeddings, "file"),
        "--alignments": (args.alignments, "file"),
        "--tokens": (args.tokens, "directory"),
    }
    for flag, (path, kind) in outputs.items():
        problem = path is not None and output_problem(path, kind)
        if problem:
            raise CommandError(f"{flag}: {problem}")
    given = [(flag, path) for flag, (path, _) in outputs.items() if path is not None]
    for index, (flag, path) in enumerate(given):
        for other, other_path in [("--pairs", args.pairs), *given[:index]]:
            if same_path(path, other_path):
                raise CommandError(f"{flag} {path} is also {other}; each needs its own file")
    if args.tokens is not None:  # the store holds its shards alone: the next run refused it
        inside = [(flag, path) for flag, path in given if flag != "--tokens"]
        for flag, path in [("--pairs", args.pairs), *inside]:
            if is_within(path, args.tokens):
                raise CommandError(
                    f"{flag} {path} is inside --tokens {args.tokens}, which holds token-store "
                    "shards alone; put it elsewhere"
                )
    problem = foreign_cache_problem(args.pairs, args.out)
    if problem:
        raise CommandError(problem)
    check_device(args.device)
    check_num_layers(args.encoder, args.num_layers)
    try:
        metrics_for(names)
        report = update_feature_cache(
            args.pairs,
            args.out,
            names,
            chunk_size=args.chunk_size,
            batch_size=args.batch_size,
            encoder=args.encoder,
            num_layers=args.num_layers,
            embeddings_path=args.embeddings,
            alignments_path=args.alignments,
            tokens_path=args.tokens,
            progress=not args.quiet,
            device=args.device,
        )
    except (FileNotFoundError, ValueError) as error:
        raise CommandError(str(error)) from None
    computed = sum(report.computed.values())
    print(
        f"{report.pairs} pairs, {len(names)} features: computed {computed} values, "
        f"{report.pairs * len(names) - computed} were cached -> {args.out}"
    )
    if report.other_texts:
        print(
            f"{report.other_texts} cached row(s) were for other texts under the same ids (the "
            "pairs were made again): computed anew"
        )
    if report.dropped:
        print(f"{report.dropped} cached row(s) of ids not in {args.pairs} dropped")
    if report.partial:
        print(
            f"kept, not computed for every pair: {', '.join(report.partial)} (not asked for now; "
            "--features with them fills them)"
        )
    for what, added, path in (
        ("embeddings", report.embeddings_added, args.embeddings),
        ("alignments", report.alignments_added, args.alignments),
    ):
        if path is not None:  # a store is written once it holds a vector
            print(f"{what}: {added} added -> {path if path.is_file() else 'none written'}")
    if args.tokens is not None:
        print(f"token states: {report.tokens_added} texts added -> {args.tokens}")
    return 0


def check_num_layers(encoder: str, num_layers: int | None) -> None:
    """--num-layers against the encoder's depth, read from its config before the encoder
    itself is loaded (seconds)."""
    if num_layers is None:
        return
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(
            encoder_path(encoder), local_files_only=not hub_reachable()
        )
    except (OSError, ValueError) as error:  # no config, or none transformers knows
        raise CommandError(f"encoder {encoder!r} has no readable model config: {error}") from None
    if not 0 <= num_layers <= config.num_hidden_layers:
        raise CommandError(
            f"--num-layers must be in 0..{config.num_hidden_layers} for {encoder!r}, "
            f"got {num_layers}"
        )
