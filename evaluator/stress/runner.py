"""Run the stress tests: perturb every item per seed, score each distinct text once per
metric, and reduce the scores to one curve (gold, then each noise level) per metric and test.

Per seed, the mean score over the items a test applies to is taken at every level (the gold
over the same items); the curve is the mean of those per-seed means and its spread their
standard deviation. A level that changes fewer than a fifth of the texts of the level below
(short texts: one or three sentences leave few distinct shares of sentences) is dropped,
since it adds little or no noise.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from spacy.tokens import Doc

from evaluator.stress.data import StressItem
from evaluator.stress.metrics import MetricFn, run_metric
from evaluator.stress.noise_ratio import noise_ratio
from evaluator.stress.perturbations import PERTURBATIONS, Perturbation, Source
from evaluator.stress.verdict import passes

# a test that applies to fewer items gives no verdict; on a set of fewer than twice as many
# items, one that applies to under half of them
MIN_ITEMS = 10
# A level is kept only when it changes at least this share of the texts of the level below:
# one-sentence texts give the same text at every share of sentences, and a mean moved by a
# handful of multi-sentence texts would decide the verdict by chance.
MIN_CHANGED = 0.2


@dataclass
class Curve:
    passed: bool
    levels: list[float]  # mean noise ratio per level, gold (0.0) first
    scores: list[float]  # mean over seeds of the per-seed mean score, gold first
    std: list[float]  # standard deviation of the per-seed means
    below_gold: list[float]  # per noise level: share of texts scoring below their gold


@dataclass
class TestInfo:
    kind: str
    description: str
    switching: bool
    intensities: list[float]  # the test's level parameters that changed some text
    items: int  # distinct items the test applied to (in any seed)
    applied: int  # (item, seed) runs that produced texts
    skipped: int  # (item, seed) runs where the test could not apply


@dataclass
class StressResult:
    seeds: int
    items: int
    tests: dict[str, TestInfo]
    skipped_tests: dict[str, str]  # test -> why it gives no verdict
    curves: dict[str, dict[str, Curve]]  # metric -> test -> curve
    seconds: dict[str, float]  # metric -> scoring time

    def to_json(self) -> dict:
        return {
            "seeds": self.seeds,
            "items": self.items,
            "metrics": {
                metric: {
                    "passed": sum(c.passed for c in curves.values()),
                    "seconds": round(self.seconds[metric], 1),
                    "tests": {
                        test: {
                            "pass": c.passed,
                            "levels": c.levels,
                            "scores": c.scores,
                            "std": c.std,
                            "below_gold": c.below_gold,
                        }
                        for test, c in curves.items()
                    },
                }
                for metric, curves in self.curves.items()
            },
            "tests": {name: asdict(info) for name, info in self.tests.items()},
            "skipped_tests": self.skipped_tests,
        }


Outputs = dict[tuple[int, int], list[str]]  # (seed, item index) -> text per level


def _foreign_supply(docs: Sequence[Doc]) -> Callable[[int], Callable[[random.Random], str | None]]:
    """Per item, a function drawing a sentence of another item's gold."""
    pool = [
        (owner, s.text.strip())
        for owner, doc in enumerate(docs)
        for s in doc.sents
        if s.text.strip()
    ]
    owners = {owner for owner, _ in pool}

    def for_item(item: int) -> Callable[[random.Random], str | None]:
        def draw(rng: random.Random) -> str | None:
            if not owners - {item}:
                return None
            while True:
                owner, sentence = rng.choice(pool)
                if owner != item:
                    return sentence

        return draw

    return for_item


def perturb_items(
    test: Perturbation, items: Sequence[StressItem], docs: Sequence[Doc], seeds: int
) -> tuple[Outputs, list[float]]:
    """Texts per (seed, item) for one test, and the level intensities that changed something."""
    foreign = _foreign_supply(docs)
    outputs: Outputs = {}
    for seed in range(seeds):
        for index, (item, doc) in enumerate(zip(items, docs, strict=True)):
            rng = random.Random(f"{test.name}:{seed}:{index}")
            texts = test.apply(doc, Source(rng=rng, src=item.src, foreign_sentence=foreign(index)))
            if texts is not None:
                outputs[(seed, index)] = texts
    keep = [0]
    for level in range(1, len(test.levels)):
        changed = sum(texts[level] != texts[keep[-1]] for texts in outputs.values())
        if changed and changed >= MIN_CHANGED * len(outputs):
            keep.append(level)
    outputs = {key: [texts[level] for level in keep] for key, texts in outputs.items()}
    return outputs, [float(test.levels[level]) for level in keep]


