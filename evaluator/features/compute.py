"""`compute_features`: run the requested metrics over pairs, multi-reference aggregated.

Each (reference, generation) combination is scored on its own and the scores of one pair's
references are aggregated per feature (max by default, as bert_score does). CPU metrics run
in worker processes, one per usable core up to MAX_WORKERS, when there is enough work (kept
over a run, ``evaluator.features.cpu_workers``); encoder metrics share one forward pass per
distinct text, in blocks so memory stays bounded on large inputs.
"""

from __future__ import annotations

import contextlib
import os
import unicodedata
from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from evaluator.features import encoder_pass, lexical, relations  # noqa: F401  (registers the metrics)
from evaluator.features.cpu_workers import shared_cpu_workers
from evaluator.features.disfluency import detector_digest
from evaluator.features.embeddings import encoder_source, text_key
from evaluator.features.registry import (
    COLUMN_TO_METRIC,
    DEFAULT_FEATURES,
    METRICS,
    encoder_metric,
    is_encoder_metric,
    metrics_for,
)
from mismatch_core.pairs import check_pairs, references
from mismatch_core.resources import DEFAULT_ENCODER, wordnet

AGGREGATES = ("max", "min", "mean")
# The CPU metrics read each text in Unicode's composed form, so a text and its decomposed twin
# ("café" typed as "e" and a combining accent) score as the copy they are; part of each CPU
# feature's cache key. The encoder reads the text as given: its tokenizer normalises what it
# needs, and span offsets stay in the user's characters.
CPU_TEXT_FORM: Final = "NFC"
PARALLEL_MIN_PAIRS = 256  # below this, starting worker processes costs more than it saves
# On a GPU the CPU metrics are most of predict's time: on an H100 machine with 16 cores, 2,000
# pairs took 12.4 s with 2 workers, 7.2 s with 8, 6.3 s with 14 (docs/bench.md)
MAX_WORKERS = 8
ENCODER_BLOCK_PAIRS = 4096  # pairs whose token states are held in memory at once


def feature_versions(
    names: Sequence[str], encoder: str = DEFAULT_ENCODER, num_layers: int | None = None
) -> dict[str, str]:
    """Cache key per feature: metric version, plus encoder name and layer for encoder metrics,
    plus the digest of the disfluency detector's files for a metric that reads it, plus the
    text form (CPU_TEXT_FORM) for the others."""
    metrics_for(names)
    versions = {}
    for name in names:
        metric = COLUMN_TO_METRIC[name]
        version = f"v{METRICS[metric].version}"
        if is_encoder_metric(metric):
            version += f"|{encoder_source(encoder, num_layers)}"
            if encoder_metric(metric).needs_disfluency:
                version += f"|detector={detector_digest()}"
        else:
            version += f"|{CPU_TEXT_FORM}"
        versions[name] = version
    return versions


def run_cpu_metrics(metric_names: Sequence[str], refs: list[str], gens: list[str]) -> np.ndarray:
    """Scores of CPU metrics side by side, (n, total columns), in the order given."""
    blocks = [METRICS[name]().compute(refs, gens) for name in metric_names]
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(refs), 0))


def usable_cpus() -> int:
    """The cores this process may run on (its affinity where the platform tells it, which a
    container's CPU set narrows; else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _cpu_task(task: tuple[list[str], list[str], list[str]]) -> np.ndarray:
    return run_cpu_metrics(*task)


def cpu_scores(metric_names: Sequence[str], refs: list[str], gens: list[str]) -> np.ndarray:
    """CPU metrics over all pairs, split across worker processes when it pays off (the
    workers a block shares, ``evaluator.features.cpu_workers``, else workers for this call)."""
    workers = min(MAX_WORKERS, usable_cpus())
    if len(refs) < PARALLEL_MIN_PAIRS or workers < 2 or not metric_names:
        return run_cpu_metrics(metric_names, refs, gens)
    pieces = np.array_split(np.arange(len(refs)), workers * 4)  # small pieces balance slow pairs
    tasks = [
        (list(metric_names), [refs[i] for i in piece], [gens[i] for i in piece]) for piece in pieces
    ]
    # Several metrics read WordNet (METEOR, the word relations): load it once here so that
    # forked workers inherit it (each reopens its data files, mismatch_core.resources.wordnet).
    wordnet()
    with shared_cpu_workers() as pool:  # a block's, else workers for this call alone
        return np.concatenate(pool.map(_cpu_task, tasks, workers), axis=0)


def encoder_scores(
    metric_names: Sequence[str],
    refs: list[str],
    gens: list[str],
    encoder: str,
    batch_size: int,
    num_layers: int | None,
    embeddings_out: dict[str, np.ndarray] | None,
    alignments_out: dict[str, np.ndarray] | None = None,
    tokens_out: dict[str, np.ndarray] | None = None,
    offsets_out: dict[str, np.ndarray] | None = None,
    device: str = "cpu",
) -> np.ndarray:
    """Encoder metrics, one forward pass per distinct text in each block of pairs (the encoder on
    ``device``; the metrics read its states on the CPU)."""
    metrics = [encoder_metric(name) for name in metric_names]
    keep_disfluency = any(metric.needs_disfluency for metric in metrics)
    blocks = []
    for start in range(0, len(refs), ENCODER_BLOCK_PAIRS):
        block_refs = refs[start : start + ENCODER_BLOCK_PAIRS]
        block_gens = gens[start : start + ENCODER_BLOCK_PAIRS]
        encoded = encoder_pass.encode_distinct(
            block_refs + block_gens,
            encoder,
            batch_size,
            num_layers,
            keep_offsets=offsets_out is not None,
            keep_disfluency=keep_disfluency,
            device=device,
        )
        if embeddings_out is not None:
            embeddings_out.update({text_key(text): state.mean for text, state in encoded.items()})
        if tokens_out is not None:
            tokens_out.update(
                {
                    text_key(text): encoder_pass.token_states(state)
                    for text, state in encoded.items()
                }
            )
        if offsets_out is not None:
            offsets_out.update(
                {text_key(t): encoder_pass.token_offsets(state) for t, state in encoded.items()}
            )
        ref_states = [encoded[text] for text in block_refs]
        gen_states = [encoded[text] for text in block_gens]
        with single_torch_thread():
            if alignments_out is not None:
                for ref, gen, ref_state, gen_state in zip(
                    block_refs, block_gens, ref_states, gen_states, strict=True
                ):
                    alignments_out[pair_key(ref, gen)] = encoder_pass.alignment_vector(
                        ref_state, gen_state
                    )
            blocks.append(
                np.concatenate(
                    [metric.compute(ref_states, gen_states) for metric in metrics]
                    or [np.zeros((len(block_refs), 0))],
                    axis=1,
                )
            )
    return np.concatenate(blocks, axis=0)


@contextlib.contextmanager
def single_torch_thread():
    """Run per-pair token matching on one thread: its matrices are tiny, and torch's thread
    pool costs more than it saves there (300 pairs took 19 s on 2 busy cores, 0.07 s on one)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def pair_key(ref: str, gen: str) -> str:
    """Key of one (reference, generated) pair, from its texts alone: in an alignment store and
    in the human ratings' feature caches (``evaluator.finetune.data``)."""
    return f"{text_key(ref)}:{text_key(gen)}"


