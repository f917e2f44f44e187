#!/bin/bash
set -euo pipefail
cd /work/main
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s38/pipe; E=/work/data/s38/extra
for s in val train; do
  /usr/bin/time -v -o $E/$s.time mismatch features --pairs $P/synth/$s.parquet --out $E/$s.parquet \
    --features disfluency,question_changed,order_flipped,verb_antonym --quiet > $E/$s.log 2>&1
done
touch $E/DONE
