#!/bin/bash
# every task's export recipe fitted on BASE with SEEDS (the stress-seeds record's fit_seeds.py),
# then the company example of #27 per seed. Usage: company_seeds.sh BASE OUT 0,1,2
# (session 42 ran it as two copies with these values filled in: the shipped base with 1,2,
# its seed 0 being the shipped export; the candidate with 0,1,2)
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2 PYTHONPATH=.
BASE=$1; O=$2; SEEDS=$3; mkdir -p $O
TASKS="translation data2text captioning question_generation dialogue nli summarization"
for t in $TASKS; do
  python docs/experiments/2026-11-26-stress-seeds/fit_seeds.py $t $BASE /work/data/human_features_v2 $O/$t $SEEDS > $O/$t.log 2>&1
done
for s in ${SEEDS//,/ }; do
  mkdir -p $O/seed$s
  for t in $TASKS; do ln -sfn $O/$t/s$s $O/seed$s/mismatch-$t; done
  python docs/experiments/2026-11-25-rating-mix/company_example.py $O/seed$s > $O/company_s$s.txt 2>&1
done
