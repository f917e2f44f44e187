#!/bin/bash
# The runs of this record: the unnamed contradictions, their features, the rewrites record's
# `tw` recipe with them (weight 1 at seeds 13 and 14, weight 5 at seed 13), the bench, the
# demo and the training-side checks.
# Run from the repository root after `git apply` of this folder's unnamed.patch.
# S holds session 43's inputs (docs/experiments/2026-11-29-token-head/run.sh builds them),
# T the rewrites record's pairs with rewrites, their features and the synthetic-only base
# (docs/experiments/2026-11-29-real-base-rewrites/run.sh builds them).
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s45}; S=${S:-/work/data/s43/pipe}; T=${T:-/work/data/s44}
NAMES=$(python -c "import json; print(','.join(json.load(open('checkpoints/mismatch-base/config.json'))['features']['names']))")
mismatch adapt unnamed --out $P/unnamed
mkdir -p $P/f_unnamed
cp $T/f_tw/{embeddings,alignments}.parquet $P/f_unnamed/   # only new texts get computed
for s in val train; do
  mismatch features --pairs $P/unnamed/$s.parquet --out $P/f_unnamed/$s.parquet --features $NAMES \
    --embeddings $P/f_unnamed/embeddings.parquet --alignments $P/f_unnamed/alignments.parquet --quiet
done
recipe() {  # name, seed, unnamed weight
  local n=$1 seed=$2 weight=$3
  local common=(--real $T/real_tw --real-features $T/f_tw --synth $S/synth30k
                --synth-features $S/f_synth30k --unnamed $P/unnamed
                --unnamed-features $P/f_unnamed --unnamed-weight $weight --seed $seed)
  mismatch adapt train --checkpoint $T/b313 "${common[@]}" --out $P/${n}_c
  mismatch adapt train --checkpoint $P/${n}_c "${common[@]}" --out $P/${n}_d \
    --add-features disfluency --head-only --learning-rate 0.03
  mismatch adapt train --checkpoint $P/${n}_d "${common[@]}" --out $P/$n \
    --add-features question_changed,order_flipped,verb_antonym --head-only \
    --learning-rate 0.03 --nocontr-weights 3,4,5
}
recipe twu 13 1
recipe twu14 14 1
recipe twu5 13 5   # the addenda: its first step (twu5_c) was read first, with --parts sick
for n in twu twu14 twu5; do
  mismatch bench realtext --checkpoint $P/$n --parts sick,bases,darr --out $P/$n.rt.json > $P/$n.rt.txt
  mismatch predict --input examples/pairs.jsonl --checkpoint $P/$n --no-spans --output $P/demo_$n.jsonl
done
for n in tw_c:$T/tw_c twu_c:$P/twu_c twu5_c:$P/twu5_c; do
  mismatch bench realtext --checkpoint ${n#*:} --parts sick --out $P/${n%%:*}.sick.json > $P/${n%%:*}.sick.txt
done
D=docs/experiments/2026-11-29-unnamed-contradictions
python $D/unnamed_checks.py $P/unnamed shipped=checkpoints/mismatch-base ctl=$T/ctl \
  ctl14=$T/ctl14 tw=$T/tw tw14=$T/tw14 twu=$P/twu twu14=$P/twu14 twu5=$P/twu5 \
  tw_c=$T/tw_c twu_c=$P/twu_c twu5_c=$P/twu5_c
