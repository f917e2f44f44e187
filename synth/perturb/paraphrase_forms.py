"""NoContr rules: the same words in another written form, twins of NumErr and spelling slips.

British <-> American spelling ("color" <-> "colour", "organize" <-> "organise") and the same
number re-expressed ("300" <-> "three hundred", "1.5 million" <-> "1,500,000", "12 percent"
<-> "12%"). Each keeps every value, negation and name: the model must see a number written
another way as harmless and a changed number (NumErr) as an error.
"""

from __future__ import annotations

import re

from spacy.tokens import Doc, Token

from synth.perturb.base import Change, Context, match_case, replace
from synth.perturb.lexicon_spelling import SPELLING

COUNT_ENTITIES = ("", "CARDINAL", "QUANTITY", "MONEY", "PERCENT")
UNITS = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen").split()  # fmt: skip
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_VALUES = {word: i for i, word in enumerate(ONES)} | {w: 20 + 10 * i for i, w in enumerate(TENS)}
DIGITS = re.compile(r"^\d{1,3}(?:,\d{3})*$|^\d+$")
DECIMAL = re.compile(r"^\d+(?:\.\d+)?$")


def spelling(doc: Doc, ctx: Context) -> Change | None:
    """'The colour of the centre' <-> 'The color of the center' (one word)."""
    candidates = [
        (token, SPELLING[token.lower_])
        for token in doc
        if token.lower_ in SPELLING and token.ent_iob_ in ("", "O") and token.is_alpha
    ]
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace(doc, token.idx, token.idx + len(token.text), match_case(token.text, new), "NoContr/spelling")


def under_hundred(value: int) -> str:
    """'forty-two' for 42 (0-99)."""
    if value < 20:
        return ONES[value]
    tens, ones = divmod(value, 10)
    return TENS[tens - 2] + (f"-{ONES[ones]}" if ones else "")


def round_in_words(value: int) -> str | None:
    """Words for a round count: 300 -> 'three hundred', 25000 -> 'twenty-five thousand',
    2000000 -> 'two million'; None when the number is not a multiple of 100 below 100 billion
    with a leading part under 100 (1250 has no short spoken form)."""
    for unit, size in (("billion", 10**9), ("million", 10**6), ("thousand", 1000), ("hundred", 100)):
        lead, rest = divmod(value, size)
        if 1 <= lead < 100 and rest == 0 and not (unit == "hundred" and lead >= 10):
            return f"{under_hundred(lead)} {unit}"
    return None


def _is_count(token: Token) -> bool:
    return token.ent_type_ in COUNT_ENTITIES and token.tag_ == "CD"


def _words_value(tokens: list[Token]) -> int | None:
    """The value of 'three hundred', 'twenty - five thousand', 'twelve million'."""
    words = [t.lower_ for t in tokens if t.text != "-"]
    if len(words) < 2 or words[-1] not in UNITS:
        return None
    if any(w not in WORD_VALUES for w in words[:-1]):
        return None
    lead = [WORD_VALUES[w] for w in words[:-1]]
    if len(lead) > 2 or (len(lead) == 2 and not (lead[0] >= 20 and 0 < lead[1] < 10)):
        return None
    return sum(lead) * UNITS[words[-1]]


def number_expression(doc: Doc, ctx: Context) -> Change | None:
    """'300 people' <-> 'three hundred people', '1.5 million' <-> '1,500,000', '12 percent' <->
    '12%': the same value written another way (no date, year or name is touched)."""
    candidates: list[tuple[int, int, str]] = []
    tokens = list(doc)
    for i, token in enumerate(tokens):
        if not _is_count(token):
            continue
        before = tokens[i - 1] if i else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if before is not None and (before.like_num or before.text in (".", "/", ":") and not before.whitespace_):
            continue  # inside a longer number or a score ('3-2'): the run starts earlier
        end = token.idx + len(token.text)
        text = token.text
        if after is not None and (after.pos_ == "PROPN" or not token.whitespace_ and after.text[:1].isalpha()):
            continue  # part of a name ('300 North LaSalle') or a unit glued to it ('900m')
        if DIGITS.match(text) and (after is None or after.lower_ not in UNITS):
            value = int(text.replace(",", ""))
            if "," not in text and 1000 <= value <= 2100:
                continue  # most likely a year the tagger missed
            words = round_in_words(value) if value >= 100 else None
            if words and (after is None or not after.like_num):
                candidates.append((token.idx, end, words))
        if DECIMAL.match(text) and after is not None and after.lower_ in ("million", "billion"):
            value = round(float(text) * UNITS[after.lower_])
            if value == float(text) * UNITS[after.lower_]:
                candidates.append((token.idx, after.idx + len(after.text), f"{value:,}"))
        if DIGITS.match(text) and "," in text:
            value = int(text.replace(",", ""))
            for unit in ("billion", "million"):
                lead = value / UNITS[unit]
                if lead >= 1 and value % (UNITS[unit] // 10) == 0:
                    candidates.append((token.idx, end, f"{lead:g} {unit}"))
                    break
        if after is not None and DECIMAL.match(text):
            if after.lower_ == "percent":
                candidates.append((token.idx, after.idx + len(after.text), f"{text}%"))
            elif after.text == "%" and not token.whitespace_:
                candidates.append((token.idx, after.idx + 1, f"{text} percent"))
        if token.lower_ in WORD_VALUES and (before is None or before.lower_ not in WORD_VALUES):
            run = [token]
            for nxt in tokens[i + 1 : i + 5]:
                run.append(nxt)
                if nxt.lower_ in UNITS:
                    break
            spelled = _words_value(run)
            following = tokens[run[-1].i + 1] if run[-1].i + 1 < len(tokens) else None
            if spelled is not None and (following is None or not following.like_num):
                candidates.append((token.idx, run[-1].idx + len(run[-1].text), f"{spelled:,}"))
    if not candidates:
        return None
    start, end, new = ctx.rng.choice(candidates)
    old = doc.text[start:end]
    return replace(doc, start, end, match_case(old, new), "NoContr/number_expression")


RULES = {"NoContr": [spelling, number_expression]}
