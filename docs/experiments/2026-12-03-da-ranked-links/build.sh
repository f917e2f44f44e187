#!/bin/bash
# The link folders and their features, as made for this record (session 75, S=/work/data/s75):
# DA-ranked links (two variants), graded chains on session 72's real bases, the two combined
# folders; features with the shipped base's 45 columns (41 + the four head-only ones).
set -euo pipefail
R=$(cd "$(dirname "$0")" && pwd)
cd /work/main; source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
D=${D:-/work/data/s72/next}; S=${S:-/work/data/s75}
source $R/steps.sh
python $R/ranked_links.py --out $S/ranked
python $R/ranked_links.py --out $S/ranked_good --parent-min 0.5  # same ids: reads f_ranked
features $S/ranked $S/f_ranked
mismatch adapt chains --real $D/real_bases --out $S/chains
features $S/chains $S/f_chains
python $R/combine.py $S/chains $S/ranked $S/comb
rm -rf $S/f_comb; cp -r $S/f_chains $S/f_comb  # the chains' rows are reused, the DA rows computed
features $S/comb $S/f_comb
python $R/combine.py $S/chains $S/ranked $S/comb_agree --agree $S/f_comb  # reads f_comb
