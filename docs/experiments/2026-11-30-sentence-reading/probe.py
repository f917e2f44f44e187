"""Whole-text vs sentence-by-sentence readings of real multi-sentence outputs (training side).

WebNLG 2020, the groups training may use (``realtext_data.bench_split``'s train part), outputs
of two sentences or more, read by the shipped base. Every reading below is built from single
pair readings (one reference text, one output text), P the probability vector:
  W    the whole output against each reference, the closest (highest P(NoContr)) decides, as
       predict reads several references;
  S    each output sentence against every window of one or two consecutive sentences of any
       reference and each whole reference, the closest decides; the lowest sentence decides;
  S+   as S, but a sentence reads as right with P(NoContr) + P(MissInfo): one sentence of an
       output may carry part of a reference (the first look at 60 outputs, below, found S
       reading correct outputs as MissInfo); its error named among the classes but MissInfo;
  SC+  S+ per reference, and each sentence of that reference read against the output's
       windows the same way (does the output carry it?); the lower decides (a reference
       sentence left out names MissInfo), the best reference then decides.
Figures: NoContr recall on outputs rated correctness >= 90; AUROC correctness >= 90 against
< 50; Kendall tau-b with correctness; and on highly rated bases with every applicable synth
error applied (``realtext_data.perturb_bases``, against the first reference), the drop
(score(base) > score(perturbed)) and the top error class = the rule's class (mean over classes).
Usage, from the repository root:
  python docs/experiments/2026-11-30-sentence-reading/probe.py [BASES [OUTPUTS]]
"""

import random
import re
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import kendalltau
from sklearn.metrics import roc_auc_score

from evaluator import Evaluator
from evaluator.human_data import load_records
from evaluator.realtext_data import bench_split, perturb_bases
from mismatch_core.resources import data_dir
from mismatch_core.taxonomy import CODES

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
BASES = int(sys.argv[1]) if len(sys.argv) > 1 else 150
OUTPUTS = int(sys.argv[2]) if len(sys.argv) > 2 else None  # a quick look
MISSINFO = CODES.index("MissInfo")
NAMES = ("W", "S", "S+", "SC+")


def sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_END.split(text.strip()) if s]


def windows(text: str) -> list[str]:
    parts = sentences(text)
    return parts + [" ".join(parts[i : i + 2]) for i in range(len(parts) - 1)] + [text]


def named(p: np.ndarray, score: float, without_missinfo: bool) -> np.ndarray:
    """A reading with its score set and, for the sentence readings, MissInfo not named."""
    out = p.copy()
    if without_missinfo:
        out[MISSINFO] = 0.0
    out[0] = score
    return out


def missing() -> np.ndarray:
    return np.eye(len(CODES))[MISSINFO]


