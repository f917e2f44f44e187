"""Training-side figures of the base's reading beside a cross-encoder's (xenc_train.py).

    python training_side.py PAIRS_DIR BOTH_WAYS_NPZ NAME=READINGS_NPZ ...

BOTH_WAYS_NPZ holds the shipped base's readings of the real splits and the SICK val sets
(../2026-11-29-both-directions/stack_probe.py). For each cross-encoder: its P(same meaning)
alone, a fixed sum of log-odds (the base's + w times the cross-encoder's) and the reading to be
read on real text (`combined.py`: the calibrated regression of the both-directions record with
the cross-encoder's log-odds as one more input), against the shipped base and that record's
calibrated control. SICK: the real val split's 114 paraphrases and 134 contradictions and the
143 other contradictions; counts at P >= 0.5 and, for ranking, contradictions at the threshold
that reads 100 of the 114 paraphrases. Last column: the val split's pairs whose error is a
person's name swapped (`EntErr/person`, as the demo's wrong person) read as NoContr.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from combined import Combined, log_odds
from sick_sets import contradictions, paraphrases
from sklearn.metrics import roc_auc_score

pairs, both_ways = Path(sys.argv[1]), np.load(sys.argv[2])
candidates = dict(arg.split("=", 1) for arg in sys.argv[3:])
val = pd.read_parquet(pairs / "real" / "val.parquet")
nocontr = (val.label == "NoContr").to_numpy()
sick_para, sick_con = paraphrases(val).to_numpy(), contradictions(val).to_numpy()
non_sick = (val.source != "sick").to_numpy()
person = (val.rule == "EntErr/person").to_numpy()  # a person's name swapped, as in the demo
base_val, base_other = both_ways["val_fwd"], both_ways["contradictions_fwd"][134:]
if len(base_other) != 143 or sick_para.sum() != 114 or sick_con.sum() != 134:
    sys.exit("the readings do not match the sets this script reads")


def row(name: str, on_val: np.ndarray, on_other: np.ndarray) -> str:
    para, con = on_val[sick_para], on_val[sick_con]
    negatives = np.r_[con, on_other]
    auroc = roc_auc_score([1] * len(para) + [0] * len(negatives), np.r_[para, negatives])
    at = np.sort(para)[::-1][99]
    bases = on_val[non_sick & nocontr]
    real_auroc = roc_auc_score(nocontr[non_sick], on_val[non_sick])
    return (
        f"| {name} | {(para >= 0.5).sum()} | {(con >= 0.5).sum()} | {(on_other >= 0.5).sum()} "
        f"| {auroc:.4f} | {(con >= at).sum()} + {(on_other >= at).sum()} "
        f"| {(bases >= 0.5).sum()} / {len(bases)} | {real_auroc:.4f} "
        f"| {(on_val[person] >= 0.5).sum()} / {person.sum()} |"
    )


print(
    "| reading | SICK paraphrases (114) | contradictions (134) | other contradictions (143) "
    "| AUROC | contradictions at 100 paraphrases | non-SICK bases as NoContr | non-SICK AUROC "
    "| person swapped, as NoContr |"
)
print("|---|---|---|---|---|---|---|---|---|")
print(row("shipped base", base_val[:, 0], base_other[:, 0]))
control = Combined.fit_on_val(pairs, both_ways, None)
print(row("calibrated control", control.p(base_val, None), control.p(base_other, None)))
for name, path in candidates.items():
    xenc = np.load(path)
    xenc_val, xenc_other = xenc["val"][:, 0], xenc["oth"][:, 0]
    print(row(f"{name} alone", xenc_val, xenc_other))
    for weight in (0.5, 1.0):
        fixed = [log_odds(b[:, 0]) + weight * log_odds(x) for b, x in ((base_val, xenc_val), (base_other, xenc_other))]  # fmt: skip
        print(row(f"base + {weight} x {name} (log-odds)", *(1 / (1 + np.exp(-f)) for f in fixed)))
    combined = Combined.fit_on_val(pairs, both_ways, Path(path))
    print(row(f"combined, {name}", combined.p(base_val, xenc_val), combined.p(base_other, xenc_other)))  # fmt: skip
    print(f"\n{name}: weights {combined.describe()}\n")
