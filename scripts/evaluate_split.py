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

import numpy as np
import pandas as pd
import torch

from evaluator.features import EmbeddingStore, pair_key
from evaluator.features.token_store import TokenStore, pair_tokens
from evaluator.hub import load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--features", required=True)
    parser.add_argument("--embeddings", required=True)
    parser.add_argument("--alignments")
    parser.add_argument("--tokens")
    parser.add_argument("--batch-size", type=int, default=512)
    args = parser.parse_args()
    checkpoint = load(args.checkpoint)
    model, config = checkpoint.model.eval(), checkpoint.model.config
    pairs = pd.read_parquet(args.pairs)
    raw = pd.read_parquet(args.features).set_index("id").loc[pairs["id"], checkpoint.feature_names]
    features = torch.from_numpy(checkpoint.scaler.transform(raw.reset_index(drop=True)))
    store = EmbeddingStore.open(args.embeddings)
    refs, gens = list(pairs["ref"]), list(pairs["gen"])
    ref_vectors, gen_vectors = (torch.from_numpy(store.lookup(t)) for t in (refs, gens))
    alignment = None
    if config.use_alignment:
        keys = [pair_key(r, g) for r, g in zip(refs, gens, strict=True)]
        alignment = torch.from_numpy(EmbeddingStore.open(args.alignments).lookup_keyed(keys))
    tables = None
    if config.use_tokens:
        tokens = TokenStore(args.tokens)
        tables = {"ref": tokens.table(refs), "gen": tokens.table(gens)}
    predictions = []
    with torch.no_grad():
        for start in range(0, len(pairs), args.batch_size):
            rows = torch.arange(start, min(start + args.batch_size, len(pairs)))
            batch_tokens = None
            if tables is not None:
                batch_tokens = pair_tokens(tables["ref"], rows, tables["gen"], rows)
            logits = model(
                features=features[rows],
                ref=ref_vectors[rows],
                gen=gen_vectors[rows],
                alignment=None if alignment is None else alignment[rows],
                tokens=batch_tokens,
            )
            predictions.append(logits.argmax(dim=-1))
    correct = torch.cat(predictions).numpy() == pairs["label_id"].to_numpy()
    print(f"{args.checkpoint} on {args.pairs}: accuracy {np.mean(correct):.4f} ({len(pairs)} pairs)")


if __name__ == "__main__":
    main()
