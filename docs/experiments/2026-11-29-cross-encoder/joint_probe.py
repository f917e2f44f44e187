"""The cheap form, probed on the training side: MiniLM's layers K.. run jointly over the two
texts' layer-K states (each text encoded alone below K, as the shared encoder pass of predict
computes it), a learned segment embedding telling the texts apart, mean-pooled into three
classes (as xenc_train.py, SICK TRAIN alone, the same pairs left out).

    python joint_probe.py REAL_VAL SICK_TRAIN K EPOCHS OUT [LEARNING_RATE]

Prints the AUROC of P(same meaning) for the real val split's SICK paraphrases against its
contradictions and against the other contradictions.
"""

import copy
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sick_sets import sick_sets
from sklearn.metrics import roc_auc_score
from torch import nn

from mismatch_core.resources import load_encoder

torch.manual_seed(0)
real_val, sick_train, k = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
epochs, out = int(sys.argv[4]), Path(sys.argv[5])
learning_rate = float(sys.argv[6]) if len(sys.argv) > 6 else 5e-5
val = pd.read_parquet(real_val)
train, held_out = sick_sets(val, sick_train)
para, con, oth = held_out["para"], held_out["con"], held_out["oth"]
tokenizer, encoder = load_encoder("all-MiniLM-L6-v2", "cpu")
texts = sorted(
    {t for r, g, _ in train for t in (r, g)}
    | {t for frame in (para, con, oth) for t in (*frame.ref, *frame.gen)}
)
states = {}
with torch.inference_mode():
    for i in range(0, len(texts), 64):
        chunk = texts[i : i + 64]
        batch = tokenizer(chunk, padding=True, return_tensors="pt")
        hidden = encoder(**batch, output_hidden_states=True).hidden_states[k]
        for j, text in enumerate(chunk):
            states[text] = hidden[j, : int(batch["attention_mask"][j].sum())].clone()


class Joint(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        top = range(k, encoder.config.num_hidden_layers)
        self.layers = nn.ModuleList(copy.deepcopy(encoder.encoder.layer[i]) for i in top)
        self.segment = nn.Embedding(2, encoder.config.hidden_size)
        nn.init.zeros_(self.segment.weight)
        self.out = nn.Linear(encoder.config.hidden_size, 3)

    def forward(self, refs: list[str], gens: list[str]) -> torch.Tensor:
        rows = [
            torch.cat([states[r] + self.segment.weight[0], states[g] + self.segment.weight[1]])
            for r, g in zip(refs, gens, strict=True)
        ]
        x = torch.zeros(len(rows), max(len(row) for row in rows), rows[0].shape[1])
        mask = torch.zeros(x.shape[:2])
        for i, row in enumerate(rows):
            x[i, : len(row)] = row
            mask[i, : len(row)] = 1
        additive = (1.0 - mask)[:, None, None, :] * torch.finfo(x.dtype).min
        for layer in self.layers:
            y = layer(x, attention_mask=additive)
            x = y[0] if isinstance(y, tuple) else y
        return self.out((x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))


model = Joint()
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
steps = epochs * ((len(train) + 31) // 32)
schedule = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, 1 - s / steps)
)
rng = np.random.default_rng(0)
start = time.time()
for epoch in range(epochs):
    model.train()
    order, total = rng.permutation(len(train)), 0.0
    for i in range(0, len(order), 32):
        chunk = [train[j] for j in order[i : i + 32]]
        logits = model([c[0] for c in chunk], [c[1] for c in chunk])
        loss = nn.functional.cross_entropy(logits, torch.tensor([c[2] for c in chunk]))
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        total += loss.item() * len(chunk)
    print(f"epoch {epoch}: loss {total / len(train):.4f}, {time.time() - start:.0f} s", flush=True)
model.eval()
with torch.no_grad():
    pp, pc, po = (
        torch.softmax(model(list(f.ref), list(f.gen)), -1)[:, 0].numpy() for f in (para, con, oth)
    )
held_auroc = roc_auc_score([1] * len(pp) + [0] * len(pc), np.r_[pp, pc])
other_auroc = roc_auc_score([1] * len(pp) + [0] * len(po), np.r_[pp, po])
print(f"AUROC paraphrases vs contradictions {held_auroc:.4f}, vs other {other_auroc:.4f}")
out.mkdir(parents=True, exist_ok=True)
np.savez(out / "probs.npz", para=pp, con=pc, oth=po)
