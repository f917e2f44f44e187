"""How the shipped disfluency feature moves when a synth error is applied to a held-out real
output (the bases of `mismatch bench realtext`), per rule: the share of perturbed copies whose
feature rises above their base's, and the share where it rises by more than 1 logit; and how
often it is above 1 on the unperturbed outputs. Measurement only; nothing is chosen on it.

Usage (from the repository root):
    python docs/experiments/2026-11-26-disfluency-feature/detector_on_real_bases.py
"""

import numpy as np

from evaluator.cli.bench.realtext import DEFAULT_BASES_LIMIT
from evaluator.features import compute_features
from evaluator.realtext_data import load_bases, perturb_bases
from mismatch_core.resources import data_dir

MIN_PAIRS = 20


def main() -> None:
    by_dataset = load_bases(data_dir() / "human", DEFAULT_BASES_LIMIT, 13)
    records = [r for rs in by_dataset.values() for r in rs]
    refs, gens = [r.refs[0] for r in records], [r.gen for r in records]
    items = perturb_bases(refs, gens, [r.group for r in records], 13).items
    base = compute_features(refs, gens, ["disfluency"])["disfluency"].to_numpy()
    after = compute_features(
        [refs[p.base] for p in items], [p.text for p in items], ["disfluency"]
    )["disfluency"].to_numpy()
    rise = after - base[[p.base for p in items]]
    rules = np.array([p.rule for p in items])
    print(f"{len(records)} bases, {len(items)} perturbed copies")
    print(f"unperturbed outputs with disfluency > 1: {np.mean(base > 1):.1%}")
    print("| rule | copies | feature rises | rises by > 1 |")
    print("|---|---|---|---|")
    for rule in sorted(set(rules.tolist())):
        mine = rules == rule
        if mine.sum() >= MIN_PAIRS:
            print(f"| {rule} | {mine.sum()} | {np.mean(rise[mine] > 0):.0%} | "
                  f"{np.mean(rise[mine] > 1):.0%} |")


if __name__ == "__main__":
    main()
