#!/bin/bash
# graded chains with the product commands: chains, features, adapt train --graded, bench
set -euo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
Q=/work/data/s37/pipe; G=/work/data/s39/gp; B=/work/data/s38/e25/base
NAMES=$(python -c "import json; print(','.join(json.load(open('$B/config.json'))['features']['names']))")
[ -f $G/chains/val.parquet ] || mismatch adapt chains --real $Q/real --out $G/chains > $G/chains.log 2>&1
if [ ! -f $G/f/val.parquet ]; then
  for s in train val; do
    mismatch features --pairs $G/chains/$s.parquet --out $G/f/$s.parquet --features $NAMES \
      --embeddings $G/f/embeddings.parquet --alignments $G/f/alignments.parquet --quiet
  done > $G/features.log 2>&1
fi
A="--real $Q/real --real-features $Q/f_real --synth $Q/synth30k --synth-features $Q/f_synth30k"
/usr/bin/time -v -o $G/e25g.time mismatch adapt train --checkpoint $B $A --graded $G/chains --graded-features $G/f \
  --out $G/e25g --nocontr-weights 3,4,5 > $G/e25g.log 2>&1
mismatch bench realtext --checkpoint $G/e25g --parts sick,bases --out $G/rt_e25g.json > $G/rt_e25g.log 2>&1
mismatch bench realtext --checkpoint $G/e25g --parts darr --out $G/rt_e25g_darr.json > $G/rt_e25g_darr.log 2>&1
touch $G/DONE
