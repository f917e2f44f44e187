"""Training-side probe: P(NoContr) read one way against readings of both ways combined by a
fixed rule (mean, geometric mean, min) and by a learned one (learned_reading.py, fitted on the
real train split): can a combination keep what the reverse reading gives SICK without what it
costs on real outputs? Read on the SICK TRAIN pairs of the real val split (paraphrases
against contradictions, with those no training pair holds) and on the whole real val split;
never on SICK TRIAL or DARR.

    python stack_probe.py CKPT PAIRS_DIR SICK_TRAIN_JSONL_GZ OUT_NPZ

PAIRS_DIR holds `real/{train,val}.parquet` of `mismatch adapt pairs --sick-substitutions`.
The readings are kept in OUT_NPZ (both ways for every set; about 10 min to compute).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from learned_reading import fit, fit_one_way, inputs, one_way_inputs
from sklearn.metrics import roc_auc_score

from evaluator.hub import load
from evaluator.inference import predict_proba
from evaluator.training.real_bases import sick_rows
from mismatch_core.jsonl import iter_jsonl

checkpoint, pairs, sick_train, out = (
    sys.argv[1],
    Path(sys.argv[2]),
    Path(sys.argv[3]),
    Path(sys.argv[4]),
)
train = pd.read_parquet(pairs / "real" / "train.parquet")
val = pd.read_parquet(pairs / "real" / "val.parquet")
_, held = sick_rows(sick_train, substitutions=True)
held_groups = {row["group"] for row in held}
other = pd.DataFrame(
    [
        {"ref": value["a"], "gen": value["b"]}
        for _, value in iter_jsonl(sick_train)
        if value["contradiction"] and f"sick:{value['id']}" not in held_groups
    ]
)
sets = {
    "train": train,
    "val": val,
    "paraphrases": val[(val.rule == "real_base") & (val.source == "sick")],
    "contradictions": pd.concat(
        [val[val.rule.isin(["sick_contradiction", "sick_substitution"])], other]
    ),
}
if out.is_file():  # readings of an earlier run, made by the same checkpoint
    cached = np.load(out)
    if str(cached["checkpoint"]) != checkpoint:
        sys.exit(f"{out} holds the readings of {cached['checkpoint']}, not of {checkpoint}")
    readings = {name: (cached[f"{name}_fwd"], cached[f"{name}_rev"]) for name in sets}
else:
    model = load(checkpoint)
    readings = {
        name: (
            predict_proba(model, list(f.ref), list(f.gen)),
            predict_proba(model, list(f.gen), list(f.ref))[:, 0],
        )
        for name, f in sets.items()
    }
    np.savez(
        out,
        checkpoint=checkpoint,
        **{f"{n}_{k}": r[i] for n, r in readings.items() for i, k in enumerate(("fwd", "rev"))},
    )


stacker = fit(*readings["train"], (train.label == "NoContr").to_numpy())
control = fit_one_way(readings["train"][0], (train.label == "NoContr").to_numpy())
scores = {
    "one way": {name: r[0][:, 0] for name, r in readings.items()},
    "mean": {name: (r[0][:, 0] + r[1]) / 2 for name, r in readings.items()},
    "geometric mean": {name: np.sqrt(r[0][:, 0] * r[1]) for name, r in readings.items()},
    "min": {name: np.minimum(r[0][:, 0], r[1]) for name, r in readings.items()},
    "learned": {name: stacker.predict_proba(inputs(*r))[:, 1] for name, r in readings.items()},
    "learned, one way (control)": {
        name: control.predict_proba(one_way_inputs(r[0]))[:, 1] for name, r in readings.items()
    },
}
correct = (val.label == "NoContr").to_numpy()
print("| reading | SICK AUROC | SICK contradictions at 96 / 100 / 104 paraphrases | real val AUROC | real val errors at 200 NoContr |")  # fmt: skip
print("|---|---|---|---|---|")
for name, score in scores.items():
    para, contra = score["paraphrases"], score["contradictions"]
    auc = roc_auc_score([1] * len(para) + [0] * len(contra), np.r_[para, contra])
    counts = [str(int((contra >= np.sort(para)[::-1][k - 1]).sum())) for k in (96, 100, 104)]
    real = score["val"]
    errors = int((real[~correct] >= np.sort(real[correct])[::-1][199]).sum())
    print(
        f"| {name} | {auc:.4f} | {' / '.join(counts)} of {len(contra)} | "
        f"{roc_auc_score(correct, real):.4f} | {errors} of {(~correct).sum()} |"
    )

print(
    "\nErrors of the real val split read as NoContr at the threshold of 200 real bases, by class:"
)
by_class = {}
for name in ("one way", "min", "geometric mean", "learned"):
    real = scores[name]["val"]
    passed = real[~correct] >= np.sort(real[correct])[::-1][199]
    by_class[name] = pd.Series(passed).groupby(val.label[~correct].to_numpy()).sum()
table = pd.DataFrame(by_class).astype(int)
table["pairs"] = val.label[~correct].value_counts()
print(table.to_string())
