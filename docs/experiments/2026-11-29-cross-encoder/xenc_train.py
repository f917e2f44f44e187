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
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from batches import length_pooled
from sick_sets import sick_sets
from transformers import AutoTokenizer, BertForSequenceClassification

from mismatch_core.resources import encoder_path

BATCH, LEARNING_RATE, MAX_LENGTH = 32, 5e-5, 256

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
optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
steps = epochs * ((len(train) + BATCH - 1) // BATCH)
warmup = 0.1 * steps  # linear warm-up over a tenth of the steps, then linear decay
schedule = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps)
)


def encoded(refs: list[str], gens: list[str]) -> dict:
    return tokenizer(
        refs, gens, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt"
    )


rng = np.random.default_rng(0)
lengths = [len(ref) + len(gen) for ref, gen, _ in train]
start = time.time()
model.train()
for epoch in range(epochs):
    total = 0.0
    for step, indices in enumerate(length_pooled(lengths, BATCH, rng)):
        if step % 200 == 0:
            print(f"epoch {epoch}, batch {step}: {time.time() - start:.0f} s", flush=True)
        chunk = [train[j] for j in indices]
        batch = encoded([c[0] for c in chunk], [c[1] for c in chunk])
        loss = model(**batch, labels=torch.tensor([c[2] for c in chunk])).loss
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        total += loss.item() * len(chunk)
    print(f"epoch {epoch}: loss {total / len(train):.4f}, {time.time() - start:.0f} s", flush=True)
model.eval()


@torch.no_grad()
def probabilities(frame: pd.DataFrame) -> np.ndarray:
    refs, gens = list(frame.ref), list(frame.gen)
    return np.concatenate(
        [
            torch.softmax(model(**encoded(refs[i : i + 64], gens[i : i + 64])).logits, -1).numpy()
            for i in range(0, len(refs), 64)
        ]
    )


sets = {**held_out, "val": val}
out.mkdir(parents=True, exist_ok=True)
model.save_pretrained(out / "model")
tokenizer.save_pretrained(out / "model")
np.savez(out / "readings.npz", **{name: probabilities(frame) for name, frame in sets.items()})
print(f"saved {out}")
