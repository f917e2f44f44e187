"""LightningDataModule for pretraining: synth pairs + cached metric features + text embeddings.

Inputs live outside the repo: ``pairs_dir`` holds the synth splits ``train.parquet`` and
``val.parquet`` (id, ref, gen, label, label_id, ...); ``features`` is the feature cache (a
parquet file or a directory of them: ``id``, one float column per metric and each row's
``pair_key``); in frozen mode
``embeddings`` is the EmbeddingStore of mean-pooled ref/gen embeddings, filled by
``prepare_data`` for any text it lacks; ``alignments`` (optional) is the store of per-pair
alignment vectors written by ``mismatch features --alignments``; ``tokens`` (optional) is the
TokenStore folder of per-text token states (``mismatch features --tokens``; texts it lacks are
encoded by ``prepare_data``). The FeatureScaler is fitted on train only and kept
(``self.scaler``) so the exported checkpoint scales inputs exactly as in training.
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pa_dataset
import pyarrow.parquet as pq
import pyarrow.types as pa_types
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler

from evaluator.features import EmbeddingStore, FeatureScaler, encode_texts, text_key
from evaluator.features.cache import KEY_COLUMN, row_key, stored_versions
from evaluator.features.compute import feature_versions
from evaluator.features.embeddings import claim_stores, store_sources
from evaluator.features.encoder_pass import encode_distinct, encoder_device, token_states
from evaluator.features.registry import COLUMN_TO_METRIC
from evaluator.features.token_store import TokenStore
from evaluator.model.mismatch_model import EncoderMode
from evaluator.training.pair_inputs import InputStores, PairInputs, pair_inputs
from mismatch_core.config import check_at_least_one
from mismatch_core.errors import DataError
from mismatch_core.pairs import read_pairs
from mismatch_core.resources import DEFAULT_ENCODER

SPLITS = ("train", "val")
ENCODE_BLOCK = 8192  # texts per encoder call when filling a token store (one shard each)


def feature_files(path: str | Path) -> list[str]:
    """The parquet files of a feature cache: the file itself, or a folder's train.parquet and
    val.parquet (what ``mismatch features --out`` wrote per split; training needs both, so a
    folder with one is named before any pair is read). Other files of the folder are not read,
    so it may also hold the embedding and alignment stores, as the features folders of
    ``mismatch adapt train`` do."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"feature cache {path} does not exist")
    if path.is_file():
        return [str(path)]
    missing = [split for split in SPLITS if not (path / f"{split}.parquet").is_file()]
    if len(missing) == len(SPLITS):
        raise DataError(f"feature cache folder {path} holds neither train.parquet nor val.parquet")
    if missing:
        raise DataError(
            f"feature cache folder {path} has no {missing[0]}.parquet: write it with "
            f"mismatch features --pairs PAIRS/{missing[0]}.parquet --out {path}/{missing[0]}.parquet"
        )
    return [str(path / f"{split}.parquet") for split in SPLITS]


def read_feature_cache(
    path: str | Path, names: list[str], versions: dict[str, str]
) -> pd.DataFrame:
    """The ``id`` and ``names`` columns of a feature cache (file or folder, ``feature_files``),
    and each row's ``pair_key`` where the file keeps them (``attach_features`` checks them);
    each column computed as ``versions`` says (``check_feature_versions``)."""
    frames = []
    for file in feature_files(path):
        schema = cache_schema([file])  # read once: the versions and the columns
        check_feature_versions(file, schema, versions)
        columns = ["id", *names]
        if KEY_COLUMN in schema.names:
            columns.append(KEY_COLUMN)
        frames.append(pd.read_parquet(file, columns=columns))
    return pd.concat(frames, ignore_index=True)


def expected_versions(names: list[str], encoder: str, num_layers: int | None) -> dict[str, str]:
    """How a run computes the columns ``names`` (``feature_versions``), for the registry's
    columns among them."""
    known = [name for name in names if name in COLUMN_TO_METRIC]
    return feature_versions(known, encoder, num_layers)


