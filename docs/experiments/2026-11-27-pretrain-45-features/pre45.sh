#!/bin/bash
# after extra.sh: merge the 4 extra columns into the 41-column caches, pretrain on all 45
set -euo pipefail
cd /work/main
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
while [ ! -f /work/data/s38/extra/DONE ]; do sleep 20; done
P=/work/data/s38/pipe; F=/work/data/s38/feat45
mkdir -p $F
python - <<'PY'
import pandas as pd
for s in ("train", "val"):
    a = pd.read_parquet(f"/work/data/s38/pipe/features/{s}.parquet")
    b = pd.read_parquet(f"/work/data/s38/extra/{s}.parquet")
    assert (a.id.values == b.id.values).all()
    a.join(b.drop(columns="id")).to_parquet(f"/work/data/s38/feat45/{s}.parquet", index=False)
PY
/usr/bin/time -v -o $F/pretrain.time python scripts/pretrain.py fit --config configs/pretrain.yaml --data.pairs_dir $P/synth \
  --data.features $F --data.embeddings $P/features/embeddings.parquet \
  --data.alignments $P/features/alignments.parquet --export_dir $F/base --run_name pre45 \
  --docs_dir $F/docs --log_dir $F/runs --trainer.enable_progress_bar false > $F/pretrain.log 2>&1
touch $F/DONE
