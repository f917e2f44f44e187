#!/bin/bash
# the graded-against-base step with the mismatch head alone trained (--trainable head)
P=/work/data/s41/pipe; O=/work/data/s42/runs
source "$(dirname "$0")/steps.sh"
N=h_gbase; run $N --checkpoint checkpoints/mismatch-base $A $G --graded-against base --trainable head --nocontr-weights 4 --out $O/$N && evalc $N $O/$N
touch $O/DONE