def check_feature_versions(file: str, schema: pa.Schema, versions: dict[str, str]) -> None:
    """DataError for a column of the cache ``file`` (its ``schema``) computed otherwise than
    ``versions`` says (another encoder, BERTScore layer, metric version or detector):
    ``mismatch features`` computes such a column again, training read it as it was. A file
    without the record (not written by ``mismatch features``) is taken as it is."""
    stored = stored_versions(schema)
    if stored is None:
        return
    for name, version in versions.items():
        if name in stored and stored[name] != version:
            raise DataError(
                f"{file}: {name} was computed as {stored[name]!r}, this run reads it as "
                f"{version!r} (another encoder, layer, metric version or text form); compute it "
                "again: "
                f"mismatch features --pairs PAIRS --out {file} --features {name}, with this "
                "run's --encoder and --num-layers"
            )


def cache_schema(files: list[str]) -> pa.Schema:
    """The parquet schema of a feature cache's files; DataError names a file that is none."""
    for file in files:
        try:
            pq.read_schema(file)
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"{file} is not a readable feature cache ({error})") from None
    return pa_dataset.dataset(files, format="parquet").schema


def feature_columns(path: str | Path) -> list[str]:
    """Float columns of a feature cache (file or folder), read from the parquet schema only."""
    schema = cache_schema(feature_files(path))
    if "id" not in schema.names:
        raise DataError(f"feature cache {path} has no 'id' column")
    return [f.name for f in schema if f.name != "id" and pa_types.is_floating(f.type)]


def read_split(pairs_dir: str | Path, split: str) -> pd.DataFrame:
    """One synth split (pairs_dir holds train.parquet and val.parquet), checked."""
    return read_pairs(Path(pairs_dir) / f"{split}.parquet", labelled=True)


def attach_features(pairs: pd.DataFrame, features: pd.DataFrame, split: str) -> pd.DataFrame:
    """The feature rows (indexed by id) of ``pairs`` in pair order; every pair must have one,
    computed for its texts where the cache keeps its ``pair_key``."""
    absent = pairs.loc[~pairs["id"].isin(features.index), "id"]
    if len(absent):
        raise DataError(
            f"{len(absent)} {split} pairs have no row in the feature cache (e.g. id {absent.iloc[0]!r}); "
            "compute the features for these pairs first"
        )
    rows = features.loc[pairs["id"]].reset_index(drop=True)
    if KEY_COLUMN in rows.columns:
        stored = rows.pop(KEY_COLUMN)
        keys = pd.Series(map(row_key, pairs["ref"], pairs["gen"]))
        other = (stored.notna() & stored.ne(keys)).to_numpy()
        if other.any():
            raise DataError(
                f"{int(other.sum())} {split} pair(s) have features of other texts under their ids "
                f"(e.g. id {pairs['id'][other].iloc[0]!r}): the pairs were made again after "
                "the cache was filled; run mismatch features on them again"
            )
    # a column is filled in part by a run that was interrupted, or where pairs were made again
    # under the same ids and a later run did not ask for it (the cache keeps it)
    empty = rows.isna()
    unfinished = empty.any(axis=1)
    if unfinished.any():
        first = int(unfinished.to_numpy().argmax())
        column = empty.columns[empty.iloc[first].to_numpy()][0]
        raise DataError(
            f"{int(unfinished.sum())} {split} pairs have features not computed in the cache "
            f"(e.g. id {pairs['id'].iloc[first]!r}, {column}): run `mismatch features` on "
            f"these pairs again with {column} among the features it computes (the default set "
            "or --features), or leave it out of the features the run reads"
        )
    return rows


def split_features(
    pairs: pd.DataFrame,
    path: str | Path,
    names: list[str],
    split: str,
    where: str,
    versions: dict[str, str],
) -> pd.DataFrame:
    """The unscaled ``names`` columns of the feature cache at ``path`` for ``pairs`` (the
    ``split`` pairs of the file ``where``), in pair order: what a checkpoint reads for a
    split it did not fit its scaler on. A column or pair the cache lacks, or a column
    computed otherwise than ``versions`` says, is a DataError."""
    missing = [name for name in names if name not in feature_columns(path)]
    if missing:
        raise DataError(
            f"feature cache {path} lacks the checkpoint's feature(s) {missing}: add them with "
            f"mismatch features --pairs PAIRS --out CACHE --features {','.join(missing)} (for "
            "each split; the columns it holds stay)"
        )
    cached = read_feature_cache(path, names, versions).set_index("id")
    try:
        return attach_features(pairs, cached, split)
    except DataError as error:
        raise DataError(f"{path} for {where}: {error}") from None


