"""Here: float16 shards + small files from the device -> a float32 checkpoint folder whose
encoder name is the packaged MiniLM (the device's path does not exist here)."""

import json
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
tensors = {}
for f in sorted(src.iterdir()):
    if f.name.startswith("shard"):
        tensors.update(
            {k: v.float() if v.is_floating_point() else v for k, v in load_file(f).items()}
        )
    elif f.is_file():
        shutil.copy(f, dst / f.name)
chunked = sorted({k.split("@")[0] for k in tensors if "@" in k})
for name in chunked:
    parts = sorted(
        (int(k.split("@")[1]), k) for k in tensors if k.split("@")[0] == name and "@" in k
    )
    tensors[name] = torch.cat([tensors.pop(k) for _, k in parts])
save_file(tensors, dst / "model.safetensors", metadata={"format": "pt"})
config = json.loads((dst / "config.json").read_text())


def patch(node):
    if isinstance(node, dict):
        return {
            k: (
                "all-MiniLM-L6-v2"
                if k == "encoder" and isinstance(v, str) and v.startswith("/tmp/")
                else patch(v)
            )
            for k, v in node.items()
        }
    return node


(dst / "config.json").write_text(json.dumps(patch(config), indent=2))
print(len(tensors), "tensors ->", dst)
