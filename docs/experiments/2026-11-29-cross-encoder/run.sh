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
# part two (rules-shallow.md): readers distilled from the sick+real one (two layers 17 min,
# three 25 min; the full one's readings of the examples, 5 min, computed once and copied),
# the training side, the cost (ONNX Runtime from a side folder, not a project dependency),
# the one reading of the three-layer reader and its demo
Q=${Q:-/work/data/s48}; SIDE=${SIDE:-/tmp/ortlib}
pip install --target $SIDE --no-deps onnxruntime==1.32.0 onnx==1.23.2 onnxscript==0.7.2 \
  onnx_ir==1.1.0 flatbuffers==25.12.19 ml_dtypes==0.6.0 peft==0.21.2 accelerate==1.15.0
python $D/shallow_train.py $S $SICK $P/xenc_sr1 $Q/l2d 3 2 1e-4 > $Q/l2d.log 2>&1
mkdir -p $Q/l3d && cp $Q/l2d/teacher.npy $Q/l3d/
python $D/shallow_train.py $S $SICK $P/xenc_sr1 $Q/l3d 3 3 1e-4 > $Q/l3d.log 2>&1
mkdir -p $Q/l3lora && cp $Q/l2d/teacher.npy $Q/l3lora/  # after the reading: size alone
PYTHONPATH=$SIDE python $D/shallow_train.py $S $SICK $P/xenc_sr1 $Q/l3lora 3 3 5e-4 16 > $Q/l3lora.log 2>&1
python $D/training_side.py $S $B full=$P/xenc_sr1/readings.npz two-layer=$Q/l2d/readings.npz \
  two-layer-int8=$Q/l2d/readings_int8.npz three-layer=$Q/l3d/readings.npz \
  three-layer-int8=$Q/l3d/readings_int8.npz three-layer-lora=$Q/l3lora/readings.npz \
  three-layer-lora-int8=$Q/l3lora/readings_int8.npz | tee $Q/training_side.txt
(cd $D && PYTHONPATH=$SIDE python ort_speed.py $Q/l3d $Q/l3d_onnx) | tee $Q/ort_speed_l3.txt
mismatch bench predict | tee $Q/bench_predict.txt
python $D/bench_xenc.py checkpoints/mismatch-base $S $B $Q/l3d $Q/l3d.rt.json int8 | tee $Q/l3d.rt.txt
python $D/demo.py checkpoints/mismatch-base $S $B $Q/l3d int8 | tee $Q/demo_l3d.txt
