#!/bin/bash
# Measure a base CHECKPOINT (arg 1, an absolute path) in the worktree WT that holds its detector;
# NAME (arg 2) names the outputs in O. Defaults: this record's worktree and folder.
set -e
WT=${WT:-/tmp/s73wt}
O=${O:-/work/data/s73}
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false MISMATCH_DATA_DIR=/work/shared/data
export MISMATCH_NLTK_DATA=/work/main/.nltk_data PYTHONPATH=$WT
cd $WT
PY=/work/main/.venv/bin/python
$PY /work/main/docs/experiments/2026-12-03-aspect-twin/twin_and_error.py 3000 $1 > $O/twin_and_error_$2.txt 2>&1
$PY -m evaluator.cli bench realtext --checkpoint $1 --out $O/realtext_$2.json > $O/realtext_$2.log 2>&1
echo done
