"""Checkpoint export/load: identical outputs, no pickles, clear errors; prediction from raw texts."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file
from tiny_bert import tiny_bert

from evaluator.features import FeatureScaler
from evaluator.hub import CheckpointError, load, save_pretrained
from evaluator.model import MismatchConfig, MismatchModel
from mismatch_core.checkpoint_files import resolve_checkpoint
from mismatch_core.taxonomy import CODES, NUM_CLASSES

FEATURES = ["rouge1_f", "bleu", "chrf", "length_ratio"]


def scaler() -> FeatureScaler:
    rng = np.random.default_rng(0)
    return FeatureScaler.fit(pd.DataFrame(rng.random((50, len(FEATURES))), columns=FEATURES))


def frozen_model(embedding_dim: int = 16, **overrides) -> MismatchModel:
    torch.manual_seed(0)
    config = MismatchConfig(feature_names=FEATURES, embedding_dim=embedding_dim, **overrides)
    return MismatchModel(config).eval()


def trainable_model() -> MismatchModel:
    bert = tiny_bert(120, max_positions=32)
    config = MismatchConfig(feature_names=FEATURES, encoder_mode="trainable")
    return MismatchModel(config, encoder=bert).eval()


def inputs(model: MismatchModel, n: int = 4) -> dict:
    generator = torch.Generator().manual_seed(3)
    features = torch.rand(n, len(FEATURES), generator=generator)
    if model.config.encoder_mode == "trainable":
        ids = torch.randint(0, 120, (n, 7), generator=generator)
        text = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        return {"features": features, "ref": text, "gen": dict(text)}
    dim = model.config.embedding_dim
    return {
        "features": features,
        "ref": torch.randn(n, dim, generator=generator),
        "gen": torch.randn(n, dim, generator=generator),
    }


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return save_pretrained(
        frozen_model(),
        tmp_path / "ckpt",
        scaler=scaler(),
        training={"train pairs": 10},
        metrics={"val_accuracy": 0.5},
    )


def interaction_model() -> MismatchModel:
    return frozen_model(text_interactions=True)


@pytest.fixture
def common_umask():
    """The usual umask 022, whatever the shell running the tests has: file modes below
    are then the library's doing."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.parametrize("make", [frozen_model, trainable_model, interaction_model])
def test_export_then_load_gives_identical_outputs(tmp_path: Path, make, common_umask) -> None:
    model = make()
    directory = save_pretrained(model, tmp_path / "ckpt", scaler=scaler())
    checkpoint = load(directory)
    batch = inputs(model)
    with torch.no_grad():
        assert torch.equal(model(**batch), checkpoint.model(**batch))
    assert checkpoint.feature_names == FEATURES
    assert checkpoint.scaler.to_dict() == scaler().to_dict()
    weights = load_file(str(directory / "model.safetensors"))
    has_encoder = any(name.startswith("encoder.") for name in weights)
    assert has_encoder == (model.config.encoder_mode == "trainable")
    # a shipped checkpoint is readable by every user, like the folder it is in
    assert all(path.stat().st_mode & 0o044 == 0o044 for path in directory.iterdir())


def test_config_and_card_describe_the_checkpoint(saved: Path) -> None:
    config = json.loads((saved / "config.json").read_text())
    assert config["taxonomy"] == list(CODES)
    assert config["architecture"]["encoder"] == "all-MiniLM-L6-v2"
    assert config["features"]["names"] == FEATURES
    assert config["tasks"] == {}
    card = (saved / "README.md").read_text()
    assert "| val_accuracy | 0.5000 |" in card
    assert "train pairs: 10" in card
    assert "Intended use" in card


def test_card_shows_a_nested_training_record_as_bullets(tmp_path: Path) -> None:
    runs = [[{"epoch": e, "val_acc": 0.5} for e in range(40)] for _ in range(3)]
    settings = {"epochs": 8, "head_only": True, "add_features": ["disfluency"], "graded": None}
    continued = {"from": "old-base", "settings": settings, "runs": runs}
    training = {"train pairs": 10, "continued": {**continued, "before": dict(continued)}}
    saved = save_pretrained(frozen_model(), tmp_path / "ckpt", scaler=scaler(), training=training)
    lines = (saved / "README.md").read_text().splitlines()
    assert "- continued:" in lines
    assert "  - settings:" in lines and "    - epochs: 8" in lines
    # values as config.json holds them, not as Python prints them (True, ['disfluency'], None)
    assert "    - head_only: true" in lines and '    - add_features: ["disfluency"]' in lines
    assert "    - graded: null" in lines
    assert "    - from: old-base" in lines  # the record the continued start carried
    assert "  - runs: 3 entries, `training.continued.runs` in config.json" in lines
    assert max(len(line) for line in lines) < 200


