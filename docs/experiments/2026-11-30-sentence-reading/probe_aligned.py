"""Sentence readings against aligned windows only (part two of this record; rule.md).

Each output sentence is read against one window: the window of one or two consecutive sentences
of a reference with the highest chrF to it. A+: the lowest, over the output's sentences, of
P(NoContr) + P(MissInfo) of its aligned pair (the error named among the classes but MissInfo),
per reference, the best reference deciding. AC+: A+ and each reference sentence read against
the output window of highest chrF to it the same way, the lower deciding (a left-out reference
sentence names MissInfo). W, the whole reading, as in probe.py. Same outputs, bases and figures
as probe.py. Usage, from the repository root:
  python docs/experiments/2026-11-30-sentence-reading/probe_aligned.py [BASES]
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
from sacrebleu.metrics import CHRF
from scipy.stats import kendalltau
from sklearn.metrics import roc_auc_score

from evaluator import Evaluator
from evaluator.human_data import load_records
from evaluator.realtext_data import bench_split
from mismatch_core.resources import data_dir
from mismatch_core.taxonomy import CODES

spec = importlib.util.spec_from_file_location("probe", Path(__file__).with_name("probe.py"))
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)

BASES = int(sys.argv[1]) if len(sys.argv) > 1 else 150
MISSINFO = CODES.index("MissInfo")
NAMES = ("W", "A+", "AC+")
CHRF_METRIC = CHRF()


def short_windows(text: str) -> list[str]:
    """Windows of one or two consecutive sentences (no whole text)."""
    return probe.windows(text)[:-1]


def aligned(windows: list[str], sentence: str) -> str:
    return max(windows, key=lambda w: CHRF_METRIC.sentence_score(sentence, [w]).score)


def lenient(p: np.ndarray) -> np.ndarray:
    """The reading with P(NoContr) + P(MissInfo) as its score and MissInfo not named."""
    return probe.named(p, p[0] + p[MISSINFO], without_missinfo=True)


class Reader(probe.Reader):
    """probe.py's reader of single pairs, each sentence paired with its aligned window only."""

    def __init__(self, evaluator: Evaluator) -> None:
        super().__init__(evaluator)
        self.alignments: dict[tuple[str, str], str] = {}

    def window(self, source: str, sentence: str) -> str:
        key = (source, sentence)
        if key not in self.alignments:
            self.alignments[key] = aligned(short_windows(source), sentence)
        return self.alignments[key]

    def pairs(self, refs: tuple[str, ...], gen: str) -> list[tuple[str, str]]:
        out = [(ref, gen) for ref in refs]
        for ref in refs:
            out += [(self.window(ref, s), s) for s in probe.sentences(gen)]
            out += [(self.window(gen, s), s) for s in probe.sentences(ref)]
        return out

    def readings(self, refs: tuple[str, ...], gen: str) -> dict[str, np.ndarray]:
        whole = max((self.cache[(ref, gen)] for ref in refs), key=lambda p: p[0])
        best_a = best_ac = None
        for ref in refs:
            ahead = min(
                (lenient(self.cache[(self.window(ref, s), s)]) for s in probe.sentences(gen)),
                key=lambda p: p[0],
            )
            covered = min(
                lenient(self.cache[(self.window(gen, s), s)])[0] for s in probe.sentences(ref)
            )
            both = ahead
            if covered < ahead[0]:
                both = np.eye(len(CODES))[MISSINFO] * (1 - covered)
                both[0] = covered
            if best_a is None or ahead[0] > best_a[0]:
                best_a = ahead
            if best_ac is None or both[0] > best_ac[0]:
                best_ac = both
        return {"W": whole, "A+": best_a, "AC+": best_ac}


def main() -> None:
    records, _ = bench_split(load_records(data_dir() / "human/data2text/webnlg2020.jsonl.gz"))
    multi = [r for r in records if len(probe.sentences(r.gen)) >= 2]
    reader = Reader(Evaluator.from_pretrained("checkpoints/mismatch-base"))
    reader.read([p for r in multi for p in reader.pairs(r.refs, r.gen)])
    scores = {n: np.array([reader.readings(r.refs, r.gen)[n][0] for r in multi]) for n in NAMES}
    rating = np.array([r.scores["correctness"] for r in multi])
    good, bad = rating >= 90, rating < 50
    long = np.array([len(probe.sentences(r.gen)) >= 4 for r in multi])
    print(f"WebNLG 2020 train part: {len(multi)} outputs of 2+ sentences, {good.sum()} rated "
          f">= 90, {bad.sum()} below 50; {len(reader.cache)} pair readings")
    for n in NAMES:
        auroc = roc_auc_score(np.r_[np.ones(good.sum()), np.zeros(bad.sum())],
                              np.r_[scores[n][good], scores[n][bad]])
        print(f"  {n:3}: recall (>= 90 read NoContr) {np.mean(scores[n][good] >= 0.5):.3f}, "
              f"AUROC {auroc:.3f}, tau-b {kendalltau(scores[n], rating).statistic:.3f}; 4+ "
              f"sentences: recall {np.mean(scores[n][good & long] >= 0.5):.3f}, tau-b "
              f"{kendalltau(scores[n][long], rating[long]).statistic:.3f}")

    probe.bench_bases(reader, multi, NAMES, BASES)


if __name__ == "__main__":
    main()
