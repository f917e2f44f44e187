#!/bin/bash
# on inputs with the family-name EntErr variant: the graded-against-base step on the shipped
# base and its control (f_), then exp.sh's `b` lines of the graded-against-base record (fb)
P=/work/data/s42/pipe; O=/work/data/s42/runs
source "$(dirname "$0")/../2026-11-28-graded-against-base/steps.sh"
N=f_gbase; run $N --checkpoint checkpoints/mismatch-base $A $G --graded-against base --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=f_ctrl; run $N --checkpoint checkpoints/mismatch-base $A --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=fb1; run $N --checkpoint /work/data/s41/old313 $A $G --graded-against base --out $O/$N
N=fb2; run $N --checkpoint $O/fb1 $A --out $O/$N --add-features disfluency --head-only --learning-rate 0.03
N=fb3; run $N --checkpoint $O/fb2 $A --out $O/$N --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
evalc fb3 $O/fb3
