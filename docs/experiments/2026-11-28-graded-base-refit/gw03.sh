#!/bin/bash
# the candidate's recipe with the graded hinge at weight 0.3
set -euo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
Q=/work/data/s37/pipe; G=/work/data/s39/gp2; O=/work/data/s40/gw03
mkdir -p $O
A="--real $Q/real --real-features $Q/f_real --synth $Q/synth30k --synth-features $Q/f_synth30k"
mismatch adapt train --checkpoint $Q/base $A --graded $G/chains --graded-features $G/f --graded-weight 0.3 --out $O/cont > $O/adapt1.log 2>&1
mismatch demo --checkpoint $O/cont > $O/cont.demo 2>&1
mismatch adapt train --checkpoint $O/cont $A --out $O/disf --add-features disfluency --head-only --learning-rate 0.03 > $O/adapt2.log 2>&1
mismatch adapt train --checkpoint $O/disf $A --out $O/final --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5 > $O/adapt3.log 2>&1
mismatch demo --checkpoint $O/final > $O/final.demo 2>&1
mismatch bench realtext --checkpoint $O/final --parts sick,bases --out $O/rt_final.json > $O/rt_final.log 2>&1
mismatch bench realtext --checkpoint $O/final --parts darr --out $O/rt_final_darr.json > $O/rt_final_darr.log 2>&1
touch $O/DONE
