"""How the worker processes of a command's pool start (features' CPU metrics, synth)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def start_worker(parent: int) -> None:
    """A pool initializer. Ctrl-C is the command's to handle: it stops the pool (the workers'
    own KeyboardInterrupt tracebacks, cut off by that stop, printed stray lines). On Linux a
    worker gets SIGTERM when its parent process ``parent`` dies, so that a command ended by
    SIGKILL or the OOM killer leaves no worker finishing its chunk for nobody; SIGTERM ends a
    worker whatever the parent made of it (a program's own handler, or SIG_IGN, is inherited
    at fork)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # it died before the request was made
            os._exit(1)
