"""What the cross-encoder would add to `mismatch predict` (timing.py): its pass over the same
pairs (batches of 64, length-sorted, as bench_xenc.py reads them), also with its linear layers
quantized to int8 (torch's dynamic quantization), beside predict and bert_score.

    python speed.py XENC_DIR
"""

import sys
from pathlib import Path

from cross_encoder import CrossEncoder
from timing import pairs, time_and_report

xenc_dir = Path(sys.argv[1])
xenc, xenc_int8 = CrossEncoder(xenc_dir), CrossEncoder(xenc_dir, int8=True)
time_and_report(
    *pairs(), {"cross-encoder": xenc.same_meaning, "cross-encoder int8": xenc_int8.same_meaning}
)
