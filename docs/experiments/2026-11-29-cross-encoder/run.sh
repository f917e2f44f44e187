#!/bin/bash
# This record's runs, from the repository root. S holds session 43's continuation inputs
# (docs/experiments/2026-11-29-token-head/run.sh builds them); B the shipped base's readings of
# the training side (docs/experiments/2026-11-29-both-directions/stack_probe.py writes them).
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s47}; S=${S:-/work/data/s43/pipe}; B=${B:-/work/data/s46/both_ways.npz}
D=docs/experiments/2026-11-29-cross-encoder; SICK=../shared/data/sick/sick_train.jsonl.gz
# the cheap form, training side only (about 5 and 10 min)
python $D/joint_probe.py $S/real/val.parquet $SICK 4 3 $P/joint4
python $D/joint_probe.py $S/real/val.parquet $SICK 4 6 $P/joint4b 2e-4
# the two cross-encoders (about 17 min each); the SICK-only one was trained before the
# length-pooled batches of the rules' addendum, with random batches of 32 (the script then)
git show 06a2922:$D/xenc_train.py > $P/xenc_train_random_batches.py
python $P/xenc_train_random_batches.py $S $SICK $P/xenc 3 sick
python $D/xenc_train.py $S $SICK $P/xenc_sr1 1 sick+real
python $D/training_side.py $S $B sick=$P/xenc/readings.npz sick+real=$P/xenc_sr1/readings.npz \
  | tee $P/training_side.txt
# the one reading on real text (the candidate the rules' gate picks), and the cost
python $D/bench_xenc.py checkpoints/mismatch-base $S $B $P/xenc_sr1 $P/xenc.rt.json | tee $P/xenc.rt.txt
python $D/speed.py $P/xenc_sr1 | tee $P/speed.txt
python $D/demo.py checkpoints/mismatch-base $S $B $P/xenc_sr1 | tee $P/demo.txt
