"""`mismatch demo`: the main job on real pairs, printed as a table a person can read.

Scores examples/pairs.jsonl (real MT outputs and references with hand-made errors) with the
shipped checkpoint through the same path as `mismatch predict`, and shows per pair the
score, the most likely mismatch classes and the two texts.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from mismatch_core.resources import (
    DEFAULT_CHECKPOINT,
    REPO_ROOT,
    quiet_hub_libraries,
    resolve_checkpoint,
)

EXAMPLES = REPO_ROOT / "examples" / "pairs.jsonl"
TEXT_WIDTH = 96


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--examples", type=Path, default=EXAMPLES, help="pairs JSONL to score")
    parser.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="checkpoint to use")
    parser.add_argument("--top", type=int, default=3, help="classes shown per pair")


def run(args: argparse.Namespace) -> int:
    quiet_hub_libraries()
    from evaluator.cli import CommandError
    from evaluator.evaluator import Evaluator
    from evaluator.predict_io import read_jsonl_file
    from mismatch_core.errors import CheckpointError, DataError

    try:
        pairs, objects = read_jsonl_file(args.examples)
    except DataError as error:
        raise CommandError(str(error)) from None
    notes = [str(value.get("note", "")) for value in objects]
    try:
        name, revision = resolve_checkpoint(args.checkpoint)
        evaluator = Evaluator.from_pretrained(name, revision=revision)
    except CheckpointError as error:
        raise CommandError(str(error)) from None
    predictions = evaluator.predict(pairs.refs, pairs.gens, ids=pairs.ids, progress=False)
    print(
        f"\n{len(predictions)} pairs from {args.examples} scored with {evaluator.checkpoint.path}\n"
        "score = P(NoContr), the probability that gen says what the reference says "
        f"(1 = no error); labels = classes with probability >= {evaluator.threshold}\n"
    )
    width = max(len(p.id) for p in predictions)
    print(f"{'id':<{width}}  {'score':>5}  {'labels':<10}  {'most likely classes':<44}  note")
    for prediction, ref, gen, note in zip(predictions, pairs.refs, pairs.gens, notes, strict=True):
        ranked = sorted(prediction.mismatch.items(), key=lambda item: -item[1])[: args.top]
        classes = ", ".join(f"{code} {p:.2f}" for code, p in ranked)
        labels = ",".join(prediction.labels) or "-"
        print(
            f"{prediction.id:<{width}}  {prediction.score:5.3f}  {labels:<10}  {classes:<44}  {note}"
        )
        for one in [ref] if isinstance(ref, str) else ref:
            print("    ref: " + textwrap.shorten(one, TEXT_WIDTH, placeholder=" ..."))
        print("    gen: " + textwrap.shorten(gen, TEXT_WIDTH, placeholder=" ..."))
    return 0
