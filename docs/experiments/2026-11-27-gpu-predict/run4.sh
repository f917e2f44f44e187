# Device side, CPU only: `mismatch bench predict --device cpu` with the default worker count
# (one per usable core, at most 8: 8 on these 16 cores), peak memory of the main process and
# of the largest worker.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devrun/whl/*.whl 2>/dev/null || exit 1
export PYTHONPATH=/tmp/site:$PWD/.devrun/shim:$PWD HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 MISMATCH_NLTK_DATA=/tmp/nltk_data
mkdir -p /tmp/nltk_data/corpora && tar -C /tmp/nltk_data/corpora -xJf .devrun/nltk_data/wordnet.tar.xz && cp -r .devrun/nltk_data/tokenizers /tmp/nltk_data/
python3 .devrun/unpack_encoder.py .devrun/minilm /tmp/minilm
python3 -m evaluator.cli bench predict --input .devrun/pairs.jsonl --device cpu 2>&1 | grep -v -i warn | tee $OUT/bench_cpu_w8.txt