def test_a_home_relative_folder_is_written_where_it_is_read(tmp_path: Path, monkeypatch) -> None:
    """export_dir: ~/ckpt in a config lands in the home folder, where load (and the signature
    the command prints) looks, not in a folder named "~"."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    written = save_pretrained(frozen_model(), "~/ckpt", scaler=scaler())
    assert written == tmp_path / "home" / "ckpt" and not (tmp_path / "~").exists()
    assert load("~/ckpt").path == written


def test_a_checkpoint_is_saved_where_modes_cannot_be_set(tmp_path: Path, monkeypatch) -> None:
    """A file system without modes (vfat, some network mounts) refuses chmod: the checkpoint
    is still written, and loads."""

    def refused(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refused)
    directory = save_pretrained(frozen_model(), tmp_path / "ckpt", scaler=scaler())
    assert load(directory).feature_names == FEATURES


def test_saving_replaces_a_checkpoint_but_not_other_folders(saved: Path, tmp_path: Path) -> None:
    save_pretrained(frozen_model(use_text=False), saved, scaler=scaler())
    assert load(saved).model.config.use_text is False
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]  # no temp or backup dirs left
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep")
    with pytest.raises(CheckpointError, match="not a checkpoint directory"):
        save_pretrained(frozen_model(), precious, scaler=scaler())
    assert (precious / "notes.txt").read_text() == "keep"
    (saved / "notes.txt").write_text("keep")  # a checkpoint holding more is not replaced either
    with pytest.raises(CheckpointError, match="holds notes.txt, not only config.json"):
        save_pretrained(frozen_model(), saved, scaler=scaler())
    assert (saved / "notes.txt").read_text() == "keep"


def test_scaler_must_match_the_model_features(tmp_path: Path) -> None:
    other = FeatureScaler(["a", "b"], [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="scaler features"):
        save_pretrained(frozen_model(), tmp_path / "x", scaler=other)


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="does not exist"):
        load(tmp_path / "nowhere")


def test_unknown_hub_id_offline_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CheckpointError, match="neither a local checkpoint directory nor"):
        load("nobody-here/no-such-model", local_files_only=True)
    # offline by the environment, not by the caller: the Hub library's hint to pass
    # local_files_only=False was no help
    with pytest.raises(CheckpointError, match="nor in the Hugging Face cache .*offline$"):
        load("checkpoints/mismatch-nope")
    with pytest.raises(CheckpointError, match="the checkpoint path or Hub repo id is empty"):
        load("")  # loaded the working directory
    with pytest.raises(CheckpointError, match="the checkpoint path or Hub repo id is empty"):
        resolve_checkpoint(" ")  # how the commands read --checkpoint


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "config.json").unlink(), r"config\.json is missing"),
        (lambda d: (d / "config.json").write_text("{not json"), r"config\.json is not valid JSON"),
        (
            lambda d: (d / "config.json").write_text("[]"),
            r"config\.json is not a mismatch-eval config",
        ),
        (lambda d: (d / "model.safetensors").unlink(), r"model\.safetensors is missing"),
        (
            lambda d: (d / "model.safetensors").write_bytes(b"\x00garbage" * 8),
            r"model\.safetensors cannot be read",
        ),
    ],
)
def test_damaged_checkpoint_names_the_file(saved: Path, damage, message: str) -> None:
    damage(saved)
    with pytest.raises(CheckpointError, match=message):
        load(saved)


def edit_config(directory: Path, change) -> None:
    path = directory / "config.json"
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config))


def test_shape_mismatch_names_the_weights_file(saved: Path) -> None:
    edit_config(saved, lambda c: c["architecture"].update(text_dim=32))
    with pytest.raises(
        CheckpointError, match=r"(?s)model\.safetensors does not fit .*size mismatch"
    ):
        load(saved)


def test_other_taxonomy_or_inconsistent_config_is_rejected(saved: Path) -> None:
    edit_config(saved, lambda c: c["architecture"].update(colour="red"))
    with pytest.raises(CheckpointError, match=r"unknown key\(s\) architecture\.colour"):
        load(saved)
    edit_config(
        saved, lambda c: (c["architecture"].pop("colour"), c.update(taxonomy=c["taxonomy"][:-1]))
    )
    with pytest.raises(CheckpointError, match="trained for classes"):
        load(saved)


def test_a_format_version_given_as_a_string_shows_as_one(saved: Path) -> None:
    """A config.json with "format_version": "1" was refused as "has format_version 1, this
    code reads 1"."""
    edit_config(saved, lambda c: c.update(format_version="1"))
    with pytest.raises(CheckpointError, match="has format_version '1', this code reads 1$"):
        load(saved)


