# Device side: `mismatch features` on the GPU and on the CPU over the same 2,000 pairs (the
# default feature set, embeddings and alignment vectors), wall time each, and how far apart.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .devrun/whl/*.whl 2>/dev/null || exit 1
export PYTHONPATH=/tmp/site:$PWD/.devrun/shim:$PWD HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 MISMATCH_NLTK_DATA=/tmp/nltk_data
mkdir -p /tmp/nltk_data/corpora && tar -C /tmp/nltk_data/corpora -xJf .devrun/nltk_data/wordnet.tar.xz && cp -r .devrun/nltk_data/tokenizers /tmp/nltk_data/
python3 .devrun/unpack_encoder.py .devrun/minilm /tmp/minilm
python3 -c "
import pandas as pd
pd.read_json('.devrun/pairs.jsonl', lines=True).assign(id=lambda f: [str(i) for i in range(len(f))])[['id', 'ref', 'gen']].to_parquet('/tmp/pairs.parquet')"
python3 -m evaluator.cli features --pairs /tmp/pairs.parquet --out /tmp/warm.parquet --features bleu --quiet >/dev/null 2>&1
for d in cuda cpu; do
  s=$(date +%s.%N)
  python3 -m evaluator.cli features --pairs /tmp/pairs.parquet --out /tmp/f_$d.parquet --embeddings /tmp/e_$d.parquet --alignments /tmp/a_$d.parquet --device $d --quiet 2>&1 | grep -v -i warn
  echo "$d wall $(python3 -c "import time; print(f'{time.time() - $s:.1f}')") s" | tee -a $OUT/features_times.txt
done
python3 - <<'PY' | tee -a $OUT/features_times.txt
import numpy as np, pandas as pd
a, b = pd.read_parquet('/tmp/f_cuda.parquet'), pd.read_parquet('/tmp/f_cpu.parquet')
cols = [c for c in a.columns if c != 'id']
d = (a[cols] - b[cols]).abs().max()
print('max abs feature diff', float(d.max()), 'in', d.idxmax())
ea, eb = pd.read_parquet('/tmp/e_cuda.parquet'), pd.read_parquet('/tmp/e_cpu.parquet')
print('embedding rows', len(ea), len(eb))
PY
