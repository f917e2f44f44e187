"""Pretraining data module, Lightning module and the LightningCLI run end to end on tiny data."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from evaluator.features import EmbeddingStore, FeatureScaler
from evaluator.features.embeddings import encoder_reading, encoder_source
from evaluator.hub import load
from evaluator.signature import signature
from evaluator.training import data as data_module
from evaluator.training.data import DataError, MismatchDataModule, split_features
from evaluator.training.module import MismatchModule
from evaluator.training.pretrain import main
from mismatch_core.errors import ConfigError
from mismatch_core.pairs import read_pairs
from mismatch_core.taxonomy import CODES, NUM_CLASSES

FEATURES = ["rouge1_f", "bleu", "chrf"]
DIM = 384  # the packaged encoder's width, which the module reads from its config


def make_split(split: str, per_class: int, rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for label_id, code in enumerate(CODES):
        for k in range(per_class):
            rows.append(
                {
                    "id": f"{split}-{label_id}-{k}",
                    "ref": f"ref {split} {label_id} {k}",
                    "gen": f"gen {split} {label_id} {k}",
                    "label": code,
                    "label_id": label_id,
                    "source": "coco",
                    "group": f"g{k}",
                    "rule": "r",
                    "detail": "",
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Path]:
    """Pairs, a feature cache whose values carry the label, and a complete embedding store."""
    rng = np.random.default_rng(0)
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    frames = {"train": make_split("train", 4, rng), "val": make_split("val", 2, rng)}
    for split, frame in frames.items():
        frame.to_parquet(pairs / f"{split}.parquet")
    both = pd.concat(frames.values(), ignore_index=True)
    cache = pd.DataFrame({"id": both["id"]})
    for j, name in enumerate(FEATURES):
        cache[name] = (both["label_id"] * (j + 1)) % NUM_CLASSES + rng.random(len(both)) * 0.1
    cache["n_tokens"] = 7  # an int column is not a feature
    cache.to_parquet(tmp_path / "features.parquet")
    store = EmbeddingStore()
    store.claim(encoder_reading("all-MiniLM-L6-v2"))  # as prepare_data leaves it
    texts = pd.unique(pd.concat([both["ref"], both["gen"]])).tolist()
    store.add(texts, rng.standard_normal((len(texts), DIM)).astype(np.float32))
    store.save(tmp_path / "embeddings.parquet")
    return {
        "pairs": pairs,
        "features": tmp_path / "features.parquet",
        "embeddings": tmp_path / "embeddings.parquet",
    }


def datamodule(corpus: dict[str, Path], **overrides) -> MismatchDataModule:
    options = {
        "pairs_dir": str(corpus["pairs"]),
        "features": str(corpus["features"]),
        "embeddings": str(corpus["embeddings"]),
        "batch_size": 8,
        **overrides,
    }
    return MismatchDataModule(**options)


def test_datamodule_batches_and_train_only_scaler(corpus: dict[str, Path]) -> None:
    data = datamodule(corpus)
    assert data.feature_names == FEATURES
    data.setup("fit")
    cache = pd.read_parquet(corpus["features"]).set_index("id")
    train_ids = data.frames["train"]["id"]
    expected = FeatureScaler.fit(cache.loc[train_ids, FEATURES].reset_index(drop=True))
    assert data.scaler.to_dict() == expected.to_dict()
    batch = next(iter(data.train_dataloader()))
    assert batch["features"].shape == (8, len(FEATURES))
    assert batch["ref"].shape == batch["gen"].shape == (8, DIM)
    assert batch["labels"].dtype == torch.long
    first = next(iter(data.val_dataloader()))
    store = EmbeddingStore.open(corpus["embeddings"])
    val = data.frames["val"]
    assert torch.equal(first["gen"][0], torch.from_numpy(store.lookup([val["gen"][0]])[0]))
    assert first["labels"][0].item() == val["label_id"][0]


def test_a_features_folder_may_hold_the_stores_beside_the_split_caches(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    """The folder layout mismatch adapt train reads (train.parquet and val.parquet as mismatch
    features wrote them, and the embedding store beside them) serves pretraining too; a folder
    without both split caches is named."""
    folder = tmp_path / "synth_features"
    folder.mkdir()
    cache = pd.read_parquet(corpus["features"])
    for split in ("train", "val"):
        cache[cache["id"].str.startswith(split)].to_parquet(folder / f"{split}.parquet")
    shutil.copy(corpus["embeddings"], folder / "embeddings.parquet")
    data = datamodule(corpus, features=str(folder), embeddings=str(folder / "embeddings.parquet"))
    assert data.feature_names == FEATURES
    data.setup("fit")
    both = pd.concat([data.frames["train"], data.frames["val"]])
    assert len(both) == len(cache)
    val = data.frames["val"]  # what a continued run reads for a split
    assert split_features(val, folder, FEATURES, "val", "pairs", {}).shape == (len(val), 3)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=f"feature cache folder {empty} holds neither"):
        datamodule(corpus, features=str(empty))
    (folder / "val.parquet").unlink()  # one split's features not computed yet
    with pytest.raises(DataError, match=f"feature cache folder {folder} has no val.parquet"):
        datamodule(corpus, features=str(folder))


def test_metric_only_ablation_has_no_text_inputs(corpus: dict[str, Path]) -> None:
    data = datamodule(corpus, embeddings=None, feature_names=["bleu"])
    data.setup("fit")
    batch = next(iter(data.val_dataloader()))
    assert "ref" not in batch and batch["features"].shape[1] == 1


def test_unknown_feature_and_missing_rows_are_clear_errors(corpus: dict[str, Path]) -> None:
    with pytest.raises(DataError, match=r"features \['meteor'\] are not in"):
        datamodule(corpus, feature_names=["meteor"])
    cache = pd.read_parquet(corpus["features"])
    cache.iloc[3:].to_parquet(corpus["features"])
    with pytest.raises(DataError, match="3 train pairs have no row in the feature cache"):
        datamodule(corpus).setup("fit")


def test_a_column_computed_another_way_is_refused(tmp_path: Path) -> None:
    """mismatch features computes a column of another encoder, layer or metric version again;
    training read it as it was (a cache of BERTScore at layer 2 under a base that reads the
    last layer), and the checkpoint's signature claimed the usual features."""
    import json

    import pyarrow.parquet as pq

    from evaluator.features.cache import METADATA_KEY, update_feature_cache
    from evaluator.training.data import expected_versions

    pairs = pd.DataFrame({"id": ["a", "b"], "ref": ["A dog ran.", "Kids play."],
                          "gen": ["A cat ran.", "Kids play."]})  # fmt: skip
    pairs.to_parquet(tmp_path / "pairs.parquet")
    cache = tmp_path / "features.parquet"
    update_feature_cache(tmp_path / "pairs.parquet", cache, ["bleu", "chrf"], progress=False)
    versions = expected_versions(["bleu", "chrf", "bertscore_f"], "all-MiniLM-L6-v2", None)
    assert split_features(pairs, cache, ["bleu", "chrf"], "val", "pairs", versions).shape == (2, 2)
    table = pq.read_table(cache)
    stored = json.loads(table.schema.metadata[METADATA_KEY])
    stored["chrf"] = "v0"
    pq.write_table(
        table.replace_schema_metadata({METADATA_KEY: json.dumps(stored).encode()}), cache
    )
    with pytest.raises(DataError, match=f"{cache}: chrf was computed as 'v0', this run reads it"):
        split_features(pairs, cache, ["bleu", "chrf"], "val", "pairs", versions)


