# sourced by this record's exp.sh and exph.sh and by ../2026-11-28-family-names/runs.sh, after
# they set P (the inputs: build.sh's folder) and O (the runs folder): the environment, the
# continuation arguments A (real and synth pairs) and G (graded chains), evalc NAME CHECKPOINT
# (demo, real text, DARR sample) and run NAME ARGS (one `mismatch adapt train` into $O/$N.log)
set -uo pipefail
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=2
mkdir -p $O
A="--real $P/real --real-features $P/f_real --synth $P/synth30k --synth-features $P/f_synth30k"
G="--graded $P/chains --graded-features $P/f_chains"
evalc() {  # name checkpoint
  mismatch demo --checkpoint $2 > $O/$1.demo 2>&1
  mismatch bench realtext --checkpoint $2 --parts sick,bases --out $O/$1.rt.json > $O/$1.rt.log 2>&1
  mismatch bench realtext --checkpoint $2 --parts darr --out $O/$1.darr.json > $O/$1.darr.log 2>&1
  echo "== evaluated $1 $(date +%T)" >> $O/stages.log
}
run() { echo "== $1 $(date +%T)" >> $O/stages.log; shift; mismatch adapt train "$@" > $O/$N.log 2>&1; }
