"""This record's table for one seed: each cross-encoder run's epochs (validation loss, test τ and
accuracy), the epoch and start chosen by validation loss, the recipe and the equal-weight mean.

    python summary.py SEED RECIPE.npz RUN_DIR [RUN_DIR ...]
"""

import sys
from pathlib import Path

import numpy as np
from nli_probe import gold_classes, log_loss, nli_records, task_tau


def main() -> None:
    seed, recipe_file, runs = int(sys.argv[1]), Path(sys.argv[2]), [Path(a) for a in sys.argv[3:]]
    records = nli_records()
    gold = gold_classes(records)
    recipe = np.load(recipe_file)
    if list(recipe["ids"]) != [r.id for r in records]:
        sys.exit(f"{recipe_file}: records in another order than the data file")

    def line(name: str, p_test: np.ndarray, rows: np.ndarray, extra: str = "") -> None:
        accuracy = (p_test.argmax(axis=1) == gold[rows]).mean()
        print(f"| {name} | {extra} | {task_tau(p_test, gold[rows]):.4f} | {accuracy:.4f} |")

    print(
        f"seed {seed}\n\n| reading | validation loss | test τ | test accuracy |\n|---|---|---|---|"
    )
    chosen = []
    for run in runs:
        best = None
        for path in sorted(run.glob("epoch[0-9]*.npz"), key=lambda p: int(p.stem[5:])):
            p = np.load(path)
            if not np.array_equal(p["test_rows"], recipe["test_rows"]):
                sys.exit(f"{path}: another test split than {recipe_file}")
            loss = log_loss(p["val"], gold[p["val_rows"]])
            line(f"{run.name} {path.stem}", p["test"], p["test_rows"], f"{loss:.4f}")
            if best is None or loss < best[0]:
                best = (loss, run.name, path.stem, p["test"])
        chosen.append(best)
    loss, run_name, epoch, p_cross = min(chosen, key=lambda c: c[0])
    print(f"\nchosen: {run_name} {epoch} (validation loss {loss:.4f})\n")
    rows = recipe["test_rows"]
    line("recipe (shipped config)", recipe["test"], rows)
    line(f"cross-encoder, {run_name} {epoch}", p_cross, rows)
    line("equal-weight mean of the two", (p_cross + recipe["test"]) / 2, rows)


if __name__ == "__main__":
    main()
