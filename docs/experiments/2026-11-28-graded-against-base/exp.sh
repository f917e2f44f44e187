#!/bin/bash
# graded chains ranked against the chain's base: (A) a 4th step on the shipped base, with a control;
# (B) the shipped recipe from 313acf9 with the first step graded against the base
P=/work/data/s41/pipe; O=/work/data/s41/runs
source "$(dirname "$0")/steps.sh"
N=ship; evalc ship checkpoints/mismatch-base
N=a_ctrl; run $N --checkpoint checkpoints/mismatch-base $A --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=a_gbase; run $N --checkpoint checkpoints/mismatch-base $A $G --graded-against base --out $O/$N --nocontr-weights 4 && evalc $N $O/$N
N=b1; run $N --checkpoint /work/data/s41/old313 $A $G --graded-against base --out $O/$N
N=b2; run $N --checkpoint $O/b1 $A --out $O/$N --add-features disfluency --head-only --learning-rate 0.03
N=b3; run $N --checkpoint $O/b2 $A --out $O/$N --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
evalc b3 $O/b3
touch $O/DONE
