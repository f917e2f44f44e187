#!/bin/bash
# A user's file fitted cold, again with one rating corrected, again with one output appended
# (the feature cache keyed by each pair's texts). Usage, from the repository root:
#   edit_and_refit.sh DIR    (DIR holds mine.jsonl.gz, a copy of make_files.py's webnlg2017_ratings.jsonl.gz)
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export D=${1:?give DIR}
fit() {
  /usr/bin/time -f "%e s wall" .venv/bin/mismatch finetune --ratings "$D/mine.jsonl.gz" \
    --cache-dir "$D/cache" --out "$D/ckpt-$1" 2>&1 | grep -v "features:\|it/s\|pair/s" | tail -4
}
edit() {  # $1: python that changes `rows`
  python3 -c "
import gzip, json, os
path = os.path.join(os.environ['D'], 'mine.jsonl.gz')
rows = [json.loads(line) for line in gzip.open(path)]
$1
with gzip.open(path, 'wt') as handle:
    handle.writelines(json.dumps(r) + '\n' for r in rows)"
}
fit cold
edit "rows[5]['scores'][next(iter(rows[5]['scores']))] = 1.0"
fit corrected
edit "rows.append({**rows[0], 'gen': 'A new system output.'})"
fit appended
