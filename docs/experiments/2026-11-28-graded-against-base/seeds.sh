#!/bin/bash
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
O=/work/data/s41/seeds
PYTHONPATH=. python docs/experiments/2026-11-26-stress-seeds/fit_seeds.py summarization /work/data/s41/runs/a_gbase /work/data/human_features_v2 $O 0,1,2 > $O.fit.log 2>&1
for s in 1 2 0; do
  mismatch stress --metrics "mismatch=$O/s$s#ratings" --data summarization --out $O/stress_s$s --limit 30 --seeds 2 --threads 1 > $O/stress_s$s.log 2>&1
done
touch $O/DONE
