"""`mismatch bench features`: seconds per 1K pairs of each metric, and pairs/s end to end.

Pairs are synthetic pairs from $MISMATCH_SYNTH_PAIRS (default data/synth/train.parquet; a
pairs file as `mismatch features` reads it) when that file exists, else a fixed
sample of real (reference, generated) pairs from the short-text human sets (captioning,
data-to-text, question generation, MT), first reference only. Per-metric times are one
process; the shared encoder pass is timed twice (first pass and repeat). The end-to-end
rates use the two worker processes and the shared encoder pass, with the encoder and WordNet
already loaded.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

from evaluator.features.compute import compute_features
from evaluator.features.encoder_pass import encode_distinct
from evaluator.features.registry import COLUMN_TO_METRIC, DEFAULT_FEATURES, METRICS
from evaluator.features.registry import is_encoder_metric as _is_encoder
from mismatch_core.pairs import read_pairs
from mismatch_core.resources import REPO_ROOT

DEFAULT_SYNTH_PAIRS = REPO_ROOT / "data" / "synth" / "train.parquet"
HUMAN_SETS = (
    "captioning/flickr8k_expert.jsonl.gz",
    "data2text/webnlg2017.jsonl.gz",
    "question_generation/nema2018_squad.jsonl.gz",
    "translation/wmt17_da.jsonl.gz",
)


def bench_pairs(count: int, seed: int) -> tuple[list[str], list[str], str]:
    """`count` (ref, gen) pairs and a line naming where they come from."""
    synth_pairs = Path(os.environ.get("MISMATCH_SYNTH_PAIRS", DEFAULT_SYNTH_PAIRS))
    if synth_pairs.is_file():
        frame = read_pairs(synth_pairs)  # DataError naming a file that holds no pairs
        frame = frame.sample(n=min(count, len(frame)), random_state=seed)
        return list(frame["ref"]), list(frame["gen"]), f"synth pairs from {synth_pairs}"
    from evaluator.human_data import load_records
    from evaluator.tasks import human_root

    per_set = -(-count // len(HUMAN_SETS))
    refs, gens = [], []
    for name in HUMAN_SETS:
        records = load_records(human_root() / name)
        random.Random(seed).shuffle(records)
        refs += [record.refs[0] for record in records[:per_set]]
        gens += [record.gen for record in records[:per_set]]
    return refs[:count], gens[:count], "human pairs (" + ", ".join(HUMAN_SETS) + ")"


def timed(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def bench_features(args: argparse.Namespace) -> None:
    count = args.pairs or 1000
    refs, gens, source = bench_pairs(count, args.seed)
    count = len(refs)
    print(f"features bench: {count} {source}; load average {os.getloadavg()[0]:.2f}")
    metrics = list(dict.fromkeys(COLUMN_TO_METRIC[name] for name in DEFAULT_FEATURES))
    cpu = [name for name in metrics if not _is_encoder(name)]
    neural = [name for name in metrics if _is_encoder(name)]

    start = time.perf_counter()
    compute_features(refs[:2], gens[:2])
    print(f"start-up (encoder, WordNet, spaCy stop words): {time.perf_counter() - start:.1f} s")

    print(f"{'metric':<17} {'s / 1K pairs':>12}  columns (one process)")
    for name in cpu:
        seconds = timed(lambda n=name: METRICS[n]().compute(refs, gens))
        print(f"{name:<17} {seconds * 1000 / count:>12.3f}  {', '.join(METRICS[name].columns)}")
    texts = refs + gens
    cold = timed(encode_distinct, texts)
    start = time.perf_counter()
    encoded = encode_distinct(texts)
    warm = time.perf_counter() - start
    print(
        f"{'encoder':<17} {warm * 1000 / count:>12.3f}  shared pass, {len(encoded)} distinct "
        f"texts, {len(encoded) / warm:.0f} texts/s (first pass {cold * 1000 / count:.3f})"
    )
    ref_states = [encoded[text] for text in refs]
    gen_states = [encoded[text] for text in gens]
    for name in neural:
        seconds = timed(METRICS[name]().compute, ref_states, gen_states)
        print(
            f"{name:<17} {seconds * 1000 / count:>12.3f}  {', '.join(METRICS[name].columns)}"
            " (+ the shared encoder pass)"
        )

    lexical_names = [name for name in DEFAULT_FEATURES if not _is_encoder(COLUMN_TO_METRIC[name])]
    seconds = timed(compute_features, refs, gens, lexical_names)
    print(
        f"lexical set ({len(lexical_names)} features, 2 processes): {count / seconds:.0f} pairs/s"
    )
    seconds = timed(compute_features, refs, gens, list(DEFAULT_FEATURES))
    print(f"full default set ({len(DEFAULT_FEATURES)} features): {count / seconds:.0f} pairs/s")