def compute_features(
    refs: Sequence[str | list[str]],
    gens: Sequence[str],
    names: Sequence[str] = DEFAULT_FEATURES,
    aggregate: str = "max",
    encoder: str = DEFAULT_ENCODER,
    batch_size: int = 64,
    embeddings_out: dict[str, np.ndarray] | None = None,
    num_layers: int | None = None,
    alignments_out: dict[str, np.ndarray] | None = None,
    tokens_out: dict[str, np.ndarray] | None = None,
    offsets_out: dict[str, np.ndarray] | None = None,
    device: str = "cpu",
) -> pd.DataFrame:
    """One row per pair, one float64 column per feature name, all finite.

    A pair with several references is scored against each and aggregated per feature with
    `aggregate` (max, min or mean). `embeddings_out`, if given, receives text_key(text) ->
    mean-pooled embedding for every text the encoder pass saw. `num_layers` is the
    BERTScore layer (None: the encoder's last). `alignments_out`, if given, receives
    pair_key(ref, gen) -> alignment vector (see encoder_pass.alignment_vector) for every
    (reference, gen) pair, which runs the encoder pass even without encoder features;
    `tokens_out`, likewise, text_key(text) -> its token states (encoder_pass.token_states),
    and `offsets_out` -> their character offsets in the text (encoder_pass.Tokenized).
    `device`: where the encoder pass runs (a torch device name); the other metrics run on the
    CPU, and the scores do not depend on it beyond float rounding.
    """
    names = list(names)
    metric_names = metrics_for(names)
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")
    check_pairs(refs, gens)
    owner, flat_refs, flat_gens = [], [], []
    for index, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
        for one in references(ref):
            owner.append(index)
            flat_refs.append(one)
            flat_gens.append(gen)
    cpu = [name for name in metric_names if not is_encoder_metric(name)]
    neural = [name for name in metric_names if is_encoder_metric(name)]
    columns = [column for name in cpu + neural for column in METRICS[name].columns]
    refs_read, gens_read = (
        [unicodedata.normalize(CPU_TEXT_FORM, text) for text in texts]
        for texts in (flat_refs, flat_gens)
    )
    parts = [cpu_scores(cpu, refs_read, gens_read)]
    wanted = (alignments_out, tokens_out, offsets_out)
    if (neural or any(out is not None for out in wanted)) and flat_refs:
        parts.append(
            encoder_scores(
                neural,
                flat_refs,
                flat_gens,
                encoder,
                batch_size,
                num_layers,
                embeddings_out,
                alignments_out,
                tokens_out,
                offsets_out,
                device,
            )
        )
    elif neural:
        parts.append(np.zeros((0, len(columns) - parts[0].shape[1])))
    flat = pd.DataFrame(np.concatenate(parts, axis=1), columns=columns)
    bad = ~np.isfinite(flat.to_numpy())
    if bad.any():
        row, column = map(int, np.argwhere(bad)[0])
        raise FloatingPointError(
            f"feature {columns[column]!r} is not finite for pair {owner[row]} "
            f"(ref {flat_refs[row][:60]!r}, gen {flat_gens[row][:60]!r})"
        )
    frame = flat.groupby(np.asarray(owner, dtype=np.int64), sort=True).agg(aggregate)
    frame = frame.reindex(range(len(gens)))[names].astype(np.float64)
    return frame.reset_index(drop=True)