class PairBatcher:
    """collate_fn turning row indices into a model batch with vectorised gathers.

    Frozen mode gathers ref/gen embeddings and token states from the split's tables
    (``PairInputs.rows``); trainable mode tokenises the texts; without embeddings (metric-only
    ablation) no text inputs are given.
    """

    def __init__(self, inputs: PairInputs, tokenizer=None, max_length: int = 128) -> None:
        self.inputs = inputs
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __call__(self, rows: list[int]) -> dict:
        index = torch.as_tensor(rows)
        present = {k: v for k, v in self.inputs.rows(index).items() if v is not None}
        batch = {**present, "labels": self.inputs.labels[index]}
        if self.tokenizer is not None:
            sides = {"ref": self.inputs.ref_index, "gen": self.inputs.gen_index}
            for side, rows_of_side in sides.items():
                positions = rows_of_side[index]
                batch[side] = dict(
                    self.tokenizer(
                        [self.inputs.texts[i] for i in positions.tolist()],
                        padding=True,
                        truncation=True,
                        max_length=self.max_length,
                        return_tensors="pt",
                    )
                )
        return batch


class LengthBucketBatchSampler(BatchSampler):
    """Random batches of pairs of similar token length.

    The sampler's order is cut into buckets of ``bucket_batches`` batches; each bucket is
    sorted by pair length and cut into batches, and the batches are shuffled. Padding to the
    longest text of a random batch made the token branch several times slower (a caption
    batch padded to one SQuAD passage). A BatchSampler subclass, so Lightning can swap its
    sampler for a distributed one.
    """

    def __init__(
        self,
        sampler: Sampler,
        batch_size: int,
        drop_last: bool,
        lengths: list[int],
        bucket_batches: int = 50,
    ) -> None:
        super().__init__(sampler, batch_size, drop_last)
        self.lengths = lengths
        self.bucket_batches = bucket_batches

    def __iter__(self):
        order = list(self.sampler)
        bucket = self.bucket_batches * self.batch_size
        batches = []
        for start in range(0, len(order), bucket):
            chunk = sorted(order[start : start + bucket], key=self.lengths.__getitem__)
            batches += [
                chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)
            ]
        if self.drop_last:
            batches = [batch for batch in batches if len(batch) == self.batch_size]
        for position in torch.randperm(len(batches)).tolist():
            yield batches[position]


