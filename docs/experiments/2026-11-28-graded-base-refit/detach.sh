#!/bin/bash
# the candidate's first step with the graded hinge's parent margins detached (detach_parent.patch, in a worktree)
set -euo pipefail
source /work/main/.venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
Q=/work/data/s37/pipe; G=/work/data/s39/gp2; O=/work/data/s40/detach
mkdir -p $O
cd /work/exp  # git worktree add /work/exp 2217666, then git apply detach_parent.patch
A="--real $Q/real --real-features $Q/f_real --synth $Q/synth30k --synth-features $Q/f_synth30k"
PYTHONPATH=/work/exp python -m evaluator.cli adapt train --checkpoint $Q/base $A --graded $G/chains --graded-features $G/f --out $O/cont > $O/adapt1.log 2>&1
PYTHONPATH=/work/exp python -m evaluator.cli demo --checkpoint $O/cont > $O/cont.demo 2>&1
touch $O/DONE
