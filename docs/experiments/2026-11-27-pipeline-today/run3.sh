#!/bin/bash
# #23 pipeline target: synth 200K -> features -> pretrain, one uninterrupted run, nothing else running.
set -euo pipefail
cd /work/exp  # a worktree of this repository at c64c463
source /work/main/.venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2 PYTHONPATH=/work/exp
P=/work/data/s38/pipe
M="python -m evaluator.cli"
stage() { name=$1; shift; echo "== $name $(date +%T)" >> $P/stages.log; /usr/bin/time -v -o $P/$name.time "$@" > $P/$name.log 2>&1; grep -E 'Elapsed|Maximum res|Percent of CPU|User time|System time' $P/$name.time | sed "s/^/$name /" >> $P/stages.log; }
echo "== start $(date +%s) $(git rev-parse --short HEAD)" >> $P/stages.log
stage synth $M synth --config configs/synth.yaml --out $P/synth --quiet
for s in val train; do
  stage feat_$s $M features --pairs $P/synth/$s.parquet --out $P/features/$s.parquet \
    --embeddings $P/features/embeddings.parquet --alignments $P/features/alignments.parquet \
    --chunk-size 16384 --quiet
done
stage pretrain python scripts/pretrain.py fit --config configs/pretrain.yaml --data.pairs_dir $P/synth \
  --data.features $P/features --data.embeddings $P/features/embeddings.parquet \
  --data.alignments $P/features/alignments.parquet --export_dir $P/base --run_name pipe \
  --docs_dir $P/docs --log_dir $P/runs --trainer.enable_progress_bar false
echo "== end $(date +%s)" >> $P/stages.log
touch $P/DONE
