"""How many distinct texts of a data folder's .jsonl.gz files (gen, ref and text fields) the
shipped tokenizer reads otherwise than MiniLM's own (``mismatch_core.vocabulary_gaps``), and
the commonest characters it rewrites in them.

    python docs/experiments/2026-12-02-symbols-the-vocabulary-lacks/changed.py FOLDER
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path

from transformers import AutoTokenizer

from mismatch_core.resources import encoder_path, load_tokenizer

texts = set()
for path in sorted(Path(sys.argv[1]).rglob("*.jsonl.gz")):
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            refs = record.get("ref")
            for text in [
                record.get("gen"),
                record.get("text"),
                *(refs if isinstance(refs, list) else [refs]),
            ]:
                if isinstance(text, str):
                    texts.add(text)
ordered = sorted(texts)
shipped = load_tokenizer()
own = AutoTokenizer.from_pretrained(encoder_path())
rewritten = shipped.backend_tokenizer.normalizer
before = own.backend_tokenizer.normalizer
changed = Counter()
count = 0
for text, ours, theirs in zip(
    ordered,
    shipped(ordered, add_special_tokens=False)["input_ids"],
    own(ordered, add_special_tokens=False)["input_ids"],
    strict=True,
):
    if ours != theirs:
        count += 1
        changed.update(
            c for c in set(text) if rewritten.normalize_str(c) != before.normalize_str(c)
        )
print(f"{len(texts)} distinct texts; {count} read otherwise; {changed.most_common(12)}")
