#!/bin/bash
# after the refit: the task checkpoints into checkpoints/, then #27's checks on them
set -x
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
D=/work/data/s41/checks; mkdir -p $D
while [ ! -f /work/data/s41/REFIT_DONE ]; do sleep 15; done
for t in summarization translation data2text captioning question_generation dialogue nli; do
  cp /work/data/s41/ckpts/mismatch-$t/* checkpoints/mismatch-$t/
done
python docs/experiments/2026-11-25-rating-mix/company_example.py checkpoints > $D/company.txt 2>&1
mismatch stress --metrics 'mismatch=checkpoints/mismatch-summarization#ratings' --data summarization --out $D/stress_summ --limit 30 --seeds 2 --threads 1 > $D/stress_summ.log 2>&1
mismatch stress --metrics 'mismatch=checkpoints/mismatch-translation#ratings' --data translation --out $D/stress_trans --limit 150 --seeds 2 --threads 1 > $D/stress_trans.log 2>&1
mismatch bench realtext --checkpoint checkpoints/mismatch-translation --parts darr --darr-limit 0 --out $D/rt_trans_darr.json > $D/rt_trans_darr.log 2>&1
for t in summarization dialogue question_generation captioning nli; do
  mismatch bench realtext --checkpoint checkpoints/mismatch-$t --parts sick,bases --out $D/rt_$t.json > $D/rt_$t.log 2>&1
done
mismatch bench realtext --checkpoint checkpoints/mismatch-data2text --parts sick --out $D/rt_data2text.json > $D/rt_data2text.log 2>&1
mismatch bench realtext --checkpoint checkpoints/mismatch-base --parts darr --darr-limit 0 --out $D/rt_base_darr_all.json > $D/rt_base_darr_all.log 2>&1
touch $D/CHECKS_DONE
