"""Continue a base checkpoint's mismatch training on real-base pairs with a synthetic replay.

The checkpoint's weights and feature scaler are the start (its layers were trained on that
scale); every weight but the span tagger's trains. Each epoch runs over the real-base and the
synthetic train pairs together; a run per NoContr class weight, and the epoch and run kept are
those with the best mean of three val figures: accuracy on the real-base val pairs, accuracy on
the synthetic val pairs and NoContr recall on the real-base val pairs (correct real outputs
must read as correct without the synthetic classes being forgotten).

With ``add_token_branch`` a run first grafts the token-level comparison branch onto a base
without one (``with_token_branch``): the head reads the branch through input weights that start
at zero, so training starts from the checkpoint's own predictions and the branch earns its
place.

With ``graded_weight`` each step also draws a batch of links from graded chains
(``real_bases.graded_chains``: a real base, the base with one error, with two, with three) and
adds a hinge that puts each copy's NoContr logit margin ``graded_margin`` below its parent's.
With ``graded_against="base"`` each copy is ranked against the real base of its chain instead,
``graded_margin`` times its depth below it: only the base, a correct output, is pushed toward
NoContr, never a copy that carries an error itself.
Class labels alone never say that two errors are worse than one; real outputs that are
compared with each other (WMT19 DARR) mostly differ in how many errors they carry. The epoch
rule is unchanged; each epoch also reports the share of val links ranked that way.

With ``add_features`` the base also reads new metric columns (``with_features``): its metric
branch gets an id embedding per new column, and the scaler bounds for them are fitted on the
train splits, with the quantiles and margin of the checkpoint's own scaler. With ``head_only``
as well, the columns are read by the mismatch head alone (``with_head_only_features``) and
only that linear term trains: the base's representation, and so what a task checkpoint's
ratings read, stays as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import torch
from torch.nn import functional

from evaluator.features.embeddings import EmbeddingStore
from evaluator.features.scaling import FeatureScaler, checked_values
from evaluator.features.token_store import TokenStore
from evaluator.hub import Checkpoint, load
from evaluator.model import MismatchModel
from evaluator.training.continue_settings import ContinueSettings, check_graded_against
from evaluator.training.data import expected_versions, read_split, split_features
from evaluator.training.pair_inputs import InputStores, PairInputs, pair_inputs
from mismatch_core.errors import CheckpointError, DataError


def with_token_branch(model: MismatchModel) -> MismatchModel:
    """``model`` with the token-level comparison branch added: every other weight is copied,
    and the head reads the branch's output through new input weights set to zero, so the new
    model's logits equal the old one's until training moves them."""
    config = model.config
    if config.use_tokens:
        raise ValueError("the model already has the token-level branch")
    grafted = MismatchModel(replace(config, use_tokens=True))
    assert grafted.token_interaction is not None
    state = grafted.state_dict()
    first = "head.0.weight" if config.head_hidden else "head.weight"
    # MismatchModel.represent puts the branch's output just before the metric branch's
    width = grafted.token_interaction.output_dim
    after = model.metric_set.output_dim if model.metric_set is not None else 0
    before = state[first].shape[1] - width - after
    for name, value in model.state_dict().items():
        if name == first:
            value = torch.cat(
                [value[:, :before], value.new_zeros(len(value), width), value[:, before:]], dim=1
            )
        state[name] = value
    grafted.load_state_dict(state)
    return grafted


def metric_columns_problem(
    model: MismatchModel, names: tuple[str, ...], head_only: bool = False
) -> str | None:
    """Why ``model`` cannot take the metric columns ``names`` (``head_only``: read by its head
    alone), or None."""
    if model.config.num_ratings:
        return "is a task checkpoint; metric columns are added to its base"
    if model.metric_set is None:
        return "metric columns are added to a base with a metric branch"
    if not head_only and model.metric_set.metric_embedding is None:
        return "metric columns are added to a base whose metric branch has metric ids"
    repeated = sorted(set(names) & set(model.config.feature_names))
    if repeated:
        return f"the model already reads {', '.join(repeated)}"
    return None


def with_metric_columns(model: MismatchModel, names: tuple[str, ...]) -> MismatchModel:
    """``model`` reading the metric columns ``names`` after its own: every weight is copied,
    and the metric branch's id embedding gains a row per new column, drawn as a new embedding's
    rows are. The Set Transformer attends over the new elements at once, so the logits move
    from the start and training settles them."""
    problem = metric_columns_problem(model, names)
    if problem:
        raise ValueError(problem)
    config = model.config
    grafted = MismatchModel(replace(config, feature_names=[*config.feature_names, *names]))
    state = grafted.state_dict()
    key = "metric_set.metric_embedding.weight"
    for name, value in model.state_dict().items():
        state[name] = torch.cat([value, state[key][len(value) :]]) if name == key else value
    grafted.load_state_dict(state)
    return grafted


def with_head_only_features(model: MismatchModel, names: tuple[str, ...]) -> MismatchModel:
    """``model`` whose mismatch head also reads the metric columns ``names`` through a linear
    term per class (``head_only_features``) that starts at zero: every weight is copied, so
    the logits equal the old model's until training moves the term."""
    problem = metric_columns_problem(model, names, head_only=True)
    if problem:
        raise ValueError(problem)
    config = model.config
    grafted = MismatchModel(
        replace(
            config,
            feature_names=[*config.feature_names, *names],
            head_only_features=[*config.head_only_features, *names],
        )
    )
    state = grafted.state_dict()
    for name, value in model.state_dict().items():
        if name == "feature_logits.weight":  # the new columns' weights stay zero
            value = torch.cat([value, state[name][:, value.shape[1] :]], dim=1)
        state[name] = value
    grafted.load_state_dict(state)
    return grafted


