set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devrun/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/.devrun/shim:$PWD HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 MISMATCH_NLTK_DATA=/tmp/nltk_data
mkdir -p /tmp/nltk_data/corpora && tar -C /tmp/nltk_data/corpora -xJf .devrun/nltk_data/wordnet.tar.xz && cp -r .devrun/nltk_data/tokenizers /tmp/nltk_data/
python3 .devrun/unpack_encoder.py .devrun/minilm /tmp/minilm
python3 -m pytest -p no:cacheprovider tests/test_predict.py -k "gpu or device" -rs 2>&1 | tail -3 | tee $OUT/pytest2.txt
for w in 8 14; do python3 -c "
import sys, evaluator.features.compute as c; c.MAX_WORKERS = $w
from evaluator.cli import main; main(['bench', 'predict', '--input', '.devrun/pairs.jsonl', '--device', 'cuda'])" 2>&1 | grep -v -i warn | tee $OUT/bench_cuda_w$w.txt; done
