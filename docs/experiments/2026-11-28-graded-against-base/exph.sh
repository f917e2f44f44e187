#!/bin/bash
# the graded-against-base step with the mismatch head alone trained (--trainable head)
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s41/pipe; O=/work/data/s42/runs; mkdir -p $O
A="--real $P/real --real-features $P/f_real --synth $P/synth30k --synth-features $P/f_synth30k"
G="--graded $P/chains --graded-features $P/f_chains"
evalc() {  # name checkpoint
  mismatch demo --checkpoint $2 > $O/$1.demo 2>&1
  mismatch bench realtext --checkpoint $2 --parts sick,bases --out $O/$1.rt.json > $O/$1.rt.log 2>&1
  mismatch bench realtext --checkpoint $2 --parts darr --out $O/$1.darr.json > $O/$1.darr.log 2>&1
  echo "== evaluated $1 $(date +%T)" >> $O/stages.log
}
N=h_gbase; echo "== $N $(date +%T)" >> $O/stages.log
mismatch adapt train --checkpoint checkpoints/mismatch-base $A $G --graded-against base --trainable head --nocontr-weights 4 --out $O/$N > $O/$N.log 2>&1 && evalc $N $O/$N
touch $O/DONE