class MismatchDataModule(L.LightningDataModule):
    """Train/val batches for pretraining; exposes ``feature_names`` and the fitted ``scaler``."""

    def __init__(
        self,
        pairs_dir: str,
        features: str,
        embeddings: str | None = None,
        alignments: str | None = None,
        tokens: str | None = None,
        feature_names: list[str] | None = None,
        encoder: str = DEFAULT_ENCODER,
        encoder_mode: EncoderMode = "frozen",
        batch_size: int = 256,
        eval_batch_size: int = 1024,
        num_workers: int = 0,
        max_length: int = 128,
        embed_batch_size: int = 64,
        feature_layers: int | None = None,
    ) -> None:
        """features: a feature cache file, or a folder with its train.parquet and val.parquet
        (``feature_files``). embeddings: EmbeddingStore path (frozen mode); None gives no text
        inputs (metric-only ablation). alignments: per-pair alignment vector store (frozen
        mode), None: not used. tokens: TokenStore folder of per-text token states (frozen
        mode), None: not used. feature_names: metric columns to use, default every float
        column of the cache. feature_layers: the BERTScore layer the cache was computed with
        (None: last), recorded in the checkpoint so prediction computes the same features."""
        super().__init__()
        check_at_least_one({"data.batch_size": batch_size, "data.eval_batch_size": eval_batch_size,
                            "data.max_length": max_length,
                            "data.embed_batch_size": embed_batch_size})  # fmt: skip
        self.save_hyperparameters(ignore=["feature_names"])  # the module logs the resolved list
        available = feature_columns(features)
        chosen = list(feature_names) if feature_names else available
        unknown = [n for n in chosen if n not in available]
        if unknown:
            raise DataError(f"features {unknown} are not in {features} (it has {available})")
        if not chosen:
            raise DataError(f"feature cache {features} has no float feature columns")
        self.feature_names = chosen
        self.scaler: FeatureScaler | None = None
        self.frames: dict[str, pd.DataFrame] = {}
        self.batchers: dict[str, PairBatcher] = {}

    def prepare_data(self) -> None:
        """Frozen mode: embed (once) every ref/gen text the embedding store (and the token
        store) does not hold yet, on the trainer's device (a GPU run embeds on its GPU)."""
        if self.hparams["encoder_mode"] != "frozen":
            return
        if self.hparams["embeddings"] is None and self.hparams["tokens"] is None:
            return
        texts = pd.unique(
            pd.concat(
                [
                    read_split(self.hparams["pairs_dir"], s)[c]
                    for s in SPLITS
                    for c in ("ref", "gen")
                ]
            )
        ).tolist()
        device = encoder_device(None if self.trainer is None else self.trainer.strategy.root_device)
        encoder = self.hparams["encoder"]
        embeddings = tokens = None
        if self.hparams["embeddings"] is not None:
            embeddings = EmbeddingStore.open_or_new(self.hparams["embeddings"])
        if self.hparams["tokens"] is not None:
            tokens = TokenStore(self.hparams["tokens"])
        layers = self.hparams["feature_layers"]
        try:  # both claimed before either is written: a refused run writes neither
            claim_stores(store_sources(encoder, layers, embeddings=embeddings, tokens=tokens))
        except ValueError as error:
            raise DataError(str(error)) from None
        batch_size = self.hparams["embed_batch_size"]
        if embeddings is not None:
            path = self.hparams["embeddings"]
            ensure_embeddings(embeddings, path, texts, encoder, batch_size, device)
        if tokens is not None:
            ensure_tokens(tokens, texts, encoder, batch_size, layers, device)

    def setup(self, stage: str | None = None) -> None:
        if self.batchers:
            return
        versions = expected_versions(
            self.feature_names, self.hparams["encoder"], self.hparams["feature_layers"]
        )
        features = read_feature_cache(self.hparams["features"], self.feature_names, versions)
        if features["id"].duplicated().any():
            raise DataError(f"feature cache {self.hparams['features']} has duplicate ids")
        features = features.set_index("id")
        self.frames = {split: read_split(self.hparams["pairs_dir"], split) for split in SPLITS}
        empty = [f"{split}.parquet" for split, frame in self.frames.items() if frame.empty]
        if empty:  # synth's val_fraction 0 writes an empty val split
            raise DataError(
                f"{self.hparams['pairs_dir']}: training needs train and val pairs; "
                f"{' and '.join(empty)} hold(s) none"
            )
        raw = {s: attach_features(f, features, s) for s, f in self.frames.items()}
        self.scaler = FeatureScaler.fit(raw["train"])
        stores = InputStores(
            self._open_store(),
            self._open_alignments(),
            self._open_tokens(),
            paths={
                n: self.hparams[n]
                for n in ("embeddings", "alignments", "tokens")
                if self.hparams[n]
            },
        )
        stores.check_sources(self.hparams["encoder"], self.hparams["feature_layers"])
        tokenizer = self._tokenizer()
        for split, frame in self.frames.items():
            where = f"{Path(self.hparams['pairs_dir']) / split}.parquet"
            inputs = pair_inputs(frame, raw[split], self.scaler, stores, where)
            self.batchers[split] = PairBatcher(inputs, tokenizer, self.hparams["max_length"])

    def _open_store(self) -> EmbeddingStore | None:
        if self.hparams["encoder_mode"] != "frozen" or self.hparams["embeddings"] is None:
            return None
        if not Path(self.hparams["embeddings"]).exists():
            raise DataError(
                f"embedding store {self.hparams['embeddings']} does not exist; run prepare_data"
            )
        return EmbeddingStore.open(self.hparams["embeddings"])

    def _open_alignments(self) -> EmbeddingStore | None:
        if self.hparams["alignments"] is None:
            return None
        if self.hparams["encoder_mode"] != "frozen":
            raise DataError("alignment vectors are cached for the frozen encoder mode only")
        if not Path(self.hparams["alignments"]).exists():
            raise DataError(
                f"alignment store {self.hparams['alignments']} does not exist; "
                "run mismatch features --alignments"
            )
        return EmbeddingStore.open(self.hparams["alignments"])

    def _open_tokens(self) -> TokenStore | None:
        if self.hparams["tokens"] is None:
            return None
        if self.hparams["encoder_mode"] != "frozen":
            raise DataError("token states are cached for the frozen encoder mode only")
        if not Path(self.hparams["tokens"]).is_dir():
            raise DataError(
                f"token store {self.hparams['tokens']} does not exist; run prepare_data or "
                "mismatch features --tokens"
            )
        try:
            return TokenStore(self.hparams["tokens"])
        except ValueError as error:
            raise DataError(str(error)) from None

    def _tokenizer(self):
        if self.hparams["encoder_mode"] != "trainable":
            return None
        from mismatch_core.resources import load_tokenizer

        return load_tokenizer(self.hparams["encoder"])

    def _loader(self, split: str, shuffle: bool, batch_size: int) -> DataLoader:
        if split not in self.batchers:
            raise RuntimeError("call setup() before asking for data loaders")
        batcher = self.batchers[split]
        inputs = batcher.inputs
        rows = range(len(inputs))
        if shuffle and inputs.tokens is not None:
            # token batches are padded to their longest text: batch texts of similar length
            lengths = inputs.tokens.lengths
            pair_lengths = torch.maximum(lengths[inputs.ref_index], lengths[inputs.gen_index])
            sampler = LengthBucketBatchSampler(
                RandomSampler(rows), batch_size, False, pair_lengths.tolist()
            )
            return DataLoader(
                rows,  # type: ignore[arg-type]  # a range serves as a map-style dataset
                batch_sampler=sampler,
                collate_fn=batcher,
                num_workers=self.hparams["num_workers"],
            )
        return DataLoader(
            rows,  # type: ignore[arg-type]  # a range serves as a map-style dataset
            batch_size=batch_size,
            shuffle=shuffle,
            collate_fn=batcher,
            num_workers=self.hparams["num_workers"],
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True, batch_size=self.hparams["batch_size"])

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", shuffle=False, batch_size=self.hparams["eval_batch_size"])

    def describe(self) -> dict[str, object]:
        """Facts about the training data for the model card."""
        train = self.frames["train"]
        return {
            "pairs": self.hparams["pairs_dir"],
            "train pairs": len(train),
            "val pairs": len(self.frames["val"]),
            "split": "by reference group (no reference in both train and val)",
            "sources": ", ".join(sorted(train["source"].unique()))
            if "source" in train
            else "unknown",
            "features": ", ".join(self.feature_names),
            "encoder": f"{self.hparams['encoder']} ({self.hparams['encoder_mode']})",
        }

    @property
    def feature_layers(self) -> int | None:
        """The BERTScore layer of the cached features, so prediction computes them the same way."""
        return self.hparams["feature_layers"]


