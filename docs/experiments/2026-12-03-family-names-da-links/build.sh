#!/bin/bash
# Session 76: session 72's continuation inputs and session 75's chains, rebuilt with the
# family-names patch, in a worktree made by: git worktree add /tmp/wt_fam HEAD &&
# git -C /tmp/wt_fam apply docs/experiments/2026-11-28-family-names/family_names.patch
# The DA links are session 75's (da-ranked-links build.sh), reused.
set -euo pipefail
WT=/tmp/wt_fam; cd $WT; source /work/main/.venv/bin/activate
export PYTHONPATH=$WT MISMATCH_DATA_DIR=/work/shared/data MISMATCH_NLTK_DATA=/work/main/.nltk_data
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
D=/work/data/s76/fam; S=/work/data/s75; R=/work/main/docs/experiments/2026-12-03-da-ranked-links
mkdir -p $D
source $R/steps.sh
echo "synth $(date +%T)"
mismatch synth --config configs/synth.yaml --num-pairs 30000 --out $D/synth30k --quiet
echo "pairs $(date +%T)"
mismatch adapt pairs --sick-substitutions --out $D/real_bases
echo "chains $(date +%T)"
mismatch adapt chains --real $D/real_bases --out $D/chains
python $R/combine.py $D/chains $S/ranked $D/comb
for set in real_bases chains synth30k; do
  echo "features $set $(date +%T)"; features $D/$set $D/features/$set
done
echo "features comb $(date +%T)"
rm -rf $D/features/comb; cp -r $D/features/chains $D/features/comb
features $D/comb $D/features/comb
python /work/main/docs/experiments/2026-12-03-family-names-da-links/against_chrf.py \
  $D/comb $D/features/comb $D/comb_chrf  # added after the first three runs; reuses the features
echo "done $(date +%T)"