def with_features(
    checkpoint: Checkpoint,
    names: tuple[str, ...],
    folders: list[tuple[Path, Path]],
    head_only: bool = False,
) -> Checkpoint:
    """The checkpoint as ``load_split_inputs`` needs it to read ``names`` as well: feature names
    and scaler extended, the scaler's bounds for ``names`` fitted on the train splits of
    ``folders`` ((pairs folder, features folder) each). The model itself is grafted per run
    (``with_metric_columns``, or ``with_head_only_features`` with ``head_only``)."""
    if not names:
        return checkpoint
    problem = metric_columns_problem(checkpoint.model, names, head_only)
    if problem:
        raise CheckpointError(f"{checkpoint.path}: {problem}")
    frames = []
    for pairs_dir, features_dir in folders:
        frame = read_split(pairs_dir, "train")
        where = str(pairs_dir / "train.parquet")
        path = features_dir / "train.parquet"
        versions = expected_versions(
            list(names), checkpoint.model.config.encoder, checkpoint.num_layers
        )
        raw = split_features(frame, path, list(names), "train", where, versions)
        try:
            checked_values(raw, list(names))
        except ValueError as error:
            raise DataError(f"{path}: {error}") from None
        frames.append(raw)
    old = checkpoint.scaler
    new = FeatureScaler.fit(pd.concat(frames, ignore_index=True), old.quantiles, old.margin)
    scaler = FeatureScaler(
        [*old.names, *new.names],
        [*old.low, *new.low],
        [*old.high, *new.high],
        old.quantiles,
        old.margin,
        [*old.clipped, *new.clipped],
    )
    config = {**checkpoint.config, "features": {**checkpoint.config["features"]}}
    config["features"]["names"] = list(scaler.names)
    return Checkpoint(checkpoint.model, scaler, config, checkpoint.path)


def load_split_inputs(
    checkpoint: Checkpoint, pairs_dir: Path, features_dir: Path, add_token_branch: bool = False
) -> dict[str, PairInputs]:
    """The train and val splits of a pairs folder as model inputs. ``features_dir`` holds what
    ``mismatch features`` wrote for them: ``<split>.parquet`` feature caches, and the
    ``embeddings.parquet`` and ``alignments.parquet`` stores and the ``tokens`` folder
    (``--tokens``) that the checkpoint reads, or reads once ``add_token_branch`` grafts the
    token-level branch. Features are scaled by the checkpoint's own scaler. Base checkpoints
    on a frozen encoder only: the inputs cached here are theirs, and a task checkpoint's
    ratings would not follow its moved layers."""
    config = checkpoint.model.config
    if config.use_text and config.encoder_mode != "frozen":
        raise DataError(
            f"{checkpoint.path}: continued training takes checkpoints on a frozen encoder"
        )
    if config.num_ratings:
        raise DataError(f"{checkpoint.path} is a task checkpoint; continue its base instead")
    if add_token_branch and (config.use_tokens or not config.use_text):
        raise DataError(
            f"{checkpoint.path}: the token-level branch is grafted onto a base that reads text "
            "and has no token-level branch yet"
        )
    paths: dict[str, Path] = {}
    if config.use_text:
        paths["embeddings"] = features_dir / "embeddings.parquet"
    if config.use_alignment:
        paths["alignments"] = features_dir / "alignments.parquet"
    for path in (*paths.values(), *(features_dir / f"{s}.parquet" for s in ("train", "val"))):
        if not path.is_file():
            raise DataError(f"{path} does not exist; run mismatch features for {pairs_dir}")
    stores = InputStores(paths={**paths, "tokens": features_dir / "tokens"})
    if "embeddings" in paths:
        stores.embeddings = EmbeddingStore.open(paths["embeddings"])
    if "alignments" in paths:
        stores.alignments = EmbeddingStore.open(paths["alignments"])
    if config.use_tokens or add_token_branch:
        if not (features_dir / "tokens").is_dir():
            raise DataError(
                f"{features_dir / 'tokens'} does not exist; run mismatch features --tokens "
                f"for {pairs_dir}"
            )
        try:
            stores.tokens = TokenStore(features_dir / "tokens")
        except ValueError as error:
            raise DataError(str(error)) from None
    stores.check_sources(config.encoder, checkpoint.num_layers)
    sets = {
        split: _split_inputs(checkpoint, pairs_dir, split, features_dir, stores)
        for split in ("train", "val")
    }
    if not len(sets["train"]) or not len(sets["val"]):
        raise DataError(
            f"{pairs_dir}: training needs train and val pairs, found "
            + ", ".join(f"{len(pairs)} {split}" for split, pairs in sets.items())
        )
    if not (sets["val"].labels == 0).any():
        raise DataError(f"{pairs_dir}/val.parquet holds no NoContr pair: no recall to choose by")
    return sets


