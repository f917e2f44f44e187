#!/bin/bash
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
/usr/bin/time -v -o /work/data/s41/refit.time mismatch evaluate --task all --seeds 3 --out /work/data/s41/results --export-dir /work/data/s41/ckpts --cache-dir /work/data/human_features_v2 > /work/data/s41/refit.log 2>&1
touch /work/data/s41/REFIT_DONE
