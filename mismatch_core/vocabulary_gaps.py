"""Characters a WordPiece vocabulary lacks, rewritten before wordpieces are cut.

A word holding a character the vocabulary has no piece for becomes one ``[UNK]`` and the word
is lost: "terrible😀" reads as an unknown word, not as "terrible", and "25℃" loses its number.
The encoder reads such text better with the character replaced:
- a compatibility form whose NFKC form is Latin-1 text the vocabulary holds by that text
  ("℃" -> "°C", fullwidth or styled letters and digits, ligatures, "‼" -> "!!");
- any other symbol (Unicode categories So, Sk, Me: emoji, skin tones, dingbats) by a space.
Letters of scripts the vocabulary lacks stay ``[UNK]``: dropping them would drop words. The
rewrite is a ``tokenizers`` normalizer, so character offsets (error spans) still point into
the text as given.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict

from tokenizers import Regex, models, normalizers

# Part of every encoder feature's version (features.embeddings.encoder_source): raise it when
# the rewrite changes, so caches filled before are not read as this one's.
TEXT_FORM = "vocabulary-gaps-1"
SYMBOL_CATEGORIES = ("So", "Sk", "Me")
LAST_LATIN1 = 0xFF  # each distinct replacement is one regex pass, so only Latin-1 text is used


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
    """(replacement text, the characters it replaces) per NFKC text, and the symbols to blank,
    for the characters whose form after the tokenizer's own normalizer ``own`` the vocabulary
    lacks."""
    pieces = {token.removeprefix("##") for token in vocabulary}
    known = {piece for piece in pieces if len(piece) == 1}

    def readable(text: str) -> bool:
        normalized = own.normalize_str(text) if own is not None else text
        return all(char in known or char.isspace() for char in normalized)

    by_text: dict[str, list[str]] = defaultdict(list)
    symbols = []
    for code in range(0x110000):
        char = chr(code)
        category = unicodedata.category(char)
        compatible = unicodedata.normalize("NFKC", char)
        if category == "Cs" or (compatible == char and category not in SYMBOL_CATEGORIES):
            continue
        if readable(char):
            continue
        if compatible != char and readable(compatible):
            if all(ord(c) <= LAST_LATIN1 for c in compatible):
                by_text[compatible].append(char)
                continue
        if category in SYMBOL_CATEGORIES:
            symbols.append(char)
    return sorted(by_text.items()), symbols


def character_class(chars: list[str]) -> Regex:
    """One regex character class of ``chars``, each written as a code point."""
    return Regex("[" + "".join(f"\\x{{{ord(char):X}}}" for char in chars) + "]")
