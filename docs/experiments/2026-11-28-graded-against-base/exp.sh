#!/bin/bash
# graded chains ranked against the chain's base: (A) a 4th step on the shipped base, with a control;
# (B) the shipped recipe from 313acf9 with the first step graded against the base
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s41/pipe; O=/work/data/s41/runs; mkdir -p $O
A="--real $P/real --real-features $P/f_real --synth $P/synth30k --synth-features $P/f_synth30k"
G="--graded $P/chains --graded-features $P/f_chains"
evalc() {  # name checkpoint
  mismatch demo --checkpoint $2 > $O/$1.demo 2>&1
  mismatch bench realtext --checkpoint $2 --parts sick,bases --out $O/$1.rt.json > $O/$1.rt.log 2>&1
  mismatch bench realtext --checkpoint $2 --parts darr --out $O/$1.darr.json > $O/$1.darr.log 2>&1
  echo "== evaluated $1 $(date +%T)" >> $O/stages.log
}
run() { echo "== $1 $(date +%T)" >> $O/stages.log; shift; mismatch adapt train "$@" > $O/$N.log 2>&1; }
N=ship; evalc ship checkpoints/mismatch-base
N=a_ctrl; run $N --checkpoint checkpoints/mismatch-base $A --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=a_gbase; run $N --checkpoint checkpoints/mismatch-base $A $G --graded-against base --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=b1; run $N --checkpoint /work/data/s41/old313 $A $G --graded-against base --out $O/$N
N=b2; run $N --checkpoint $O/b1 $A --out $O/$N --add-features disfluency --head-only --learning-rate 0.03
N=b3; run $N --checkpoint $O/b2 $A --out $O/$N --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
evalc b3 $O/b3
touch $O/DONE
