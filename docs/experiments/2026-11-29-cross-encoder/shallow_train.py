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
from cross_encoder import model_probabilities, quantized
from sick_sets import sick_sets
from training import train_epochs
from transformers import AutoModel, AutoTokenizer, BertForSequenceClassification

from mismatch_core.resources import encoder_path

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


out.mkdir(parents=True, exist_ok=True)
if not (out / "teacher.npy").exists():
    start = time.time()
    teacher = BertForSequenceClassification.from_pretrained(teacher_dir / "model").eval()
    soft = model_probabilities(teacher, tokenizer, [t[0] for t in train], [t[1] for t in train])
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
print(f"trained parameters: {sum(p.numel() for p in model.parameters() if p.requires_grad):,}")


def distillation(logits: torch.Tensor, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Half the hard label's cross-entropy, half the KL divergence to the teacher."""
    hard = torch.nn.functional.cross_entropy(logits, torch.tensor([train[j][2] for j in indices]))
    distilled = torch.nn.functional.kl_div(
        torch.log_softmax(logits, -1), torch.from_numpy(soft[indices]), reduction="batchmean"
    )
    return 0.5 * hard + 0.5 * distilled, hard


train_epochs(model, tokenizer, train, epochs, learning_rate, distillation)
if rank:
    model = model.merge_and_unload().eval()
sets = {**held_out, "val": val}
model.save_pretrained(out / "model")
tokenizer.save_pretrained(out / "model")
for name, reader in (("readings.npz", model), ("readings_int8.npz", quantized(model))):
    readings = {key: model_probabilities(reader, tokenizer, list(f.ref), list(f.gen)) for key, f in sets.items()}
    np.savez(out / name, **readings)
print(f"saved {out}")
