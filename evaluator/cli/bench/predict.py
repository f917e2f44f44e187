"""`mismatch bench predict`: end-to-end predict speed against bert-score on the same pairs.

One process, the same pairs (real human-rated ones, or ``--input``'s), the same MiniLM on the
same device (``--device``; the CPU by default): our `Evaluator.predict` (metric features +
encoder pass + model, shipped base checkpoint) and `bert_score.score` with that encoder and
layer; when the checkpoint has a span tagger, also our predict without spans (`--no-spans`),
whose time the spans may exceed by at most 10 %. Each is timed twice in turn and the best
time counts. Both are warmed up on a few pairs first, so the times exclude one-off loading
(bert-score still reloads its model inside every call, a fraction of a second).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import time
import warnings
from pathlib import Path

from mismatch_core.resources import (
    DEFAULT_CHECKPOINT,
    REPO_ROOT,
    encoder_path,
    load_encoder,
)

CHECKPOINT = REPO_ROOT / DEFAULT_CHECKPOINT
TASKS = ("summarization", "translation", "captioning")
DEFAULT_PAIRS = 2000
# issue #23's lines: at least 60 pairs/s and within 1.5 x BERTScore's time (the first predict
# issue allowed 2 x; the bench printed that looser line as met)
TARGET_PAIRS_PER_SECOND = 60.0
TARGET_RATIO = 1.5
TARGET_RSS_GB = 2.5
TARGET_SPANS_RATIO = 1.10  # predict with spans / without
WARMUP_PAIRS = 8
ROUNDS = 2  # each is timed this many times in turn; the best time counts


def bench_pairs(count: int, seed: int) -> tuple[list[str], list[str]]:
    """An equal share of (first reference, gen) pairs from each task in TASKS, seeded."""
    from evaluator.tasks import get_task, load_task_records

    refs, gens = [], []
    for index, name in enumerate(TASKS):
        share = count // len(TASKS) + (1 if index < count % len(TASKS) else 0)
        records = load_task_records(get_task(name))
        for record in random.Random(seed).sample(records, min(share, len(records))):
            refs.append(record.refs[0])
            gens.append(record.gen)
    return refs, gens


def input_pairs(path: Path, count: int | None) -> tuple[list[str], list[str]]:
    """(first reference, gen) of the first ``count`` pairs (all when None) of a JSONL file that
    `mismatch predict` reads; DataError names a bad line."""
    from evaluator.predict_io import read_jsonl_file

    pairs, _ = read_jsonl_file(path)
    refs = [ref if isinstance(ref, str) else ref[0] for ref in pairs.refs]
    return refs[:count], pairs.gens[:count]


def peak_rss_gb(who: int) -> float:
    """Peak resident set size in GB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(who).ru_maxrss * 1024 / 1e9


