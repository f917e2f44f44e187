"""A split's model inputs: every pair reads its own texts' vectors and token states, also
after splits are joined, and a text missing from a cache is an error naming the split."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from evaluator.features import EmbeddingStore, FeatureScaler, text_key
from evaluator.features.token_store import TokenStore
from evaluator.training.pair_inputs import InputStores, PairInputs, pair_inputs
from mismatch_core.errors import DataError

TEXTS = ["a cat sat", "a cat sits", "the dog ran", "a dog ran", "birds fly"]


def vector(text: str) -> np.ndarray:
    """A vector that says which text it belongs to."""
    return np.full(3, TEXTS.index(text), dtype=np.float32)


def states(text: str) -> np.ndarray:
    return np.full((len(text.split()), 2), TEXTS.index(text), dtype=np.float16)


@pytest.fixture
def stores(tmp_path: Path) -> InputStores:
    embeddings = EmbeddingStore()
    embeddings.add(TEXTS, np.stack([vector(t) for t in TEXTS]))
    tokens = TokenStore(tmp_path / "tokens")
    tokens.add({text_key(t): states(t) for t in TEXTS})
    return InputStores(embeddings, None, tokens, paths={"tokens": tmp_path / "tokens"})


def split(pairs: list[tuple[str, str]], label: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(len(pairs))],
            "ref": [ref for ref, _ in pairs],
            "gen": [gen for _, gen in pairs],
            "label_id": label,
        }
    )
    raw = pd.DataFrame({"chrf": np.linspace(0.0, 1.0, len(pairs))})
    return frame, raw


def test_joined_splits_keep_each_pairs_own_texts(stores: InputStores) -> None:
    first = split([("a cat sat", "a cat sits"), ("a cat sat", "the dog ran")], 0)
    second = split([("the dog ran", "a dog ran"), ("birds fly", "a cat sat")], 5)
    scaler = FeatureScaler.fit(first[1])
    parts = [
        pair_inputs(*part, scaler, stores, f"split {i}") for i, part in enumerate([first, second])
    ]
    assert parts[0].texts == ["a cat sat", "a cat sits", "the dog ran"]  # each text once
    joined = PairInputs.concat(parts)
    batch = joined.rows(torch.tensor([3, 0, 2]))
    pairs = [("birds fly", "a cat sat"), ("a cat sat", "a cat sits"), ("the dog ran", "a dog ran")]
    for row, texts in enumerate(pairs):
        for side, text in zip(("ref", "gen"), texts, strict=True):
            np.testing.assert_array_equal(batch[side][row].numpy(), vector(text))
            side_states = batch["tokens"][side][row][batch["tokens"][f"{side}_mask"][row]]
            np.testing.assert_array_equal(side_states.numpy(), states(text).astype(np.float32))
    assert joined.labels.tolist() == [0, 0, 5, 5]
    assert batch["alignment"] is None  # no alignment store given
    scaled = np.concatenate([scaler.transform(first[1]), scaler.transform(second[1])])
    np.testing.assert_array_equal(batch["features"].numpy(), scaled[[3, 0, 2]])


def test_a_text_missing_from_a_store_names_the_split_and_the_store(
    stores: InputStores, tmp_path: Path
) -> None:
    frame, raw = split([("a cat sat", "an unseen text")], 0)
    scaler = FeatureScaler.fit(raw)
    with pytest.raises(DataError, match="train.parquet: no embedding stored for text 'an unseen"):
        pair_inputs(frame, raw, scaler, stores, "pairs/train.parquet")
    stores.embeddings = None
    with pytest.raises(
        DataError, match=re.escape(f"in {tmp_path / 'tokens'}; run mismatch features --tokens")
    ):
        pair_inputs(frame, raw, scaler, stores, "pairs/train.parquet")
