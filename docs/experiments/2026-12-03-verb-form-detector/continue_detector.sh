#!/bin/bash
# Steps 2-3 of docs/pretrain.md's continuation, on the twin-bearing inputs of session 72, with a
# detector retrained with verb_form tried first for 30 % of texts. Runs in the worktree
# /tmp/s74wt whose checkpoints/disfluency-detector is that detector.
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false MISMATCH_DATA_DIR=/work/shared/data
export MISMATCH_NLTK_DATA=/work/main/.nltk_data PYTHONPATH=/tmp/s74wt
M="/work/main/.venv/bin/python -m evaluator.cli"
P=/work/data/s72/next
F=/work/data/s74/features
O=/work/data/s74
cd /tmp/s74wt
for set in synth30k real_bases; do
  for s in train val; do
    $M features --features disfluency --pairs $P/$set/$s.parquet --out $F/$set/$s.parquet --quiet
  done
done
IN="--real $P/real_bases --real-features $F/real_bases --synth $P/synth30k --synth-features $F/synth30k"
$M adapt train --checkpoint $P/base_continued $IN --out $O/base_disfluency --add-features disfluency --head-only --learning-rate 0.03
$M adapt train --checkpoint $O/base_disfluency $IN --out $O/base_verb_det \
  --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
echo done $(date)
