#!/bin/bash
# The runs of this record: the two columns added to the shipped base's inputs, `vr` (read by
# the head alone), `vrf` (read by the whole base; the addendum), the bench, the demo and the
# training-side checks. Run from the repository root after `git apply` of voice_roles.patch.
# S holds session 43's inputs (docs/experiments/2026-11-29-token-head/run.sh builds them).
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s46}; S=${S:-/work/data/s43/pipe}; D=docs/experiments/2026-11-29-voice-roles
for set in real synth30k; do  # copies of the caches with the two columns added
  mkdir -p $P/f_$set
  cp $S/f_$set/{train,val}.parquet $P/f_$set/
  for x in embeddings.parquet alignments.parquet tokens; do ln -sfn $S/f_$set/$x $P/f_$set/$x; done
  for s in val train; do
    mismatch features --pairs $S/$set/$s.parquet --out $P/f_$set/$s.parquet \
      --features voice_changed,roles_swapped --quiet
  done
done
common=(--checkpoint checkpoints/mismatch-base --real $S/real --real-features $P/f_real
        --synth $S/synth30k --synth-features $P/f_synth30k --add-features voice_changed,roles_swapped)
mismatch adapt train "${common[@]}" --out $P/vr --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
mismatch adapt train "${common[@]}" --out $P/vrf
mismatch bench realtext --checkpoint $P/vrf --parts sick,bases,darr --out $P/vrf.rt.json > $P/vrf.rt.txt
mismatch predict --input examples/pairs.jsonl --checkpoint $P/vrf --no-spans --output $P/demo_vrf.jsonl
python docs/experiments/2026-11-29-real-base-rewrites/sick_train_checks.py $S/real/val.parquet \
  ../shared/data/sick/sick_train.jsonl.gz shipped=checkpoints/mismatch-base vrf=$P/vrf \
  | tee $P/sick_train_checks.txt
python $D/voice_checks.py $S/real/val.parquet $P/f_real/val.parquet \
  shipped=checkpoints/mismatch-base vrf=$P/vrf | tee $P/voice_checks.txt
# the shipped checkpoints on the same parts, for the tables beside vrf (and the soup record)
mismatch bench realtext --checkpoint checkpoints/mismatch-base --parts sick,bases --out $P/ship.rt.json > $P/ship.rt.txt
mismatch bench realtext --checkpoint checkpoints/mismatch-summarization --parts sick,bases \
  --out $P/ship_summ.rt.json > $P/ship_summ.rt.txt
