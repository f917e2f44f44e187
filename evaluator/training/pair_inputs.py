"""A split's model inputs, gathered once from the caches ``mismatch features`` wrote for it.

Pretraining (``data.MismatchDataModule``) and continued training (``continued``) both turn a
pairs split, its feature rows and the embedding, alignment and token stores into tensors;
this is the one place that does it. Texts are held once each: a pair points at its ref and gen
rows among the split's distinct texts, so a text shared by many pairs is stored once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from evaluator.features import EmbeddingStore, FeatureScaler, pair_key
from evaluator.features.embeddings import claim_stores, store_sources
from evaluator.features.token_store import TokenStore, TokenTable, pair_tokens
from mismatch_core.errors import DataError


@dataclass
class InputStores:
    """The caches a model reads besides the metric features; None: not read."""

    embeddings: EmbeddingStore | None = None
    alignments: EmbeddingStore | None = None
    tokens: TokenStore | None = None
    paths: dict[str, str | Path] = field(default_factory=dict)  # store name -> path, for errors

    def path(self, name: str) -> str:
        return str(self.paths.get(name, f"the {name} store"))

    def check_sources(self, encoder: str, num_layers: int | None) -> None:
        """DataError naming the store that another encoder (or, for alignments and token
        states, another layer, or another form of the text) filled, or that does not say what
        filled it: its vectors would be read as this model's."""
        claims = store_sources(encoder, num_layers, self.embeddings, self.alignments, self.tokens)
        try:
            claim_stores(claims)
        except ValueError as error:
            raise DataError(str(error)) from None


@dataclass
class PairInputs:
    """Scaled features and labels per pair; embeddings and token states per distinct text."""

    texts: list[str]  # the split's distinct texts, each once: the refs first, then the gens
    features: Tensor
    labels: Tensor
    ref_index: Tensor  # each pair's ref: its row in ``texts``
    gen_index: Tensor
    embeddings: Tensor | None = None  # (len(texts), dim); None: no text vectors read
    alignment: Tensor | None = None  # (pairs, dim); None: not read
    tokens: TokenTable | None = None  # a row per text; None: no token-level branch

    def __len__(self) -> int:
        return len(self.labels)

    def rows(self, index) -> dict:
        """The model's inputs for the pairs at ``index`` (a slice or row indices)."""
        ref, gen = self.ref_index[index], self.gen_index[index]
        return {
            "features": self.features[index],
            "ref": None if self.embeddings is None else self.embeddings[ref],
            "gen": None if self.embeddings is None else self.embeddings[gen],
            "alignment": None if self.alignment is None else self.alignment[index],
            "tokens": None
            if self.tokens is None
            else pair_tokens(self.tokens, ref, self.tokens, gen),
        }

    @staticmethod
    def concat(parts: list[PairInputs]) -> PairInputs:
        """One set holding the pairs of ``parts`` in order; an input is kept only if every
        part has it."""

        def joined(tensors: list[Tensor | None]) -> Tensor | None:
            present = [tensor for tensor in tensors if tensor is not None]
            return torch.cat(present) if len(present) == len(tensors) else None

        shifts = np.cumsum([0, *(len(part.texts) for part in parts[:-1])]).tolist()
        tables = [part.tokens for part in parts if part.tokens is not None]
        return PairInputs(
            [text for part in parts for text in part.texts],
            torch.cat([part.features for part in parts]),
            torch.cat([part.labels for part in parts]),
            torch.cat([p.ref_index + s for p, s in zip(parts, shifts, strict=True)]),
            torch.cat([p.gen_index + s for p, s in zip(parts, shifts, strict=True)]),
            joined([part.embeddings for part in parts]),
            joined([part.alignment for part in parts]),
            TokenTable.joined(tables) if len(tables) == len(parts) else None,
        )


def pair_inputs(
    frame: pd.DataFrame,
    raw_features: pd.DataFrame,
    scaler: FeatureScaler,
    stores: InputStores,
    where: str,
) -> PairInputs:
    """The inputs of the pairs in ``frame`` (id, ref, gen, label_id), whose unscaled feature
    rows are ``raw_features`` in pair order. A text or pair missing from a store is a
    DataError naming ``where`` (the split), the store and the command that fills it."""
    texts = pd.unique(pd.concat([frame["ref"], frame["gen"]])).tolist()
    lookup = pd.Index(texts)
    inputs = PairInputs(
        texts,
        torch.from_numpy(scaler.transform(raw_features)),
        torch.tensor(frame["label_id"].to_numpy(), dtype=torch.long),
        torch.tensor(lookup.get_indexer(frame["ref"]), dtype=torch.long),
        torch.tensor(lookup.get_indexer(frame["gen"]), dtype=torch.long),
    )
    try:
        if stores.embeddings is not None:
            inputs.embeddings = torch.from_numpy(stores.embeddings.lookup(texts))
    except KeyError as error:
        raise _missing(where, error, stores.path("embeddings"), "--embeddings") from None
    try:
        if stores.alignments is not None:
            keys = [pair_key(r, g) for r, g in zip(frame["ref"], frame["gen"], strict=True)]
            inputs.alignment = torch.from_numpy(stores.alignments.lookup_keyed(keys))
    except KeyError as error:
        raise _missing(where, error, stores.path("alignments"), "--alignments") from None
    try:
        if stores.tokens is not None:
            inputs.tokens = stores.tokens.table(texts)
    except KeyError as error:
        raise _missing(
            where, error, stores.path("tokens"), "--tokens (pretraining: or prepare_data)"
        ) from None
    return inputs


def _missing(where: str, error: KeyError, store: str, option: str) -> DataError:
    return DataError(
        f"{where}: {error.args[0]} in {store}; run mismatch features {option} for these pairs"
    )
