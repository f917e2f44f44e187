"""Accuracy of an exported checkpoint on a cached synthetic split (for ablations across splits).

Reads the split's pairs, its feature cache, mean embeddings, alignment vectors and token
states (whatever the checkpoint reads) and scales the features with the checkpoint's own
scaler, so models trained on different synthetic sets are compared on one split:

    python scripts/evaluate_split.py CHECKPOINT --pairs data/synth/val.parquet \
        --features data/features/synth/val.parquet --embeddings data/features/embeddings.parquet \
        --alignments data/features/alignments.parquet --tokens data/features/tokens
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.cli import CommandError, run_reporting_errors
from evaluator.features import EmbeddingStore
from evaluator.features.token_store import TokenStore
from evaluator.hub import load
from evaluator.training.continued import val_figures
from evaluator.training.data import expected_versions, split_features
from evaluator.training.pair_inputs import InputStores, pair_inputs
from mismatch_core.pairs import read_pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--features", required=True)
    parser.add_argument("--embeddings", required=True)
    parser.add_argument("--alignments")
    parser.add_argument("--tokens")
    parser.add_argument("--batch-size", type=int, default=512)
    args = parser.parse_args()
    if args.batch_size < 1:
        parser.error(f"--batch-size must be at least 1, got {args.batch_size}")
    checkpoint = load(args.checkpoint)
    model, config = checkpoint.model.eval(), checkpoint.model.config
    read = [("--embeddings", args.embeddings, False)]  # the stores it reads: (option, path, folder?)
    if config.use_alignment:
        read.append(("--alignments", args.alignments, False))
    if config.use_tokens:
        read.append(("--tokens", args.tokens, True))
    for option, path, folder in read:
        if path is None:  # a TypeError on None
            raise CommandError(f"{args.checkpoint} reads {option[2:]}: give {option}")
        if not (Path(path).is_dir() if folder else Path(path).is_file()):
            raise CommandError(f"{option} {path}: no such {'folder' if folder else 'file'}")
    pairs = read_pairs(Path(args.pairs), labelled=True)
    names = checkpoint.feature_names
    versions = expected_versions(names, config.encoder, checkpoint.num_layers)
    raw = split_features(pairs, args.features, names, Path(args.pairs).stem, args.pairs, versions)
    stores = InputStores(
        EmbeddingStore.open(args.embeddings),
        EmbeddingStore.open(args.alignments) if config.use_alignment else None,
        TokenStore(args.tokens) if config.use_tokens else None,
        paths={"embeddings": args.embeddings, "alignments": args.alignments, "tokens": args.tokens},
    )
    stores.check_sources(config.encoder, checkpoint.num_layers)
    inputs = pair_inputs(pairs, raw, checkpoint.scaler, stores, args.pairs)
    accuracy, _ = val_figures(model, inputs, args.batch_size)
    print(f"{args.checkpoint} on {args.pairs}: accuracy {accuracy:.4f} ({len(pairs)} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(run_reporting_errors("scripts/evaluate_split.py", main))
