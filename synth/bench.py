"""`mismatch bench synth`: end-to-end generator throughput (corpus load, parsing, rules)."""

from __future__ import annotations

import argparse
import dataclasses
import time

from synth.generate import SynthConfig, generate


def bench_synth(args: argparse.Namespace) -> None:
    config = dataclasses.replace(SynthConfig(), num_pairs=args.pairs or 10_000, seed=args.seed)
    started = time.perf_counter()
    train, val, _ = generate(config)
    seconds = time.perf_counter() - started
    pairs = len(train) + len(val)
    print(f"synth: {pairs} pairs in {seconds:.1f} s = {pairs / seconds:.0f} pairs/s end to end "
          f"(corpus load, spaCy parsing, rules; {config.processes} processes)")
