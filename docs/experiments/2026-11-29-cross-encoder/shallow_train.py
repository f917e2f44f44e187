"""Train a shallow cross-encoder (the first LAYERS layers of a trained one) by distillation:
the same training examples as xenc_train.py's `sick+real`, each loss half the hard label's
cross-entropy and half the KL divergence to the teacher's class probabilities.

    python shallow_train.py PAIRS_DIR SICK_TRAIN TEACHER_DIR OUT EPOCHS LAYERS LEARNING_RATE [RANK]

The student starts from the teacher's first LAYERS layers, pooler, head and token-type
embeddings (the one-epoch 2-layer run of MiniLM's own layers read no pair as "same meaning");
its word and position embeddings are MiniLM's own, frozen, so what it adds to the package is
its layers and head (the encoder is shipped already). The teacher's probabilities of the
training examples are cached in OUT/teacher.npy. With RANK (needs peft on the path, not a
project dependency) the layers are MiniLM's own, frozen, with low-rank adapters of that rank
on their linear layers (peft's LoRA), so only the adapters, pooler, head and token-type
embeddings train; the adapters are merged into the layers before saving. Saves OUT/model and
OUT/readings.npz as xenc_train.py does, and OUT/readings_int8.npz, the same read with its
linear layers quantized to int8 (torch's dynamic quantization, as cross_encoder.py does).
"""

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from batches import length_pooled
from sick_sets import sick_sets
from transformers import AutoModel, AutoTokenizer, BertForSequenceClassification

from mismatch_core.resources import encoder_path

BATCH, MAX_LENGTH = 32, 256

pairs, sick_train, teacher_dir, out = (Path(a) for a in sys.argv[1:5])
epochs, layers, learning_rate = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
rank = int(sys.argv[8]) if len(sys.argv) > 8 else 0
torch.manual_seed(0)
val = pd.read_parquet(pairs / "real" / "val.parquet")
train, held_out = sick_sets(val, sick_train)
real = pd.read_parquet(pairs / "real" / "train.parquet")
train += [
    (ref, gen, 0 if code == "NoContr" else 2)
    for ref, gen, code in zip(real.ref, real.gen, real.label, strict=True)
]
print("training examples per class", np.bincount([t[2] for t in train]), flush=True)
tokenizer = AutoTokenizer.from_pretrained(teacher_dir / "model")


def encoded(refs: list[str], gens: list[str]) -> dict:
    return tokenizer(
        refs, gens, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt"
    )


@torch.no_grad()
def probabilities(model: torch.nn.Module, refs: list[str], gens: list[str]) -> np.ndarray:
    """Class probabilities in length-sorted batches of 64, in the order given."""
    order = sorted(range(len(refs)), key=lambda i: len(refs[i]) + len(gens[i]))
    p = np.zeros((len(refs), 3), dtype=np.float32)
    for i in range(0, len(order), 64):
        chunk = order[i : i + 64]
        logits = model(**encoded([refs[j] for j in chunk], [gens[j] for j in chunk])).logits
        p[chunk] = torch.softmax(logits, -1).numpy()
    return p


out.mkdir(parents=True, exist_ok=True)
start = time.time()
if not (out / "teacher.npy").exists():
    teacher = BertForSequenceClassification.from_pretrained(teacher_dir / "model").eval()
    soft = probabilities(teacher, [t[0] for t in train], [t[1] for t in train])
    np.save(out / "teacher.npy", soft)
    del teacher
    print(f"teacher read the training examples: {time.time() - start:.0f} s", flush=True)
soft = np.load(out / "teacher.npy")
model = BertForSequenceClassification.from_pretrained(
    teacher_dir / "model", num_hidden_layers=layers
)
minilm = AutoModel.from_pretrained(encoder_path())
for name in ("word_embeddings", "position_embeddings"):
    table = getattr(model.bert.embeddings, name)
    table.weight.data.copy_(getattr(minilm.embeddings, name).weight.data)
    table.weight.requires_grad = False
if rank:
    from peft import LoraConfig, get_peft_model

    for student, own in zip(model.bert.encoder.layer, minilm.encoder.layer, strict=False):
        student.load_state_dict(own.state_dict())
    adapters = LoraConfig(
        r=rank,
        lora_alpha=2 * rank,
        lora_dropout=0.1,
        target_modules=["query", "key", "value", "output.dense", "intermediate.dense"],
        modules_to_save=["pooler", "classifier", "token_type_embeddings"],
    )
    model = get_peft_model(model, adapters)
del minilm
trained = [p for p in model.parameters() if p.requires_grad]
print(f"trained parameters: {sum(p.numel() for p in trained):,}", flush=True)
optimizer = torch.optim.AdamW(trained, lr=learning_rate, weight_decay=0.01)
steps = epochs * ((len(train) + BATCH - 1) // BATCH)
warmup = 0.1 * steps  # linear warm-up over a tenth of the steps, then linear decay
schedule = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps)
)
rng = np.random.default_rng(0)
lengths = [len(ref) + len(gen) for ref, gen, _ in train]
model.train()
for epoch in range(epochs):
    total = 0.0
    for step, indices in enumerate(length_pooled(lengths, BATCH, rng)):
        if step % 200 == 0:
            print(f"epoch {epoch}, batch {step}: {time.time() - start:.0f} s", flush=True)
        chunk = [train[j] for j in indices]
        logits = model(**encoded([c[0] for c in chunk], [c[1] for c in chunk])).logits
        hard = torch.nn.functional.cross_entropy(logits, torch.tensor([c[2] for c in chunk]))
        distilled = torch.nn.functional.kl_div(
            torch.log_softmax(logits, -1), torch.from_numpy(soft[indices]), reduction="batchmean"
        )
        loss = 0.5 * hard + 0.5 * distilled
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        total += hard.item() * len(chunk)
    print(
        f"epoch {epoch}: hard-label loss {total / len(train):.4f}, {time.time() - start:.0f} s",
        flush=True,
    )
if rank:
    model = model.merge_and_unload()
model.eval()
sets = {**held_out, "val": val}
model.save_pretrained(out / "model")
tokenizer.save_pretrained(out / "model")
readings = {name: probabilities(model, list(f.ref), list(f.gen)) for name, f in sets.items()}
np.savez(out / "readings.npz", **readings)
int8 = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
readings = {name: probabilities(int8, list(f.ref), list(f.gen)) for name, f in sets.items()}
np.savez(out / "readings_int8.npz", **readings)
print(f"saved {out}")
