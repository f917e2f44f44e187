"""Lightning without its chatter, for the commands that run it as a tool (fine-tuning fits,
scoring on several devices): no hardware lines, no tip to install a cloud logger, no
distributed set-up banner, no deprecation raised inside Lightning itself. Warnings from our
own code and Lightning's warnings about the run still show."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

LOGGERS = ("lightning.pytorch", "lightning.fabric")


@contextmanager
def quiet_lightning() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)`")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
