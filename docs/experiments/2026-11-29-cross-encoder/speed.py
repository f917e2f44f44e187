"""What the cross-encoder would add to `mismatch predict`: `mismatch bench predict`'s pairs
(2,000 real pairs, seed 13), timed in one process, round robin, best of two: our predict (with
spans, as the bench times it), bert_score.score with the same MiniLM, and the cross-encoder's
pass over the same pairs (batches of 64, length-sorted, as bench_xenc.py reads them).

    python speed.py XENC_DIR
"""

import sys
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoTokenizer, BertForSequenceClassification

from evaluator.cli.bench.predict import CHECKPOINT, ROUNDS, WARMUP_PAIRS, bench_pairs
from evaluator.evaluator import Evaluator
from mismatch_core.resources import encoder_path

xenc_dir = Path(sys.argv[1])
tokenizer = AutoTokenizer.from_pretrained(xenc_dir / "model")
xenc = BertForSequenceClassification.from_pretrained(xenc_dir / "model").eval()
refs, gens = bench_pairs(2000, 13)
evaluator = Evaluator.from_pretrained(CHECKPOINT)


def ours(r: list[str], g: list[str]) -> None:
    evaluator.predict(r, g, batch_size=64, progress=False)


def theirs(r: list[str], g: list[str]) -> None:
    import bert_score

    bert_score.score(g, r, model_type=encoder_path(), num_layers=6, batch_size=64)


@torch.no_grad()
def cross(r: list[str], g: list[str]) -> None:
    order = sorted(range(len(r)), key=lambda i: len(r[i]) + len(g[i]))
    p = np.zeros(len(r))
    for i in range(0, len(order), 64):
        chunk = order[i : i + 64]
        batch = tokenizer(
            [r[j] for j in chunk],
            [g[j] for j in chunk],
            padding=True,
            truncation=True,
            max_length=256,
            return_tensors="pt",
        )
        p[chunk] = torch.softmax(xenc(**batch).logits, -1)[:, 0].numpy()


runs = {"predict": ours, "bert_score.score": theirs, "cross-encoder": cross}
for run in runs.values():
    run(refs[:WARMUP_PAIRS], gens[:WARMUP_PAIRS])
times: dict[str, list[float]] = {name: [] for name in runs}
for _ in range(ROUNDS):
    for name, run in runs.items():
        start = time.perf_counter()
        run(refs, gens)
        times[name].append(time.perf_counter() - start)
best = {name: min(seconds) for name, seconds in times.items()}
for name, seconds in best.items():
    print(f"{name:<18} {seconds:7.1f} s  {len(refs) / seconds:6.1f} pairs/s")
with_xenc = best["predict"] + best["cross-encoder"]
print(
    f"predict + cross-encoder: {len(refs) / with_xenc:.1f} pairs/s, "
    f"{with_xenc / best['bert_score.score']:.2f} x bert_score's time "
    f"(predict alone {best['predict'] / best['bert_score.score']:.2f} x)"
)
