#!/bin/bash
# A base continued on pairs made at today's rules (both twins: simple aspect, same-value
# adjective), shipped detector; real bases and their features reused from session 72.
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
M=/work/main/.venv/bin/mismatch
P=/work/data/s72/next
D=/work/data/s73/next
mkdir -p $D/features
cd /work/main
$M synth --config configs/synth.yaml --num-pairs 30000 --out $D/synth30k --quiet > $D/synth.log
for s in train val; do
  $M features --pairs $D/synth30k/$s.parquet --out $D/features/synth30k/$s.parquet \
    --embeddings $D/features/synth30k/embeddings.parquet --alignments $D/features/synth30k/alignments.parquet --quiet
  $M features --features disfluency,question_changed,order_flipped,verb_antonym \
    --pairs $D/synth30k/$s.parquet --out $D/features/synth30k/$s.parquet --quiet
done
echo features done $(date)
IN="--real $P/real_bases --real-features $P/features/real_bases --synth $D/synth30k --synth-features $D/features/synth30k"
$M adapt train --checkpoint /work/data/s72/synth_only_base $IN --out $D/base_continued
$M adapt train --checkpoint $D/base_continued $IN --out $D/base_disfluency --add-features disfluency --head-only --learning-rate 0.03
$M adapt train --checkpoint $D/base_disfluency $IN --out $D/base_both \
  --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
echo done $(date)
