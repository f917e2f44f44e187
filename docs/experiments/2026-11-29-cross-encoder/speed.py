"""What the cross-encoder would add to `mismatch predict`: `mismatch bench predict`'s pairs
(2,000 real pairs, seed 13), timed in one process, round robin, best of two: our predict (with
spans, as the bench times it), bert_score.score with the same MiniLM, and the cross-encoder's
pass over the same pairs (batches of 64, length-sorted, as bench_xenc.py reads them), also
with its linear layers quantized to int8 (torch's dynamic quantization: a measure of what a
cheaper reader could save; its readings were not read on real text).

    python speed.py XENC_DIR
"""

import sys
import time
from pathlib import Path

from cross_encoder import CrossEncoder

from evaluator.cli.bench.predict import CHECKPOINT, ROUNDS, WARMUP_PAIRS, bench_pairs
from evaluator.evaluator import Evaluator
from mismatch_core.resources import encoder_path

xenc_dir = Path(sys.argv[1])
xenc, xenc_int8 = CrossEncoder(xenc_dir), CrossEncoder(xenc_dir, int8=True)
refs, gens = bench_pairs(2000, 13)
evaluator = Evaluator.from_pretrained(CHECKPOINT)


def ours(r: list[str], g: list[str]) -> None:
    evaluator.predict(r, g, batch_size=64, progress=False)


def theirs(r: list[str], g: list[str]) -> None:
    import bert_score

    bert_score.score(g, r, model_type=encoder_path(), num_layers=6, batch_size=64)


runs = {
    "predict": ours,
    "bert_score.score": theirs,
    "cross-encoder": xenc.same_meaning,
    "cross-encoder int8": xenc_int8.same_meaning,
}
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
print(f"predict alone: {best['predict'] / best['bert_score.score']:.2f} x bert_score's time")
for name in ("cross-encoder", "cross-encoder int8"):
    with_xenc = best["predict"] + best[name]
    print(
        f"predict + {name}: {len(refs) / with_xenc:.1f} pairs/s, "
        f"{with_xenc / best['bert_score.score']:.2f} x bert_score's time"
    )