def test_unfinished_feature_rows_are_a_clear_error(corpus: dict[str, Path]) -> None:
    """An interrupted `mismatch features` run leaves the rows it did not reach empty (NaN)."""
    cache = pd.read_parquet(corpus["features"])
    floats = cache.columns.drop("id")
    cache.loc[:1, floats] = float("nan")
    cache.to_parquet(corpus["features"])
    with pytest.raises(
        DataError, match="2 train pairs have features not computed .* run `mismatch features` on"
    ):
        datamodule(corpus).setup("fit")
    # a column added to the cache by a run stopped part way: a traceback from the scaler
    cache = pd.read_parquet(corpus["features"]).fillna(0.5)
    cache.loc[3:, floats[-1]] = float("nan")
    cache.to_parquet(corpus["features"])
    last = floats[-1]
    with pytest.raises(DataError, match=f"not computed in the cache .*{last}.* with {last} among"):
        datamodule(corpus).setup("fit")


def test_features_of_pairs_made_again_under_the_same_ids_are_refused(
    corpus: dict[str, Path],
) -> None:
    """Synth pairs made again into the same folder keep their ids: training read the old pairs'
    features for the new texts in silence. Caches keep each row's pair_key since 2026-11-30."""
    from evaluator.features.cache import row_key

    cache = pd.read_parquet(corpus["features"])
    both = pd.concat([pd.read_parquet(corpus["pairs"] / f"{s}.parquet") for s in ("train", "val")])
    cache["pair_key"] = list(map(row_key, both["ref"], both["gen"]))
    cache.to_parquet(corpus["features"])
    datamodule(corpus).setup("fit")  # the keys agree
    path = corpus["pairs"] / "train.parquet"
    frame = pd.read_parquet(path)
    frame.loc[[2, 5], "gen"] = ["another text", "a third text"]
    frame.to_parquet(path)
    with pytest.raises(DataError, match=re.escape("2 train pair(s) have features of other texts under their")):
        datamodule(corpus).setup("fit")
    val = pd.read_parquet(corpus["pairs"] / "val.parquet")
    assert split_features(val, corpus["features"], FEATURES, "val", "pairs", {}).shape == (
        len(val),
        3,
    )


