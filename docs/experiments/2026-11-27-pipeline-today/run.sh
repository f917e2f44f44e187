#!/bin/bash
# Full base pipeline on the 2-core machine, today's generator, timed per stage.
set -euo pipefail
cd /work/exp
source /work/main/.venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
P=/work/data/s37/pipe
EXTRA=$(python -c "from evaluator.features.registry import DEFAULT_FEATURES as D; print(','.join(D+('disfluency','question_changed','order_flipped','verb_antonym')))")
stage() { name=$1; shift; echo "== $name $(date +%T)" >> $P/stages.log; /usr/bin/time -v -o $P/$name.time "$@" > $P/$name.log 2>&1; grep -E 'Elapsed|Maximum res' $P/$name.time | sed "s/^/$name /" >> $P/stages.log; }
stage synth mismatch synth --config configs/synth.yaml --out $P/synth --quiet
for s in val train; do
  stage feat_$s mismatch features --pairs $P/synth/$s.parquet --out $P/features/$s.parquet \
    --embeddings $P/features/embeddings.parquet --alignments $P/features/alignments.parquet \
    --chunk-size 16384 --quiet
done
stage pretrain python scripts/pretrain.py fit --config configs/pretrain.yaml --data.pairs_dir $P/synth \
  --data.features $P/features --data.embeddings $P/features/embeddings.parquet \
  --data.alignments $P/features/alignments.parquet --export_dir $P/base --run_name pipe \
  --docs_dir $P/docs --log_dir $P/runs --trainer.enable_progress_bar false
stage synth30k mismatch synth --config configs/synth.yaml --num-pairs 30000 --out $P/synth30k --quiet
stage adapt_pairs mismatch adapt pairs --sick-substitutions --out $P/real
for d in synth30k real; do for s in val train; do
  stage feat_${d}_$s mismatch features --pairs $P/$d/$s.parquet --out $P/f_$d/$s.parquet \
    --features $EXTRA --embeddings $P/f_$d/embeddings.parquet --alignments $P/f_$d/alignments.parquet --quiet
done; done
A="--real $P/real --real-features $P/f_real --synth $P/synth30k --synth-features $P/f_synth30k"
stage adapt1 mismatch adapt train --checkpoint $P/base $A --out $P/cont
stage adapt2 mismatch adapt train --checkpoint $P/cont $A --out $P/disf --add-features disfluency --head-only --learning-rate 0.03
stage adapt3 mismatch adapt train --checkpoint $P/disf $A --out $P/final --add-features question_changed,order_flipped,verb_antonym --head-only --learning-rate 0.03 --nocontr-weights 3,4,5
echo "== done $(date +%T)" >> $P/stages.log
stage realtext mismatch bench realtext --checkpoint $P/final --parts sick,bases --out $P/rt_final.json
touch $P/DONE