def test_a_config_from_before_a_key_existed_loads_with_the_old_behaviour(saved: Path) -> None:
    """Keys were added with defaults that keep what came before (mismatch-base has no
    source_features): a checkpoint a user fitted with older code loads as it scored then."""
    edit_config(saved, lambda c: c["architecture"].pop("source_features"))
    edit_config(saved, lambda c: c["architecture"].pop("ratings_read_all_references"))
    edit_config(saved, lambda c: c["architecture"].pop("reference_aggregate"))
    config = load(saved).model.config
    assert (config.source_features, config.ratings_read_all_references) == ([], False)
    assert config.reference_aggregate == "max"  # task checkpoints fitted before 2026-12-02


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["features"].pop("names"), r"config\.json lacks the key 'names'"),
        (lambda c: c["architecture"].update(num_heads=0), r"config\.json is inconsistent"),
        (
            lambda c: c["architecture"].update(text_dim="64"),
            r"config\.json is inconsistent: model config key 'text_dim' must be int",
        ),
        (  # inference combines references as the architecture says: a mean would be recorded
            lambda c: c["features"].update(aggregate="mean"),
            r"config\.json is inconsistent: \"features\.aggregate\" must be \"max\" \(how the "
            r"ratings read each feature over the references, as \"architecture\.reference_aggregate"
            r"\" says\), got 'mean'",
        ),
        (lambda c: c.update(tasks="oops"), r"config\.json is inconsistent: \"tasks\" must be"),
        (lambda c: c.update(architecture="x"), r"config\.json: \"architecture\" must be an object"),
        (lambda c: c.update(features=[]), r"config\.json: \"features\" must be an object"),
        (
            lambda c: c["features"].update(scaler=None),
            r"config\.json is inconsistent: the scaler must be an object, got NoneType",
        ),
        (
            lambda c: [names.__setitem__(0, "foo") for names in feature_lists(c)],
            r"config\.json is inconsistent: \"features\.names\" holds unknown feature\(s\) foo",
        ),
        (
            lambda c: c["features"].update(num_layer=3),
            r"config\.json: unknown key\(s\) features\.num_layer",
        ),
        (lambda c: c.update(notes="x"), r"config\.json: unknown key\(s\) notes"),
    ],
)
def test_a_garbled_config_setting_is_named_at_load_time(saved: Path, change, message) -> None:
    edit_config(saved, change)
    with pytest.raises(CheckpointError, match=message):
        load(saved)


def test_a_feature_layer_the_encoder_lacks_is_named_when_the_evaluator_is_made(saved: Path) -> None:
    """The encoder pass refused it at the first prediction, with a traceback."""
    from evaluator import Evaluator

    edit_config(saved, lambda c: c["features"].update(num_layers=7))
    checkpoint = load(saved)  # loading reads no encoder: --signature works without one
    with pytest.raises(CheckpointError) as error:
        Evaluator(checkpoint)
    assert str(error.value) == (
        f'{saved / "config.json"}: "features.num_layers" is 7; the encoder '
        "'all-MiniLM-L6-v2' has 6 layers"
    )
    edit_config(saved, lambda c: c["features"].update(num_layers=6))
    Evaluator(load(saved))


