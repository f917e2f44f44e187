"""Training-side SICK checks of this record: SICK TRAIN's pairs in the real val split and its
contradictions that no training pair holds, read by each checkpoint.

    python sick_train_checks.py REAL_VAL_PARQUET SICK_TRAIN_JSONL_GZ OUT_DIR NAME=CKPT ...

REAL_VAL_PARQUET is the val split of `mismatch adapt pairs --sick-substitutions` (without
rewrites). Each checkpoint reads the pairs with `mismatch predict --no-spans`.
"""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
from sklearn.metrics import roc_auc_score

from evaluator.training.real_bases import NEGATION, contradiction_class
from synth.rules import parse

real_val, sick_train, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
checkpoints = dict(arg.split("=", 1) for arg in sys.argv[4:])
out.mkdir(parents=True, exist_ok=True)

val = pd.read_parquet(real_val)
sets = {
    "val_paraphrases": val[(val.rule == "real_base") & (val.source == "sick")],
    "val_contradictions": val[val.rule.isin(["sick_contradiction", "sick_substitution"])],
}
rows = [json.loads(line) for line in gzip.open(sick_train, "rt")]
same_negation = [
    r for r in rows
    if r["contradiction"] and len(NEGATION.findall(r["a"])) == len(NEGATION.findall(r["b"]))
]  # fmt: skip
docs = parse([text for r in same_negation for text in (r["a"], r["b"])])
other = [
    {"id": r["id"], "ref": r["a"], "gen": r["b"]}
    for i, r in enumerate(same_negation)
    if contradiction_class(docs[2 * i], docs[2 * i + 1]) is None
    and contradiction_class(docs[2 * i + 1], docs[2 * i]) is None
]
sets["other_contradictions"] = pd.DataFrame(other)

for name, frame in sets.items():
    with open(out / f"{name}.jsonl", "w") as f:
        for r in frame.itertuples():
            f.write(json.dumps({"id": r.id, "ref": r.ref, "gen": r.gen}) + "\n")

print(
    "| checkpoint | val paraphrases read as NoContr | val contradictions | AUROC | other contradictions |"
)
print("|---|---|---|---|---|")
for label, checkpoint in checkpoints.items():
    p = {}
    for name in sets:
        predicted = out / f"{name}.{label}.jsonl"
        subprocess.run(
            ["mismatch", "predict", "--input", str(out / f"{name}.jsonl"), "--checkpoint",
             checkpoint, "--no-spans", "--output", str(predicted)],
            check=True, capture_output=True,
        )  # fmt: skip
        p[name] = [json.loads(line)["mismatch"]["NoContr"] for line in open(predicted)]
    para, con, oth = p["val_paraphrases"], p["val_contradictions"], p["other_contradictions"]
    auroc = roc_auc_score([1] * len(para) + [0] * len(con), para + con)
    print(
        f"| {label} | {sum(x >= 0.5 for x in para)} / {len(para)} | {sum(x >= 0.5 for x in con)} / {len(con)} "
        f"| {auroc:.4f} | {sum(x >= 0.5 for x in oth)} / {len(oth)} ({100 * sum(x >= 0.5 for x in oth) / len(oth):.1f} %) |"
    )
