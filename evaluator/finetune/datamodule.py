"""LightningDataModule over a task's cached inputs: scaled features, embeddings, targets.

``prepare_task`` loads a task once (records, cached inputs, base checkpoint, and the reference
each record trains on: the likeliest by the base model, whose reading predict scores; optionally
contrast copies of records with one synthetic error, see ``evaluator.finetune.contrast``). A
data module then serves any subset of its records (all of them for the shipped checkpoint,
one seed's train part in ``mismatch evaluate``), with a validation slice split off by group;
a training batch also carries the contrast copies of its records.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader

from evaluator.features.encoder_pass import encoder_device
from evaluator.features.token_store import pair_tokens
from evaluator.finetune.contrast import (
    ANCHOR,
    contrast_records,
    paraphrase_triples,
    reference_triples,
    source_copies,
)
from evaluator.finetune.data import DEFAULT_CACHE_DIR, TaskInputs, build_inputs
from evaluator.finetune.outputs import task_outputs
from evaluator.hub import Checkpoint, load
from evaluator.human_data import HumanRecord, split_by_group
from evaluator.inference import over_references
from evaluator.model.mismatch_model import FIT_REFERENCE_AGGREGATE
from evaluator.tasks import Task, as_task, fit_task, load_task_records
from mismatch_core.errors import ConfigError, DataError
from mismatch_core.resources import DEFAULT_CHECKPOINT, data_dir
from synth.corpora import SICK_TRAIN, paraphrase_groups, sick_paraphrases

SEED = 13  # the fit's seed where none is given (seed_everything's default, data.seed's)
VAL_SEED_OFFSET = 10_000
CONTRAST_SEED = 13


@dataclass
class ContrastSet:
    """Copies of some records with one error each, as model inputs."""

    inputs: TaskInputs
    features: np.ndarray  # (copies, features) scaled with the base checkpoint's scaler
    owners: np.ndarray  # per copy, the position of its original record
    # per copy, the copy it must rate below (-1: its original record; ANCHOR: none)
    parents: np.ndarray
    depth: int  # the most copies in one chain (1: every copy has one error)
    pairs: np.ndarray  # per copy, its (copy, reference) pair: the reference its original trains on
    # per copy, what made it: "error" (contrast_records), "reference" / "paraphrase" (triples),
    # "source" (source_copies)
    kinds: np.ndarray


@dataclass
class PreparedTask:
    task: Task
    records: list[HumanRecord]
    inputs: TaskInputs
    base: Checkpoint
    features: np.ndarray  # (pairs, features) scaled with the base's scaler, ``inputs`` order
    train_pairs: np.ndarray  # per record, the (record, reference) pair it trains on (see outputs)
    contrast: ContrastSet | None = None
    train_datasets: tuple[str, ...] = ()  # the datasets it trains on (empty: all)
    # the features read against each record's source (``inputs.source``; empty: none)
    source_features: tuple[str, ...] = ()


def prepare_task(
    task_name: str | Task,
    checkpoint: str,
    cache_dir: str | Path = DEFAULT_CACHE_DIR,
    data_root: str | Path | None = None,
    progress: bool = False,
    contrast_size: int = 0,
    contrast_depth: int = 1,
    contrast_class_weights: dict[str, float] | None = None,
    reference_triples_size: int = 0,
    train_datasets: tuple[str, ...] = (),
    source_features: tuple[str, ...] = (),
    paraphrase_triples_size: int = 0,
    device: str = "cpu",
) -> PreparedTask:
    """Records, cached inputs and base checkpoint of a task (a shipped task's name, or a Task
    such as ``evaluator.tasks.read_ratings`` makes); errors name the unknown task or file.

    contrast_size: number of contrast copies to build (0: none; regression tasks only), in
    chains of up to contrast_depth copies with one more error each, their classes drawn with
    contrast_class_weights (see ``evaluator.finetune.contrast.contrast_records``);
    reference_triples_size: up to that many more copies built from the references the records
    train on (``evaluator.finetune.contrast.reference_triples``); paraphrase_triples_size: up
    to that many more from SICK TRAIN's two-way entailments (``paraphrase_triples``; the file
    of the shared data, ``data_dir()``, wherever ``data_root`` points). train_datasets: the
    datasets the task trains on (empty: all); contrast copies are made from their records
    only.
    source_features: features also read against every record's source, for ratings that
    read it (``MismatchConfig.source_features``; copies keep their record's source); with
    contrast copies, each record with a source also gets a copy that repeats it
    (``evaluator.finetune.contrast.source_copies``). device: where the encoder pass of what
    the caches lack runs."""
    task = as_task(task_name)
    base = load(checkpoint)
    records = load_task_records(task, data_root)
    eligible = training_rows(records, np.arange(len(records)), train_datasets)
    triples = reference_triples_size + paraphrase_triples_size
    if (contrast_size or triples) and task.kind != "regression":
        raise ConfigError(f"task {task.name!r} is {task.kind}; contrast copies need ratings")
    build = functools.partial(
        build_inputs,
        encoder=base.model.config.encoder,
        num_layers=base.num_layers,
        cache_dir=Path(cache_dir),
        progress=progress,
        alignments=base.model.config.use_alignment,
        tokens=base.model.config.use_tokens,
        source_features=list(source_features),
        device=device,
    )
    inputs = build(task, records, base.feature_names)
    features = base.scaler.transform(inputs.features)
    train_pairs, _, _ = task_outputs(base.model, features, inputs)
    contrast = None
    if contrast_size or triples:
        chosen = [records[i] for i in eligible]
        ref_positions = (train_pairs - inputs.pair_starts())[eligible].tolist()
        built = {
            "error": contrast_records(
                chosen, contrast_size, CONTRAST_SEED, contrast_depth, contrast_class_weights
            ),
            "reference": reference_triples(
                chosen, ref_positions, reference_triples_size, CONTRAST_SEED
            ),
        }
        if paraphrase_triples_size:
            judged = sick_paraphrases(data_dir() / SICK_TRAIN)
            group = {t: g.key for g in paraphrase_groups(judged) for t in g.texts}
            pairs = [(group[a], *pair) for _, a, b in judged for pair in ((a, b), (b, a))]
            built["paraphrase"] = paraphrase_triples(
                chosen, pairs, paraphrase_triples_size, CONTRAST_SEED
            )
        if source_features:  # ratings that read the source see copies of it rate lower
            repeated, repeated_owners = source_copies(chosen)
            built["source"] = (repeated, repeated_owners, [-1] * len(repeated))
        copies: list[HumanRecord] = []
        owners: list[int] = []
        parents: list[int] = []
        kinds: list[str] = []
        for kind, (more, more_owners, more_parents) in built.items():
            parents += [p if p < 0 else p + len(copies) for p in more_parents]  # joined list
            copies, owners, kinds = copies + more, owners + more_owners, kinds + [kind] * len(more)
        owners = eligible[np.asarray(owners, dtype=np.int64)].tolist()
        if not copies:
            raise ValueError(
                f"task {task.name!r}: no synth rule applies to any output or reference; "
                "set contrast_size, reference_triples_size and paraphrase_triples_size 0"
            )
        # one cache for both kinds of copies (keyed by their texts): triples only add rows
        name = f"{task.name}.contrast{contrast_size}x{contrast_depth}"
        copy_inputs = build(task, copies, base.feature_names, name=name)
        owner_rows = np.asarray(owners, dtype=np.int64)
        # a copy that keeps its owner's references reads the one its owner trains on; a copy
        # with references of its own (a paraphrase triple's one sentence) reads its first
        keeps_refs = np.array(
            [c.refs == records[o].refs for c, o in zip(copies, owners, strict=True)]
        )
        offsets = np.where(
            keeps_refs, train_pairs[owner_rows] - inputs.pair_starts()[owner_rows], 0
        )
        contrast = ContrastSet(
            inputs=copy_inputs,
            features=base.scaler.transform(copy_inputs.features),
            owners=owner_rows,
            parents=np.asarray(parents, dtype=np.int64),
            depth=contrast_depth,
            pairs=copy_inputs.pair_starts() + offsets,
            kinds=np.asarray(kinds),
        )
    return PreparedTask(
        task,
        records,
        inputs,
        base,
        features,
        train_pairs,
        contrast,
        tuple(train_datasets),
        tuple(source_features),
    )


def training_rows(
    records: list[HumanRecord], rows: np.ndarray, datasets: tuple[str, ...] | list[str]
) -> np.ndarray:
    """The records at ``rows`` of the named datasets (all of them when none is named): a task
    can train on the datasets whose ratings carry signal and still be tested on all.
    ConfigError names an unknown dataset (key data.train_datasets)."""
    rows = np.asarray(rows, dtype=np.int64)
    if not datasets:
        return rows
    known = sorted({record.dataset for record in records})
    unknown = [name for name in datasets if name not in known]
    if unknown:
        named = ", ".join(name for name in known if name) or "none (the records name no dataset)"
        raise ConfigError(
            f"data.train_datasets names {', '.join(map(repr, unknown))}, not a dataset of this "
            f"task; known: {named}"
        )
    wanted = set(datasets)
    return rows[np.array([records[i].dataset in wanted for i in rows], dtype=bool)]


def split_rows(
    records: list[HumanRecord],
    rows: np.ndarray,
    seed: int,
    fraction: float,
    at_least_one: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(kept, held out) positions of ``rows``, no group on both sides (human_data.split_by_group,
    ``at_least_one`` as there)."""
    position = {records[i].id: i for i in rows}
    subset = [records[i] for i in rows]
    kept, held = split_by_group(subset, seed=seed, test_fraction=fraction, at_least_one=at_least_one)
    return (
        np.array([position[r.id] for r in kept], dtype=np.int64),
        np.array([position[r.id] for r in held], dtype=np.int64),
    )


def model_inputs(inputs: TaskInputs, features: np.ndarray, pairs: np.ndarray, names: list[str]):
    """rows -> the model's inputs {features, all_reference_features, ref, gen[, alignment,
    tokens, source]} for those records, each with the reference of its pair in ``pairs``
    (``features``: one row per pair, columns ``names``); all_reference_features: the features
    over all the record's references, as a fitted model reads them
    (``ratings_read_all_references``, ``FIT_REFERENCE_AGGREGATE``); source: the record's raw
    source features (``inputs.source``)."""
    pair_features = torch.from_numpy(features[pairs])
    combined = over_references(features, inputs.pair_owner(), names, FIT_REFERENCE_AGGREGATE)
    all_reference_features = torch.from_numpy(combined[pairs])
    texts = torch.from_numpy(inputs.texts)
    refs = torch.from_numpy(np.concatenate(inputs.ref_rows)[pairs])
    gens = torch.from_numpy(inputs.gen_rows)
    alignments = None if inputs.alignments is None else torch.from_numpy(inputs.alignments[pairs])
    source = None if inputs.source is None else torch.tensor(inputs.source.to_numpy()).float()

    def select(rows: list[int]) -> dict:
        index = torch.as_tensor(rows)
        batch: dict[str, Any] = {
            "features": pair_features[index],
            "all_reference_features": all_reference_features[index],
            "ref": texts[refs[index]],
            "gen": texts[gens[index]],
        }
        if alignments is not None:
            batch["alignment"] = alignments[index]
        if inputs.tokens is not None:
            batch["tokens"] = pair_tokens(inputs.tokens, refs[index], inputs.tokens, gens[index])
        if source is not None:
            batch["source"] = source[index]
        return batch

    return select


class RatingDataModule(L.LightningDataModule):
    """Train/val batches {features, ref, gen, targets} for one task."""

    def __init__(
        self,
        task: str | None = None,
        checkpoint: str = DEFAULT_CHECKPOINT,
        seed: int | None = None,
        val_fraction: float = 0.1,
        batch_size: int = 64,
        cache_dir: str = str(DEFAULT_CACHE_DIR),
        data_root: str | None = None,
        contrast_size: int = 0,
        contrast_depth: int = 1,
        contrast_class_weights: dict[str, float] | None = None,
        reference_triples_size: int = 0,
        train_datasets: list[str] | None = None,
        source_features: list[str] | None = None,
        paraphrase_triples_size: int = 0,
        ratings: str | None = None,
        scales: dict[str, tuple[float, float]] | None = None,
    ) -> None:
        """task: a shipped task's name, or with ``ratings`` (a user's ratings file, as
        ``mismatch finetune --ratings``; ``scales`` as its --scale) the name of that task
        (default: the file's name);
        data_root: folder holding <task>/*.jsonl.gz (default: the shared human data; none
        with ``ratings``, which is the data);
        seed: of the validation split (None: the run's seed_everything, which the fine-tuning
        LightningCLI fills in, so that it splits as ``mismatch finetune`` does; SEED where
        nothing fills it);
        val_fraction: share of the training groups held out for early stopping;
        contrast_size: contrast copies built for the task (0: none), in chains of up to
        contrast_depth copies with one more error each, of classes drawn with
        contrast_class_weights, and up to reference_triples_size copies built from the
        references and up to paraphrase_triples_size from SICK TRAIN's paraphrases
        (evaluator.finetune.contrast); train_datasets: the datasets trained and
        validated on (None or empty: all), by HumanRecord.dataset; source_features: features
        also read against each record's source, for ratings that read it (the model's
        source_features, linked in the config)."""
        super().__init__()
        if ratings is not None and data_root is not None:
            raise DataError("data.data_root names the shipped tasks' data; data.ratings is the data")
        self.save_hyperparameters()
        self.prepared: PreparedTask | None = None
        self.rows: np.ndarray | None = None
        self.split: dict[str, np.ndarray] = {}

    @classmethod
    def for_rows(
        cls,
        prepared: PreparedTask,
        rows: np.ndarray,
        seed: int,
        val_fraction: float,
        batch_size: int,
    ) -> RatingDataModule:
        """A data module over some records of an already prepared task (of the datasets it
        was prepared to train on)."""
        data = cls(
            prepared.task.name,
            seed=seed,
            val_fraction=val_fraction,
            batch_size=batch_size,
            train_datasets=list(prepared.train_datasets),
            source_features=list(prepared.source_features),
        )
        data.prepared, data.rows = prepared, np.asarray(rows)
        return data

    def prepare_data(self) -> None:
        """Prepare the task once: fill what its caches lack (encoded on the trainer's device)
        and keep the result. Lightning calls this on the first process of each node only,
        before ``setup``; the other processes of a multi-device run then read the filled caches
        instead of each encoding the same texts. Preparing loads models, which draws from
        torch's random state: it runs on a copy of that state, so that a cold or a warm cache,
        and every process, start training from the same one."""
        self._task()

    def _task(self) -> PreparedTask:
        """The prepared task, prepared on first use."""
        if self.prepared is not None:
            return self.prepared
        with torch.random.fork_rng(devices=[]):
            self.prepared = prepare_task(
                fit_task(self.hparams["task"], self.hparams["ratings"], self.hparams["scales"]),
                self.hparams["checkpoint"],
                self.hparams["cache_dir"],
                self.hparams["data_root"],
                contrast_size=self.hparams["contrast_size"],
                contrast_depth=self.hparams["contrast_depth"],
                contrast_class_weights=self.hparams["contrast_class_weights"],
                reference_triples_size=self.hparams["reference_triples_size"],
                train_datasets=tuple(self.hparams["train_datasets"] or ()),
                source_features=tuple(self.hparams["source_features"] or ()),
                paraphrase_triples_size=self.hparams["paraphrase_triples_size"],
                device=encoder_device(
                    None if self.trainer is None else self.trainer.strategy.root_device
                ),
            )
        return self.prepared

    def setup(self, stage: str | None = None) -> None:
        if self.split:
            return
        prepared = self._task()  # prepared here where prepare_data did not run on this process
        rows = self.rows if self.rows is not None else np.arange(len(prepared.records))
        rows = training_rows(prepared.records, rows, prepared.train_datasets)
        # another seed than the test split's, whose hash would put no train group below the fraction
        val_seed = VAL_SEED_OFFSET + self.seed
        # at least one validation group: a tenth of a user's few items can round to none
        train, val = split_rows(
            prepared.records, rows, val_seed, self.hparams["val_fraction"], at_least_one=True
        )
        if len(train) == 0 or len(val) == 0:
            raise ValueError(
                f"task {prepared.task.name!r}: {len(rows)} records give {len(train)} train and "
                f"{len(val)} validation records; more groups are needed"
            )
        self.split = {"train": train, "val": val}

    @property
    def seed(self) -> int:
        """The validation split's seed."""
        return SEED if self.hparams["seed"] is None else self.hparams["seed"]

    def ready(self) -> PreparedTask:
        """The prepared task once setup() has run; RuntimeError before."""
        if self.prepared is None or not self.split:
            raise RuntimeError("call setup() before asking for the data")
        return self.prepared

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        prepared = self.ready()
        names = prepared.base.feature_names
        originals = model_inputs(prepared.inputs, prepared.features, prepared.train_pairs, names)
        targets = torch.from_numpy(prepared.inputs.targets)
        contrast = prepared.contrast if split == "train" else None
        if contrast is not None:
            copies = model_inputs(contrast.inputs, contrast.features, contrast.pairs, names)
            copies_of: dict[int, list[int]] = {}
            for copy, owner in enumerate(contrast.owners.tolist()):
                copies_of.setdefault(owner, []).append(copy)

        def collate(rows: list[int]) -> dict:
            batch = {**originals(rows), "targets": targets[torch.as_tensor(rows)]}
            if contrast is not None:
                mine = [(i, c) for i, row in enumerate(rows) for c in copies_of.get(row, ())]
                if mine:
                    owner, copy = zip(*mine, strict=True)
                    position = {c: p for p, c in enumerate(copy)}  # a chain comes whole
                    parent = [
                        ANCHOR
                        if contrast.parents[c] == ANCHOR
                        else position.get(int(contrast.parents[c]), -1)
                        for c in copy
                    ]
                    batch["contrast"] = {
                        **copies(list(copy)),
                        "owner": torch.as_tensor(owner),
                        "parent": torch.as_tensor(parent),
                    }
            return batch

        return DataLoader(
            self.split[split].tolist(),
            batch_size=self.hparams["batch_size"] if shuffle else 1024,
            shuffle=shuffle,
            collate_fn=collate,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", shuffle=False)

    def describe(self) -> dict[str, object]:
        """Facts about the training data for the model card."""
        prepared = self.ready()
        facts = {
            "task": prepared.task.name,
            "datasets": ", ".join(spec.card_label for spec in prepared.task.datasets),
            **(
                {
                    "trained on": f"{', '.join(prepared.train_datasets)} (the records' "
                    "dataset names, data.train_datasets; the others' records are not trained on)"
                }
                if prepared.train_datasets
                else {}
            ),
            "train records": len(self.split["train"]),
            "val records": len(self.split["val"]),
            "split": f"by group, {self.hparams['val_fraction']:.0%} of groups for early stopping (seed {self.seed})",
            "reference": "likeliest by the base model's P(NoContr), as predict scores it",
        }
        if prepared.contrast is not None:
            trained = np.isin(prepared.contrast.owners, self.split["train"])
            kinds = prepared.contrast.kinds
            repeats, sick = kinds == "source", kinds == "paraphrase"
            copies = int((trained & (kinds == "error")).sum())
            references = int((trained & (kinds == "reference")).sum())
            depth = prepared.contrast.depth
            if copies:
                facts["contrast copies"] = (
                    f"{copies} train outputs with one synthetic error each"
                    if depth == 1
                    else f"{copies} train outputs with 1 to {depth} synthetic errors (graded chains)"
                )
            if references:  # error copies and their anchors, as reference_triples makes them
                facts["reference triples"] = (
                    f"{references} copies of train references: the reference or a paraphrase "
                    "of it, and a copy of the reference with one synthetic error rated below it"
                )
            if repeats.any():
                facts["source copies"] = (
                    f"{int((trained & repeats).sum())} train outputs replaced by their source"
                )
            if sick.any():
                facts["paraphrase triples"] = (
                    f"{int((trained & sick).sum())} copies from SICK TRAIN: a paraphrase that "
                    "people judged to say the same, above its reference with one meaning error"
                )
        return facts
