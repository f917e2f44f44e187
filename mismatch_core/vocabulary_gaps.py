"""Characters a WordPiece vocabulary lacks, rewritten before wordpieces are cut.

A word holding a character the vocabulary has no piece for becomes one ``[UNK]`` and the word
is lost: "terrible😀" reads as an unknown word, not as "terrible", and "25℃" loses its number.
The encoder reads such text better with the character replaced:
- a letterlike symbol or number form (U+2100-U+218F) whose NFKC form is Latin-1 text the
  vocabulary holds, by that text ("℃" -> "°C", "Ⅻ" -> "XII", "℅" -> "c/o");
- any other symbol (Unicode categories S*: emoji, skin tones, dingbats, math and currency
  signs; and enclosing marks, as the keycap of "1️⃣") by a space, as frozen for Unicode 14.0.0
  in ``mismatch_core.unicode_symbols``.
Letters of scripts the vocabulary lacks stay ``[UNK]``: dropping them would drop words. So do
other compatibility forms (fullwidth letters, mathematical letters outside U+2100-U+218F,
fractions): each distinct replacement text is one more pass over every text, and the 405
passes of all Latin-1 ones cost `mismatch predict` a fifth of its speed, where these 37 cost
a few percent (docs/experiments/2026-12-02-symbols-the-vocabulary-lacks). The rewrite is a
``tokenizers`` normalizer, so character offsets (error spans) still point into the text as
given.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict

from tokenizers import Regex, models, normalizers

from mismatch_core.unicode_symbols import UNICODE_VERSION, symbol_code_points

# Part of every encoder feature's version (features.embeddings.encoder_reading): raise the
# number when the rewrite changes, so caches filled before are not read as this one's.
ENCODER_TEXT_FORM = f"vocabulary-gaps-3+unicode-{UNICODE_VERSION}"
# Letterlike Symbols, Number Forms: NFKC maps their characters the same in every Unicode
# version (normalization stability), so the replacements do not depend on the Python
REPLACED_BLOCK = range(0x2100, 0x2190)


def rewrite_vocabulary_gaps(tokenizer) -> None:
    """Put the rewrite in front of a fast WordPiece tokenizer's own normalizer, in place; any
    other tokenizer (byte-level BPE has no unknown characters) is left as it is."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not isinstance(backend.model, models.WordPiece):
        return
    own = backend.normalizer
    replacements, symbols = gap_replacements(set(tokenizer.get_vocab()), own)
    steps = [normalizers.Replace(character_class(chars), text) for text, chars in replacements]
    if symbols:
        steps.append(normalizers.Replace(character_class(symbols), " "))
    backend.normalizer = normalizers.Sequence([*steps, own] if own is not None else steps)


def gap_replacements(vocabulary: set[str], own) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """(replacement text, the characters it replaces) per text, and the symbols to blank, for
    the characters whose form after the tokenizer's own normalizer ``own`` the vocabulary
    lacks. A replacement text is given as ``own`` leaves it (lower case where it lowers), so
    "Ⅱ" and "ⅱ" share one pass; ``own`` still runs after it."""

    def normalized(text: str) -> str:
        return own.normalize_str(text) if own is not None else text

    pieces = {token.removeprefix("##") for token in vocabulary}
    known = {piece for piece in pieces if len(piece) == 1}

    def readable(text: str) -> bool:
        return all(char in known or char.isspace() for char in normalized(text))

    by_text: dict[str, list[str]] = defaultdict(list)
    symbols = []
    symbol_codes = set(symbol_code_points())
    for code in sorted(symbol_codes.union(REPLACED_BLOCK)):
        char = chr(code)
        if readable(char):
            continue
        compatible = unicodedata.normalize("NFKC", char) if code in REPLACED_BLOCK else ""
        if compatible and all(ord(c) <= 0xFF for c in compatible) and readable(compatible):
            by_text[normalized(compatible)].append(char)
        elif code in symbol_codes:
            symbols.append(char)
    return sorted(by_text.items()), symbols


def character_class(chars: list[str]) -> Regex:
    """One regex character class of ``chars``, each written as a code point."""
    return Regex("[" + "".join(f"\\x{{{ord(char):X}}}" for char in chars) + "]")
