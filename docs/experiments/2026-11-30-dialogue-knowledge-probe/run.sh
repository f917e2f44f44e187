#!/bin/bash
# Part two: the shipped dialogue recipe (control) and the same reading the grounding fact
# (variant), 3 seeds each, by rules.md. Usage, from the repository root: run.sh DIR
# (DIR gets the scratch data root, the two config folders, the caches and the outputs).
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
mkdir -p "$D/configs" "$D/configs_variant"
cp configs/finetune/*.yaml "$D/configs/"
cp configs/finetune/*.yaml "$D/configs_variant/"
sed -i 's/^  reference_triples_size: 4000/  source_features: [rouge1_p, rouge1_r, rouge1_f, chrf]   # against the grounding fact (src)\n&/' \
  "$D/configs_variant/dialogue.yaml"
for v in control variant; do
  C=$D/configs; [ $v = variant ] && C=$D/configs_variant
  /usr/bin/time -f "$v: %e s wall" .venv/bin/mismatch evaluate --task dialogue --seeds 3 --no-ablations \
    --data-root "$D/data" --config-dir "$C" --out "$D/out-$v" --cache-dir "$D/cache" 2>&1 \
    | grep -v "it/s\]\|pair/s\]" > "$D/$v.log"
done
