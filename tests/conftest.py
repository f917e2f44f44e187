"""Shared fixtures: tests run offline, and heavy resources load once per session."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# The two slowest files, minutes each: first in the collection, so that `make test`'s two
# workers start on them and take the other files beside them (the Makefile's xdist options
# hand out files in collection order).
SLOWEST_FILES = ("test_distributed.py", "test_synth_generate.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name not in SLOWEST_FILES)  # stable: order otherwise kept


@pytest.fixture(scope="session")
def nlp():
    from mismatch_core.resources import load_spacy

    return load_spacy()


@pytest.fixture
def counted_pools(monkeypatch) -> list[int]:
    """CPU metrics in two workers from 2 pairs on (a stream chunk of 2 pairs included); the
    sets of workers started, by their size, each appended."""
    from evaluator.features import compute, cpu_workers

    monkeypatch.setattr(compute, "usable_cpus", lambda: 2)
    monkeypatch.setattr(compute, "PARALLEL_MIN_PAIRS", 2)
    started: list[int] = []
    start = cpu_workers._start_executor
    monkeypatch.setattr(cpu_workers, "_start_executor", lambda n: started.append(n) or start(n))
    return started


@pytest.fixture
def default_ctrl_c():
    """Ctrl-C as a terminal gives it (Python's default handler), whatever the run inherited:
    a shell starts background jobs with SIGINT ignored, which the Ctrl-C tests would read."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True, scope="session")
def single_thread():
    """Tests use tiny tensors: one torch thread avoids OpenMP spin-waiting on 2 shared cores."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


# --- no test may change what the repository ships -----------------------------------------

REPO_ROOT = Path(__file__).resolve().parent.parent
GUARDED_TREES = ("checkpoints", "docs", "configs")
_TREES_AT_START = pytest.StashKey[dict]()


def guarded_files() -> dict[str, str]:
    """Relative path -> sha256 of every file under the shipped trees."""
    digests = {}
    for tree in GUARDED_TREES:
        for path in sorted((REPO_ROOT / tree).rglob("*")):
            if path.is_file():
                digests[str(path.relative_to(REPO_ROOT))] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
    return digests


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controlling process checks, around the whole run
    session.config.stash[_TREES_AT_START] = guarded_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if any test wrote into checkpoints/, docs/ or configs/ (tests write only
    under their tmp_path)."""
    before = session.config.stash.get(_TREES_AT_START, None)
    if before is None:
        return
    after = guarded_files()
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run changed shipped files: " + ", ".join(changed)
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(message, red=True, bold=True)
        else:
            print(message, file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
