"""Worker processes for the CPU metrics, kept warm over a whole run.

A worker parses WordNet's synsets and caches word lookups as it reads them, most of a cold
worker's time: the CPU metrics of 1,000 real pairs took 5.3-6.1 s on workers started for the
call, 2.3-3.0 s on warm ones. So a run (`Evaluator.predict`, a stream, a feature cache)
keeps one set of workers for all its chunks: `shared_cpu_workers` for a block of code,
`CpuWorkers.serving` for the chunks of a generator, which may be resumed on another thread.

The pool is a `ProcessPoolExecutor`: a worker that dies (the OOM killer, a signal) breaks it
and the call says so, where `multiprocessing.Pool` waited for the lost task for ever. Once the
main thread has ended, an executor refuses new work ("cannot schedule new futures after
interpreter shutdown"), so a thread scoring after it computes in its own process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from mismatch_core.errors import WorkerError
from mismatch_core.workers import start_worker

_serving = threading.local()  # .workers: the CpuWorkers this thread's calls use, if any


class CpuWorkers:
    """Worker processes started at the first `map` and kept until `close`; as a context
    manager, closed at the block's end (at once after an exception: Ctrl-C, SIGTERM)."""

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> CpuWorkers:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.close(wait=kind is None)

    def map(self, function: Callable[[Any], Any], tasks: Sequence[Any], processes: int) -> list:
        """``function`` over ``tasks`` in the workers, results in task order. Workers that
        died since the last call are replaced once (a worker forked by a thread that has
        ended gets its parent-death signal); a second break raises WorkerError. In a thread
        that outlives the main one, where concurrent.futures takes no new work, in this
        process."""
        if not threading.main_thread().is_alive():  # the interpreter is exiting
            self.close()
            return [function(task) for task in tasks]
        try:
            return self._map(function, tasks, processes)
        except BrokenProcessPool:  # its manager has ended the other workers: joined at once
            self.close()
        try:
            return self._map(function, tasks, processes)
        except BrokenProcessPool:
            self.close()
            raise WorkerError(
                "a worker process computing the CPU metrics ended unexpectedly "
                "(killed, or out of memory?)"
            ) from None

    def _map(self, function: Callable[[Any], Any], tasks: Sequence[Any], processes: int) -> list:
        if self._executor is None:
            self._executor = _start_executor(processes)
        return list(self._executor.map(function, tasks))

    def close(self, wait: bool = True) -> None:
        """Stop the workers: ``wait``, once they are done (a run's end); else at once, a task
        they are in abandoned (an exception). Workers ignore Ctrl-C, so an interrupted run
        waited at exit for the tasks already queued (up to a task per worker and one more),
        and a second Ctrl-C in that wait left it stuck."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if not wait:  # SIGTERM (the workers' default action); Python 3.14: terminate_workers()
            for process in list((executor._processes or {}).values()):
                process.terminate()
        executor.shutdown(wait=True, cancel_futures=True)

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Inside the block, this thread's `current_workers` is this one; the previous one after
        it. A generator keeps its workers across yields by entering this around each chunk."""
        previous = getattr(_serving, "workers", None)
        _serving.workers = self
        try:
            yield
        finally:
            _serving.workers = previous


def current_workers() -> CpuWorkers | None:
    """The workers this thread's calls share now, if a block set them."""
    return getattr(_serving, "workers", None)


@contextlib.contextmanager
def shared_cpu_workers() -> Iterator[CpuWorkers]:
    """One set of workers for every CPU-metric call of this thread inside the block, started at
    the first call that needs workers and stopped when the block ends; inside another block,
    that block's."""
    current = current_workers()
    if current is not None:
        yield current
        return
    with CpuWorkers() as workers, workers.serving():
        yield workers


def _start_executor(processes: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("fork"),
        initializer=start_worker,
        initargs=(os.getpid(),),
    )
