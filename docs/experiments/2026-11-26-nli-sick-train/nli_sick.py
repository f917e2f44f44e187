"""NLI: fit on the MNLI train part alone vs with SICK TRAIN added; τ and accuracy on the same
MNLI test records (groups of the 80/20 split over both). Analysis only."""

from dataclasses import replace

import numpy as np

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.agreement import kendall
from evaluator.finetune.datamodule import split_rows
from evaluator.finetune.evaluate import model_scores
from evaluator.finetune.train import fit

s = load_settings("nli", "configs/finetune/nli.yaml")
p = prepare(
    "nli",
    s.checkpoint,
    replace(s, cache_dir="data/nli_sick/cache", data_root="data/nli_sick/human"),
)
names = np.array([r.dataset for r in p.records])
T = p.inputs.targets
for seed in (0, 1, 2):
    train, test = split_rows(p.records, np.arange(len(p.records)), seed, 0.2)
    test = test[names[test] == "mnli-dev-matched"]
    for variant, rows in (
        ("mnli", train[names[train] == "mnli-dev-matched"]),
        ("mnli+sick", train),
    ):
        module, _, _ = fit(p, rows, s, seed, checkpoint=s.checkpoint)
        scores = model_scores(module, p, test)
        taus = [kendall(scores[:, k], T[test, k]) for k in range(3)]
        acc = float((scores.argmax(1) == T[test].argmax(1)).mean())
        print(
            f"seed {seed} {variant}: n_train {len(rows)} n_test {len(test)} tau {np.mean(taus):.4f} "
            f"({', '.join(f'{t:.3f}' for t in taus)}) acc {acc:.4f}",
            flush=True,
        )
