"""`mismatch demo`: the main job on real data, printed as tables a person can read.

Until the predict issue lands, the main job is what exists end to end: build a small
synthetic mismatch set from the shared corpora (one pair per class shown with the rule
that made it), then score the example pairs in examples/pairs.jsonl with the metric
features the evaluator is built on.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from evaluator.resources import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "pairs.jsonl"
SHOWN_FEATURES = ("bleu", "chrf", "meteor", "bertscore_f", "numbers_agree", "negation_agree")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--examples", type=Path, default=EXAMPLES, help="pairs JSONL to score")
    parser.add_argument("--synth-pairs", type=int, default=280, help="size of the synthetic sample")


def run(args: argparse.Namespace) -> int:
    show_synthetic_pairs(args.synth_pairs)
    score_examples(args.examples)
    return 0


def show_synthetic_pairs(num_pairs: int) -> None:
    from synth.generate import SynthConfig, generate

    config = dataclasses.replace(SynthConfig(), num_pairs=num_pairs, processes=1, max_source_share=0.6)
    train, _, manifest = generate(config)
    print(f"\nSynthetic mismatch pairs: {manifest['num_pairs']} made in {manifest['seconds']} s; one per class:\n")
    for _, row in train.groupby("label_id", sort=True).head(1).sort_values("label_id").iterrows():
        print(f"[{row['label']}] ({row['rule']})\n  ref: {row['ref']}\n  gen: {row['gen']}")


def score_examples(path: Path) -> None:
    from evaluator.features import compute_features
    from evaluator.human_data import iter_jsonl

    rows = [value for _, value in iter_jsonl(path)]
    frame = compute_features([r["ref"] for r in rows], [r["gen"] for r in rows], names=SHOWN_FEATURES)
    print(f"\nMetric features of {path.name} (multi-reference: max over references):\n")
    header = f"{'id':<14}" + "".join(f"{name:>15}" for name in SHOWN_FEATURES) + "  note"
    print(header)
    for row, (_, values) in zip(rows, frame.iterrows(), strict=True):
        cells = "".join(f"{values[name]:>15.3f}" for name in SHOWN_FEATURES)
        print(f"{row.get('id', ''):<14}{cells}  {row.get('note', '')}")
    print("\n" + json.dumps({"pairs": len(rows), "features": list(SHOWN_FEATURES)}))
