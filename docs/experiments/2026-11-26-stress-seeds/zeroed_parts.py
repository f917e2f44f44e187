"""Copies of a task checkpoint with one rating part zeroed: python zeroed_parts.py CKPT OUT"""

import json
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

src = Path(sys.argv[1])
out = Path(sys.argv[2])
cfg = json.loads((src / "config.json").read_text())
names = cfg["architecture"]["feature_names"]


def variant(name, edit):
    s = load_file(src / "model.safetensors")
    edit(s)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    save_file(s, d / "model.safetensors")
    shutil.copy(src / "config.json", d / "config.json")


def zero(*keys):
    def f(s):
        for k in keys:
            s[k] = torch.zeros_like(s[k])

    return f


def zero_column(col):
    def f(s):
        i = names.index(col)
        for k in ("metric_rating.weight", "ridge_rating.weight"):
            s[k][:, i] = 0

    return f


variant("full", lambda s: None)
variant("no_mismatch_map", zero("mismatch_rating.weight"))
variant("no_mlp", zero("rating_head.3.weight", "rating_head.3.bias"))
variant("no_metric_maps", zero("metric_rating.weight", "ridge_rating.weight"))
if "disfluency" in names:
    variant("no_disfluency_linear", zero_column("disfluency"))
print(names[-3:])
