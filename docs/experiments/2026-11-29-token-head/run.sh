#!/bin/bash
# The t_head run of this record: inputs with token states, the run, the bench and the demo.
# Run from the repository root after `git apply docs/experiments/2026-11-29-token-head/token_head.patch`.
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s43/pipe}; mkdir -p $P
NAMES=$(python -c "import json; print(','.join(json.load(open('checkpoints/mismatch-base/config.json'))['features']['names']))")
mismatch adapt pairs --sick-substitutions --out $P/real
mismatch synth --config configs/synth.yaml --num-pairs 30000 --out $P/synth30k --quiet
for d in real synth30k; do for s in val train; do
  mismatch features --pairs $P/$d/$s.parquet --out $P/f_$d/$s.parquet --features $NAMES \
    --embeddings $P/f_$d/embeddings.parquet --alignments $P/f_$d/alignments.parquet \
    --tokens $P/f_$d/tokens --quiet
done; done
mismatch adapt train --checkpoint checkpoints/mismatch-base --real $P/real --real-features $P/f_real \
  --synth $P/synth30k --synth-features $P/f_synth30k --out $P/t_head \
  --add-token-branch --head-only --nocontr-weights 3,4,5 --epochs 8 --learning-rate 3e-4 --batch-size 256
mismatch bench realtext --checkpoint $P/t_head --parts sick,bases,darr --out $P/t_head.rt.json
mismatch predict --input examples/pairs.jsonl --checkpoint $P/t_head --no-spans --output $P/demo_t_head.jsonl
