# Shared steps of this record's scripts and the family-names-da-links record's, sourced by them.
# features PAIRS_DIR FEATURES_DIR: the shipped base's 45 columns (41 + the four head-only ones).
# run NAME ARGS...: a fourth step on the shipped base (NoContr weight 4) with $A and ARGS into
# $O/NAME, then evalc. evalc NAME CHECKPOINT: demo, real text (SICK, real bases), DARR sample.
features() {
  for s in val train; do
    mismatch features --pairs $1/$s.parquet --out $2/$s.parquet \
      --embeddings $2/embeddings.parquet --alignments $2/alignments.parquet --quiet
    mismatch features --features disfluency,question_changed,order_flipped,verb_antonym \
      --pairs $1/$s.parquet --out $2/$s.parquet --quiet
  done
}
evalc() {
  mismatch demo --checkpoint $2 > $O/$1.demo 2>&1
  mismatch bench realtext --checkpoint $2 --parts sick,bases --out $O/$1.rt.json > $O/$1.rt.log 2>&1
  mismatch bench realtext --checkpoint $2 --parts darr --out $O/$1.darr.json > $O/$1.darr.log 2>&1
  echo "== evaluated $1 $(date +%T)" >> $O/stages.log
}
run() {
  N=$1; shift; echo "== $N $(date +%T)" >> $O/stages.log
  mismatch adapt train --checkpoint checkpoints/mismatch-base $A --nocontr-weights 4 "$@" \
    --out $O/$N > $O/$N.log 2>&1 && evalc $N $O/$N
}
