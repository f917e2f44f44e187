#!/bin/bash
# continuation inputs for the shipped base's 45 columns: synth30k, real pairs, chains, their features
set -euo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s41/pipe; mkdir -p $P
NAMES=$(python -c "import json; print(','.join(json.load(open('checkpoints/mismatch-base/config.json'))['features']['names']))")
st() { echo "== $1 $(date +%T)" >> $P/stages.log; }
st synth30k; mismatch synth --config configs/synth.yaml --num-pairs 30000 --out $P/synth30k --quiet > $P/synth30k.log 2>&1
st real; mismatch adapt pairs --sick-substitutions --out $P/real > $P/real.log 2>&1
st chains; mismatch adapt chains --real $P/real --out $P/chains > $P/chains.log 2>&1
for d in real chains synth30k; do for s in val train; do
  st f_${d}_$s
  mismatch features --pairs $P/$d/$s.parquet --out $P/f_$d/$s.parquet --features $NAMES \
    --embeddings $P/f_$d/embeddings.parquet --alignments $P/f_$d/alignments.parquet --quiet > $P/f_${d}_$s.log 2>&1
done; done
st done; touch $P/DONE
