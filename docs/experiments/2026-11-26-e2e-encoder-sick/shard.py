"""Device side: a checkpoint folder -> float16 shards of <= 15 MB plus its small files, in OUT.
A tensor above 15 MB travels in row chunks named NAME@i."""

import shutil
import sys
from pathlib import Path

from safetensors.torch import load_file, save_file

LIMIT = 15_000_000
src, out = Path(sys.argv[1]), Path(sys.argv[2]) / "ckpt"
out.mkdir(parents=True, exist_ok=True)
for f in src.iterdir():
    if f.is_file() and f.name != "model.safetensors":
        shutil.copy(f, out / f.name)
pieces = []
for k, v in load_file(src / "model.safetensors").items():
    v = v.half() if v.is_floating_point() else v
    nbytes = v.numel() * v.element_size()
    if nbytes > LIMIT:
        rows = max(1, v.shape[0] * LIMIT // (2 * nbytes))
        pieces += [(f"{k}@{i}", c) for i, c in enumerate(v.split(rows))]
    else:
        pieces.append((k, v))
shard, size, n = {}, 0, 0
for k, v in pieces:
    b = v.numel() * v.element_size()
    if size + b > LIMIT and shard:
        save_file(shard, out / f"shard{n}.safetensors")
        shard, size, n = {}, 0, n + 1
    shard[k] = v.contiguous()
    size += b
save_file(shard, out / f"shard{n}.safetensors")
print("files", sorted((p.name, p.stat().st_size) for p in out.iterdir()))
