#!/bin/bash
set -euo pipefail
cd /work/main
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
Q=/work/data/s37/pipe; O=/work/data/s38
A="--real $Q/real --real-features $Q/f_real --synth $Q/synth30k --synth-features $Q/f_synth30k"
/usr/bin/time -v -o $O/cont45e25.time mismatch adapt train --checkpoint $O/e25/base $A --out $O/cont45e25 --nocontr-weights 3,4,5 > $O/cont45e25.log 2>&1
mismatch bench realtext --checkpoint $O/cont45e25 --parts sick,bases --out $O/rt_cont45e25.json > $O/rt_cont45e25.log 2>&1
mismatch bench realtext --checkpoint $O/cont45e25 --parts darr --out $O/rt_cont45e25_darr.json > $O/rt_cont45e25_darr.log 2>&1
touch $O/CONT_DONE
