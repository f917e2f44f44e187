#!/bin/bash
# on inputs with the family-name EntErr variant: the graded-against-base step on the shipped
# base and its control (f_), then exp.sh's `b` lines of the graded-against-base record (fb)
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s42/pipe; O=/work/data/s42/runs; mkdir -p $O
A="--real $P/real --real-features $P/f_real --synth $P/synth30k --synth-features $P/f_synth30k"
G="--graded $P/chains --graded-features $P/f_chains"
evalc() {  # name checkpoint
  mismatch demo --checkpoint $2 > $O/$1.demo 2>&1
  mismatch bench realtext --checkpoint $2 --parts sick,bases --out $O/$1.rt.json > $O/$1.rt.log 2>&1
  mismatch bench realtext --checkpoint $2 --parts darr --out $O/$1.darr.json > $O/$1.darr.log 2>&1
  echo "== evaluated $1 $(date +%T)" >> $O/stages.log
}
run() { echo "== $1 $(date +%T)" >> $O/stages.log; shift; mismatch adapt train "$@" > $O/$N.log 2>&1; }
N=f_gbase; run $N --checkpoint checkpoints/mismatch-base $A $G --graded-against base --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=f_ctrl; run $N --checkpoint checkpoints/mismatch-base $A --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=fb1; run $N --checkpoint /work/data/s41/old313 $A $G --graded-against base --out $O/$N
N=fb2; run $N --checkpoint $O/fb1 $A --out $O/$N --add-features disfluency --head-only --learning-rate 0.03
N=fb3; run $N --checkpoint $O/fb2 $A --out $O/$N --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
evalc fb3 $O/fb3
