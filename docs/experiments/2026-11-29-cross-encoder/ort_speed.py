"""Would a cross-encoder fit the speed line if run by ONNX Runtime? (timing.py) The cross-encoder
with torch's int8 linear layers beside the same model exported to ONNX and run by ONNX Runtime
in float32 and with its weights quantized to int8 (onnxruntime.quantization.quantize_dynamic),
two threads; and how far those readings of P(same meaning) are from torch's float32 ones.

    PYTHONPATH=ORT_LIB python ort_speed.py XENC_DIR WORK_DIR

ORT_LIB holds onnxruntime, onnx and onnxscript (not project dependencies); WORK_DIR receives
the exported models.
"""

import sys
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from cross_encoder import CrossEncoder
from onnxruntime.quantization import QuantType, quantize_dynamic
from timing import pairs, time_and_report

NAMES = ["input_ids", "attention_mask", "token_type_ids"]


class OrtReader(CrossEncoder):
    """The cross-encoder's tokenizer and batching, its model run by an ONNX Runtime session."""

    def __init__(self, xenc_dir: Path, model: Path) -> None:
        super().__init__(xenc_dir)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = onnxruntime.InferenceSession(str(model), options)

    def logits(self, batch: dict) -> np.ndarray:
        return self.session.run(None, {name: batch[name].numpy() for name in NAMES})[0]


xenc_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
xenc, xenc_int8 = CrossEncoder(xenc_dir), CrossEncoder(xenc_dir, int8=True)
example = xenc.tokenizer(["a b c"], ["d e"], return_tensors="pt")
torch.onnx.export(
    xenc.model,
    tuple(example[name] for name in NAMES),
    str(work / "xenc.onnx"),
    input_names=NAMES,
    output_names=["logits"],
    dynamic_axes={name: {0: "batch", 1: "length"} for name in NAMES},
    dynamo=False,
)
quantize_dynamic(str(work / "xenc.onnx"), str(work / "xenc_int8.onnx"), weight_type=QuantType.QInt8)
ort, ort_int8 = (
    OrtReader(xenc_dir, work / "xenc.onnx"),
    OrtReader(xenc_dir, work / "xenc_int8.onnx"),
)
readers = {"torch int8": xenc_int8, "onnxruntime": ort, "onnxruntime int8": ort_int8}
refs, gens = pairs()
time_and_report(refs, gens, {name: reader.same_meaning for name, reader in readers.items()})
reference = xenc.same_meaning(refs, gens)
for name, reader in readers.items():
    gap = np.abs(reader.same_meaning(refs, gens) - reference)
    print(
        f"{name}: P(same meaning) vs torch float32, max |diff| {gap.max():.4f}, mean {gap.mean():.4f}"
    )
