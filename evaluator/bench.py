"""`mismatch bench TARGET`: throughput benchmarks, one function per target, printed as text."""

from __future__ import annotations

import argparse
import importlib

# target -> "module:function"; each function takes the parsed args and prints its report.
TARGETS: dict[str, str] = {
    "synth": "synth.bench:bench_synth",
    "features": "evaluator.features.bench:bench_features",
    "predict": "evaluator.predict_bench:bench_predict",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=[*TARGETS, "all"], help="what to measure")
    parser.add_argument("--pairs", type=int, default=None, help="number of pairs (default per target)")
    parser.add_argument("--seed", type=int, default=13)


def run(args: argparse.Namespace) -> int:
    targets = list(TARGETS) if args.target == "all" else [args.target]
    for target in targets:
        module_name, function_name = TARGETS[target].split(":")
        getattr(importlib.import_module(module_name), function_name)(args)
    return 0
