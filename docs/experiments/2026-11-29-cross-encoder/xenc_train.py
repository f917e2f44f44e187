"""Fine-tune MiniLM as a cross-encoder (the two texts read jointly, one input) on SICK TRAIN,
with the real train split too for `sick+real`; save it and its readings of the training side.

    python xenc_train.py PAIRS_DIR SICK_TRAIN OUT EPOCHS {sick|sick+real}

Classes: 0 the same meaning (a SICK two-way entailment; a real pair labelled NoContr), 1 a
SICK pair that is neither, 2 a SICK contradiction (a real error pair, for `sick+real`). SICK
pairs are read both ways. Left out of training: SICK TRAIN pairs of the real val split's groups
and the contradictions that no training pair of the base holds (`other`, 143), so both stay
held out here as they are for the base. PAIRS_DIR holds the base's continuation inputs
(`real/{train,val}.parquet`, as ../2026-11-29-token-head/run.sh builds them).

Saves OUT/model (a transformers folder) and OUT/readings.npz: the three class probabilities
of the real val split's SICK paraphrases (`para`), its SICK contradictions (`con`), the other
contradictions (`oth`) and the whole real val split (`val`).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from cross_encoder import model_probabilities
from sick_sets import sick_sets
from training import hard_labels, train_epochs
from transformers import AutoTokenizer, BertForSequenceClassification

from mismatch_core.resources import encoder_path

LEARNING_RATE = 5e-5

pairs, sick_train, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
epochs, data = int(sys.argv[4]), sys.argv[5]
if data not in ("sick", "sick+real"):
    sys.exit(f"DATA must be sick or sick+real, got {data!r}")
torch.manual_seed(0)
val = pd.read_parquet(pairs / "real" / "val.parquet")
train, held_out = sick_sets(val, sick_train)
if data == "sick+real":
    real = pd.read_parquet(pairs / "real" / "train.parquet")
    train += [
        (ref, gen, 0 if code == "NoContr" else 2)
        for ref, gen, code in zip(real.ref, real.gen, real.label, strict=True)
    ]
print("training examples per class", np.bincount([t[2] for t in train]), flush=True)
tokenizer = AutoTokenizer.from_pretrained(encoder_path())
model = BertForSequenceClassification.from_pretrained(encoder_path(), num_labels=3)
train_epochs(model, tokenizer, train, epochs, LEARNING_RATE, hard_labels(train))
sets = {**held_out, "val": val}
out.mkdir(parents=True, exist_ok=True)
model.save_pretrained(out / "model")
tokenizer.save_pretrained(out / "model")
readings = {
    name: model_probabilities(model, tokenizer, list(f.ref), list(f.gen))
    for name, f in sets.items()
}
np.savez(out / "readings.npz", **readings)
print(f"saved {out}")
