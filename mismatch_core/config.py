"""The one way a config file becomes settings: ``read_config`` runs a parser over the file and a
builder over what it parsed, and turns every failure into a ConfigError naming the file.

The parsers are jsonargparse's (``synth.config``, ``evaluator.finetune.config``); they raise
argparse's ArgumentError when built with ``exit_on_error=False``, so nothing here imports
jsonargparse.
"""

from __future__ import annotations

import math
from argparse import ArgumentError
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import yaml

from mismatch_core.errors import ConfigError

Parsed = TypeVar("Parsed")
Settings = TypeVar("Settings")
# the keys of a training config (pretraining, fine-tuning: LightningCLI's) whose value is a
# mapping of settings, so that `data: 5` is refused by name
TRAINING_SECTIONS = ("trainer", "model", "data", "checkpoint", "early_stopping")


def check_seed(seed: int, name: str = "seed") -> None:
    """ValueError unless ``seed`` is one numpy and Lightning accept (0..2**32-1)."""
    if not 0 <= seed < 2**32:
        raise ValueError(f"{name} must be in 0..{2**32 - 1}, got {seed}")


def check_at_least_one(sizes: Mapping[str, int]) -> None:
    """ValueError naming the first of ``sizes`` (name -> a count, width or batch size) below 1."""
    for name, size in sizes.items():
        if size < 1:
            raise ValueError(f"{name} must be at least 1, got {size}")


def check_not_negative(values: Mapping[str, float]) -> None:
    """ValueError naming the first of ``values`` (name -> a size, weight or margin where 0
    means none) below 0, or not a number at all."""
    for name, value in values.items():
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a number, got {value}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value}")


def check_learning_rate(learning_rate: float, name: str = "learning_rate") -> None:
    """ValueError unless ``learning_rate`` is a finite number above 0."""
    if not (math.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"{name} must be a positive number, got {learning_rate}")


class _RepeatedKey(yaml.YAMLError):
    """A key given twice in one YAML mapping."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader refusing a key given twice in one mapping: PyYAML, and the parsers
    that read the configs with it, keep the last silently (a second `model:` section at the
    end of a file dropped every setting of the first)."""

    def construct_mapping(self, node, deep=False):
        lines: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base`, merged by PyYAML
                continue
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                first = lines.get(key)
            except TypeError:  # an unhashable key: PyYAML's own constructor names it
                continue
            lines.setdefault(key, line)
            if first is not None:
                raise _RepeatedKey(
                    f"key {key!r} is given twice in one mapping (lines {first} and {line}); "
                    "the second would replace the first: merge them"
                )
        return super().construct_mapping(node, deep)


def settings_problem(path: Path, sections: Sequence[str] = ()) -> str | None:
    """What makes a YAML file unusable as settings before a parser reads it, or None: no value
    in it (empty, or comments alone), a key given twice in one mapping, or what
    ``mapping_problem`` finds. The parser says only "Unexpected config: ..." of the first and
    nothing of the second; a syntax error is left to it to name."""
    try:
        value = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except _RepeatedKey as error:
        return str(error)
    except yaml.YAMLError:
        return None
    if value is None:
        return "no settings in the file (a YAML mapping of keys to values)"
    return mapping_problem(value, sections, "the file")


def mapping_problem(value: object, sections: Sequence[str], what: str) -> str | None:
    """Why a YAML value (``what``: where it came from) is no mapping of settings, or one of
    ``sections`` in it is no mapping (``data: 5``, which the parser reports as a key missing
    from that section); None when neither."""
    if not isinstance(value, dict):
        return f"{what} must be a YAML mapping of keys to values, got {value!r}"
    for section in sections:
        if section in value and not isinstance(value[section], dict):
            given = "nothing" if value[section] is None else repr(value[section])
            return (
                f"key {section!r} must be a mapping of its settings, got {given} "
                "(leave the key out for the defaults)"
            )
    return None


def config_values(args: Sequence[str]) -> list[tuple[int, str]]:
    """(position, value) of every --config / -c / --config= value of a command line, in order."""
    values = []
    for index, arg in enumerate(args):
        if arg in ("--config", "-c") and index + 1 < len(args):
            values.append((index, args[index + 1]))
        elif arg.startswith("--config="):
            values.append((index, arg.removeprefix("--config=")))
    return values


def config_file_problem(
    args: Sequence[str], sections: Sequence[str] = TRAINING_SECTIONS
) -> str | None:
    """The first --config / -c value of a command line that is no mapping of settings, as
    "FILE: problem" (``settings_problem``) or, for inline YAML, "--config: problem"; None when
    none is. LightningCLI reads these values itself, after this check; one that is neither a
    file nor a YAML mapping (a path that does not exist) is left to it."""
    for _, value in config_values(args):
        try:
            is_file = Path(value).is_file()
        except OSError:  # inline YAML longer than a file name may be
            is_file = False
        if is_file:
            problem = settings_problem(Path(value), sections)
            if problem:
                return f"{value}: {problem}"
            continue
        try:
            inline = yaml.safe_load(value)
        except yaml.YAMLError:
            continue
        if isinstance(inline, dict):
            problem = mapping_problem(inline, sections, "--config")
            if problem:
                return f"--config: {problem}"
    return None


def monitor_problem(settings: Mapping, logged: Sequence[str]) -> str | None:
    """A checkpoint or early-stopping monitor that names no metric the run logs (Lightning
    finds out at the first validation, after training time was spent, with a traceback), or
    None. ``settings``: the parsed config of a subcommand, with its checkpoint and
    early_stopping sections."""
    # ModelCheckpoint also offers the epoch and the step
    for section, known in (("checkpoint", (*logged, "epoch", "step")), ("early_stopping", logged)):
        monitor = (settings.get(section) or {}).get("monitor")
        if monitor is not None and monitor not in known:
            return (
                f"{section}.monitor: {monitor!r} is not a metric this run logs; use one of "
                f"{', '.join(known)}"
            )
    return None


def one_line(error: Exception) -> str:
    """A parser's error message on one line (jsonargparse spreads a value's errors over
    several)."""
    return " ".join(str(error).split())


def read_config(
    path: Path,
    parse: Callable[[Path], Parsed],
    build: Callable[[Parsed], Settings],
    sections: Sequence[str] = (),
) -> Settings:
    """``build(parse(path))``. ConfigError names the file: for a file that cannot be read or
    decoded, that holds no mapping of settings or gives one of ``sections`` (the keys whose
    value is a mapping) as something else (``settings_problem``), for what the parser rejects
    (an unknown key, a value of the wrong type: its ArgumentError, on one line) and for a
    setting ``build`` rejects (its ValueError)."""
    try:
        problem = settings_problem(path, sections)
        if problem:
            raise ConfigError(f"{path}: {problem}")
        parsed = parse(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config {path}: {error}") from None
    except ArgumentError as error:
        raise ConfigError(f"{path}: {one_line(error)}") from None
    try:
        return build(parsed)
    except ValueError as error:
        raise ConfigError(f"{path}: {error}") from None
