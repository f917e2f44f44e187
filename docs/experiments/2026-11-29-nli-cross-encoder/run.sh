#!/bin/bash
# This record's runs, from the repository root. X is the session-47 cross-encoder that
# ../2026-11-29-cross-encoder/run.sh trains (`xenc_sr1`); C a folder for the NLI feature
# cache (filled on the first fit, about 3 min). Each nli_probe.py run: about 21 min (34 with
# SICK, 12 on half the groups), recipe_scores.py about 1 min once the cache is filled.
set -euo pipefail
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
X=${X:-/work/data/s47/xenc_sr1/model}; W=${W:-/work/data/s49}; C=${C:-/work/data/human_features_v2}
D=docs/experiments/2026-11-29-nli-cross-encoder
python $D/nli_probe.py 0 $X $W/nli_x0 | tee $W/nli_x0.log
python $D/nli_probe.py 0 minilm $W/nli_m0 | tee $W/nli_m0.log
PYTHONPATH=$D python $D/recipe_scores.py 0 $C $W/recipe0.npz | tee $W/recipe0.log
python $D/nli_probe.py 0 $X $W/nli_xs0 3 sick | tee $W/nli_xs0.log
python $D/nli_probe.py 0 minilm $W/nli_mh0 3 half | tee $W/nli_mh0.log
PYTHONPATH=$D python $D/summary.py 0 $W/recipe0.npz $W/nli_x0 $W/nli_m0 $W/nli_xs0 | tee $W/summary0.md
