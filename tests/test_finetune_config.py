"""One schema reads ``configs/finetune/<task>.yaml`` for every entry point: ``mismatch finetune``
and ``mismatch evaluate`` (read_fit_config) and ``scripts/finetune.py fit`` (FinetuneCLI)."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from evaluator.cli import main as mismatch_main
from evaluator.finetune.config import ConfigWarning, FitSettings, fit_parser, read_fit_config
from evaluator.finetune.lightning_cli import main as lightning_main
from evaluator.tasks import TASKS
from mismatch_core.errors import ConfigError

CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "finetune"
# FitSettings field -> where a config file holds it
KEYS = {
    "max_steps": ("trainer", "max_steps"),
    "val_check_interval": ("trainer", "val_check_interval"),
    "patience": ("early_stopping", "patience"),
    "batch_size": ("data", "batch_size"),
    "val_fraction": ("data", "val_fraction"),
    "lr": ("model", "lr"),
    "weight_decay": ("model", "weight_decay"),
    "ridge_anchor": ("model", "ridge_anchor"),
    "contrast_size": ("data", "contrast_size"),
    "contrast_depth": ("data", "contrast_depth"),
    "contrast_class_weights": ("data", "contrast_class_weights"),
    "reference_triples_size": ("data", "reference_triples_size"),
    "paraphrase_triples_size": ("data", "paraphrase_triples_size"),
    "train_datasets": ("data", "train_datasets"),
    "source_features": ("data", "source_features"),
    "contrast_weight": ("model", "contrast_weight"),
    "contrast_margin": ("model", "contrast_margin"),
    "reference_margin": ("model", "reference_margin"),
    "freeze_mismatch": ("model", "freeze_mismatch"),
    "ratings_read_all_references": ("model", "ratings_read_all_references"),
    "rating_mix": ("model", "rating_mix"),
    "single_metric_anchor": ("model", "single_metric_anchor"),
    "checkpoint": ("data", "checkpoint"),
    "seed": ("seed_everything",),
}


def test_every_task_ships_a_config_and_your_own_ratings_have_one() -> None:
    expected = [*TASKS, "ratings", "ratings_source"]
    assert sorted(path.stem for path in CONFIGS.glob("*.yaml")) == sorted(expected)


def test_the_recipes_for_your_own_ratings_are_data2texts_and_with_summarizations_sources() -> None:
    """What ratings.yaml and ratings_source.yaml say they are: a change to one shows here."""
    ratings = read_fit_config(CONFIGS / "ratings.yaml", "my_ratings")
    assert ratings == read_fit_config(CONFIGS / "data2text.yaml", "data2text")
    summarization = read_fit_config(CONFIGS / "summarization.yaml", "summarization")
    with_sources = replace(ratings, source_features=summarization.source_features)
    assert read_fit_config(CONFIGS / "ratings_source.yaml", "my_ratings") == with_sources


@pytest.mark.parametrize("task", [*TASKS, "ratings", "ratings_source"])
def test_shipped_configs_give_the_values_in_their_files(task: str) -> None:
    """The ratings recipes name no task: a user's task stands in, as --ratings reads them."""
    path = CONFIGS / f"{task}.yaml"
    written = yaml.safe_load(path.read_text(encoding="utf-8"))
    settings = read_fit_config(path, task if task in TASKS else "my_ratings")
    assert set(KEYS) == set(settings.to_dict())
    for name, where in KEYS.items():
        *sections, key = where
        holder = written[sections[0]] if sections else written
        expected = holder.get(key, getattr(FitSettings(), name))  # absent: the default
        expected = tuple(expected) if isinstance(expected, list) else expected  # YAML lists
        assert getattr(settings, name) == expected, f"{path.name}: {'.'.join(where)}"


@pytest.mark.parametrize("task", list(TASKS))
def test_the_lightning_cli_parses_a_config_alike(task: str, capsys) -> None:
    """The LightningCLI's fit parser and fit_parser give the same values, defaults included."""
    path = CONFIGS / f"{task}.yaml"
    with pytest.raises(SystemExit) as exit_:
        lightning_main(["fit", "--config", str(path), "--print_config"])
    assert exit_.value.code == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    parsed = fit_parser().parse_path(path).as_dict()
    del parsed["config"]
    # link targets: never printed
    for linked in ("task", "checkpoint", "source_features", "ratings", "scales"):
        del parsed["model"][linked]
    assert printed == parsed


