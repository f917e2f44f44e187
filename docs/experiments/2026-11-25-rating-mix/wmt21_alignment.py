"""Does WMT21 DA (to-English) carry a signal that any metric could read? Sentence chrF of an
output against its reference, Kendall tau-b with the output's da_z:

1. per language pair, records with n_ratings >= 2 (what the translation task loads; first
   1,500), the score read against the text of the same system at segment id + shift
   (shift -1, 0, 1: an off-by-one between score and text files would peak off 0);
2. de-en, every record: the score of system S read against the text of system T for the
   same segment. A system mix-up would put the peak off the diagonal; no peak at all means
   the scores say nothing about which system's output was better beyond the segment.

Usage: python wmt21_alignment.py [SHARED_DATA]   (default ../shared/data)
"""

import gzip
import json
import sys
from pathlib import Path

import numpy as np
from sacrebleu.metrics import CHRF
from scipy.stats import kendalltau

DATA = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
CHRF_METRIC = CHRF()
records = [
    json.loads(line)
    for line in gzip.open(DATA / "human/translation/wmt21_da.jsonl.gz", "rt", encoding="utf-8")
]
by_key = {(r["meta"]["lp"], r["meta"]["sid"], r["system"]): r for r in records}
cache: dict[str, float] = {}


def chrf(record: dict) -> float:
    if record["id"] not in cache:
        refs = record["ref"] if isinstance(record["ref"], list) else [record["ref"]]
        cache[record["id"]] = CHRF_METRIC.sentence_score(record["gen"], refs[:1]).score
    return cache[record["id"]]


def tau(scored: list[dict], text_of) -> tuple[int, float]:
    pairs = [(chrf(t), r["scores"]["da_z"]) for r in scored if (t := text_of(r)) is not None]
    x, y = zip(*pairs, strict=True)
    return len(pairs), float(kendalltau(x, y).statistic)


print("1. lp shift n tau")
for lp in sorted({r["meta"]["lp"] for r in records}):
    kept = [r for r in records if r["meta"]["lp"] == lp and r["meta"]["n_ratings"] >= 2][:1500]
    for shift in (-1, 0, 1):
        n, value = tau(
            kept, lambda r, s=shift, p=lp: by_key.get((p, r["meta"]["sid"] + s, r["system"]))
        )
        print(f"{lp} {shift:+d} {n} {value:.3f}")
de_en = [r for r in records if r["meta"]["lp"] == "de-en"]
systems = sorted({r["system"] for r in de_en})
matrix = np.array([
    [tau([r for r in de_en if r["system"] == s],
         lambda r, t=t: by_key.get(("de-en", r["meta"]["sid"], t)))[1] for t in systems]
    for s in systems
])  # fmt: skip
diagonal = np.diag(matrix)
off = matrix[~np.eye(len(systems), dtype=bool)]
print(f"2. de-en, {len(systems)} systems: tau with the own text {diagonal.mean():.3f} "
      f"(mean), with another system's text {off.mean():.3f}; own text the row's best in "
      f"{int((matrix.argmax(axis=1) == np.arange(len(systems))).sum())} of {len(systems)} rows")  # fmt: skip
