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


@pytest.fixture(autouse=True, scope="session")
def single_thread():
    """Tests use tiny tensors: one torch thread avoids OpenMP spin-waiting on 2 shared cores."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
