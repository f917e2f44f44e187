#!/bin/bash
# The control and variants A, B of rules.md, 3 seeds each. Usage, from the repository root:
# run.sh DIR (DIR gets the scratch data root, the config folders, the caches and the outputs).
set -e
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
D=${1:?give DIR}
.venv/bin/python - "$D" <<'PY'
import gzip, json, sys
from pathlib import Path
from mismatch_core.resources import data_dir
out = Path(sys.argv[1]) / "data" / "dialogue"
out.mkdir(parents=True, exist_ok=True)
for path in sorted((data_dir() / "human" / "dialogue").glob("*.jsonl.gz")):
    rows = [json.loads(line) for line in gzip.open(path)]
    for row in rows:
        row["src"] = row["meta"].get("knowledge") or ""  # the grounding fact as the source
    with gzip.open(out / path.name, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
PY
declare -A COLUMNS=([A]="[wordnet_changed]" [B]="[wordnet_changed, rouge1_p, rouge1_r, rouge1_f, chrf]")
mkdir -p "$D/configs"
cp configs/finetune/*.yaml "$D/configs/"
for v in A B; do
  mkdir -p "$D/configs_$v"
  cp configs/finetune/*.yaml "$D/configs_$v/"
  sed -i "s/^  reference_triples_size: 4000/  source_features: ${COLUMNS[$v]}   # against the grounding fact (src)\n&/" \
    "$D/configs_$v/dialogue.yaml"
done
for v in control A B; do
  C=$D/configs; [ $v != control ] && C=$D/configs_$v
  /usr/bin/time -f "$v: %e s wall" .venv/bin/mismatch evaluate --task dialogue --seeds 3 --no-ablations \
    --data-root "$D/data" --config-dir "$C" --out "$D/out-$v" --cache-dir "$D/cache" 2>&1 \
    | grep -v "it/s\]\|pair/s\]" > "$D/$v.log"
done
