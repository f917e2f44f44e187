"""The `mismatch` console script lists its subcommands and reports user errors cleanly."""

from __future__ import annotations

import subprocess
import sys

from evaluator import cli


def test_help_lists_every_subcommand():
    result = subprocess.run(
        [sys.executable, "-m", "evaluator.cli", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    for name in cli.COMMANDS:
        assert name in result.stdout


def test_unknown_subcommand_exits_non_zero():
    result = subprocess.run(
        [sys.executable, "-m", "evaluator.cli", "frobnicate"], capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "invalid choice" in result.stderr
