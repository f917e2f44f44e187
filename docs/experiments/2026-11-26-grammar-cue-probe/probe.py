"""How often three reference-relative counts rise when a synth error is applied to a held-out
real output (the bases of `mismatch bench realtext`), per rule, and how often they already
fire on the unperturbed outputs. A probe for a grammar feature, not part of the package.

Counts, over lower-cased alphabetic words of gen against ref:
- inflection: words gen adds whose lemma (lemminflect; pronoun case and a/an folded) is that of
  a word gen drops (the same word in another form);
- function words dropped: articles, light prepositions and auxiliaries ref has more of;
- swapped neighbours: adjacent word pairs of gen that stand the other way round in ref.

Usage (from the repository root): python docs/experiments/2026-11-26-grammar-cue-probe/probe.py
"""

import functools
from collections import Counter

import numpy as np
from lemminflect import getAllLemmas

from evaluator.cli.bench.realtext import DEFAULT_BASES_LIMIT
from evaluator.features.lexical import word_tokens
from evaluator.realtext_data import load_bases, perturb_bases
from mismatch_core.resources import data_dir

CASE = {"he": "he", "him": "he", "his": "he", "she": "she", "her": "she", "they": "they",
        "them": "they", "their": "they", "we": "we", "us": "we", "our": "we", "i": "i",
        "me": "i", "my": "i", "a": "a", "an": "a"}  # fmt: skip
FUNCTION = frozenset(
    "a an the of to in on at by for with from is are was were be been being has have had do "
    "does did".split()
)
MIN_PAIRS = 20


@functools.lru_cache(maxsize=200_000)
def lemmas(word: str) -> frozenset[str]:
    if word in CASE:
        return frozenset({CASE[word]})
    found = {lemma for group in getAllLemmas(word).values() for lemma in group}
    return frozenset(found or {word})


def counts(ref: str, gen: str) -> tuple[int, int, int]:
    r = [w for w in word_tokens(ref) if w.isalpha()]
    g = [w for w in word_tokens(gen) if w.isalpha()]
    removed = list((Counter(r) - Counter(g)).elements())
    added = list((Counter(g) - Counter(r)).elements())
    used: set[int] = set()
    inflection = 0
    for word in added:
        for k, other in enumerate(removed):
            if k not in used and lemmas(word) & lemmas(other):
                inflection += 1
                used.add(k)
                break
    dropped = sum((Counter(r) - Counter(g))[w] for w in FUNCTION)
    dropped -= sum((Counter(g) - Counter(r))[w] for w in FUNCTION)
    ref_pairs = set(zip(r, r[1:], strict=False))
    swapped = sum(
        1
        for x, y in zip(g, g[1:], strict=False)
        if (y, x) in ref_pairs and (x, y) not in ref_pairs and x != y
    )
    return inflection, max(dropped, 0), swapped


def main() -> None:
    by_dataset = load_bases(data_dir() / "human", DEFAULT_BASES_LIMIT, 13)
    records = [r for rs in by_dataset.values() for r in rs]
    refs, gens = [r.refs[0] for r in records], [r.gen for r in records]
    items = perturb_bases(refs, gens, [r.group for r in records], 13).items
    base = np.array([counts(ref, gen) for ref, gen in zip(refs, gens, strict=True)])
    after = np.array([counts(refs[p.base], p.text) for p in items])
    rises = after > base[[p.base for p in items]]
    rules = np.array([p.rule for p in items])
    print(f"{len(records)} bases, {len(items)} perturbed pairs")
    print(
        "unperturbed bases where each count is above 0 (inflection, dropped, swapped): "
        + ", ".join(f"{v:.1%}" for v in (base > 0).mean(axis=0))
    )
    print("| rule | pairs | inflection rises | function words dropped rises | swapped rises |")
    print("|---|---|---|---|---|")
    for rule in sorted(set(rules.tolist())):
        mine = rules == rule
        if mine.sum() >= MIN_PAIRS:
            shares = " | ".join(f"{v:.0%}" for v in rises[mine].mean(axis=0))
            print(f"| {rule} | {mine.sum()} | {shares} |")


if __name__ == "__main__":
    main()
