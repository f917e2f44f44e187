#!/bin/bash
# the ranked step with the better output's logit detached: only the worse output is pushed down
set -uo pipefail
source /work/main/.venv/bin/activate
cd /tmp/wt_down  # made by: git worktree add /tmp/wt_down HEAD && git -C /tmp/wt_down apply down.patch
export PYTHONPATH=/tmp/wt_down MISMATCH_DATA_DIR=/work/shared/data MISMATCH_NLTK_DATA=/work/main/.nltk_data
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
D=/work/data/s72/next; S=/work/data/s75; O=$S/runs
A="--real $D/real_bases --real-features $D/features/real_bases --synth $D/synth30k --synth-features $D/features/synth30k"
N=${1:-rank_down}; LINKS=${2:-ranked}
echo "== $N $(date +%T)" >> $O/stages.log
python -c "import evaluator, sys; print(evaluator.__file__)" > $O/$N.where
mismatch adapt train --checkpoint checkpoints/mismatch-base $A --graded $S/$LINKS --graded-features $S/f_ranked --nocontr-weights 4 --out $O/$N > $O/$N.log 2>&1
mismatch demo --checkpoint $O/$N > $O/$N.demo 2>&1
mismatch bench realtext --checkpoint $O/$N --parts sick,bases --out $O/$N.rt.json > $O/$N.rt.log 2>&1
mismatch bench realtext --checkpoint $O/$N --parts darr --out $O/$N.darr.json > $O/$N.darr.log 2>&1
echo "== evaluated $N $(date +%T)" >> $O/stages.log