@dataclass
class GradedLinks:
    """A graded chains split as model inputs, and each copy's row beside the row it must
    score below (its parent, or its chain's base), with how many margins below (``steps``)."""

    pairs: PairInputs
    child: torch.Tensor
    above: torch.Tensor
    steps: torch.Tensor

    def __len__(self) -> int:
        return len(self.child)


def load_graded_links(
    checkpoint: Checkpoint,
    pairs_dir: Path,
    features_dir: Path,
    add_token_branch: bool = False,
    against: str = "parent",
) -> dict[str, GradedLinks]:
    """The train and val splits of a ``mismatch adapt chains`` folder, read as
    ``load_split_inputs`` reads a pairs folder, with each copy linked to its parent (one
    margin below it) or, ``against="base"``, to its chain's base (a margin per error)."""
    check_graded_against("against", against)
    sets = load_split_inputs(checkpoint, pairs_dir, features_dir, add_token_branch)
    links = {}
    for split, pairs in sets.items():
        path = pairs_dir / f"{split}.parquet"
        frame = read_split(pairs_dir, split)
        if "parent" not in frame.columns:
            raise DataError(f"{path} has no parent column; write it with mismatch adapt chains")
        row = {pair_id: k for k, pair_id in enumerate(frame["id"])}
        parents = frame["parent"].tolist()
        child = [k for k, parent in enumerate(parents) if parent]
        unknown = [parents[k] for k in child if parents[k] not in row]
        if unknown:
            raise DataError(f"{path}: parent {unknown[0]!r} is no pair of the file")
        if not child:
            raise DataError(f"{path} holds no copy with a parent: no chain to rank")
        above, steps = [row[parents[k]] for k in child], [1.0] * len(child)
        if against == "base":
            for i, k in enumerate(child):
                while parents[above[i]]:
                    above[i] = row[parents[above[i]]]
                    steps[i] += 1
                    if steps[i] > len(parents):
                        raise DataError(f"{path}: the parents of {frame['id'][k]!r} form a loop")
        links[split] = GradedLinks(
            pairs, torch.tensor(child), torch.tensor(above), torch.tensor(steps)
        )
    return links


def nocontr_margin(logits: torch.Tensor) -> torch.Tensor:
    """log P(NoContr) - log(1 - P(NoContr)) per row: the score's logit."""
    return logits[:, 0] - torch.logsumexp(logits[:, 1:], dim=-1)


def graded_loss(
    model: MismatchModel, links: GradedLinks, index: torch.Tensor, margin: float
) -> torch.Tensor:
    """Mean hinge over the links at ``index``: zero once each copy's margin is ``margin``
    times the link's steps below the margin of the row it links to."""
    rows = torch.cat([links.child[index], links.above[index]])
    margins = nocontr_margin(model(**links.pairs.rows(rows)))
    child, above = margins[: len(index)], margins[len(index) :]
    return torch.relu(margin * links.steps[index] - (above - child)).mean()


def graded_below(model: MismatchModel, links: GradedLinks) -> float:
    """Share of the links whose copy scores below the row it links to."""
    margins = nocontr_margin(_val_logits(model, links.pairs))
    return float((margins[links.child] < margins[links.above]).float().mean())


