"""Shared fixtures: tests run offline, and heavy resources load once per session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def nlp():
    from evaluator.resources import load_spacy

    return load_spacy()
