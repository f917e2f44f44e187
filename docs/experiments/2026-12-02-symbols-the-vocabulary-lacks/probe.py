"""How the shipped base reads texts holding symbols the MiniLM vocabulary lacks, as shipped and
with a tokenizer normalizer in front of the encoder (a probe: the code is not changed).

    python docs/experiments/2026-12-02-symbols-the-vocabulary-lacks/probe.py MODE

MODE "shipped": the tokenizer as the code loads it. "drop": symbols of Unicode category So,
Sk or Me that no vocabulary entry holds (as "x" or "##x"), and U+FE0F and U+200D, replaced by a
space before wordpieces are cut (``tokenizers.normalizers.Replace``, which keeps character
offsets). "nfkc_drop": NFKC first ("℃" -> "°C", fullwidth digits -> digits), then "drop".
"""

from __future__ import annotations

import functools
import sys
import unicodedata

from tokenizers import Regex, normalizers

import mismatch_core.resources as resources

MODE = sys.argv[1]
loaded = resources.load_tokenizer


def lacked_symbols(tokenizer) -> list[str]:
    known = set()
    for token in tokenizer.get_vocab():
        piece = token.removeprefix("##")
        if len(piece) == 1:
            known.add(piece)
    symbols = [
        c
        for c in map(chr, range(0x110000))
        if unicodedata.category(c) in ("So", "Sk", "Me") and c not in known
    ]
    return [*symbols, "\ufe0f", "\u200d"]


@functools.cache
def load_tokenizer(name: str = resources.DEFAULT_ENCODER):
    tokenizer = loaded(name)
    if MODE in ("drop", "nfkc_drop"):
        lacked = "".join(f"\\x{{{ord(c):X}}}" for c in lacked_symbols(tokenizer))
        backend = tokenizer.backend_tokenizer
        steps = [normalizers.NFKC()] if MODE == "nfkc_drop" else []
        steps += [backend.normalizer, normalizers.Replace(Regex(f"[{lacked}]"), " ")]
        backend.normalizer = normalizers.Sequence(steps)
    return tokenizer


resources.load_tokenizer = load_tokenizer
from evaluator import Evaluator  # noqa: E402

FOOD = "The food was great and the staff were friendly."
PAIRS = [
    (FOOD, FOOD),
    (FOOD, "The food was great😀 and the staff were friendly."),
    (FOOD, "The food was great 😀 and the staff were friendly."),
    (FOOD, "The food was terrible😀 and the staff were friendly."),
    (FOOD, "The food was terrible and the staff were friendly."),
    ("I love New York.", "I ❤️ New York."),
    ("Thanks for your help!", "Thanks for your help! 🙏🏽"),
    ("It was 25°C today.", "It was 25°C today."),
    ("It was 25°C today.", "It was 25℃ today."),
    ("It was 25°C today.", "It was 35℃ today."),
]
evaluator = Evaluator.from_pretrained(resources.REPO_ROOT / "checkpoints" / "mismatch-base")
predictions = evaluator.predict([r for r, _ in PAIRS], [g for _, g in PAIRS], progress=False)
tokenizer = resources.load_tokenizer()
for (ref, gen), p in zip(PAIRS, predictions, strict=True):
    pieces = " ".join(tokenizer.tokenize(gen))
    print(f"| {ref} | {gen} | {p.score:.3f} | {', '.join(p.labels) or '-'} | {pieces} |")
