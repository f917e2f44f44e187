"""Which input makes a long exact copy read as an error, with the scaler as it was (format 2,
density kept to the margin): each input of a 220-word copy swapped for a 140-word copy's.
Usage, from the repository root: python docs/experiments/2026-11-30-long-copies/diagnose.py"""

import gzip
import json

import numpy as np
import torch

from evaluator.features import compute_features, pair_key
from evaluator.hub import load
from evaluator.inference import _text_inputs
from mismatch_core.resources import data_dir
from mismatch_core.taxonomy import CODES

checkpoint = load("checkpoints/mismatch-base")
checkpoint.scaler.clipped = ()  # as format 2 read it
model, config = checkpoint.model.eval(), checkpoint.model.config
with gzip.open(data_dir() / "human" / "summarization" / "summeval.jsonl.gz", "rt") as handle:
    words = next(w for w in (json.loads(line)["src"].split() for line in handle) if len(w) >= 250)
lengths = [60, 100, 140, 160, 180, 190, 200, 220, 250]
texts = [" ".join(words[:n]) for n in lengths]
embeddings, alignments = {}, {}
frame = compute_features(texts, texts, names=config.feature_names, encoder=config.encoder,
                         embeddings_out=embeddings, num_layers=checkpoint.num_layers,
                         alignments_out=alignments)  # fmt: skip
features = torch.from_numpy(checkpoint.scaler.transform(frame))
ref, gen = _text_inputs(checkpoint, texts, texts, embeddings, 64, "cpu")(slice(0, len(texts)))
alignment = torch.from_numpy(np.stack([alignments[pair_key(t, t)] for t in texts]))


def read(features, ref, gen, alignment):
    with torch.no_grad():
        representation = model.represent(features=features, ref=ref, gen=gen, alignment=alignment)
        logits, _, _ = model.read_heads(representation, features, None, None)
    return logits.softmax(-1)


probabilities = read(features, ref, gen, alignment)
for i, n in enumerate(lengths):
    top = int(probabilities[i].argmax())
    print(f"copy of {n} words: P(NoContr) {probabilities[i, 0]:.3f}, top {CODES[top]}, "
          f"density {frame['density'].iloc[i]:.0f} (scaled {features[i, config.feature_names.index('density')]:.2f})")
short, long = lengths.index(140), lengths.index(220)
for swapped in ("features", "embeddings", "alignment"):
    inputs = [features.clone(), ref.clone(), gen.clone(), alignment.clone()]
    if swapped == "features":
        inputs[0][long] = features[short]
    if swapped == "embeddings":
        inputs[1][long], inputs[2][long] = ref[short], gen[short]
    if swapped == "alignment":
        inputs[3][long] = alignment[short]
    p = read(*inputs)[long]
    print(f"220 words with the 140-word copy's {swapped}: P(NoContr) {p[0]:.3f}, top {CODES[int(p.argmax())]}")
gap = (features[long] - features[short]).abs()
print("features that differ most (scaled):", ", ".join(
    f"{config.feature_names[j]} {features[short, j]:.2f} -> {features[long, j]:.2f}"
    for j in gap.argsort(descending=True)[:3].tolist()))
