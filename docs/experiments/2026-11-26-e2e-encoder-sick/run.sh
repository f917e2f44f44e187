# Device side: end-to-end (trainable encoder) pretraining on the carried synth pairs, then
# the trained checkpoint back as float16 shards. Usage: bash .e2e/run.sh EPOCHS
set -eo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
python3 .e2e/unpack_encoder.py .e2e/minilm /tmp/minilm
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
start=$(date +%s)
python3 scripts/pretrain.py fit --config configs/pretrain.yaml \
  --data.pairs_dir .e2e/synth --data.features .e2e/features --data.embeddings null \
  --data.alignments null --data.encoder /tmp/minilm --data.encoder_mode trainable \
  --data.batch_size 128 --data.num_workers 8 --trainer.accelerator gpu \
  --trainer.precision bf16-mixed --trainer.max_epochs "$1" --trainer.max_time 00:00:06:00 \
  --export_dir /tmp/e2e_ckpt --docs_dir /tmp/docs --run_name e2e --log_dir /tmp/runs 2>&1 \
  | grep -v -i "warn" | tail -40
echo "fit+export wall $(( $(date +%s) - start )) s"
mkdir -p /tmp/back && find /tmp/runs -name metrics.csv -exec cp {} /tmp/back/metrics.csv \;
python3 .e2e/shard.py /tmp/e2e_ckpt /tmp/back
mv /tmp/back/ckpt/shard*.safetensors "$OUT"/
tar -C /tmp -cf "$OUT/small.tar" back docs
ls -la "$OUT"
