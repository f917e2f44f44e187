"""`mismatch bench synth`: end-to-end generator throughput (corpus load, parsing, rules)."""

from __future__ import annotations

import argparse
import dataclasses
import time

from mismatch_core.resources import REPO_ROOT
from synth.config import load_config
from synth.generate import generate

# The settings of the shipped data set, so the figure is the one a user's full run gets.
SHIPPED_CONFIG = REPO_ROOT / "configs" / "synth.yaml"


def bench_synth(args: argparse.Namespace) -> None:
    shipped = SHIPPED_CONFIG.is_file()
    config = load_config(SHIPPED_CONFIG if shipped else None)
    config = dataclasses.replace(config, num_pairs=args.pairs or 10_000, seed=args.seed)
    started = time.perf_counter()
    train, val, manifest = generate(config)
    seconds = time.perf_counter() - started
    pairs = len(train) + len(val)
    print(f"synth: {pairs} pairs in {seconds:.1f} s = {pairs / seconds:.0f} pairs/s end to end "
          f"(corpus load, spaCy parsing, rules; {config.processes} processes; "
          f"settings of {SHIPPED_CONFIG.name if shipped else 'SynthConfig()'})")
    if manifest["shortfall"]:
        print(f"  short of the request: {manifest['shortfall']}")
