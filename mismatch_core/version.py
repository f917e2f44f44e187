"""The installed package's version: part of every signature, and what `mismatch --version`
prints."""

from __future__ import annotations

from importlib import metadata

PACKAGE = "mismatch-eval"


def package_version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"
