#!/bin/bash
# evaluate --ratings on WebNLG 2017 as a user's file: with the ablations, then without (cache warm)
set -e
cd "$(git rev-parse --show-toplevel)"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
F=${1:?usage: no_ablations.sh webnlg2017_ratings.jsonl.gz CACHE_DIR OUT_DIR}
C=${2:?}; O=${3:?}
.venv/bin/mismatch evaluate --ratings $F --seeds 3 --out $O/abl-warmup --cache-dir $C --no-ablations --no-transfer > /dev/null 2>&1
for mode in with without; do
  extra=""; [ $mode = without ] && extra="--no-ablations"
  /usr/bin/time -f "$mode ablations: %e s wall, %M KB peak" .venv/bin/mismatch evaluate --ratings $F --seeds 3 --out $O/abl-$mode --cache-dir $C $extra 2>&1 | grep -E "wall|mean tau" | tail -8
done
