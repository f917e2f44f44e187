"""The project's error and warning types; each message names what to fix (file, line, key or
command)."""

from __future__ import annotations


class DataError(ValueError):
    """A record or file that does not fit the schema; the message names file, line and key."""


class ConfigError(ValueError):
    """A config file that is missing, unreadable or has an unknown key or a bad value; the
    message names the file and the key."""


class ResourceMissingError(RuntimeError):
    """A model or data file the project needs is not installed; the message says how to fix it."""


class CheckpointError(RuntimeError):
    """A checkpoint is missing, unreadable or inconsistent; the message names the file."""


class WorkerError(RuntimeError):
    """A worker process ended while it was needed (killed by a signal or the OOM killer)."""


class PairError(DataError):
    """A pair with a ref or gen of the wrong type; ``index`` is its 0-based position, named in
    the message unless the pair's id is given."""

    def __init__(self, index: int, problem: str, pair_id: str | None = None) -> None:
        super().__init__(f"pair {index if pair_id is None else repr(pair_id)}: {problem}")
        self.index = index
        self.problem = problem


class MismatchWarning(UserWarning):
    """A warning of this project's own (a command prints it as one line naming the command);
    a library's warnings keep their own categories and form."""