def test_label_and_label_id_must_agree(corpus: dict[str, Path]) -> None:
    path = corpus["pairs"] / "val.parquet"
    frame = pd.read_parquet(path)
    frame.loc[0, "label"] = "NegErr"
    frame.to_parquet(path)
    with pytest.raises(DataError, match="label 'NegErr' does not match label_id 0"):
        datamodule(corpus).setup("fit")


@pytest.mark.parametrize(
    ("label_ids", "message"),
    [(["0", "1"], "column label_id holds str values; expected integer class indices"),
     ([0.0, 1.5], "column label_id holds float64 values; expected integer class indices")],
)  # fmt: skip
def test_label_ids_that_are_not_integers_are_named(tmp_path: Path, label_ids, message) -> None:
    path = tmp_path / "pairs.parquet"
    pd.DataFrame(
        {"id": ["a", "b"], "ref": ["A cat.", "A dog."], "gen": ["A cat.", "Two dogs."],
         "label": ["NoContr", "GramErr"], "label_id": label_ids}
    ).to_parquet(path)  # fmt: skip
    with pytest.raises(DataError, match=message):
        read_pairs(path, labelled=True)
    with pytest.raises(DataError, match="is a directory; give a .parquet file"):
        read_pairs(tmp_path, labelled=True)


def test_prepare_data_embeds_only_missing_texts(corpus: dict[str, Path], monkeypatch) -> None:
    full = dict(EmbeddingStore.open(corpus["embeddings"]).vectors)

    def keep_all_but_five() -> None:
        store = EmbeddingStore.open(corpus["embeddings"])
        store.vectors = dict(list(full.items())[:-5])
        store.save(corpus["embeddings"])

    keep_all_but_five()
    embedded: list[str] = []

    devices: list[str] = []

    def fake_encode(texts, encoder, batch_size, device):
        embedded.extend(texts)
        devices.append(device)
        return np.ones((len(texts), DIM), dtype=np.float32)

    monkeypatch.setattr(data_module, "encode_texts", fake_encode)
    datamodule(corpus).prepare_data()
    assert len(embedded) == 5 and devices == ["cpu"]  # no trainer: the CPU
    assert len(EmbeddingStore.open(corpus["embeddings"])) == len(full)
    # attached to a trainer, the encoder runs on its GPU (encode_texts is the fake above, so no
    # GPU is needed), and on the CPU when the trainer's device is neither (Apple's MPS)
    for root, expected in ((torch.device("cuda", 0), "cuda:0"), (torch.device("mps"), "cpu")):
        keep_all_but_five()
        attached = datamodule(corpus)
        attached.trainer = SimpleNamespace(strategy=SimpleNamespace(root_device=root))
        attached.prepare_data()
        assert devices[-1] == expected
    assert len(devices) == 3


