#!/bin/bash
# The soup of this record, its bench, the demo and the training-side SICK checks. Run from the
# repository root. S holds session 43's inputs (docs/experiments/2026-11-29-token-head/run.sh
# builds them); T and U the runs of the rewrites and unnamed-contradictions records.
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=${P:-/work/data/s46}; S=${S:-/work/data/s43/pipe}; T=${T:-/work/data/s44}; U=${U:-/work/data/s45}
python docs/experiments/2026-11-29-recipe-soup/soup.py $P/soup8 $S checkpoints/mismatch-base \
  $T/ctl $T/ctl14 $T/tw $T/tw14 $U/twu $U/twu14 $U/twu5 | tee $P/soup8.txt
mismatch bench realtext --checkpoint $P/soup8 --parts sick,bases,darr --out $P/soup8.rt.json > $P/soup8.rt.txt
mismatch predict --input examples/pairs.jsonl --checkpoint $P/soup8 --no-spans --output $P/demo_soup8.jsonl
python docs/experiments/2026-11-29-real-base-rewrites/sick_train_checks.py $S/real/val.parquet \
  ../shared/data/sick/sick_train.jsonl.gz shipped=checkpoints/mismatch-base soup8=$P/soup8 \
  | tee $P/sick_train_checks_soup8.txt
