#!/bin/bash
# Session 76: the fourth step on the shipped base, on the family-names inputs; each run
# evaluated (demo, SICK + real bases, DARR sample) in the main checkout (unpatched rules).
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
D=/work/data/s76/fam; O=/work/data/s76/runs; mkdir -p $O
A="--real $D/real_bases --real-features $D/features/real_bases --synth $D/synth30k --synth-features $D/features/synth30k"
COMB="--graded $D/comb --graded-features $D/features/comb --graded-against base"
source docs/experiments/2026-12-03-da-ranked-links/steps.sh
for spec in "$@"; do
  case $spec in
    fctrl) run fctrl ;;
    fcomb) run fcomb $COMB ;;
    fcomb_s1) run fcomb_s1 $COMB --seed 1 ;;
    fchrf) run fchrf --graded $D/comb_chrf --graded-features $D/features/comb --graded-against base ;;
    fchrf_s1) run fchrf_s1 --graded $D/comb_chrf --graded-features $D/features/comb --graded-against base --seed 1 ;;
    *) echo "unknown run: $spec" >&2; exit 2 ;;
  esac
done
echo "== done $(date +%T)" >> $O/stages.log
