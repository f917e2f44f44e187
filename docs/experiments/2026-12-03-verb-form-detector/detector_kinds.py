"""A detector's `disfluency` feature (gen's logit minus the text's) on the broken verb forms of
each kind and on the simple-aspect twin ("is cooking" -> "cooks"), and the AUROC of each kind
against the twin.

    python docs/experiments/2026-12-03-verb-form-detector/detector_kinds.py DETECTOR_DIR...
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

import evaluator.features.disfluency as disfluency
from evaluator.features.encoder_pass import encode_distinct

sys.path.insert(0, str(Path(__file__).parent))
from verb_form_kinds import KINDS, corpus_pairs, kind  # noqa: E402


def auroc(twin: np.ndarray, broken: np.ndarray) -> float:
    return roc_auc_score([0] * len(twin) + [1] * len(broken), np.r_[twin, broken])


sets = corpus_pairs()
kinds = np.array([kind(ref, gen) for ref, gen in sets["verb_form"]])
kinds[~np.isin(kinds, KINDS)] = "other kinds"  # a changed -ing after be, an -ing made finite, ...
for path in sys.argv[1:]:
    for cached in (disfluency.load_detector, disfluency.detector_digest):
        cached.cache_clear()
        cached.__wrapped__.__defaults__ = (path,)  # the encoder pass reads this detector
    feature = {}
    for name, pairs in sets.items():
        encoded = encode_distinct(
            [t for pair in pairs for t in pair], keep_tokens=False, keep_disfluency=True
        )
        feature[name] = np.array(
            [encoded[gen].disfluency - encoded[ref].disfluency for ref, gen in pairs]
        )
    broken, twin = feature["verb_form"], feature["progressive_to_simple"]

    print(
        f"{path}: twin mean {twin.mean():+.2f} (> 1: {(twin > 1).mean():.1%}, {len(twin)}); "
        f"broken mean {broken.mean():+.2f} (> 1: {(broken > 1).mean():.1%}, {len(broken)}); AUROC {auroc(twin, broken):.3f}"
    )
    for name in (*KINDS, "other kinds"):
        values = broken[kinds == name]
        print(
            f"    {name:36s} {len(values):4d}  > 1: {(values > 1).mean():6.1%}  > 2: {(values > 2).mean():6.1%}"
            f"  mean {values.mean():+6.2f}  AUROC vs twin {auroc(twin, values):.3f}",
            flush=True,
        )
