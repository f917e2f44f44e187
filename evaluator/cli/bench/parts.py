"""What the real-text benchmarks (`bench realtext`, `bench spans`) share: their --parts,
running each part with its report, plain text tables and the JSON result."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from evaluator.cli import CommandError
from mismatch_core.atomic import write_text_atomic
from mismatch_core.errors import DataError
from mismatch_core.jsonl import report_json


def table(header: list[str], rows: list[list[str]]) -> str:
    """A plain text table, columns padded to their widest cell."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def parse_parts(text: str | None, allowed: tuple[str, ...]) -> list[str]:
    """The parts named in ``--parts`` (None: all of ``allowed``); CommandError for others."""
    if text is None:
        return list(allowed)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in parts if p not in allowed]
    if unknown or not parts:
        named = f"unknown part(s) {', '.join(unknown)}; " if unknown else ""
        raise CommandError(
            f"--parts {text!r}: {named}expected a comma-separated subset of {','.join(allowed)}"
        )
    return list(dict.fromkeys(parts))


def check_part_options(parts: list[str], options: list[tuple[str, object, str]]) -> None:
    """CommandError for an option (flag, value or None, the part that reads it) given for a
    part this run leaves out: it would be ignored."""
    for flag, given, part in options:
        if given is not None and part not in parts:
            raise CommandError(f"{flag}: for the {part} part; this run has {', '.join(parts)}")


def run_parts(
    parts: list[str],
    runs: dict[str, Callable[[], dict]],
    reports: dict[str, Callable[[dict], str]],
    result: dict,
) -> None:
    """Run each part in turn into ``result[part]``, its time into ``result["seconds"]``, and
    print its report; a data problem is a CommandError. Each part says on stderr that it
    started: a part takes minutes and prints nothing before its report."""
    for number, part in enumerate(parts, 1):
        print(f"part {number} of {len(parts)}: {part} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            result[part] = runs[part]()
        except (DataError, ValueError, FileNotFoundError) as error:
            raise CommandError(str(error)) from None
        result["seconds"][part] = round(time.perf_counter() - start, 1)
        print(f"\n{reports[part](result[part])}\n({result['seconds'][part]:.0f} s)", flush=True)


def write_result(out: str | None, result: dict) -> None:
    """Every figure of a bench run as JSON at ``out`` (atomically), when asked."""
    if out:
        write_text_atomic(Path(out), report_json(result))
        print(f"\nresults in {out}")
