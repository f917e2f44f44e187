#!/bin/bash
# docs/pretrain.md's three continuation steps on the inputs of prepare_next.sh (with the twin).
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
M=/work/main/.venv/bin/mismatch
D=/work/data/s72/next
cd /work/main
IN="--real $D/real_bases --real-features $D/features/real_bases --synth $D/synth30k --synth-features $D/features/synth30k"
$M adapt train --checkpoint /work/data/s72/synth_only_base $IN --out $D/base_continued
$M adapt train --checkpoint $D/base_continued $IN --out $D/base_disfluency --add-features disfluency --head-only --learning-rate 0.03
$M adapt train --checkpoint $D/base_disfluency $IN --out $D/base_twin \
  --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
echo done
