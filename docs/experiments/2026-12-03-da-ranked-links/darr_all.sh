#!/bin/bash
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
O=${O:-/work/data/s75/runs}
for n in "$@"; do
  /usr/bin/time -f "%e s" mismatch bench realtext --checkpoint $O/$n --parts darr --darr-limit 0 --out $O/$n.darrall.json > $O/$n.darrall.log 2>&1
  echo "== darr all $n $(date +%T)" >> $O/stages.log
done
