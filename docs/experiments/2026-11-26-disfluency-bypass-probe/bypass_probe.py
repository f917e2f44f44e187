"""Probe: the shipped base, frozen, plus one linear term per class in the disfluency score.

    python bypass_probe.py REAL REAL_FEATURES SYNTH SYNTH_FEATURES [--darr]

REAL and SYNTH hold the adapt pair files (`train.parquet`, `val.parquet`). Each *_FEATURES
folder holds their feature caches with a `disfluency` column, and `embeddings.parquet` and
`alignments.parquet`.

The corrected logits are log P(class) + w[class] * disfluency + b[class]: 28 numbers. They are
fitted by cross-entropy on the adapt train pairs, with NoContr weighted 3 as the shipped base's
adapt run chose. The figures are printed for four sets:
- the adapt val pairs;
- the realtext bench's held-out real bases (150 per dataset, seed 13, as
  `mismatch bench realtext` draws them);
- SICK TRIAL;
- with --darr, all WMT19 DARR pairs.
The last three are measurement only; nothing is chosen on them.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from evaluator.cli.bench.realtext import auroc, kendall_like_tau
from evaluator.features import EmbeddingStore, compute_features
from evaluator.hub import load
from evaluator.inference import predict_outputs
from evaluator.realtext_data import (
    DARR,
    SICK_TRIAL,
    load_bases,
    load_darr,
    load_sick,
    perturb_bases,
)
from evaluator.training.data import split_features
from evaluator.training.pair_inputs import InputStores, pair_inputs
from mismatch_core.pairs import read_pairs
from mismatch_core.resources import data_dir
from mismatch_core.taxonomy import CODES

NOCONTR_WEIGHT = 3.0  # the shipped base's adapt run chose this NoContr weight
real, real_features, synth, synth_features = sys.argv[1:5]
checkpoint = load("checkpoints/mismatch-base")
model = checkpoint.model.eval()


def cached(pairs_dir: str, features: str, split: str):
    """Base log-probabilities, disfluency and labels of one adapt split, from its caches."""
    path = Path(pairs_dir) / f"{split}.parquet"
    pairs = read_pairs(path, labelled=True)
    raw = split_features(
        pairs, f"{features}/{split}.parquet", checkpoint.feature_names, split, str(path)
    )
    stores = InputStores(
        EmbeddingStore.open(f"{features}/embeddings.parquet"),
        EmbeddingStore.open(f"{features}/alignments.parquet"),
        None,
        paths={},
    )
    inputs = pair_inputs(pairs, raw, checkpoint.scaler, stores, str(path))
    with torch.no_grad():
        logits = torch.cat(
            [model(**inputs.rows(slice(s, s + 1024))) for s in range(0, len(inputs), 1024)]
        )
    frame = pd.read_parquet(f"{features}/{split}.parquet").set_index("id")
    disfluency = frame.loc[pairs["id"], "disfluency"].to_numpy()
    return logits.log_softmax(-1).numpy(), disfluency, inputs.labels.numpy()


def score(refs: list[str], gens: list[str]):
    """Base log-probabilities and disfluency of pairs read the way predict reads them."""
    outputs = predict_outputs(checkpoint, refs, gens)
    disfluency = compute_features(refs, gens, names=["disfluency"]).to_numpy()[:, 0]
    return np.log(np.clip(outputs.probabilities, 1e-30, None)), disfluency


sets = {
    f"{name}_{split}": cached(d, f, split)
    for name, d, f in (("real", real, real_features), ("synth", synth, synth_features))
    for split in ("train", "val")
}
train = [np.concatenate([sets["real_train"][k], sets["synth_train"][k]]) for k in range(3)]
log_probs, disfluency, labels = (
    torch.tensor(train[0]),
    torch.tensor(train[1], dtype=torch.float32),
    torch.tensor(train[2]),
)
class_weight = torch.ones(len(CODES))
class_weight[0] = NOCONTR_WEIGHT
w = torch.zeros(len(CODES), requires_grad=True)
b = torch.zeros(len(CODES), requires_grad=True)
optimizer = torch.optim.LBFGS([w, b], max_iter=200)


def closure():
    optimizer.zero_grad()
    z = log_probs + disfluency[:, None] * w + b
    loss = torch.nn.functional.cross_entropy(z, labels, weight=class_weight)
    loss.backward()
    return loss


optimizer.step(closure)
print("w", {c: round(float(v), 3) for c, v in zip(CODES, w.detach(), strict=True)})
print("b", {c: round(float(v), 3) for c, v in zip(CODES, b.detach(), strict=True)})


def bypass(logp: np.ndarray, dis: np.ndarray) -> np.ndarray:
    z = (
        torch.tensor(logp)
        + torch.tensor(dis, dtype=torch.float32)[:, None] * w.detach()
        + b.detach()
    )
    return z.softmax(-1).numpy()


def both(logp, dis):
    return (("shipped", np.exp(logp)), ("bypass", bypass(logp, dis)))


gram = CODES.index("GramErr")
for name in ("real_val", "synth_val"):
    logp, dis, lab = sets[name]
    for tag, p in both(logp, dis):
        print(
            f"{name} {tag}: accuracy {(p.argmax(1) == lab).mean():.4f}, NoContr recall {(p[lab == 0, 0] >= 0.5).mean():.3f}, GramErr right {(p[lab == gram].argmax(1) == gram).mean():.3f}"
        )

records = [r for rs in load_bases(data_dir() / "human", 150, 13).values() for r in rs]
refs, gens = [r.refs[0] for r in records], [r.gen for r in records]
items = perturb_bases(refs, gens, [r.group for r in records], 13).items
base_scores = score(refs, gens)
changed_scores = score([refs[p.base] for p in items], [p.text for p in items])
owner = np.array([p.base for p in items])
codes = np.array([p.code for p in items])
for (tag, before), (_, after) in zip(both(*base_scores), both(*changed_scores), strict=True):
    drop = before[owner, 0] > after[:, 0]
    right = np.array(CODES)[1 + after[:, 1:].argmax(1)] == codes
    per_class = {c: right[codes == c].mean() for c in CODES[1:] if (codes == c).any()}
    print(
        f"real bases {tag}: read as NoContr {(before[:, 0] >= 0.5).mean():.3f}, drop {drop.mean():.3f} (GramErr {drop[codes == 'GramErr'].mean():.3f}), class mean {np.mean(list(per_class.values())):.3f}"
    )
    print("   ", {c: round(float(v), 3) for c, v in per_class.items()})

sick = load_sick(data_dir() / SICK_TRIAL)
paraphrase = np.array([p.paraphrase for p in sick])
contradiction = np.array([p.contradiction for p in sick])
for tag, p in both(*score([p.ref for p in sick], [p.gen for p in sick])):
    print(
        f"SICK TRIAL {tag}: recall {(p[paraphrase, 0] >= 0.5).mean():.3f}, contradictions as NoContr {(p[contradiction, 0] >= 0.5).mean():.3f}, AUROC {auroc(p[paraphrase, 0], p[contradiction, 0]):.3f}"
    )

if "--darr" in sys.argv:
    by_lp = load_darr(data_dir() / DARR, None, 13)
    pairs = [p for ps in by_lp.values() for p in ps]
    darr_refs = [p.ref for p in pairs] * 2
    darr_gens = [p.better for p in pairs] + [p.worse for p in pairs]
    distinct = list(dict.fromkeys(zip(darr_refs, darr_gens, strict=True)))
    row = {pair: i for i, pair in enumerate(distinct)}
    index = np.array([row[pair] for pair in zip(darr_refs, darr_gens, strict=True)])
    lps, n = np.array([p.lp for p in pairs]), len(pairs)
    for tag, p in both(*score([r for r, _ in distinct], [g for _, g in distinct])):
        s = p[index, 0]
        taus = {lp: kendall_like_tau(s[:n][lps == lp], s[n:][lps == lp]) for lp in by_lp}
        print(
            f"DARR {tag}: { ({k: round(v, 3) for k, v in taus.items()}) }, mean {np.mean(list(taus.values())):.3f}"
        )