def test_an_encoder_the_disfluency_detector_cannot_read_is_named_at_load_time(
    saved: Path, tmp_path: Path
) -> None:
    """A checkpoint reading the disfluency column with another architecture.encoder loaded,
    then its first prediction failed with a 40-line traceback: the detector reads the token
    states of the encoder it was trained on. Another name of that encoder (its Hub id) is the
    same encoder, and a checkpoint that computes no metric columns reads no detector."""
    from evaluator.features.disfluency import load_detector

    names = [*FEATURES, "disfluency"]
    model = MismatchModel(MismatchConfig(feature_names=names, embedding_dim=16))
    rng = np.random.default_rng(0)
    fitted = FeatureScaler.fit(pd.DataFrame(rng.random((50, len(names))), columns=names))
    directory = save_pretrained(model, tmp_path / "disfluent", scaler=fitted)
    alias = "sentence-transformers/all-MiniLM-L6-v2"
    edit_config(directory, lambda c: c["architecture"].update(encoder=alias))
    assert load(directory).model.config.encoder == alias
    other = "bert-base-uncased"
    edit_config(directory, lambda c: c["architecture"].update(encoder=other))
    with pytest.raises(CheckpointError) as error:
        load(directory)
    assert str(error.value) == (
        f'{directory / "config.json"} is inconsistent: "architecture.encoder" is {other!r}; '
        f"the disfluency feature reads the token states of {load_detector().encoder!r}, which "
        "the disfluency detector was trained on"
    )
    text_only = MismatchConfig(feature_names=names, embedding_dim=16, use_metrics=False)
    directory = save_pretrained(MismatchModel(text_only), tmp_path / "text-only", scaler=fitted)
    edit_config(directory, lambda c: c["architecture"].update(encoder=other))
    assert load(directory).model.config.encoder == other
    edit_config(saved, lambda c: c["architecture"].update(encoder=other))
    assert load(saved).model.config.encoder == other  # no disfluency column: nothing fails


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("quantiles", [0.1], r"scaler key 'quantiles' must be a list of 2 numbers, got \[0\.1\]"),
        ("low", ["a", 0.0, 0.0, 0.0], r"scaler key 'low' must be a list of 4 numbers"),
        ("high", [True, 1.0, 1.0, 1.0], r"scaler key 'high' must be a list of 4 numbers"),
        ("names", "abcd", r"scaler key 'names' must be a list of feature names, got 'abcd'"),
        ("clipped", 5, r"scaler key 'clipped' must be a list of feature names, got 5"),
        ("margin", "3", r"scaler key 'margin' must be a number, got '3'"),
        ("low", [10**400, 0.0, 0.0, 0.0], r"scaler key 'low' must be a list of 4 numbers"),
        ("high", [float("nan"), 1.0, 1.0, 1.0], r"scaler key 'high' must be a list of 4 numbers"),
        ("margin", float("inf"), r"scaler key 'margin' must be a number, got inf"),
    ],
)
def test_a_garbled_scaler_list_is_named_at_load_time(saved: Path, key, value, message) -> None:
    """features.scaler.quantiles of one number loaded into an IndexError traceback, a string
    of names read as its letters, a bool bound as 0 or 1: each now names its key."""
    edit_config(saved, lambda c: c["features"]["scaler"].update({key: value}))
    with pytest.raises(CheckpointError, match=rf"config\.json is inconsistent: {message}"):
        load(saved)


def test_an_unknown_scaler_key_is_refused(saved: Path) -> None:
    """features.scaler took any key, so a misspelt one read as unset, unlike every other key."""
    edit_config(saved, lambda c: c["features"]["scaler"].update(margins=0.0))
    with pytest.raises(CheckpointError, match=r"unknown key\(s\) features\.scaler\.margins$"):
        load(saved)


def test_a_boolean_feature_layer_is_refused_and_layer_0_loads(saved: Path) -> None:
    """features.num_layers true loaded (a bool is an int) and read BERTScore at layer 1; 0,
    the embeddings' output, which `mismatch features --num-layers 0` computes and a save
    writes, did not load."""
    edit_config(saved, lambda c: c["features"].update(num_layers=True))
    with pytest.raises(
        CheckpointError,
        match=r"\"features\.num_layers\" must be an integer from 0 .the embeddings. or null, got True",
    ):
        load(saved)
    edit_config(saved, lambda c: c["features"].update(num_layers=0))
    assert load(saved).num_layers == 0


@pytest.mark.parametrize("key", ["training", "metrics"])
def test_a_training_or_metrics_record_that_is_no_object_is_refused(saved: Path, key) -> None:
    """A config.json with "training": [1] or "metrics": "x" loaded, then `mismatch spans copy`
    and save_pretrained failed with a TypeError reading it."""
    edit_config(saved, lambda c: c.update({key: [1]}))
    with pytest.raises(
        CheckpointError, match=rf'config\.json is inconsistent: "{key}" must be an object, got list'
    ):
        load(saved)


def feature_lists(config: dict) -> list[list[str]]:
    """Every list of feature names in a config (they must agree)."""
    features = config["features"]
    return [config["architecture"]["feature_names"], features["names"], features["scaler"]["names"]]


