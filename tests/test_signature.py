"""The reproducibility signature: the same checkpoint gives the same one, a changed file another;
`mismatch predict` prints it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from safetensors.torch import load_file, save_file

from evaluator.cli import main
from evaluator.hub import load
from evaluator.signature import signature
from mismatch_core.resources import REPO_ROOT

BASE = REPO_ROOT / "checkpoints" / "mismatch-base"


def copy_of_base(tmp_path: Path) -> Path:
    directory = tmp_path / "mismatch-base"
    shutil.copytree(BASE, directory)
    return directory


def test_same_checkpoint_same_signature(tmp_path):
    one = signature(load(BASE), 0.5)
    other = signature(load(copy_of_base(tmp_path)), 0.5)
    assert str(one) == str(other)
    assert one.to_dict() == other.to_dict()
    assert str(one).startswith("checkpoint:mismatch-base|sha256:")
    assert "|encoder:all-MiniLM-L6-v2|" in str(one) and str(one).endswith("|threshold:0.5")
    assert str(signature(load(BASE), 0.7)) != str(one)
    # six significant digits (the format it had) named two thresholds alike
    assert str(signature(load(BASE), 0.1234567)) != str(signature(load(BASE), 0.1234571))
    assert str(signature(load(BASE), np.float64(0.5))) == str(one)  # not "np.float64(0.5)"


def test_a_changed_checkpoint_file_changes_the_signature(tmp_path):
    directory = copy_of_base(tmp_path)
    before = signature(load(directory), 0.5)
    weights = load_file(directory / "model.safetensors")
    name = next(iter(weights))
    weights[name] = weights[name] + 1e-3
    save_file(weights, directory / "model.safetensors")
    after = signature(load(directory), 0.5)
    assert after.sha256 != before.sha256
    assert str(after) != str(before)


def test_predict_prints_the_signature(tmp_path, capsys):
    expected = str(signature(load(BASE), 0.5))
    assert main(["predict", "--checkpoint", str(BASE), "--signature"]) == 0
    assert capsys.readouterr().out.strip() == expected
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"ref": "A dog runs.", "gen": "A cat runs."}\n')
    assert main(["predict", "--checkpoint", str(BASE), "--input", str(pairs)]) == 0
    assert f"mismatch predict: signature {expected}" in capsys.readouterr().err


def test_stress_signs_its_mismatch_metrics():
    from evaluator.stress.metrics import signatures

    signed = signatures(["bleu", f"mismatch={BASE}"])
    assert list(signed) == [f"mismatch={BASE}"]
    assert signed[f"mismatch={BASE}"] == signature(load(BASE)).to_dict()
