"""Here: MiniLM -> int8 rows (per-row scale) of the layers and of the word-embedding rows that
the given texts use, small enough to travel with the repository (analysis tool, not shipped)."""

import shutil
import sys
from pathlib import Path

import pandas as pd
import torch
from safetensors.torch import load_file, save_file
from transformers import AutoTokenizer

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
texts = []
for f in sys.argv[3:]:
    df = pd.read_parquet(f) if f.endswith(".parquet") else pd.read_json(f, lines=True)
    for c in ("ref", "gen", "a", "b"):
        if c in df:
            texts += df[c].astype(str).tolist()
tok = AutoTokenizer.from_pretrained(src)
used = set(tok.all_special_ids)
for i in range(0, len(texts), 4096):
    for ids in tok(texts[i : i + 4096], truncation=True, max_length=128)["input_ids"]:
        used.update(ids)
used = torch.tensor(sorted(used))
shutil.copytree(
    src,
    dst,
    dirs_exist_ok=True,
    ignore=shutil.ignore_patterns("model.safetensors", "README.md", "data_config.json"),
)
out = {}
for k, v in load_file(src / "model.safetensors").items():
    if k.endswith("word_embeddings.weight"):
        out["used_rows"] = used
        out["vocab_size"] = torch.tensor(v.shape)
        v = v[used]
    if v.dim() == 2:
        scale = v.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
        out[k + ".q"] = torch.round(v / scale).to(torch.int8)
        out[k + ".s"] = scale.half()
    else:
        out[k] = v.half()
save_file(out, dst / "model.safetensors")
print("texts", len(texts), "used rows", len(used))