def test_saved_config_holds_exactly_the_keys_load_accepts(saved: Path) -> None:
    from evaluator.features.scaling import STATE_KEYS
    from evaluator.hub import ARCHITECTURE_KEYS, FEATURE_KEYS, TOP_LEVEL_KEYS

    config = json.loads((saved / "config.json").read_text())
    assert sorted(config) == sorted(TOP_LEVEL_KEYS)
    assert sorted(config["architecture"]) == sorted(ARCHITECTURE_KEYS)
    assert sorted(config["features"]) == sorted(FEATURE_KEYS)
    assert sorted(config["features"]["scaler"]) == sorted(STATE_KEYS)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda t: torch.full_like(t, float("nan")), "holds NaN or infinity"),
        (lambda t: t.to(torch.float64), "is torch.float64; the model's torch.float32 cannot"),
        (lambda t: t.to(torch.int64), "is torch.int64; the model's torch.float32 cannot"),
    ],
)
def test_weights_that_would_score_wrongly_are_refused(saved: Path, damage, message) -> None:
    from safetensors.torch import save_file

    weights = load_file(str(saved / "model.safetensors"))
    name = sorted(weights)[0]
    weights[name] = damage(weights[name])
    save_file(weights, str(saved / "model.safetensors"))
    with pytest.raises(CheckpointError, match=rf"model\.safetensors: tensor '{name}' {message}"):
        load(saved)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_weights_load_as_the_same_numbers(saved: Path, dtype) -> None:
    from safetensors.torch import save_file

    weights = {name: t.to(dtype) for name, t in load_file(str(saved / "model.safetensors")).items()}
    save_file(weights, str(saved / "model.safetensors"))
    loaded = load(saved).model.state_dict()
    assert all(torch.equal(loaded[name], t.to(torch.float32)) for name, t in weights.items())


def test_weights_holding_nan_are_not_written_over_a_checkpoint(saved: Path) -> None:
    before = (saved / "model.safetensors").read_bytes()
    diverged = frozen_model()
    with torch.no_grad():
        next(diverged.parameters()).fill_(float("nan"))
    with pytest.raises(CheckpointError, match="holds NaN or infinity \\(training diverged\\)"):
        save_pretrained(diverged, saved, scaler=scaler())
    assert (saved / "model.safetensors").read_bytes() == before


def test_a_local_checkpoint_with_a_revision_or_no_path_is_refused(saved: Path) -> None:
    with pytest.raises(CheckpointError, match="revision 'v2' applies to Hub ids"):
        load(saved, revision="v2")
    with pytest.raises(TypeError, match="got NoneType"):
        load(None)  # type: ignore[arg-type]


def test_the_signature_hashes_the_files_as_loaded(saved: Path) -> None:
    from evaluator.signature import signature

    checkpoint = load(saved)
    before = signature(checkpoint).sha256
    edit_config(saved, lambda c: c["training"].update(note="edited after loading"))
    (saved / "model.safetensors").unlink()
    assert signature(checkpoint).sha256 == before


@pytest.mark.slow
def test_predict_proba_from_raw_texts(tmp_path: Path) -> None:
    from evaluator.inference import predict_proba

    directory = save_pretrained(frozen_model(embedding_dim=384), tmp_path / "ckpt", scaler=scaler())
    checkpoint = load(directory)
    refs = [
        "Two dogs ran across the park.",
        ["A man rides a horse.", "A person is riding a horse."],
    ]
    gens = ["Three dogs ran across the park.", "A man rides a horse."]
    probabilities = predict_proba(checkpoint, refs, gens, batch_size=2)
    assert probabilities.shape == (2, NUM_CLASSES)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    single = predict_proba(checkpoint, [refs[0]], [gens[0]])
    assert np.allclose(single, probabilities[:1], atol=1e-5)
    each = [predict_proba(checkpoint, [[ref]], [gens[1]])[0] for ref in refs[1]]
    assert not np.allclose(each[0], each[1])  # the two references really give different outputs


def test_push_to_hub_checks_then_uploads_only_checkpoint_files(saved: Path, monkeypatch) -> None:
    import huggingface_hub

    from evaluator.hub import push_to_hub

    calls = []

    class FakeApi:
        def create_repo(self, repo_id, **options):
            calls.append(("create", repo_id, options))

        def upload_folder(self, **options):
            calls.append(("upload", options["repo_id"], options))
            return "https://hub/commit/1"

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    assert push_to_hub(saved, "me/mismatch-base") == "https://hub/commit/1"
    assert [c[0] for c in calls] == ["create", "upload"]
    assert calls[1][2]["allow_patterns"] == ["config.json", "model.safetensors", "README.md"]
    monkeypatch.setenv("HOME", str(saved.parent))  # the folder loaded is the one uploaded
    push_to_hub("~/ckpt", "me/mismatch-base")
    assert calls[-1][2]["folder_path"] == str(saved)
    (saved / "config.json").unlink()
    with pytest.raises(CheckpointError):
        push_to_hub(saved, "me/mismatch-base")


