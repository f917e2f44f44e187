"""Would a cross-encoder fit the speed line if run by ONNX Runtime? speed.py's runs (predict,
bert_score.score, the cross-encoder with torch's int8 linear layers) beside the same
cross-encoder exported to ONNX and run by ONNX Runtime in float32 and with its weights
quantized to int8 (onnxruntime.quantization.quantize_dynamic), on `mismatch bench predict`'s
2,000 pairs, one process, two threads, best of two rounds; and how far the ONNX Runtime
readings of P(same meaning) are from torch's float32 ones.

    PYTHONPATH=ORT_LIB python ort_speed.py XENC_DIR WORK_DIR

ORT_LIB holds onnxruntime, onnx and onnxscript (not project dependencies); WORK_DIR receives
the exported models.
"""

import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from cross_encoder import CrossEncoder
from onnxruntime.quantization import QuantType, quantize_dynamic

from evaluator.cli.bench.predict import CHECKPOINT, ROUNDS, WARMUP_PAIRS, bench_pairs
from evaluator.evaluator import Evaluator
from mismatch_core.resources import encoder_path

xenc_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
xenc, xenc_int8 = CrossEncoder(xenc_dir), CrossEncoder(xenc_dir, int8=True)
names = ["input_ids", "attention_mask", "token_type_ids"]
example = xenc.tokenizer(["a b c"], ["d e"], return_tensors="pt")
torch.onnx.export(
    xenc.model,
    tuple(example[name] for name in names),
    str(work / "xenc.onnx"),
    input_names=names,
    output_names=["logits"],
    dynamic_axes={name: {0: "batch", 1: "length"} for name in names},
    dynamo=False,
)
quantize_dynamic(str(work / "xenc.onnx"), str(work / "xenc_int8.onnx"), weight_type=QuantType.QInt8)


class OrtReader:
    """P(same meaning) by an ONNX Runtime session, batched as CrossEncoder.same_meaning."""

    def __init__(self, model: Path) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = onnxruntime.InferenceSession(str(model), options)

    def same_meaning(self, refs: list[str], gens: list[str]) -> np.ndarray:
        order = sorted(range(len(refs)), key=lambda i: len(refs[i]) + len(gens[i]))
        p = np.zeros(len(refs))
        for i in range(0, len(order), 64):
            chunk = order[i : i + 64]
            batch = xenc.tokenizer(
                [refs[j] for j in chunk],
                [gens[j] for j in chunk],
                padding=True,
                truncation=True,
                max_length=256,
                return_tensors="np",
            )
            logits = self.session.run(None, {name: batch[name] for name in names})[0]
            exp = np.exp(logits - logits.max(-1, keepdims=True))
            p[chunk] = (exp / exp.sum(-1, keepdims=True))[:, 0]
        return p


ort, ort_int8 = OrtReader(work / "xenc.onnx"), OrtReader(work / "xenc_int8.onnx")
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
    "torch int8": xenc_int8.same_meaning,
    "onnxruntime": ort.same_meaning,
    "onnxruntime int8": ort_int8.same_meaning,
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
for name in ("torch int8", "onnxruntime", "onnxruntime int8"):
    with_xenc = best["predict"] + best[name]
    print(
        f"predict + {name}: {len(refs) / with_xenc:.1f} pairs/s, "
        f"{with_xenc / best['bert_score.score']:.2f} x bert_score's time"
    )
reference = xenc.same_meaning(refs, gens)
for name, reader in (
    ("torch int8", xenc_int8),
    ("onnxruntime", ort),
    ("onnxruntime int8", ort_int8),
):
    gap = np.abs(reader.same_meaning(refs, gens) - reference)
    print(
        f"{name}: P(same meaning) vs torch float32, max |diff| {gap.max():.4f}, mean {gap.mean():.4f}"
    )
