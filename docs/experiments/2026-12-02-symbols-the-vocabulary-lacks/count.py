"""How many distinct texts of a data folder's JSONL(.gz) files (gen, ref and text fields) hold
a symbol the MiniLM vocabulary lacks (Unicode So, Sk or Me, as probe.py drops them), or
U+FE0F / U+200D; the commonest such characters.

    python docs/experiments/2026-12-02-symbols-the-vocabulary-lacks/count.py FOLDER
"""

from __future__ import annotations

import gzip
import json
import sys
import unicodedata
from collections import Counter
from pathlib import Path

from mismatch_core.resources import load_tokenizer

known = {token.removeprefix("##") for token in load_tokenizer().get_vocab()}
known = {piece for piece in known if len(piece) == 1}


def lacked(character: str) -> bool:
    symbol = unicodedata.category(character) in ("So", "Sk", "Me") and character not in known
    return symbol or character in "\ufe0f\u200d"


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
holding = [text for text in texts if any(map(lacked, text))]
characters = Counter(c for text in holding for c in text if lacked(c))
print(
    f"{len(texts)} distinct texts; {len(holding)} hold such a symbol; {characters.most_common(10)}"
)