def ensure_tokens(
    store: TokenStore,
    texts: list[str],
    encoder: str,
    batch_size: int,
    num_layers: int | None,
    device: str,
) -> int:
    """Add the token states of the texts missing from ``store`` (claimed for this encoder and
    layer, ``claim_stores``), one shard per block of ``ENCODE_BLOCK`` texts (an interrupted run
    keeps its finished blocks, and memory holds one block's full states at a time), the encoder
    on ``device``; return how many were added."""
    missing = list(dict.fromkeys(text for text in texts if text not in store))
    added = 0
    for start in range(0, len(missing), ENCODE_BLOCK):
        encoded = encode_distinct(
            missing[start : start + ENCODE_BLOCK], encoder, batch_size, num_layers, device=device
        )
        added += store.add({text_key(t): token_states(state) for t, state in encoded.items()})
    return added


def ensure_embeddings(
    store: EmbeddingStore, path: str, texts: list[str], encoder: str, batch_size: int, device: str
) -> int:
    """Embed the texts missing from ``store`` (claimed for this encoder, ``claim_stores``) and
    save it at ``path``, the encoder on ``device``; return how many."""
    missing = [text for text in texts if text not in store]
    if missing:
        store.add(missing, encode_texts(missing, encoder, batch_size, device))
        store.save(path)
    return len(missing)
