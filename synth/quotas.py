"""What a run still needs and how each round asks for it.

``Quotas`` holds how many pairs each (split, class) still needs and how many each source may
still give; the planning functions turn the success rates seen so far into the next round's
work: which classes to try on every text (harvest), and how many texts of each source to parse
with which class weights.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mismatch_core.taxonomy import CODES
from synth.config import SynthConfig
from synth.output import Candidate

MIN_ROUND_TEXTS = 200  # per source and split (a run of fewer than 2,000 pairs: see round_floor)
MAX_ROUND_TEXTS = 30_000


def class_needs(num_pairs: int, val_fraction: float) -> dict[tuple[str, str], int]:
    """Pairs per (split, class): the classes share ``num_pairs`` evenly (the first ones one
    more), each class's val part its rounded ``val_fraction``."""
    per_class = [num_pairs // len(CODES)] * len(CODES)
    for i in range(num_pairs - sum(per_class)):
        per_class[i] += 1
    need = {}
    for code, total in zip(CODES, per_class, strict=True):
        val = round(total * val_fraction)
        need[("train", code)] = total - val
        need[("val", code)] = val
    return need


@dataclass
class Quotas:
    """How many pairs each (split, class) still needs and how many each source may still give."""

    need: dict[tuple[str, str], int]
    source_left: dict[str, int]
    seen: set[tuple[str, str]] = field(default_factory=set)
    quota: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.quota = self.quota or dict(self.need)

    @classmethod
    def for_config(cls, config: SynthConfig) -> Quotas:
        need = class_needs(config.num_pairs, config.val_fraction)
        return cls(need, dict.fromkeys(config.source_weights, config.source_cap))

    def accept(self, split: str, candidate: Candidate) -> bool:
        key = (split, candidate.label)
        pair = (candidate.ref, candidate.gen)
        if self.need[key] <= 0 or self.source_left.get(candidate.source, 0) <= 0 or pair in self.seen:
            return False
        self.seen.add(pair)
        self.need[key] -= 1
        self.source_left[candidate.source] -= 1
        return True

    def open_in(self, split: str) -> dict[str, int]:
        return {code: self.need[(split, code)] for code in CODES if self.need[(split, code)] > 0}

    def still_open(self) -> dict[str, int]:
        """Class -> pairs it still needs, both splits together (only classes that need some)."""
        totals = {code: self.need[("train", code)] + self.need[("val", code)] for code in CODES}
        return {code: need for code, need in totals.items() if need > 0}

    def close_nearly_full(self, split: str, tolerance: float) -> int:
        """When every open class of ``split`` holds at least (1 - tolerance) of its quota,
        close them and share what they still need among the full classes; returns the pairs
        moved (0 when some open class is further behind, or none is open)."""
        open_classes = self.open_in(split)
        full = [code for code in CODES if code not in open_classes]
        if not open_classes or not full:
            return 0
        if any(need > tolerance * self.quota[(split, code)] for code, need in open_classes.items()):
            return 0
        moved = sum(open_classes.values())
        for code in open_classes:
            self.need[(split, code)] = 0
        for i, code in enumerate(full):
            self.need[(split, code)] += moved // len(full) + (i < moved % len(full))
        return moved


def best_rate(code: str, attempts: Counter, successes: Counter, config: SynthConfig) -> float:
    """The class's success rate on its best source so far (1/2 before any try)."""
    return max((successes[(s, code)] + 1) / (attempts[(s, code)] + 2) for s in config.source_weights)


def harvest_classes(
    open_classes: dict[str, int], attempts: Counter, successes: Counter, screens: dict, config: SynthConfig
) -> frozenset[str]:
    """Open classes to try on every text: those with a screen (few texts can take them: event
    order) and those that, after 200 tries, succeed on fewer than ``scarce_rate`` of the texts
    of every source (their best source's rate is below it)."""
    return frozenset(
        code
        for code in open_classes
        if code in screens
        or (
            sum(attempts[(s, code)] for s in config.source_weights) >= 200
            and best_rate(code, attempts, successes, config) < config.scarce_rate
        )
    )


def round_floor(num_pairs: int) -> int:
    """Fewest texts a round parses per source and split: enough for every source's success
    rates to be learned, and for a small run a tenth of its pairs (at least 20) instead of
    200, so that a 280-pair set does not parse 2,000 texts in its first round. Runs of 2,000
    pairs or more keep the floor of 200, and with it their output."""
    return max(min(MIN_ROUND_TEXTS, num_pairs // 10), 20)


def plan_round(
    open_classes: dict[str, int],
    harvest: frozenset[str],
    quotas: Quotas,
    attempts: Counter,
    successes: Counter,
    config: SynthConfig,
) -> dict[str, tuple[int, dict[str, float]]]:
    """source -> (texts to parse this round, attempt weights of the sampled classes there)."""
    total_need = sum(open_classes.values())
    budget = 0.0  # texts to parse: each class's need over its best success rate so far
    for code, need in open_classes.items():
        tried_on = 1 if code in harvest else config.classes_per_text  # of each text's tries
        budget += need / max(best_rate(code, attempts, successes, config), 0.02) / tried_on
    budget = min(budget * 1.2, MAX_ROUND_TEXTS)
    shares: dict[str, tuple[float, dict[str, float]]] = {}
    for source, weight in config.source_weights.items():
        if quotas.source_left.get(source, 0) <= 0:
            continue
        class_weights, servable = {}, 0
        for code, need in open_classes.items():
            tries = attempts[(source, code)]
            rate = (successes[(source, code)] + 1) / (tries + 2)
            if tries >= 50 and rate < 0.01:
                continue  # this source cannot make this class (statements for QuestErr)
            if code not in harvest:
                class_weights[code] = need / max(rate, 0.02)
            servable += need
        if servable:
            norm = sum(class_weights.values())
            normalised = {code: w / norm * len(class_weights) for code, w in class_weights.items()} if norm else {}
            shares[source] = (weight * servable / total_need, normalised)
    share_total = sum(share for share, _ in shares.values()) or 1.0
    return {
        source: (max(int(budget * share / share_total), round_floor(config.num_pairs)), weights)
        for source, (share, weights) in shares.items()
    }

