"""The one way a config file becomes settings: ``read_config`` runs a parser over the file and a
builder over what it parsed, and turns every failure into a ConfigError naming the file.

The parsers are jsonargparse's (``synth.config``, ``evaluator.finetune.config``); they raise
argparse's ArgumentError when built with ``exit_on_error=False``, so nothing here imports
jsonargparse.
"""

from __future__ import annotations

import math
from argparse import ArgumentError
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import yaml

from mismatch_core.errors import ConfigError

Parsed = TypeVar("Parsed")
Settings = TypeVar("Settings")


def check_seed(seed: int, name: str = "seed") -> None:
    """ValueError unless ``seed`` is one numpy and Lightning accept (0..2**32-1)."""
    if not 0 <= seed < 2**32:
        raise ValueError(f"{name} must be in 0..{2**32 - 1}, got {seed}")


def check_at_least_one(sizes: Mapping[str, int]) -> None:
    """ValueError naming the first of ``sizes`` (name -> a count, width or batch size) below 1."""
    for name, size in sizes.items():
        if size < 1:
            raise ValueError(f"{name} must be at least 1, got {size}")


def check_learning_rate(learning_rate: float) -> None:
    """ValueError unless ``learning_rate`` is a finite number above 0."""
    if not (math.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"learning_rate must be a positive number, got {learning_rate}")


def has_settings(path: Path) -> bool:
    """False for a file with no YAML value in it (empty, or comments alone), which the parser
    reports only as "Unexpected config:"; a syntax error is left to the parser to name."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")) is not None
    except yaml.YAMLError:
        return True


def one_line(error: Exception) -> str:
    """A parser's error message on one line (jsonargparse spreads a value's errors over
    several)."""
    return " ".join(str(error).split())


def read_config(
    path: Path, parse: Callable[[Path], Parsed], build: Callable[[Parsed], Settings]
) -> Settings:
    """``build(parse(path))``. ConfigError names the file: for a file that cannot be read or
    decoded, for what the parser rejects (an unknown key, a value of the wrong type: its
    ArgumentError, on one line) and for a setting ``build`` rejects (its ValueError)."""
    try:
        if not has_settings(path):
            raise ConfigError(f"{path}: no settings in the file (a YAML mapping of keys to values)")
        parsed = parse(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config {path}: {error}") from None
    except ArgumentError as error:
        raise ConfigError(f"{path}: {one_line(error)}") from None
    try:
        return build(parsed)
    except ValueError as error:
        raise ConfigError(f"{path}: {error}") from None
