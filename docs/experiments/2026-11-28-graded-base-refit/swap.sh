#!/bin/bash
# the first continuation step with the 30K synthetic replay set of 2026-11-26, made again at that
# day's code (c8eac0c); the real pairs of that day equal today's (same ids, texts, labels)
set -euo pipefail
source /work/main/.venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
Q=/work/data/s37/pipe; D=/work/data/s40/swap
mkdir -p $D
git -C /work/main worktree add /work/exp2 c8eac0c && ln -sfn /work/main/.nltk_data /work/exp2/.nltk_data
cd /work/exp2 && PYTHONPATH=/work/exp2 python -m evaluator.cli synth --config configs/synth.yaml --num-pairs 30000 --out $D/synth_1126 --quiet > $D/synth.log 2>&1
cd /work/main && git worktree remove --force /work/exp2
for s in train val; do
  mismatch features --pairs $D/synth_1126/$s.parquet --out $D/f_synth_1126/$s.parquet --embeddings $D/f_synth_1126/embeddings.parquet --alignments $D/f_synth_1126/alignments.parquet --quiet
done
mismatch adapt train --checkpoint $Q/base --real $Q/real --real-features $Q/f_real --synth $D/synth_1126 --synth-features $D/f_synth_1126 --out $D/old_synth > $D/old_synth.log 2>&1
mismatch demo --checkpoint $D/old_synth > $D/old_synth.demo 2>&1
