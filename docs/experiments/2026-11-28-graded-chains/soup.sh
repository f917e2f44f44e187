#!/bin/bash
set -euo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
O=/work/data/s39
python docs/experiments/2026-11-28-graded-chains/soup.py /work/data/s38/e25/base $O/soup45 5 13 1 2 3 4 > $O/soup45.log 2>&1
mismatch bench realtext --checkpoint $O/soup45 --parts sick,bases --out $O/rt_soup45.json > $O/rt_soup45.log 2>&1
mismatch bench realtext --checkpoint $O/soup45 --parts darr --out $O/rt_soup45_darr.json > $O/rt_soup45_darr.log 2>&1
touch $O/SOUP_DONE
