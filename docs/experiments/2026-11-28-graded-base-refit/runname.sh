#!/bin/bash
# name_replaced read by the head alone, on the graded candidate (cand) and on the shipped base
set -euo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
Q=/work/data/s37/pipe; D=/work/data/s40
# D/f_real and D/f_synth30k start as links to Q's feature caches and stores
mismatch features --pairs $Q/real/train.parquet --out $D/f_real/train.parquet --features name_replaced --quiet
mismatch features --pairs $Q/real/val.parquet --out $D/f_real/val.parquet --features name_replaced --quiet
for s in train val; do mismatch features --pairs $Q/synth30k/$s.parquet --out $D/f_synth30k/$s.parquet --features name_replaced --quiet; done
A="--real $Q/real --real-features $D/f_real --synth $Q/synth30k --synth-features $D/f_synth30k"
for from in cand base_shipped; do
  O=$D/name_$from
  mismatch adapt train --checkpoint $D/$from $A --out $O --add-features name_replaced --head-only --learning-rate 0.03 --nocontr-weights 3,4,5 > $O.log 2>&1
  mismatch demo --checkpoint $O > $O.demo 2>&1
  mismatch bench realtext --checkpoint $O --parts sick,bases --out $O.rt.json > $O.rt.log 2>&1
  mismatch bench realtext --checkpoint $O --parts darr --out $O.darr.json > $O.darr.log 2>&1
done
