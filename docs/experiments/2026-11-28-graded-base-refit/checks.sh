#!/bin/bash
set -x
cd /work/main
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
D=${OUT:-/work/data/s40}
for t in summarization dialogue question_generation captioning nli; do
  mismatch bench realtext --checkpoint checkpoints/mismatch-$t --parts sick,bases --out $D/rt_$t.json > $D/rt_$t.log 2>&1
done
mismatch bench realtext --checkpoint checkpoints/mismatch-data2text --parts sick --out $D/rt_data2text.json > $D/rt_data2text.log 2>&1
mismatch bench realtext --checkpoint checkpoints/mismatch-base --parts sick,bases --out $D/rt_base.json > $D/rt_base.log 2>&1
mismatch bench realtext --checkpoint checkpoints/mismatch-base --parts darr --out $D/rt_base_darr.json > $D/rt_base_darr.log 2>&1
/usr/bin/time -v mismatch stress --metrics 'mismatch=checkpoints/mismatch-summarization#ratings' --data summarization --out $D/stress_summ --limit 30 --seeds 2 --threads 1 > $D/stress_summ.log 2>&1
/usr/bin/time -v mismatch stress --metrics 'mismatch=checkpoints/mismatch-translation#ratings' --data translation --out $D/stress_trans --limit 150 --seeds 2 --threads 1 > $D/stress_trans.log 2>&1
mismatch bench realtext --checkpoint checkpoints/mismatch-translation --parts darr --darr-limit 0 --out $D/rt_trans_darr.json > $D/rt_trans_darr.log 2>&1
touch $D/CHECKS_DONE