def test_keys_the_fit_recipe_does_not_read_are_named_not_dropped(tmp_path: Path, capsys) -> None:
    """mismatch finetune and mismatch evaluate fit on one CPU process with the recipe's own
    callbacks: a YAML's other Trainer or callback settings, or a data.seed that is not the
    seed they split by, were taken and silently dropped (scripts/finetune.py reads them)."""
    for path in CONFIGS.glob("*.yaml"):  # the shipped recipes set nothing unread
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            read_fit_config(path, path.stem if path.stem in TASKS else "my_ratings")
    path = tmp_path / "edited.yaml"
    edited = yaml.safe_load((CONFIGS / "nli.yaml").read_text(encoding="utf-8"))
    edited["trainer"]["max_epochs"] = 2
    edited["data"]["seed"] = 7
    edited["checkpoint"] = {"monitor": "train_loss"}
    edited["early_stopping"]["patience"] = 9  # read: no warning
    path.write_text(yaml.safe_dump(edited))
    with pytest.warns(ConfigWarning) as caught:
        settings = read_fit_config(path, "nli")
    assert settings.patience == 9
    (warning,) = caught
    assert str(warning.message).startswith(
        f"{path}: checkpoint.monitor, data.seed, trainer.max_epochs not read: "
    )
    taken = tmp_path / "taken.txt"  # refused as --out once the config is read: no fit
    taken.write_text("mine")
    argv = ["finetune", "--task", "nli", "--config", str(path), "--out", str(taken)]
    assert mismatch_main(argv) == 2
    assert f"mismatch finetune: warning: {path}: checkpoint.monitor" in capsys.readouterr().err


def test_the_script_validates_on_the_split_it_fitted_on(capsys) -> None:
    """data.seed unset: the script splits by seed_everything, as mismatch finetune does, in
    validate too (it split by 13 there, so validate scored groups fit had trained on). test
    and predict have no steps: named as no subcommand, not a Lightning traceback."""
    from jsonargparse import Namespace

    from evaluator.finetune.lightning_cli import FinetuneCLI

    cli = FinetuneCLI.__new__(FinetuneCLI)  # the hook alone, on a parsed validate config
    cli.subcommand = "validate"
    cli.config = Namespace(validate=Namespace(seed_everything=5, data=Namespace(seed=None)))
    cli.before_instantiate_classes()
    assert cli.config.validate.data.seed == 5
    for subcommand in ("test", "predict"):
        with pytest.raises(SystemExit) as exit_:
            lightning_main([subcommand, "--config", str(CONFIGS / "nli.yaml")])
        assert exit_.value.code == 2
        assert f"invalid choice: '{subcommand}' (choose from 'fit', 'validate')" in (
            capsys.readouterr().err
        )


def test_the_defaults_are_those_of_fit_settings(tmp_path: Path) -> None:
    path = tmp_path / "bare.yaml"
    path.write_text("data: {task: dialogue}\n")
    assert read_fit_config(path) == FitSettings()
    assert read_fit_config(path, "dialogue") == FitSettings()


def test_an_unknown_key_fails_in_every_entry_point(tmp_path: Path, capsys) -> None:
    config = yaml.safe_load((CONFIGS / "summarization.yaml").read_text(encoding="utf-8"))
    config["model"]["learning_rate"] = 0.01  # model.lr misspelt
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(config))
    message = "typo.yaml: Group 'model' does not accept option 'learning_rate'"
    with pytest.raises(ConfigError, match=message):
        read_fit_config(path, "summarization")
    out = str(tmp_path / "finetuned")
    assert (
        mismatch_main(["finetune", "--task", "summarization", "--config", str(path), "--out", out])
        == 2
    )
    assert message in capsys.readouterr().err
    evaluate = ["evaluate", "--task", "summarization", "--config-dir", str(tmp_path), "--out", out]
    assert mismatch_main(evaluate) == 2
    assert "summarization.yaml does not exist" in capsys.readouterr().err
    (tmp_path / "summarization.yaml").write_text(path.read_text())
    assert mismatch_main(evaluate) == 2
    assert "summarization.yaml: Group 'model' does not accept option" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        lightning_main(["fit", "--config", str(path)])
    assert exit_.value.code == 2
    assert "does not accept option 'model.learning_rate'" in capsys.readouterr().err
    assert not Path(out).exists()