def _curve(
    outputs: Outputs,
    items: Sequence[StressItem],
    score: Callable[[int, str], float],
    test: Perturbation,
) -> Curve:
    levels = len(next(iter(outputs.values())))
    per_seed: dict[int, list[list[float]]] = {}
    below = np.zeros(levels)
    ratios = np.zeros(levels)
    for (seed, index), texts in outputs.items():
        gold = items[index].gold
        row = [score(index, gold)] + [score(index, t) for t in texts]
        per_seed.setdefault(seed, []).append(row)
        below += np.asarray(row[1:]) < row[0]
        ratios += [noise_ratio(gold, t, test.switching) for t in texts]
    means = np.array([np.mean(rows, axis=0) for rows in per_seed.values()])
    below_gold = (below / len(outputs)).tolist()
    scores = means.mean(axis=0).tolist()
    return Curve(
        passed=passes(scores, below_gold),
        levels=[0.0, *(ratios / len(outputs)).tolist()],
        scores=scores,
        std=means.std(axis=0).tolist(),
        below_gold=below_gold,
    )


def run_stress(
    items: Sequence[StressItem],
    metrics: Mapping[str, MetricFn],
    tests: Sequence[str] | None = None,
    seeds: int = 5,
    min_items: int = MIN_ITEMS,
    nlp=None,
    log: Callable[[str], None] = lambda message: None,
) -> StressResult:
    """Run ``tests`` (default: all) on ``items`` for every metric."""
    from evaluator.features.cpu_workers import shared_cpu_workers

    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    if not items:
        raise ValueError("no items to stress-test")
    names = list(tests or PERTURBATIONS)
    unknown = [name for name in names if name not in PERTURBATIONS]
    if unknown:
        raise ValueError(f"unknown test(s) {', '.join(unknown)}; known: {', '.join(PERTURBATIONS)}")
    if nlp is None:
        from mismatch_core.resources import load_spacy

        nlp = load_spacy()
    started = time.perf_counter()
    docs = list(nlp.pipe([item.gold for item in items], batch_size=32))
    log(f"parsed {len(docs)} golds in {time.perf_counter() - started:.1f}s")

    outputs: dict[str, Outputs] = {}
    infos: dict[str, TestInfo] = {}
    skipped_tests: dict[str, str] = {}
    for name in names:
        test = PERTURBATIONS[name]
        test_outputs, intensities = perturb_items(test, items, docs, seeds)
        applied_items = len({index for _, index in test_outputs})
        needed = min(min_items, math.ceil(len(items) / 2))
        if applied_items < needed:
            skipped_tests[name] = f"applies to {applied_items} of {len(items)} items (< {needed})"
            continue
        outputs[name] = test_outputs
        infos[name] = TestInfo(
            kind=test.kind,
            description=test.description,
            switching=test.switching,
            intensities=intensities,
            items=applied_items,
            applied=len(test_outputs),
            skipped=seeds * len(items) - len(test_outputs),
        )
    log(f"perturbed: {len(outputs)} tests apply, {len(skipped_tests)} skipped")
    if not outputs:  # an empty report, and its plot failed after report.md linked it
        reasons = "; ".join(f"{name} {why}" for name, why in skipped_tests.items())
        raise ValueError(f"no test gives a verdict on these {len(items)} items: {reasons}")

    pairs: dict[tuple[int, str], int] = {}
    for index, item in enumerate(items):
        pairs.setdefault((index, item.gold), len(pairs))
    for test_outputs in outputs.values():
        for (_, index), texts in test_outputs.items():
            for text in texts:
                pairs.setdefault((index, text), len(pairs))
    keys = list(pairs)
    refs = [list(items[index].refs) for index, _ in keys]
    gens = [text for _, text in keys]
    srcs = [items[index].src for index, _ in keys]

    curves: dict[str, dict[str, Curve]] = {}
    seconds: dict[str, float] = {}
    with shared_cpu_workers():  # one pool of CPU-metric workers for every metric
        for metric_name, metric in metrics.items():
            started = time.perf_counter()
            values = run_metric(metric_name, metric, refs, gens, srcs)
            seconds[metric_name] = time.perf_counter() - started
            log(f"{metric_name}: scored {len(keys)} pairs in {seconds[metric_name]:.1f}s")

            def score(index: int, text: str, values=values) -> float:
                return float(values[pairs[(index, text)]])

            curves[metric_name] = {
                name: _curve(outputs[name], items, score, PERTURBATIONS[name]) for name in outputs
            }
    return StressResult(seeds, len(items), infos, skipped_tests, curves, seconds)
