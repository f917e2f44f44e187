"""`mismatch demo`: the main job on real pairs, printed as a table a person can read.

Scores examples/pairs.jsonl (real MT outputs and references with hand-made errors) with the
shipped checkpoint through the same path as `mismatch predict`, and shows per pair the
score, the most likely mismatch classes and the two texts; where the checkpoint marks error
spans, gen with the wrong characters highlighted (bold red on a terminal, [[...]] otherwise)
and the reference words it leaves out; with --task, the task checkpoint's ratings.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
from pathlib import Path

from evaluator.cli.scoring import (
    DEFAULT_THRESHOLD,
    add_checkpoint_argument,
    add_task_argument,
    checkpoint_of,
    load_evaluator,
)
from mismatch_core.atomic import same_path
from mismatch_core.pairs import references
from mismatch_core.resources import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "pairs.jsonl"
TEXT_WIDTH = 96
TERMINAL_MARKS = ("\033[1;31m", "\033[0m")  # bold red, then reset
PLAIN_MARKS = ("[[", "]]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--examples",
        type=Path,
        default=EXAMPLES,
        help="pairs JSONL to score (default: the repository's examples/pairs.jsonl)",
    )
    add_checkpoint_argument(parser)
    add_task_argument(parser, " and show its ratings")
    parser.add_argument("--top", type=int, default=3, help="classes shown per pair")
    parser.set_defaults(device=None, threshold=DEFAULT_THRESHOLD)  # predict's; no options here


def run(args: argparse.Namespace) -> int:
    from evaluator.cli import CommandError
    from evaluator.predict_io import read_jsonl_file

    if args.top < 1:
        raise CommandError(f"--top must be at least 1, got {args.top}")
    if args.examples == EXAMPLES and not EXAMPLES.is_file():
        raise CommandError(
            f"{EXAMPLES}: no such file; the examples come with a checkout of the repository "
            "(install from one with make setup), or give --examples FILE"
        )
    pairs, objects = read_jsonl_file(args.examples)
    if not objects:
        raise CommandError(f"{args.examples}: no pairs to show")
    notes = [str(value.get("note", "")) for value in objects]
    evaluator = load_evaluator(args, checkpoint_of(args)[0])
    try:
        predictions = evaluator.predict(
            pairs.refs, pairs.gens, srcs=pairs.srcs, ids=pairs.ids, progress=False
        )
    except ValueError as error:  # e.g. a pair without the source the ratings read
        hint = ""
        if same_path(args.examples, EXAMPLES) and not any(pairs.srcs or []):
            hint = " (the shipped examples have none: give --examples FILE whose pairs carry src)"
        raise CommandError(f"{args.examples}: {error}{hint}") from None
    print(
        f"\n{len(predictions)} pairs from {args.examples} scored with {evaluator.checkpoint.path}\n"
        "score = P(NoContr), the probability that gen says what the reference says "
        f"(1 = no error); labels = classes with probability >= {evaluator.threshold} "
        "('-': none reaches it, the model is unsure)\n"
        f"signature {evaluator.signature}"
    )
    if any(p.spans or p.missing for p in predictions):
        print(
            "spans = characters of gen read as wrong (marked), with class and probability; "
            "missing = reference words gen leaves out"
        )
    print()
    # colour on a terminal, unless NO_COLOR is set (https://no-color.org)
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    marks = TERMINAL_MARKS if colour else PLAIN_MARKS
    width = max(len(p.id) for p in predictions)
    ranked = [  # the most likely classes of each pair, as the column shows them
        ", ".join(
            f"{code} {p:.2f}"
            for code, p in sorted(prediction.mismatch.items(), key=lambda item: -item[1])[
                : args.top
            ]
        )
        for prediction in predictions
    ]
    column = max(44, *map(len, ranked))  # --top 4 and more: the notes stay in line
    print(f"{'id':<{width}}  {'score':>5}  {'labels':<10}  {'most likely classes':<{column}}  note")
    rows = zip(predictions, ranked, pairs.refs, pairs.gens, notes, strict=True)
    for prediction, classes, ref, gen, note in rows:
        labels = ",".join(prediction.labels) or "-"
        print(
            f"{prediction.id:<{width}}  {prediction.score:5.3f}  {labels:<10}  "
            f"{classes:<{column}}  {note}"
        )
        texts = references(ref)
        for number, one in enumerate(texts):
            name = "ref" if len(texts) == 1 else f"ref {number + 1}"
            if len(texts) > 1 and number == prediction.ref_index:
                name += " (read against it)"
            print(f"    {name}: " + textwrap.shorten(one, TEXT_WIDTH, placeholder=" ..."))
        if prediction.spans:  # wrapped, not shortened: a cut could halve a marked span
            print(_wrapped("    gen: ", gen, prediction.spans, marks))
            print("    spans: " + ", ".join(_described(span) for span in prediction.spans))
        else:
            print("    gen: " + textwrap.shorten(gen, TEXT_WIDTH, placeholder=" ..."))
        if prediction.ratings:
            rated = ", ".join(f"{key} {value:.2f}" for key, value in prediction.ratings.items())
            print(f"    ratings: {rated}")
        if prediction.missing:
            described = [
                _described(item)
                + (f" (ref {item['ref_index'] + 1})" if len(texts) > 1 else "")
                for item in prediction.missing
            ]
            print("    missing: " + ", ".join(described))
    return 0


def _marked(text: str, spans: list[dict], marks: tuple[str, str]) -> str:
    """text with each span between the marks; overlapping spans are marked as one."""
    ranges: list[list[int]] = []
    for start, end in sorted((span["start"], span["end"]) for span in spans):
        if ranges and start < ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], end)
        else:
            ranges.append([start, end])
    pieces, at = [], 0
    for start, end in ranges:
        pieces += [text[at:start], marks[0], text[start:end], marks[1]]
        at = end
    return "".join(pieces) + text[at:]


def _wrapped(prefix: str, text: str, spans: list[dict], marks: tuple[str, str]) -> str:
    """``text`` with its spans marked, its words wrapped to TEXT_WIDTH columns after
    ``prefix``, counting what shows: textwrap counted the terminal's escape codes as text,
    so a marked line wrapped early."""
    hidden = marks if marks == TERMINAL_MARKS else ()
    lines: list[list[str]] = [[]]
    used = 0
    runs = _marked(text, spans, marks).split()
    for word in (piece for run in runs for piece in _cut(run, hidden, TEXT_WIDTH)):
        shown = _shown(word, hidden)
        if lines[-1] and used + 1 + shown > TEXT_WIDTH:
            lines.append([])
            used = 0
        used += shown + (1 if lines[-1] else 0)
        lines[-1].append(word)
    indent = " " * len(prefix)
    return "\n".join((indent if k else prefix) + " ".join(words) for k, words in enumerate(lines))


def _shown(word: str, hidden: tuple[str, ...]) -> int:
    """The columns ``word`` takes on screen: the ``hidden`` marks take none."""
    return len(word) - sum(word.count(mark) * len(mark) for mark in hidden)


def _cut(word: str, hidden: tuple[str, ...], width: int) -> list[str]:
    """``word`` in pieces of at most ``width`` shown characters, the hidden marks kept whole:
    a run with no space (Chinese, Japanese, a URL) is wider than a line."""
    if _shown(word, hidden) <= width:
        return [word]
    parts = re.split(f"({'|'.join(map(re.escape, hidden))})", word) if hidden else [word]
    pieces, piece, shown = [], "", 0
    for part in parts:
        if part in hidden:
            piece += part
            continue
        for character in part:
            if shown == width:
                pieces.append(piece)
                piece, shown = "", 0
            piece += character
            shown += 1
    return [*pieces, piece]


def _described(item: dict) -> str:
    """e.g. NumErr 0.93 "21" (the text quoted as JSON, so its own quotes stay readable)."""
    return f"{item['label']} {item['prob']:.2f} {json.dumps(item['text'], ensure_ascii=False)}"
