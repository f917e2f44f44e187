"""Pool workers (features' CPU metrics, synth): Ctrl-C is the command's, and none outlives it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

POOL = """
import multiprocessing
import os
import signal
import time

from mismatch_core.workers import start_worker

signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a program's own choice: workers end all the same


def nap(_):
    os.write(1, f"{os.getpid()}\\n".encode())  # one write: print's two could interleave
    time.sleep(60)


with multiprocessing.get_context("fork").Pool(2, start_worker, (os.getpid(),)) as pool:
    pool.map(nap, range(2), chunksize=1)
"""


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie that no init reaps has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal")
def test_workers_ignore_ctrl_c_and_end_with_a_killed_command() -> None:
    """Killed by SIGKILL (the OOM killer; Lightning's launcher after a Ctrl-C), the command
    left its workers finishing their chunks for nobody."""
    command = subprocess.Popen(
        [sys.executable, "-c", POOL], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert command.stdout is not None
        workers = [int(command.stdout.readline()) for _ in range(2)]
        os.kill(workers[0], signal.SIGINT)
        time.sleep(0.5)
        assert running(workers[0]) and running(workers[1])
        command.kill()
        command.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(running(pid) for pid in workers)
    finally:  # the whole session, any worker left included
        with contextlib.suppress(ProcessLookupError):
            os.killpg(command.pid, signal.SIGKILL)
