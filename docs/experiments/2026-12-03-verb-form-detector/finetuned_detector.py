"""Probe: would MiniLM fine-tuned whole (not a convolution over its frozen layer-3 states) find
the verb-form slips the shipped detector misses? Trains on the twins of
scripts/train_disfluency.py (the same inputs, seed and texts), one epoch, then prints the
script's val score and detector_split.py's figures on the same 3,000 corpus texts. Nothing is
saved; nothing reads it. STEPS (environment) stops the epoch after that many batches of 32:
on the 2-core CPU a batch takes about 2 s.

    STEPS=300 python docs/experiments/2026-12-03-verb-form-detector/finetuned_detector.py \
        TRAIN_PAIRS... -- VAL_PAIRS...
"""

import copy
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from torch.nn import functional

from mismatch_core.resources import load_encoder

sys.path.insert(0, str(Path(__file__).parent))
from verb_form_kinds import corpus_pairs  # noqa: E402

spec = importlib.util.spec_from_file_location("train_disfluency", "scripts/train_disfluency.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)

split = sys.argv.index("--")
train_paths, val_paths = sys.argv[1:split], sys.argv[split + 1 :]
started = time.time()
torch.manual_seed(13)
train = script.twins(script.clean_texts(train_paths, 12000, 13), 13)
val = script.twins(script.clean_texts(val_paths, 3000, 13), 14)
texts = [c for c, *_ in train] + [r for *_, r in train if r] + [b for _, b, _, _ in train]
labels = [0.0] * (len(texts) - len(train)) + [1.0] * len(train)
print(f"{len(train)} train twins, {len(texts)} texts, {time.time() - started:.0f} s", flush=True)

tokenizer, encoder = load_encoder()
model = copy.deepcopy(encoder).train()
head = torch.nn.Linear(model.config.hidden_size, 1)
optimizer = torch.optim.AdamW([*model.parameters(), *head.parameters()], lr=3e-5, weight_decay=0.01)


def logits(batch: list[str]) -> torch.Tensor:
    tokens = tokenizer(batch, padding=True, truncation=True, max_length=96, return_tensors="pt")
    states = model(**tokens).last_hidden_state
    mask = tokens["attention_mask"].unsqueeze(-1).float()
    return head((states * mask).sum(1) / mask.sum(1)).squeeze(-1)


def score(batch_texts: list[str]) -> np.ndarray:
    model.eval()
    with torch.inference_mode():
        out = [logits(batch_texts[s : s + 128]) for s in range(0, len(batch_texts), 128)]
    model.train()
    return torch.cat(out).numpy()


order = np.random.default_rng(13).permutation(len(texts))
batches = range(0, len(order), 32)  # one epoch, or its first STEPS batches
if "STEPS" in os.environ:
    batches = batches[: int(os.environ["STEPS"])]
for step, start in enumerate(batches):
    rows = order[start : start + 32]
    loss = functional.binary_cross_entropy_with_logits(
        logits([texts[i] for i in rows]), torch.tensor([labels[i] for i in rows])
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(f"step {step}, loss {loss.item():.3f}, {time.time() - started:.0f} s", flush=True)

broken = score([b for _, b, _, _ in val])
above = broken > score([c for c, *_ in val])
with_reworded = [k for k, twin in enumerate(val) if twin[3]]
above_reworded = broken[with_reworded] > score([val[k][3] for k in with_reworded])
verb = [k for k, twin in enumerate(val) if twin[2] == "GramErr/verb_form"]
print(
    f"val: broken above original {above.mean():.4f}, above reworded {above_reworded.mean():.4f}, "
    f"score {(above.mean() + above_reworded.mean()) / 2:.4f}; verb_form above original "
    f"{above[verb].mean():.4f} ({len(verb)})"
)

diffs = {}
for name, pairs in sorted(corpus_pairs().items()):  # progressive_to_simple, then verb_form
    diffs[name] = score([g for _, g in pairs]) - score([r for r, _ in pairs])
    diff = diffs[name]
    print(
        f"{name}: {len(diff)} texts, feature mean {diff.mean():+.2f}, above 0: {(diff > 0).mean():.1%}"
    )
harmless, broken_forms = diffs["progressive_to_simple"], diffs["verb_form"]
labels_ = [0] * len(harmless) + [1] * len(broken_forms)
print(f"AUROC broken vs harmless: {roc_auc_score(labels_, np.r_[harmless, broken_forms]):.3f}")
print(f"{time.time() - started:.0f} s")
