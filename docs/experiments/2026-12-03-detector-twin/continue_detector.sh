#!/bin/bash
# Steps 2-3 of docs/pretrain.md's continuation, on the twin-bearing inputs of session 72, with a
# retrained detector. Runs in the worktree WT whose checkpoints/disfluency-detector is that
# detector; writes the features to F, the bases to O (O/base_disfluency, O/NAME). The defaults are
# this record's run (the detector retrained at today's rules, simple_aspect among its
# rewordings); the verb-form-detector record sets WT=/tmp/s74wt O=/work/data/s74 NAME=base_verb_det.
set -e
WT=${WT:-/tmp/s73wt}
O=${O:-/work/data/s73}
F=${F:-$O/features}
NAME=${NAME:-base_twin_det}
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false MISMATCH_DATA_DIR=/work/shared/data
export MISMATCH_NLTK_DATA=/work/main/.nltk_data PYTHONPATH=$WT
M="/work/main/.venv/bin/python -m evaluator.cli"
P=/work/data/s72/next
cd $WT
for set in synth30k real_bases; do
  for s in train val; do
    $M features --features disfluency --pairs $P/$set/$s.parquet --out $F/$set/$s.parquet --quiet
  done
done
IN="--real $P/real_bases --real-features $F/real_bases --synth $P/synth30k --synth-features $F/synth30k"
$M adapt train --checkpoint $P/base_continued $IN --out $O/base_disfluency --add-features disfluency --head-only --learning-rate 0.03
$M adapt train --checkpoint $O/base_disfluency $IN --out $O/$NAME \
  --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
echo done $(date)