class Reader:
    """Single pair readings, cached: the perturbed outputs share most sentences."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator
        self.cache: dict[tuple[str, str], np.ndarray] = {}

    def read(self, pairs: list[tuple[str, str]]) -> None:
        todo = list(dict.fromkeys(p for p in pairs if p not in self.cache))
        if todo:
            out = self.evaluator.predict(
                [r for r, _ in todo], [g for _, g in todo], progress=False, spans=False
            )
            for pair, prediction in zip(todo, out, strict=True):
                self.cache[pair] = np.array([prediction.mismatch[c] for c in CODES])

    def pairs(self, refs: tuple[str, ...], gen: str) -> list[tuple[str, str]]:
        out = [(ref, gen) for ref in refs]
        for ref in refs:
            out += [(w, s) for w in windows(ref) for s in sentences(gen)]
            out += [(w, s) for w in windows(gen) for s in sentences(ref)]
        return out

    def closest(self, candidates: list[str], text: str, lenient: bool) -> np.ndarray:
        readings = [self.cache[(c, text)] for c in candidates]
        key = (lambda p: p[0] + p[MISSINFO]) if lenient else (lambda p: p[0])
        best = max(readings, key=key)
        return named(best, key(best), lenient)

    def forward(self, refs: tuple[str, ...], gen: str, lenient: bool) -> np.ndarray:
        candidates = [w for ref in refs for w in windows(ref)]
        return min((self.closest(candidates, s, lenient) for s in sentences(gen)),
                   key=lambda p: p[0])

    def readings(self, refs: tuple[str, ...], gen: str) -> dict[str, np.ndarray]:
        whole = max((self.cache[(ref, gen)] for ref in refs), key=lambda p: p[0])
        best = None
        for ref in refs:
            ahead = self.forward((ref,), gen, lenient=True)
            covered = min(self.closest(windows(gen), s, lenient=True)[0] for s in sentences(ref))
            if covered < ahead[0]:
                ahead = named(missing(), covered, False)
            if best is None or ahead[0] > best[0]:
                best = ahead
        return {"W": whole, "S": self.forward(refs, gen, False),
                "S+": self.forward(refs, gen, True), "SC+": best}


def main() -> None:
    records, _ = bench_split(load_records(data_dir() / "human/data2text/webnlg2020.jsonl.gz"))
    multi = [r for r in records if len(sentences(r.gen)) >= 2][:OUTPUTS]
    reader = Reader(Evaluator.from_pretrained("checkpoints/mismatch-base"))
    reader.read([p for r in multi for p in reader.pairs(r.refs, r.gen)])
    scores = {n: np.array([reader.readings(r.refs, r.gen)[n][0] for r in multi]) for n in NAMES}
    rating = np.array([r.scores["correctness"] for r in multi])
    good, bad = rating >= 90, rating < 50
    print(f"WebNLG 2020 train part: {len(multi)} outputs of 2+ sentences, {good.sum()} rated "
          f">= 90, {bad.sum()} below 50; {len(reader.cache)} pair readings")
    for n in NAMES:
        auroc = roc_auc_score(np.r_[np.ones(good.sum()), np.zeros(bad.sum())],
                              np.r_[scores[n][good], scores[n][bad]])
        print(f"  {n:3}: recall (>= 90 read NoContr) {np.mean(scores[n][good] >= 0.5):.3f}, "
              f"AUROC {auroc:.3f}, tau-b {kendalltau(scores[n], rating).statistic:.3f}")
    bench_bases(reader, multi, NAMES, BASES)


def bench_bases(reader, multi: list, names: tuple[str, ...], count: int) -> None:
    """Print, per reading in ``names``, the drop and the top error class on ``count`` highly
    rated outputs of ``multi`` with every applicable synth error applied. ``reader``: any
    reader with ``pairs``, ``read`` and ``readings`` as ``Reader`` has them."""
    pool = [r for r in multi if r.scores["correctness"] >= 90]
    bases = random.Random(0).sample(pool, min(count, len(pool)))
    changed = perturb_bases([r.refs[0] for r in bases], [r.gen for r in bases],
                            [r.group for r in bases], seed=0)
    items = changed.items
    reader.read([p for i in items for p in reader.pairs((bases[i.base].refs[0],), i.text)]
                + [p for r in bases for p in reader.pairs((r.refs[0],), r.gen)])
    print(f"{len(bases)} bases rated >= 90, {len(items)} perturbed (against the first reference)")
    for n in names:
        base = [reader.readings((r.refs[0],), r.gen)[n] for r in bases]
        drops, right = defaultdict(list), defaultdict(list)
        for i in items:
            reading = reader.readings((bases[i.base].refs[0],), i.text)[n]
            drops[i.code].append(base[i.base][0] > reading[0])
            right[i.code].append(CODES[1 + int(np.argmax(reading[1:]))] == i.code)
        every_drop = [d for v in drops.values() for d in v]
        per_class = {c: np.mean(v) for c, v in sorted(right.items())}
        print(f"  {n:3}: unperturbed read NoContr {np.mean([b[0] >= 0.5 for b in base]):.3f}, "
              f"drop {np.mean(every_drop):.3f}, top class right (class mean) "
              f"{np.mean(list(per_class.values())):.3f}")
        print("       " + ", ".join(f"{c} {v:.2f}/{np.mean(drops[c]):.2f} ({len(right[c])})"
                                    for c, v in per_class.items()))


if __name__ == "__main__":
    main()