def load_average() -> float | None:
    """The machine's 1-minute load average (None where the platform keeps none)."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def load_text(load: float | None) -> str:
    return "unknown" if load is None else f"{load:.2f}"


@contextlib.contextmanager
def _timing_only():
    """A timing prints none of what predict counts of its pairs (truncation, span reach,
    short references): each timed run would repeat it."""
    from evaluator.evaluator import COUNTED_WARNINGS

    with warnings.catch_warnings():
        for category in COUNTED_WARNINGS:
            warnings.simplefilter("ignore", category)
        yield


def bench_predict(args: argparse.Namespace) -> None:
    load_before = load_average()  # before this command's own loading adds to it
    from evaluator.features.compute import usable_cpus
    from evaluator.malloc import fix_mmap_threshold

    fix_mmap_threshold()  # as `mismatch predict` runs
    import bert_score
    import torch

    from evaluator.cli import CommandError
    from evaluator.evaluator import Evaluator

    if args.input is not None:
        refs, gens = input_pairs(Path(args.input), args.pairs)
        source = f"pairs from {args.input}"
    else:
        refs, gens = bench_pairs(args.pairs or DEFAULT_PAIRS, args.seed)
        source = f"real pairs ({', '.join(TASKS)}; first reference; seed {args.seed})"
    count = len(refs)
    if count == 0:
        raise CommandError(f"{args.input}: no pairs to time")
    device = args.device or "cpu"  # checked by the bench command
    evaluator = Evaluator.from_pretrained(CHECKPOINT, device=device)
    on_gpu = evaluator.device.type == "cuda"
    where = torch.cuda.get_device_name(evaluator.device) if on_gpu else f"{os.cpu_count()} CPU(s)"
    encoder = evaluator.checkpoint.model.config.encoder
    model_type = encoder_path(encoder)
    num_layers = evaluator.checkpoint.num_layers  # 0: the embeddings' output
    if num_layers is None:
        num_layers = load_encoder(encoder, str(evaluator.device))[1].config.num_hidden_layers
    print(
        f"predict bench: {count} {source}; checkpoint {CHECKPOINT.relative_to(REPO_ROOT)}; "
        f"encoder {encoder} layer {num_layers}; device {device} ({where}); load average "
        f"{load_text(load_before)}"
    )

    def ours(r: list[str], g: list[str]) -> None:
        with _timing_only():
            evaluator.predict(r, g, batch_size=64, progress=False)

    def theirs(r: list[str], g: list[str]) -> None:
        bert_score.score(
            g, r, model_type=model_type, num_layers=num_layers, batch_size=64, device=device
        )

    def ours_without_spans(r: list[str], g: list[str]) -> None:
        with _timing_only():
            evaluator.predict(r, g, batch_size=64, progress=False, spans=False)

    runs = [("mismatch-eval predict", ours), ("bert_score.score", theirs)]
    if evaluator.has_spans:
        runs.append(("predict --no-spans", ours_without_spans))
    for _, function in runs:
        function(refs[:WARMUP_PAIRS], gens[:WARMUP_PAIRS])
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(ROUNDS):  # round robin: a slow first pass or a busy moment hits each alike
        for name, function in runs:
            start = time.perf_counter()
            function(refs, gens)
            times[name].append(time.perf_counter() - start)
    rates = {name: min(seconds) for name, seconds in times.items()}
    for name, seconds in rates.items():
        spread = ", ".join(f"{t:.1f}" for t in times[name])
        print(f"{name:<22} {seconds:7.1f} s  {count / seconds:7.1f} pairs/s  (best of {spread} s)")
    ours_seconds, theirs_seconds = rates["mismatch-eval predict"], rates["bert_score.score"]
    ratio = ours_seconds / theirs_seconds
    rss = peak_rss_gb(resource.RUSAGE_SELF)
    workers = peak_rss_gb(resource.RUSAGE_CHILDREN)
    print(f"time ratio ours / bert-score: {ratio:.2f}")
    print(f"peak RSS: {rss:.2f} GB (main process); {workers:.2f} GB (largest worker process)")
    if on_gpu:
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(evaluator.device) / 1e9:.2f} GB")
    checks = {
        f">= {TARGET_PAIRS_PER_SECOND:.0f} pairs/s": count / ours_seconds
        >= TARGET_PAIRS_PER_SECOND,
        f"ratio <= {TARGET_RATIO}": ratio <= TARGET_RATIO,
        f"RSS <= {TARGET_RSS_GB} GB": rss <= TARGET_RSS_GB,
    }
    if "predict --no-spans" in rates:
        spans_ratio = ours_seconds / rates["predict --no-spans"]
        print(f"time ratio with spans / without: {spans_ratio:.2f}")
        checks[f"spans ratio <= {TARGET_SPANS_RATIO}"] = spans_ratio <= TARGET_SPANS_RATIO
    print("targets: " + ", ".join(f"{k} {'met' if ok else 'MISSED'}" for k, ok in checks.items()))
    print(f"load average after: {load_text(load_average())}")
    caveats = timing_caveats(count, load_before, usable_cpus())
    if caveats:
        print("read the targets with care: " + "; ".join(caveats))


def timing_caveats(pairs: int, load_before: float | None, cpus: int) -> list[str]:
    """Why a run's targets may not mean what they say: they are set for the default pairs on
    an idle machine (a new user's 300 pairs on a busy one read 2.27 for a 1.03 ratio)."""
    caveats = []
    if pairs < DEFAULT_PAIRS:
        caveats.append(
            f"{pairs} pairs, fewer than the {DEFAULT_PAIRS} the targets are set for "
            "(start-up costs weigh more)"
        )
    if load_before is not None and load_before >= cpus:  # every core busy before it began
        caveats.append(
            f"load average {load_before:.2f} on {cpus} CPU(s) at the start: other work "
            "shared the machine"
        )
    return caveats
