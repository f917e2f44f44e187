#!/bin/bash
# a fourth step on the shipped base: control, and with DA-ranked links (WMT15-17 training side)
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
D=/work/data/s72/next; S=/work/data/s75; O=$S/runs; mkdir -p $O
A="--real $D/real_bases --real-features $D/features/real_bases --synth $D/synth30k --synth-features $D/features/synth30k"
R="--graded $S/ranked --graded-features $S/f_ranked"
evalc() {
  mismatch demo --checkpoint $2 > $O/$1.demo 2>&1
  mismatch bench realtext --checkpoint $2 --parts sick,bases --out $O/$1.rt.json > $O/$1.rt.log 2>&1
  mismatch bench realtext --checkpoint $2 --parts darr --out $O/$1.darr.json > $O/$1.darr.log 2>&1
  echo "== evaluated $1 $(date +%T)" >> $O/stages.log
}
run() { N=$1; echo "== $N $(date +%T)" >> $O/stages.log; shift; mismatch adapt train "$@" --out $O/$N > $O/$N.log 2>&1 && evalc $N $O/$N; }
for spec in "$@"; do
  case $spec in
    ctrl) run ctrl --checkpoint checkpoints/mismatch-base $A --nocontr-weights 4 ;;
    rank) run rank --checkpoint checkpoints/mismatch-base $A $R --nocontr-weights 4 ;;
    comb_s1) run comb_s1 --checkpoint checkpoints/mismatch-base $A --graded $S/comb --graded-features $S/f_comb --graded-against base --nocontr-weights 4 --seed 1 ;;
    comb_w03_s1) run comb_w03_s1 --checkpoint checkpoints/mismatch-base $A --graded $S/comb --graded-features $S/f_comb --graded-against base --graded-weight 0.3 --nocontr-weights 4 --seed 1 ;;
    comb_agree) run comb_agree --checkpoint checkpoints/mismatch-base $A --graded $S/comb_agree --graded-features $S/f_comb --graded-against base --nocontr-weights 4 ;;
    comb_w03) run comb_w03 --checkpoint checkpoints/mismatch-base $A --graded $S/comb --graded-features $S/f_comb --graded-against base --graded-weight 0.3 --nocontr-weights 4 ;;
    comb) run comb --checkpoint checkpoints/mismatch-base $A --graded $S/comb --graded-features $S/f_comb --graded-against base --nocontr-weights 4 ;;
    chains) run chains --checkpoint checkpoints/mismatch-base $A --graded $S/chains --graded-features $S/f_chains --graded-against base --nocontr-weights 4 ;;
    rank_good) run rank_good --checkpoint checkpoints/mismatch-base $A --graded $S/ranked_good --graded-features $S/f_ranked --nocontr-weights 4 ;;
  esac
done
echo "== done $(date +%T)" >> $O/stages.log