def test_pretraining_refuses_a_store_of_another_encoder_or_of_none_named(
    corpus: dict[str, Path], monkeypatch
) -> None:
    """A store another encoder filled, or one that names none (written before stores recorded
    it, perhaps from another form of the text), is a DataError in prepare_data and in setup;
    nothing is encoded into it and its file is left as it was."""
    monkeypatch.setattr(data_module, "encode_texts", lambda *args: pytest.fail("encoded"))
    datamodule(corpus).prepare_data()
    assert EmbeddingStore.open(corpus["embeddings"]).source == encoder_reading("all-MiniLM-L6-v2")
    store = EmbeddingStore.open(corpus["embeddings"])
    for source, refused in (
        (None, "holds vectors with no record of the encoder and text form that filled it"),
        ("another-encoder", "was filled by another-encoder, not all-MiniLM-L6-v2"),
    ):
        store.source = source
        store.save(corpus["embeddings"])
        written = corpus["embeddings"].read_bytes()
        for step in ("prepare_data", "setup"):
            with pytest.raises(DataError, match=refused):
                getattr(datamodule(corpus), step)()
        assert corpus["embeddings"].read_bytes() == written
    tokens = str(corpus["embeddings"].parent / "tokens")
    with pytest.raises(DataError, match="was filled by another-encoder"):  # claimed first
        datamodule(corpus, tokens=tokens).prepare_data()
    assert not Path(tokens).exists()


def test_module_learns_and_separates_encoder_learning_rate(corpus: dict[str, Path]) -> None:
    torch.manual_seed(0)
    data = datamodule(corpus, batch_size=64)
    data.setup("fit")
    module = MismatchModule(feature_names=data.feature_names, dropout=0.0, lr=3e-3)
    optimizer = module.configure_optimizers()
    assert len(optimizer.param_groups) == 1  # frozen: no encoder parameters
    batch = next(iter(data.train_dataloader()))
    losses = []
    for _ in range(60):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(module(batch), batch["labels"])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_cosine_schedule_decays_the_learning_rate_to_zero(
    corpus: dict[str, Path], schedule: str
) -> None:
    import lightning as L

    module = MismatchModule(feature_names=FEATURES, lr=3e-3, lr_schedule=schedule)
    trainer = L.Trainer(
        max_epochs=2, accelerator="cpu", logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False,
    )  # fmt: skip
    trainer.fit(module, datamodule=datamodule(corpus))
    last = trainer.optimizers[0].param_groups[0]["lr"]
    assert last == pytest.approx(3e-3) if schedule == "constant" else last < 1e-6


def test_cosine_schedule_without_an_end_is_a_clear_error(corpus: dict[str, Path]) -> None:
    import lightning as L

    module = MismatchModule(feature_names=FEATURES, lr_schedule="cosine")
    trainer = L.Trainer(max_epochs=-1, accelerator="cpu", logger=False, enable_checkpointing=False)
    with pytest.raises(ValueError, match="needs trainer.max_epochs or trainer.max_steps"):
        trainer.fit(module, datamodule=datamodule(corpus))


