#!/bin/bash
# Measure a base CHECKPOINT (arg 1) run in the worktree with the retrained detector; NAME (arg 2).
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false MISMATCH_DATA_DIR=/work/shared/data
export MISMATCH_NLTK_DATA=/work/main/.nltk_data PYTHONPATH=${WT:-/tmp/s74wt}
cd ${WT:-/tmp/s74wt}
PY=/work/main/.venv/bin/python
O=/work/data/s74
$PY /work/main/docs/experiments/2026-12-03-aspect-twin/twin_and_error.py 3000 $1 > $O/twin_and_error_$2.txt 2>&1
$PY -m evaluator.cli bench realtext --checkpoint $1 --out $O/realtext_$2.json > $O/realtext_$2.log 2>&1
echo done
