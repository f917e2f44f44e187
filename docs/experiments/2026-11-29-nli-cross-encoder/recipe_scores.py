"""The shipped NLI recipe's class probabilities on one seed's split, as `mismatch evaluate
--task nli` fits and reads it (its "ours"), for setting beside the cross-encoder's.

    python recipe_scores.py SEED CACHE_DIR OUT.npz

Run from the repository root (the config and the base are read relative to it). Saves the
validation and test rows (nli_probe.py's) with their probabilities, and prints the test τ and
accuracy.
"""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from nli_probe import evaluate_splits, gold_classes, task_tau

from evaluator.cli.finetune import load_settings, prepare
from evaluator.finetune.evaluate import model_scores
from evaluator.finetune.train import fit


def main() -> None:
    seed, cache_dir, out = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    config = "configs/finetune/nli.yaml"
    settings = replace(load_settings("nli", config), cache_dir=cache_dir)
    prepared = prepare("nli", settings.checkpoint, settings, config)
    records = prepared.records
    gold = gold_classes(records)
    train, val, test = evaluate_splits(records, seed)
    # evaluate's training rows, ascending as split_rows gives them; the fit holds val out itself
    fit_rows = np.sort(np.concatenate([train, val]))
    module, _, _ = fit(prepared, fit_rows, settings, seed, checkpoint=settings.checkpoint)
    p_val, p_test = model_scores(module, prepared, val), model_scores(module, prepared, test)
    accuracy = float((p_test.argmax(axis=1) == gold[test]).mean())
    print(
        f"recipe seed {seed}: test tau {task_tau(p_test, gold[test]):.4f}, accuracy {accuracy:.4f}"
    )
    ids = np.array([r.id for r in records])
    np.savez(out, val=p_val, test=p_test, val_rows=val, test_rows=test, ids=ids)


if __name__ == "__main__":
    main()
