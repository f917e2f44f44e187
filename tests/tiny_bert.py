"""A seeded random BERT small enough for unit tests: no download, same weights every run."""

from __future__ import annotations

import torch
from transformers import BertConfig, BertModel


def tiny_bert(
    vocab_size: int, hidden_size: int = 32, num_layers: int = 2, max_positions: int = 64
) -> BertModel:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=max_positions,
    )
    return BertModel(config)
