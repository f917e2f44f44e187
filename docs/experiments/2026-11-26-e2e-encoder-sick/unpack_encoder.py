"""Device side: the int8 copy -> a float32 MiniLM directory (unused word rows zero)."""

import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
shutil.copytree(src, dst, dirs_exist_ok=True)
packed = load_file(src / "model.safetensors")
out = {}
for k, v in packed.items():
    if k.endswith(".q"):
        name = k[:-2]
        w = v.float() * packed[name + ".s"].float()
        if name.endswith("word_embeddings.weight"):
            full = torch.zeros(*packed["vocab_size"].tolist())
            full[packed["used_rows"]] = w
            w = full
        out[name] = w
    elif not k.endswith(".s") and k not in ("used_rows", "vocab_size"):
        out[k] = v.float()
save_file(out, dst / "model.safetensors", metadata={"format": "pt"})
print("unpacked", len(out), "tensors")
