"""Ctrl-C during a Lightning fit or prediction ends the command as Ctrl-C does elsewhere.

Lightning catches the KeyboardInterrupt, tears the run down and calls ``sys.exit(1)`` with
SIGINT left ignored: the command ended with status 1 and no message (not "interrupted",
130), and a Python session that had run it could no longer be interrupted.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from lightning.pytorch.callbacks import Callback


class InterruptNoted(Callback):
    """Notes, in the trainer's on_exception hook, that Lightning caught a KeyboardInterrupt."""

    def __init__(self) -> None:
        self.interrupted = False

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        if isinstance(exception, KeyboardInterrupt):
            self.interrupted = True


@contextmanager
def interrupt_kept(noted: InterruptNoted) -> Iterator[None]:
    """Around a Lightning run whose trainer holds ``noted``: the exit Lightning makes of a
    Ctrl-C is raised as KeyboardInterrupt again, with SIGINT's handler put back; so is an
    error of its teardown after a Ctrl-C (under DDP, a process that has already left breaks
    the others' barrier: a RuntimeError traceback, status 1)."""
    handler = signal.getsignal(signal.SIGINT)
    noted.interrupted = False  # a trainer runs again (a scorer predicts chunk after chunk)
    try:
        yield
    except (SystemExit, Exception):
        if not noted.interrupted:
            raise
        if handler is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, handler)
        raise KeyboardInterrupt from None
