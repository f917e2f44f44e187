"""SICK TRAIN: the shipped base's P(NoContr) on two-way entailments vs contradictions, and
what a threshold chosen there gives (analysis; TRIAL is not read)."""


import numpy as np
from sklearn.metrics import roc_auc_score

from evaluator import Evaluator
from evaluator.realtext_data import load_sick
from mismatch_core.resources import data_dir

pairs = load_sick(data_dir() / "sick/sick_train.jsonl.gz")
para = [p for p in pairs if p.paraphrase]
contra = [p for p in pairs if p.contradiction]
print(len(pairs), len(para), len(contra))
ev = Evaluator.from_pretrained("checkpoints/mismatch-base")


def p_nocontr(ps):
    out = ev.predict([p.ref for p in ps], [p.gen for p in ps], progress=False)
    return np.array([o.mismatch["NoContr"] for o in out])


a, b = p_nocontr(para), p_nocontr(contra)
print("AUROC", roc_auc_score(np.r_[np.ones(len(a)), np.zeros(len(b))], np.r_[a, b]))
for q in (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001):
    print(f"t={q}: para recall {np.mean(a >= q):.3f} contra as NoContr {np.mean(b >= q):.3f}")
