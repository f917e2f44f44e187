"""SynthConfig through jsonargparse: the shipped file loads, --print_config prints what --config
reads back, and a bad key stops the command with the file and the key named."""

from __future__ import annotations

import re
from dataclasses import asdict

import pytest
import yaml

from evaluator.cli import main
from mismatch_core.errors import ConfigError
from mismatch_core.resources import REPO_ROOT
from synth.config import SynthConfig, dump_config, load_config

SHIPPED = REPO_ROOT / "configs" / "synth.yaml"


def test_the_shipped_config_loads_with_defaults_for_what_it_leaves_out():
    config = load_config(SHIPPED)
    assert config == SynthConfig(**yaml.safe_load(SHIPPED.read_text()))
    assert config.min_round_yield == 0.05  # set in the file
    assert config.scarce_rate == SynthConfig().scarce_rate  # left out: the default
    assert load_config(None) == SynthConfig()


def test_print_config_prints_the_full_config_that_config_reads_back(tmp_path, capsys):
    assert main(["synth", "--print_config"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == asdict(SynthConfig())
    assert main(["synth", "--print-config"]) == 0  # the hyphen of every other flag works too
    assert yaml.safe_load(capsys.readouterr().out) == asdict(SynthConfig())

    assert main(["synth", "--config", str(SHIPPED), "--num-pairs", "560", "--print_config"]) == 0
    printed = tmp_path / "printed.yaml"
    printed.write_text(capsys.readouterr().out)
    assert load_config(printed) == SynthConfig(
        **{**yaml.safe_load(SHIPPED.read_text()), "num_pairs": 560}
    )
    assert dump_config(load_config(printed)) == printed.read_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seed: 3\nnum_pair: 500\n", "num_pair"),  # unknown key (a typo)
        ("seed: three\n", 'Parser key "seed"'),  # wrong type
        ("source_weights: {coco: many}\n", 'Parser key "source_weights"'),
        ("val_fraction: 1.5\n", "val_fraction must be in [0, 1)"),  # out of range
    ],
)
def test_a_bad_key_names_the_file_and_the_key(tmp_path, capsys, text, message):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=r"bad\.yaml: ") as error:
        load_config(config)
    assert message in str(error.value)
    assert main(["synth", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
    assert main(["synth", "--config", str(config), "--print_config"]) == 2
    err = capsys.readouterr().err
    assert err.count(f"mismatch synth: error: {config}: ") == 2 and message in err
    assert not (tmp_path / "out").exists()


def test_out_is_required_unless_printing_the_config(capsys):
    assert main(["synth", "--seed", "3"]) == 2
    assert "--out is required" in capsys.readouterr().err


def test_a_missing_config_file_is_a_user_error(tmp_path, capsys):
    assert main(["synth", "--config", str(tmp_path / "none.yaml"), "--print_config"]) == 2
    assert f"cannot read config {tmp_path / 'none.yaml'}" in capsys.readouterr().err


def test_an_undecodable_config_file_is_a_user_error(tmp_path, capsys):
    config = tmp_path / "binary.yaml"
    config.write_bytes(b"\xff\xfe\x00seed: 3\n")
    with pytest.raises(ConfigError, match=re.escape(f"cannot read config {config}: 'utf-8' codec")):
        load_config(config)
    assert main(["synth", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
    assert f"mismatch synth: error: cannot read config {config}: " in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
