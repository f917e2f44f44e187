#!/bin/bash
# A fourth step on the shipped base, per NAME given (see the README's run table), each then
# evaluated: demo, real text (SICK, real bases), the DARR sample. rank_down runs in a worktree
# made by: git worktree add /tmp/wt_down HEAD && git -C /tmp/wt_down apply down.patch
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
D=/work/data/s72/next; S=/work/data/s75; O=$S/runs; mkdir -p $O
A="--real $D/real_bases --real-features $D/features/real_bases --synth $D/synth30k --synth-features $D/features/synth30k"
RANKED="--graded $S/ranked --graded-features $S/f_ranked"
COMB="--graded $S/comb --graded-features $S/f_comb --graded-against base"
source docs/experiments/2026-12-03-da-ranked-links/steps.sh
for spec in "$@"; do
  case $spec in
    ctrl) run ctrl ;;
    rank) run rank $RANKED ;;
    rank_good) run rank_good --graded $S/ranked_good --graded-features $S/f_ranked ;;
    rank_down) (cd /tmp/wt_down && export PYTHONPATH=/tmp/wt_down \
        MISMATCH_DATA_DIR=/work/shared/data MISMATCH_NLTK_DATA=/work/main/.nltk_data \
        && run rank_down $RANKED) ;;
    chains) run chains --graded $S/chains --graded-features $S/f_chains --graded-against base ;;
    comb) run comb $COMB ;;
    comb_agree) run comb_agree --graded $S/comb_agree --graded-features $S/f_comb --graded-against base ;;
    comb_w03) run comb_w03 $COMB --graded-weight 0.3 ;;
    comb_s1) run comb_s1 $COMB --seed 1 ;;
    comb_w03_s1) run comb_w03_s1 $COMB --graded-weight 0.3 --seed 1 ;;
    *) echo "unknown run: $spec" >&2; exit 2 ;;
  esac
done
echo "== done $(date +%T)" >> $O/stages.log