def _split_inputs(
    checkpoint: Checkpoint, pairs_dir: Path, split: str, features_dir: Path, stores: InputStores
) -> PairInputs:
    frame = read_split(pairs_dir, split)
    where = str(pairs_dir / f"{split}.parquet")
    path = features_dir / f"{split}.parquet"
    names = checkpoint.feature_names
    versions = expected_versions(names, checkpoint.model.config.encoder, checkpoint.num_layers)
    raw = split_features(frame, path, names, split, where, versions)
    return pair_inputs(frame, raw, checkpoint.scaler, stores, where)


def val_figures(
    model: MismatchModel, pairs: PairInputs, batch_size: int = 2048
) -> tuple[float, float]:
    """(accuracy, NoContr recall) on a val set."""
    predicted = _val_logits(model, pairs, batch_size).argmax(-1)
    correct = predicted == pairs.labels
    return float(correct.float().mean()), float(correct[pairs.labels == 0].float().mean())


def _val_logits(model: MismatchModel, pairs: PairInputs, batch_size: int = 2048) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return torch.cat(
            [
                model(**pairs.rows(slice(start, start + batch_size)))
                for start in range(0, len(pairs), batch_size)
            ]
        )


def selection_score(real_acc: float, synth_acc: float, real_nocontr: float) -> float:
    """The rule that picks the epoch and the run (module docstring)."""
    return (real_acc + synth_acc + real_nocontr) / 3


def continue_run(
    checkpoint_path: str,
    revision: str | None,
    data: dict[str, PairInputs],
    settings: ContinueSettings,
    nocontr_weight: float,
    log: Callable[[str], None] = print,
    graded: dict[str, GradedLinks] | None = None,
) -> tuple[MismatchModel, list[dict], dict]:
    """One run from the checkpoint's weights; (model at its best epoch, per-epoch figures, the
    best epoch's figures). ``data`` holds real_train, real_val, synth_train and synth_val;
    ``graded`` the train and val links when ``settings.graded_weight`` is set. Epoch 0 is the
    checkpoint as loaded. Each run loads the checkpoint itself, after setting
    the seed: building the model draws from the generator, and the shipped base's run did it in
    this order, so runs repeat it bit for bit whether or not others ran before them."""
    if settings.graded_weight and graded is None:
        raise ValueError("graded_weight is set but no graded chains were given")
    torch.manual_seed(settings.seed)
    model = load(checkpoint_path, revision).model
    if settings.add_features:
        graft = with_head_only_features if settings.head_only else with_metric_columns
        model = graft(model, settings.add_features)
    if settings.add_token_branch:
        model = with_token_branch(model)
    train = PairInputs.concat([data["real_train"], data["synth_train"]])
    weight = torch.ones(model.config.num_classes)
    weight[0] = nocontr_weight
    if settings.head_only:  # the term alone trains
        assert model.feature_logits is not None  # grafted above: head_only needs add_features
        params = list(model.feature_logits.parameters())
    else:  # every weight but the span tagger's
        params = [p for n, p in model.named_parameters() if not n.startswith("span_tagger")]
    optimizer = torch.optim.AdamW(
        params, lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    steps = settings.epochs * -(-len(train) // settings.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    history: list[dict] = []
    best_state, chosen, best = None, {}, -1.0
    draws = torch.Generator().manual_seed(settings.seed)  # which links each step ranks
    for epoch in range(settings.epochs + 1):
        started = time.time()
        if epoch:
            model.train(not settings.head_only)  # a frozen base keeps its dropout off
            order = torch.randperm(len(train))
            for start in range(0, len(order), settings.batch_size):
                rows = order[start : start + settings.batch_size]
                loss = functional.cross_entropy(
                    model(**train.rows(rows)), train.labels[rows], weight=weight
                )
                if graded is not None and settings.graded_weight:
                    links = torch.randint(
                        len(graded["train"]), (settings.batch_size,), generator=draws
                    )
                    loss = loss + settings.graded_weight * graded_loss(
                        model, graded["train"], links, settings.graded_margin
                    )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                schedule.step()
        real_acc, real_recall = val_figures(model, data["real_val"])
        synth_acc, synth_recall = val_figures(model, data["synth_val"])
        figures = {
            "nocontr_weight": nocontr_weight,
            "epoch": epoch,
            "real_val_acc": round(real_acc, 4),
            "real_val_nocontr": round(real_recall, 4),
            "synth_val_acc": round(synth_acc, 4),
            "synth_val_nocontr": round(synth_recall, 4),
            "seconds": round(time.time() - started, 1),
            "score": selection_score(real_acc, synth_acc, real_recall),
        }
        if graded is not None:
            figures["graded_val_below"] = round(graded_below(model, graded["val"]), 4)
        history.append(figures)
        log(str(figures))
        if figures["score"] > best:
            best, chosen = figures["score"], figures
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    assert best_state is not None
    model.load_state_dict(best_state)
    return model.eval(), history, chosen
