#!/bin/bash
# Inputs for a base continued on pairs made with the simple-aspect twin (next session).
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
M=/work/main/.venv/bin/mismatch
D=/work/data/s72/next
mkdir -p $D
cd /work/main
$M synth --config configs/synth.yaml --num-pairs 30000 --out $D/synth30k --quiet
$M adapt pairs --sick-substitutions --out $D/real_bases
for set in synth30k real_bases; do
  for s in train val; do
    $M features --pairs $D/$set/$s.parquet --out $D/features/$set/$s.parquet \
      --embeddings $D/features/$set/embeddings.parquet --alignments $D/features/$set/alignments.parquet --quiet
    $M features --features disfluency,question_changed,order_flipped,verb_antonym \
      --pairs $D/$set/$s.parquet --out $D/features/$set/$s.parquet --quiet
  done
done
echo done