def cli_options(corpus: dict[str, Path], runs: Path, *options: str) -> list[str]:
    """The pretraining CLI's options for a quiet CPU run on ``corpus`` logged under ``runs``,
    then ``options``."""
    return [
        f"--data.pairs_dir={corpus['pairs']}",
        f"--data.features={corpus['features']}",
        f"--data.embeddings={corpus['embeddings']}",
        "--trainer.accelerator=cpu",
        "--trainer.enable_progress_bar=false",
        "--trainer.enable_model_summary=false",
        f"--log_dir={runs}",
        *options,
    ]


def test_pretrain_cli_fits_exports_and_reports(corpus: dict[str, Path], tmp_path: Path) -> None:
    export, docs, runs = tmp_path / "export", tmp_path / "docs", tmp_path / "runs"
    options = ["--data.batch_size=16", "--model.lr=0.003", "--trainer.max_epochs=3"]
    main(
        [
            "fit",
            *cli_options(corpus, runs, *options, f"--export_dir={export}", f"--docs_dir={docs}"),
        ]
    )
    checkpoint = load(export)
    assert checkpoint.feature_names == FEATURES
    # with several references, errors named by the closest where it and the likeliest read wrong
    assert checkpoint.model.config.deciding_reference == "likeliest_errors_closest"
    metrics = json.loads((docs / "metrics.json").read_text())
    assert checkpoint.config["metrics"] == metrics
    assert metrics["val_pairs"] == 2 * NUM_CLASSES
    assert (docs / "confusion_matrix.png").stat().st_size > 1000
    assert "| NoContr |" in (docs / "per_class.md").read_text()
    assert list(runs.glob("pretrain/version_0/config.yaml"))
    assert list(runs.glob("pretrain/version_0/checkpoints/best-*.ckpt"))
    assert list(runs.glob("pretrain/version_0/metrics.csv"))
    assert checkpoint.config["training"]["run config"] == str(
        runs / "pretrain" / "version_0" / "config.yaml"
    )
    # the report keeps the whole recipe beside its figures (the record only names its path)
    saved = (runs / "pretrain" / "version_0" / "config.yaml").read_text()
    assert (docs / "run_config.yaml").read_text() == saved and "lr: 0.003" in saved


