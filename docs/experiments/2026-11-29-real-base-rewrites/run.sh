#!/bin/bash
# The runs of this record: pairs with rewrites, their features, the shipped three-step recipe
# from the synthetic-only base with and without them, the bench and the demo.
# Run from the repository root after `git apply docs/experiments/2026-11-29-real-base-rewrites/rewrites.patch`.
# S holds session 43's inputs (docs/experiments/2026-11-29-token-head/run.sh builds them).
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s44}; S=${S:-/work/data/s43/pipe}; mkdir -p $P/b313 $P/f_tw
NAMES=$(python -c "import json; print(','.join(json.load(open('checkpoints/mismatch-base/config.json'))['features']['names']))")
for f in config.json model.safetensors README.md; do
  git show 313acf9:checkpoints/mismatch-base/$f > $P/b313/$f
done
mismatch adapt pairs --sick-substitutions --nocontr-rewrites --out $P/real_tw
cp $S/f_real/{train,val,embeddings,alignments}.parquet $P/f_tw/   # only new pairs get computed
for s in val train; do
  mismatch features --pairs $P/real_tw/$s.parquet --out $P/f_tw/$s.parquet --features $NAMES \
    --embeddings $P/f_tw/embeddings.parquet --alignments $P/f_tw/alignments.parquet --quiet
done
recipe() {  # name, real pairs, real features
  local n=$1 real=$2 feat=$3
  mismatch adapt train --checkpoint $P/b313 --real $real --real-features $feat \
    --synth $S/synth30k --synth-features $S/f_synth30k --out $P/${n}_c
  mismatch adapt train --checkpoint $P/${n}_c --real $real --real-features $feat \
    --synth $S/synth30k --synth-features $S/f_synth30k --out $P/${n}_d \
    --add-features disfluency --head-only --learning-rate 0.03
  mismatch adapt train --checkpoint $P/${n}_d --real $real --real-features $feat \
    --synth $S/synth30k --synth-features $S/f_synth30k --out $P/$n \
    --add-features question_changed,order_flipped,verb_antonym --head-only \
    --learning-rate 0.03 --nocontr-weights 3,4,5
}
recipe tw $P/real_tw $P/f_tw
recipe ctl $S/real $S/f_real
for n in tw ctl; do
  mismatch bench realtext --checkpoint $P/$n --parts sick,bases,darr --out $P/$n.rt.json > $P/$n.rt.txt
  mismatch predict --input examples/pairs.jsonl --checkpoint $P/$n --no-spans --output $P/demo_$n.jsonl
done
