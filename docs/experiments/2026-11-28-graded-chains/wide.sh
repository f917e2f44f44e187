#!/bin/bash
# 45-column pretraining, the model twice as wide (text, set 128; head 512), 15 epochs
set -euo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s38/pipe; F=/work/data/s38/feat45; O=/work/data/s39/wide
mkdir -p $O
/usr/bin/time -v -o $O/pretrain.time python scripts/pretrain.py fit --config configs/pretrain.yaml --data.pairs_dir $P/synth \
  --data.features $F --data.embeddings $P/features/embeddings.parquet \
  --data.alignments $P/features/alignments.parquet --export_dir $O/base --run_name wide \
  --docs_dir $O/docs --log_dir $O/runs --trainer.enable_progress_bar false \
  --model.text_dim 128 --model.set_dim 128 --model.head_hidden 512 > $O/pretrain.log 2>&1
touch $O/DONE