def test_ctrl_c_during_pretraining_ends_as_interrupted(
    corpus: dict[str, Path], tmp_path: Path, monkeypatch, capsys, default_ctrl_c
) -> None:
    """Lightning made Ctrl-C exit 1 without a message and left SIGINT ignored."""
    import signal

    from evaluator import cli

    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(MismatchModule, "training_step", pressed)
    export = tmp_path / "export"
    options = cli_options(corpus, tmp_path / "runs", f"--export_dir={export}", "--docs_dir=null")
    assert cli.main(["pretrain", "fit", *options]) == 130
    assert capsys.readouterr().err.endswith("mismatch pretrain: interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not export.exists()


def test_a_run_that_ends_before_its_first_validation_exports_its_last_weights(
    corpus: dict[str, Path], tmp_path: Path, capsys
) -> None:
    """--trainer.max_steps below one epoch: no val_acc ever exists, so early stopping must not
    ask for it; the last weights are exported, marked as such, with their val accuracy."""
    export = tmp_path / "export"
    options = ["--data.batch_size=8", "--trainer.max_steps=2", "--trainer.max_epochs=-1"]
    options.append("--docs_dir=null")  # max_epochs -1: max_steps ends the run
    main(["fit", *cli_options(corpus, tmp_path / "runs", *options, f"--export_dir={export}")])
    training = load(export).config["training"]
    assert training["best checkpoint"] == "last epoch"
    printed = capsys.readouterr().out
    assert f"; exported to {export}" in printed
    assert f"signature {signature(load(export))}" in printed


def test_validate_exports_the_checkpoint_of_a_finished_run(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    runs, export = tmp_path / "runs", tmp_path / "export"
    common = cli_options(corpus, runs, "--docs_dir=null")
    main(["fit", *common, "--trainer.max_epochs=2", "--export_dir=null"])
    assert not export.exists()
    (best,) = runs.glob("pretrain/version_0/checkpoints/best-*.ckpt")
    main(["validate", *common, f"--ckpt_path={best}", f"--export_dir={export}"])
    checkpoint = load(export)
    assert checkpoint.config["training"]["best checkpoint"] == best.name
    assert checkpoint.config["training"]["run config"] == str(best.parent.parent / "config.yaml")
    state = torch.load(best, weights_only=True)["state_dict"]
    exported = checkpoint.model.state_dict()
    assert all(torch.equal(exported[name[len("model.") :]], value) for name, value in state.items())
    # a checkpoint kept outside its run names no run: no config is taken from the folder above
    # (nor from a run folder that lost its config)
    docs = tmp_path / "docs"
    report = cli_options(corpus, runs, f"--docs_dir={docs}")
    # a folder named checkpoints that is no run's, beside another config; a run's, without one
    runs_elsewhere = (("kept/checkpoints", "not this run's\n"), ("old/version_0/checkpoints", None))
    for folder, beside in runs_elsewhere:
        kept = tmp_path / folder / "best.ckpt"
        kept.parent.mkdir(parents=True)
        kept.write_bytes(best.read_bytes())
        if beside is not None:
            (kept.parent.parent / "config.yaml").write_text(beside)
        docs.mkdir(exist_ok=True)
        (docs / "run_config.yaml").write_text("an earlier run's\n")
        main(["validate", *report, f"--ckpt_path={kept}", f"--export_dir={tmp_path / 'again'}"])
        assert "run config" not in load(tmp_path / "again").config["training"], kept
        assert not (docs / "run_config.yaml").exists() and (docs / "per_class.md").is_file()
    with pytest.raises(ConfigError, match="pass --ckpt_path"):
        main(["validate", *common, f"--export_dir={export}"])
    not_a_run = tmp_path / "notes.txt"
    not_a_run.write_text("not a checkpoint\n")
    for path in (tmp_path / "absent.ckpt", not_a_run):
        with pytest.raises(ConfigError, match=f"--ckpt_path {path} cannot be read"):
            main(["validate", *common, f"--ckpt_path={path}", f"--export_dir={export}"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--trainer.max_epochs=0"], "trainer.max_epochs must be a positive number of epochs"),
        (["--seed_everything=-1"], "seed_everything must be in 0..4294967295, got -1"),
        (["--model.lr=-1"], "model.lr must be a positive number, got -1"),
        (["--model.lr=1e400"], "model.lr must be a positive number, got inf"),
        (["--trainer.devices=0"], r"Trainer\(devices='0'\)` value is not a valid input"),
        (["--trainer.max_epochs=-1"], r"or -1 with trainer.max_steps or trainer.max_time\), got -1"),
        # tracebacks after the first validation, or from the first DataLoader
        (["--early_stopping.monitor=val_accuracy"], "early_stopping.monitor: 'val_accuracy' is no"),
        (["--checkpoint.monitor=acc"], "checkpoint.monitor: 'acc' is not a metric this run logs"),
        (["--data.num_workers=-1"], "data.num_workers must be 0 or more, got -1"),
        (
            ["--data.encoder_mode=trainable", "--data.alignments=alignments.parquet"],
            "data.alignments read the frozen encoder's token states: with data.encoder_mode "
            "trainable set them null",
        ),
    ],
)
def test_settings_lightning_would_refuse_late_are_one_line_errors(
    corpus: dict[str, Path], tmp_path: Path, options: list[str], message: str
) -> None:
    export = tmp_path / "export"
    with pytest.raises(ConfigError, match=message):
        main(["fit", *cli_options(corpus, tmp_path / "runs", *options, f"--export_dir={export}")])
    assert not export.exists()


@pytest.mark.parametrize("trainer", [{"max_epochs": -1, "max_steps": 5}, {"max_epochs": -1, "max_time": "00:00:10:00"}, {"max_epochs": 3}, {}])
def test_an_epoch_limit_or_another_end_of_the_run_is_accepted(trainer: dict) -> None:
    from evaluator.training.pretrain import settings_problem

    assert settings_problem({"seed_everything": 13, "trainer": trainer}, "fit") is None


def test_a_checkpoint_may_monitor_the_step_or_the_epoch() -> None:
    """ModelCheckpoint offers both besides the logged metrics; early stopping does not."""
    from evaluator.training.pretrain import settings_problem

    for monitor in ("step", "epoch", "val_loss"):
        assert settings_problem({"checkpoint": {"monitor": monitor}}, "fit") is None
    assert "is not a metric" in settings_problem({"early_stopping": {"monitor": "step"}}, "fit")


def test_outputs_are_checked_before_training_and_a_failed_run_keeps_them(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    busy, docs, a_file = tmp_path / "busy", tmp_path / "docs", tmp_path / "a-file"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine\n")
    docs.mkdir()
    (docs / "metrics.json").write_text("{}\n")
    a_file.write_text("x\n")
    runs = tmp_path / "runs"
    for options, message in (
        (
            [f"--export_dir={busy}", f"--docs_dir={docs}"],
            "--export_dir: .*busy exists and is not a checkpoint",
        ),
        (["--export_dir=null", f"--docs_dir={a_file}"], "--docs_dir: .*a-file exists"),
        (
            ["--export_dir=null", "--docs_dir=null", f"--log_dir={a_file}"],
            "--log_dir: .*a-file exists",
        ),
    ):
        with pytest.raises(ConfigError, match=message):
            main(["fit", *cli_options(corpus, runs, "--trainer.max_epochs=1", *options)])
    assert not runs.exists()  # refused before the first epoch
    assert (docs / "metrics.json").read_text() == "{}\n"


def test_an_empty_split_is_named(corpus: dict[str, Path]) -> None:
    val = corpus["pairs"] / "val.parquet"
    read_pairs(val, labelled=True).iloc[:0].to_parquet(val, index=False)
    with pytest.raises(DataError, match="training needs train and val pairs; val.parquet"):
        datamodule(corpus).setup("fit")


def test_without_wandb_the_wandb_logger_is_named_as_an_extra(tmp_path: Path, monkeypatch) -> None:
    """wandb is an optional package; Lightning raised a ModuleNotFoundError traceback."""
    import importlib.util

    from evaluator.training.pretrain import make_logger

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "wandb" else find_spec(name)
    )
    with pytest.raises(ConfigError, match=r"--logger wandb needs the wandb package: pip install"):
        make_logger("wandb", str(tmp_path / "wandb"), "run")
    assert not (tmp_path / "wandb").exists()


def test_wandb_logger_goes_offline_without_api_key(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("wandb")  # an optional package (pip install -e '.[wandb]')
    from lightning.pytorch.loggers import WandbLogger

    from evaluator.training.pretrain import make_logger

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    logger = make_logger("wandb", str(tmp_path / "wandb"), "run")
    assert isinstance(logger, WandbLogger)
    assert logger.save_dir == str(tmp_path / "wandb")
    assert logger._offline is True


def test_mismatch_pretrain_forwards_arguments(monkeypatch) -> None:
    from evaluator import cli
    from evaluator.training import pretrain

    received = []
    monkeypatch.setattr(pretrain, "main", lambda *args, **kwargs: received.append((args, kwargs)))
    for given in (
        ["fit", "--config", "configs/pretrain.yaml", "--trainer.max_epochs=1"],
        ["-c", "configs/pretrain.yaml", "fit"],  # argparse refused a leading -c
        ["--help"],  # argparse answered it with the wrapper's own help
    ):
        assert cli.main(["pretrain", *given]) == 0
        assert received.pop() == ((given,), {"exit_on_error": False, "prog": "mismatch pretrain"})


@pytest.mark.slow
def test_trainable_encoder_mode_tokenises_and_trains_the_encoder(corpus: dict[str, Path]) -> None:
    data = datamodule(corpus, encoder_mode="trainable", embeddings=None, max_length=16)
    data.setup("fit")
    batch = next(iter(data.train_dataloader()))
    assert set(batch["ref"]) >= {"input_ids", "attention_mask"}
    assert batch["ref"]["input_ids"].shape[1] <= 16
    module = MismatchModule(
        feature_names=data.feature_names, encoder_mode="trainable", encoder_lr=1e-4
    )
    optimizer = module.configure_optimizers()
    assert [group["lr"] for group in optimizer.param_groups] == [1e-3, 1e-4]
    before = module.model.encoder.embeddings.word_embeddings.weight.detach().clone()
    torch.nn.functional.cross_entropy(module(batch), batch["labels"]).backward()
    optimizer.step()
    assert not torch.equal(before, module.model.encoder.embeddings.word_embeddings.weight)


def test_alignment_vectors_reach_the_model_and_the_checkpoint(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    from evaluator.features import pair_key

    frames = [pd.read_parquet(corpus["pairs"] / f"{split}.parquet") for split in ("train", "val")]
    both = pd.concat(frames, ignore_index=True)
    keys = [pair_key(r, g) for r, g in zip(both["ref"], both["gen"], strict=True)]
    vectors = np.random.default_rng(1).standard_normal((len(keys), 2 * DIM)).astype(np.float32)
    store_path = tmp_path / "alignments.parquet"
    store = EmbeddingStore()
    store.claim(encoder_source("all-MiniLM-L6-v2", None))
    store.add_keyed(dict(zip(keys, vectors, strict=True)))
    store.save(store_path)
    data = datamodule(corpus, alignments=str(store_path))
    data.setup("fit")
    batch = next(iter(data.val_dataloader()))
    assert torch.equal(batch["alignment"][0], torch.from_numpy(vectors[len(frames[0])]))
    export = tmp_path / "export"
    options = [f"--data.alignments={store_path}", "--trainer.max_epochs=1", "--docs_dir=null"]
    main(["fit", *cli_options(corpus, tmp_path / "runs", *options, f"--export_dir={export}")])
    assert load(export).model.config.use_alignment
    del store.vectors[keys[-1]]
    store.save(store_path)
    with pytest.raises(DataError, match="no vector stored for key"):
        datamodule(corpus, alignments=str(store_path)).setup("fit")


def test_token_states_reach_the_model_and_the_checkpoint(
    corpus: dict[str, Path], tmp_path: Path
) -> None:
    from evaluator.features import text_key
    from evaluator.features.token_store import TokenStore

    frames = [pd.read_parquet(corpus["pairs"] / f"{split}.parquet") for split in ("train", "val")]
    both = pd.concat(frames, ignore_index=True)
    texts = pd.unique(pd.concat([both["ref"], both["gen"]])).tolist()
    rng = np.random.default_rng(2)
    states = {
        text_key(t): rng.standard_normal((1 + i % 4, DIM)).astype(np.float16)
        for i, t in enumerate(texts)
    }
    store_path = tmp_path / "tokens"
    store = TokenStore(store_path)
    store.claim(encoder_source("all-MiniLM-L6-v2", None))
    store.add(dict(list(states.items())[:-1]))
    with pytest.raises(DataError, match="no token states stored for text"):
        datamodule(corpus, tokens=str(store_path)).setup("fit")
    store.add(states)
    data = datamodule(corpus, tokens=str(store_path))
    data.setup("fit")
    batch = next(iter(data.val_dataloader()))
    first = states[text_key(frames[1]["ref"][0])]
    assert batch["tokens"]["ref_mask"][0].sum() == len(first)
    np.testing.assert_array_equal(
        batch["tokens"]["ref"][0, : len(first)].numpy(), first.astype(np.float32)
    )
    export = tmp_path / "export"
    options = [f"--data.tokens={store_path}", "--trainer.max_epochs=1", "--docs_dir=null"]
    main(["fit", *cli_options(corpus, tmp_path / "runs", *options, f"--export_dir={export}")])
    assert load(export).model.config.use_tokens
