#!/bin/bash
# The probes of this record: the shipped base's readings both ways on the training side (both
# tables), then the learned reading and its control on real text. Run from the repository
# root. S holds session 43's inputs (docs/experiments/2026-11-29-token-head/run.sh builds them).
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s46}; S=${S:-/work/data/s43/pipe}; D=docs/experiments/2026-11-29-both-directions
python $D/stack_probe.py checkpoints/mismatch-base $S ../shared/data/sick/sick_train.jsonl.gz \
  $P/both_ways.npz | tee $P/stack_probe.txt
python $D/bench_learned.py checkpoints/mismatch-base $S $P/both_ways.npz both $P/learned.rt.json \
  | tee $P/learned.rt.txt
python $D/bench_learned.py checkpoints/mismatch-base $S $P/both_ways.npz one-way $P/oneway.rt.json \
  | tee $P/oneway.rt.txt
python $D/bench_learned.py checkpoints/mismatch-base $S $P/both_ways.npz calibrated \
  $P/calibrated.rt.json | tee $P/calibrated.rt.txt
python $D/wmt_train_probe.py checkpoints/mismatch-base $S $P/both_ways.npz | tee $P/wmt_train_probe.txt
