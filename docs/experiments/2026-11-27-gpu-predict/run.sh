# Device side: GPU tests, then `mismatch bench predict` on the GPU and on this machine's CPUs,
# and CPU-vs-GPU agreement of the shipped base on the same 2,000 pairs.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devrun/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/.devrun/shim:$PWD HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 MISMATCH_NLTK_DATA=/tmp/nltk_data
mkdir -p /tmp/nltk_data/corpora && tar -C /tmp/nltk_data/corpora -xJf .devrun/nltk_data/wordnet.tar.xz && cp -r .devrun/nltk_data/tokenizers /tmp/nltk_data/
python3 .devrun/unpack_encoder.py .devrun/minilm /tmp/minilm
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)"
python3 -m pytest -p no:cacheprovider tests/test_predict.py -k "gpu or device" -rs 2>&1 | tail -5 | tee $OUT/pytest.txt
python3 -m evaluator.cli bench predict --input .devrun/pairs.jsonl --device cuda 2>&1 | grep -v -i warn | tee $OUT/bench_cuda.txt
python3 .devrun/agree.py .devrun/pairs.jsonl 2>&1 | grep -v -i warn
python3 -m evaluator.cli bench predict --input .devrun/pairs.jsonl --device cpu 2>&1 | grep -v -i warn | tee $OUT/bench_cpu.txt