def test_a_save_into_the_hugging_face_cache_is_refused(tmp_path: Path, monkeypatch) -> None:
    """A downloaded revision keeps the files the Hub has (pinned by its commit): saving a
    changed model over it replaced the snapshot's links with files that no longer match."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = tmp_path / "hub" / "models--me--base" / "snapshots" / "0123abc"
    save_pretrained(frozen_model(), tmp_path / "mine", scaler=scaler())  # elsewhere: written
    with pytest.raises(CheckpointError, match="is inside a download in the Hugging Face cache"):
        save_pretrained(frozen_model(), snapshot, scaler=scaler())
    assert not snapshot.exists()
    save_pretrained(frozen_model(), tmp_path / "hub" / "my-own", scaler=scaler())  # no download


def test_push_to_hub_names_the_repo_when_the_hub_refuses(saved: Path, monkeypatch) -> None:
    import huggingface_hub

    from evaluator.hub import push_to_hub

    class OfflineApi:
        def create_repo(self, repo_id, **options):
            raise huggingface_hub.errors.OfflineModeIsEnabled("Cannot reach the Hub")

    monkeypatch.setattr(huggingface_hub, "HfApi", OfflineApi)
    with pytest.raises(CheckpointError, match="cannot upload .* to the Hub repo 'me/base'"):
        push_to_hub(saved, "me/base")


@pytest.mark.slow
def test_alignment_model_round_trips_and_predicts_from_raw_texts(tmp_path: Path) -> None:
    from evaluator.inference import predict_outputs

    model = frozen_model(embedding_dim=384, use_alignment=True)
    directory = save_pretrained(model, tmp_path / "ckpt", scaler=scaler())
    checkpoint = load(directory)
    assert checkpoint.model.config.use_alignment
    refs = ["Two dogs ran across the park.", ["A man rides a horse.", "A person rides a horse."]]
    gens = ["Three dogs ran across the park.", "A man rides a horse."]
    outputs = predict_outputs(checkpoint, refs, gens, batch_size=2)
    assert outputs.probabilities.shape == (2, NUM_CLASSES) and outputs.ratings is None
    same = predict_outputs(load(directory), refs, gens)
    np.testing.assert_allclose(same.probabilities, outputs.probabilities, atol=1e-6)
    with pytest.raises(ValueError, match="use_alignment needs use_text"):
        frozen_model(use_alignment=True, use_text=False)


@pytest.mark.slow
def test_token_model_round_trips_and_predicts_from_raw_texts(tmp_path: Path) -> None:
    from evaluator.inference import predict_outputs

    model = frozen_model(embedding_dim=384, use_tokens=True, use_alignment=True)
    directory = save_pretrained(model, tmp_path / "ckpt", scaler=scaler())
    checkpoint = load(directory)
    assert checkpoint.model.config.use_tokens
    refs = ["Two dogs ran across the park.", ["A man rides a horse.", "A person rides a horse."]]
    gens = ["Three dogs ran across the park.", ""]
    outputs = predict_outputs(checkpoint, refs, gens, batch_size=2)
    assert outputs.probabilities.shape == (2, NUM_CLASSES)
    assert np.isfinite(outputs.probabilities).all()
    one_by_one = [
        predict_outputs(load(directory), [r], [g]).probabilities[0]
        for r, g in zip(refs, gens, strict=True)
    ]
    np.testing.assert_allclose(np.stack(one_by_one), outputs.probabilities, atol=1e-6)


def test_each_shipped_card_says_what_its_config_says() -> None:
    """A shipped checkpoint's README.md is the card of its config.json as the code writes it
    now: a card left behind by an older writer would tell users stale usage or scales."""
    from evaluator.hub import model_card
    from mismatch_core.resources import REPO_ROOT

    shipped = sorted((REPO_ROOT / "checkpoints").glob("mismatch-*"))
    assert len(shipped) == 8
    for directory in shipped:
        config = json.loads((directory / "config.json").read_text())
        assert (directory / "README.md").read_text() == model_card(config), directory.name