def test_the_lightning_cli_checks_the_fit_numbers_too(tmp_path: Path, capsys) -> None:
    config = yaml.safe_load((CONFIGS / "nli.yaml").read_text(encoding="utf-8"))
    config["data"]["contrast_size"] = 100  # without model.contrast_weight
    path = tmp_path / "half.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match="half.yaml: contrast copies need model.contrast_weight"):
        read_fit_config(path)
    with pytest.raises(SystemExit) as exit_:
        lightning_main(["fit", "--config", str(path)])
    assert exit_.value.code == 2
    assert "contrast copies need model.contrast_weight" in capsys.readouterr().err
    for section in ("checkpoint", "early_stopping"):  # a traceback after the first validation
        nli = str(CONFIGS / "nli.yaml")
        with pytest.raises(SystemExit) as exit_:
            lightning_main(["fit", "--config", nli, f"--{section}.monitor", "val_los"])
        assert exit_.value.code == 2
        error = capsys.readouterr().err
        assert f"{section}.monitor: 'val_los' is not a metric this run logs; use one of" in error


def test_an_undecodable_config_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\xff\xfe\x00data: {task: dialogue}\n")
    with pytest.raises(ConfigError, match=re.escape(f"cannot read config {path}: 'utf-8' codec")):
        read_fit_config(path)


def test_a_fit_records_its_base_alike_however_it_was_named(tmp_path: Path, monkeypatch) -> None:
    """--checkpoint typed three ways gave three fit-settings records (and signatures) for
    identical weights; the config's base was recorded even when --checkpoint replaced it."""
    from evaluator.finetune.train import recorded_settings
    from mismatch_core.resources import REPO_ROOT

    monkeypatch.chdir(tmp_path)
    settings = FitSettings(checkpoint="someone/else")
    for typed in ("checkpoints/mismatch-base", str(REPO_ROOT / "checkpoints" / "mismatch-base")):
        assert recorded_settings(settings, typed)["checkpoint"] == "checkpoints/mismatch-base"
    assert recorded_settings(settings, "someone/hub-base")["checkpoint"] == "someone/hub-base"


def test_the_config_paths_are_used_but_not_recorded(tmp_path: Path, capsys) -> None:
    """data.cache_dir and data.data_root say where this machine keeps the data: finetune and
    evaluate read them unless --cache-dir / --data-root say otherwise, and the model card's
    record of the recipe leaves them out."""
    in_the_way = tmp_path / "cache-is-a-file"
    in_the_way.write_text("x")
    path = tmp_path / "summarization.yaml"
    path.write_text(
        yaml.safe_dump({"data": {"cache_dir": str(in_the_way), "data_root": str(tmp_path)}})
    )
    settings = read_fit_config(path, "summarization")
    assert (settings.cache_dir, settings.data_root) == (str(in_the_way), str(tmp_path))
    assert not {"cache_dir", "data_root"} & set(settings.to_dict())
    out = str(tmp_path / "finetuned")
    for command, named in (  # the config's cache was checked, and named as the config's
        (
            ["finetune", "--task", "summarization", "--config", str(path), "--out", out],
            f"data.cache_dir: {in_the_way}",
        ),
        (
            ["evaluate", "--task", "summarization", "--config-dir", str(tmp_path), "--out", out],
            f"data.cache_dir of summarization: {in_the_way}",
        ),
    ):
        assert mismatch_main(command) == 2
        assert named in capsys.readouterr().err
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(yaml.safe_dump({"data": {"cache_dir": str(tmp_path / "unused")}}))
    command = ["finetune", "--task", "summarization", "--config", str(elsewhere), "--out", out]
    assert mismatch_main([*command, "--cache-dir", str(in_the_way)]) == 2
    assert str(in_the_way) in capsys.readouterr().err  # the option wins
