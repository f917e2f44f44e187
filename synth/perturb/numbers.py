"""NumErr rules: change a number, ordinal or quantifier, keeping how it is written.

Years, dates and times are spatio-temporal information (STErr), so tokens inside spaCy
DATE/TIME entities, year-like four-digit numbers and numbers that name things (Apollo 11,
Route 66) are left alone.
"""

from __future__ import annotations

import re

from lemminflect import getInflection
from spacy.tokens import Doc, Token

from synth.perturb.base import Change, Context, Rule, noun_lexname, replace_token, replace_tokens
from synth.perturb.grammar import verb_lemma

NUMBER_ENTS = ("", "CARDINAL", "QUANTITY", "MONEY", "PERCENT")
ORDINAL_ENTS = ("", "ORDINAL")
NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "hundred": 100,
}  # fmt: skip
WORD_CHOICES = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
ORDINAL_WORDS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth",
)  # fmt: skip
# A number right after one of these names something (Route 66, Apollo 11), it is no quantity.
NAME_WORDS = frozenset(
    "no no. number # route interstate highway flight episode chapter section article "
    "amendment channel pier gate platform apollo model type mark version page runway "
    "level grade class division league psalm volume vol. issue".split()
)
MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
JOINERS = frozenset("- – / : .".split())
DIGITS = re.compile(r"^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$")
DIGIT_ORDINAL = re.compile(r"^(\d+)(st|nd|rd|th)$", re.IGNORECASE)
FACTORS = (0.4, 0.5, 0.6, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0)
# Quantifier -> replacements that state a clearly different amount.
QUANTIFIERS = {"all": ("some",), "many": ("few",), "few": ("many",), "several": ("two",),
               "most": ("few",), "some": ("all",)}  # fmt: skip
QUANTIFIER_BLOCKERS = frozenset(("how", "as", "so", "too", "the", "great", "quite", "very"))
POSSESSIVE_DETS = frozenset("the his her their its our my your these those".split())
# Nouns that form fixed quantity phrases with "a" (a lot of, a couple of).
NO_PLURAL_NOUNS = frozenset("lot few bit number couple kind type sort little while".split())
PLURAL_VERB = {"is": "are", "was": "were", "has": "have", "does": "do"}


def _numeric_context_ok(token: Token, ents: tuple[str, ...]) -> bool:
    """A quantity token: right entity type, not part of a name, code or date."""
    if token.ent_type_ not in ents:
        return False
    doc = token.doc
    previous = doc[token.i - 1] if token.i > 0 else None
    following = doc[token.i + 1] if token.i + 1 < len(doc) else None
    if previous is not None:
        if previous.lower_ in NAME_WORDS or previous.lower_ in MONTHS:
            return False
        if previous.pos_ == "PROPN" and previous.text[:1].isupper():
            return False  # Apollo 11, Super Bowl 50, Alvis Speed 25
        if not previous.whitespace_ and previous.text in JOINERS:
            return False  # 978-1-4165-4253-7, 17R/35L
    if following is not None:
        if following.lower_ in MONTHS or (following.pos_ == "PROPN" and token.i == 0):
            return False  # 6th March, 1000 Piazzia
        if not token.whitespace_ and following.text in JOINERS and following.i + 1 < len(doc):
            return False  # second-class, 1. FC Koln (a final full stop is fine)
    return True


def _format_like(value: float, decimals: str, commas: bool) -> str:
    """Write ``value`` with the same number of decimals and the same thousands separators."""
    places = len(decimals) - 1 if decimals else 0
    text = f"{value:,.{places}f}" if commas else f"{value:.{places}f}"
    return text


def _new_number(token: Token, ctx: Context) -> str | None:
    match = DIGITS.match(token.text)
    if not match:
        return None
    integer, decimals = match.group(1), match.group(2) or ""
    value = float(integer.replace(",", "") + decimals)
    if not decimals and len(integer) == 4 and 1000 <= value <= 2100:
        return None  # looks like a year: STErr territory
    if not decimals and value < 2:
        return None  # 0 and 1 take a singular noun; changing them breaks agreement
    if not decimals and value <= 12:
        new_value = float(ctx.rng.choice([n for n in range(2, 13) if n != value]))
    else:
        digits = integer.replace(",", "").lstrip("0") or "0"
        significant = max(1, min(3, len(digits.rstrip("0"))))
        new_value = value * ctx.rng.choice(FACTORS)
        if not decimals:
            magnitude = len(str(int(new_value))) - significant
            new_value = float(round(new_value, -magnitude if magnitude > 0 else 0))
    new = _format_like(new_value, decimals, "," in integer)
    return None if new == token.text else new


def cardinal_digit(doc: Doc, ctx: Context) -> Change | None:
    """'3 dogs' -> '7 dogs', '1,200 metres' -> '1,500 metres'."""
    candidates = [t for t in doc if DIGITS.match(t.text) and _numeric_context_ok(t, NUMBER_ENTS)]
    ctx.rng.shuffle(candidates)
    for token in candidates:
        new = _new_number(token, ctx)
        if new:
            return replace_token(token, new, "NumErr/cardinal_digit")
    return None


def cardinal_word(doc: Doc, ctx: Context) -> Change | None:
    """'four apples' -> 'six apples' (number words above one, so the noun stays plural)."""
    candidates = [
        t for t in doc
        if t.lower_ in NUMBER_WORDS and t.pos_ == "NUM" and _numeric_context_ok(t, NUMBER_ENTS)
    ]  # fmt: skip
    if not candidates:
        return None
    token = ctx.rng.choice(candidates)
    value = NUMBER_WORDS[token.lower_]
    choices = [w for w in WORD_CHOICES if NUMBER_WORDS[w] != value]
    if value >= 20:
        choices = [w for w in NUMBER_WORDS if NUMBER_WORDS[w] >= 20 and NUMBER_WORDS[w] != value]
    return replace_token(token, ctx.rng.choice(choices), "NumErr/cardinal_word")


def ordinal(doc: Doc, ctx: Context) -> Change | None:
    """'first' -> 'third', '2nd' -> '4th' (adjectival ordinals outside dates)."""
    candidates = [
        t for t in doc
        if (t.lower_ in ORDINAL_WORDS and t.tag_ == "JJ" or DIGIT_ORDINAL.match(t.text))
        and _numeric_context_ok(t, ORDINAL_ENTS)
    ]  # fmt: skip
    if not candidates:
        return None
    token = ctx.rng.choice(candidates)
    match = DIGIT_ORDINAL.match(token.text)
    if match:
        value = int(match.group(1))
        new_value = ctx.rng.choice([n for n in range(1, max(11, value + 5)) if n != value])
        return replace_token(token, _digit_ordinal(new_value), "NumErr/ordinal")
    new = ctx.rng.choice([w for w in ORDINAL_WORDS[:6] if w != token.lower_])
    return replace_token(token, new, "NumErr/ordinal")


def _digit_ordinal(value: int) -> str:
    if 10 <= value % 100 <= 20:
        return f"{value}th"
    return f"{value}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(value % 10, 'th') }"


def _plural_head_after(token: Token) -> bool:
    """The quantifier counts a plural noun that follows it ('all (the) young children')."""
    head = token.head
    return head.tag_ in ("NNS", "NNPS") and head.i > token.i


def quantifier(doc: Doc, ctx: Context) -> Change | None:
    """'all dogs' -> 'some dogs', 'many people' -> 'few people', 'a few' -> 'many'."""
    candidates = []
    for token in doc:
        if token.lower_ not in QUANTIFIERS or token.tag_ not in ("DT", "PDT", "JJ", "JJS"):
            continue
        previous = doc[token.i - 1].lower_ if token.i > 0 else ""
        following = doc[token.i + 1] if token.i + 1 < len(doc) else None
        if following is None or previous in QUANTIFIER_BLOCKERS:
            continue
        if token.lower_ == "few" and previous == "a":
            candidates.append((token.i - 1, token.i, "many"))
        elif previous == "a":
            continue
        elif token.lower_ in ("some", "all") and not _plural_head_after(token):
            continue  # 'wearing all black' -> 'some black': no countable set to quantify
        elif token.lower_ in ("some", "all") and following.tag_ not in ("NNS", "JJ"):
            if token.lower_ == "all" and following.lower_ in POSSESSIVE_DETS | {"the"}:
                candidates.append((token.i, token.i, "some of"))  # 'all the children'
        elif following.pos_ in ("NOUN", "ADJ") or following.lower_ == "of":
            if token.lower_ == "most" and following.pos_ == "ADJ":
                continue  # 'most popular' is a superlative, not a quantity
            candidates.append((token.i, token.i, ctx.rng.choice(QUANTIFIERS[token.lower_])))
    if not candidates:
        return None
    first, last, new = ctx.rng.choice(candidates)
    return replace_tokens(
        doc, {first: new} | {i: "" for i in range(first + 1, last + 1)}, "NumErr/quantifier"
    )


def singular_to_two(doc: Doc, ctx: Context) -> Change | None:
    """'A man is riding' -> 'Two men are riding': one/a becomes two, noun and verb agree."""
    candidates = []
    for token in doc:
        if not (token.lower_ in ("a", "an", "one") and token.dep_ in ("det", "nummod")):
            continue
        noun = token.head
        if (
            noun.tag_ != "NN"
            or not noun.is_alpha
            or noun.i < token.i
            or noun.ent_type_
            or noun.lower_ in NO_PLURAL_NOUNS
            or noun.dep_ not in ("nsubj", "nsubjpass", "dobj", "pobj")
            or any(child.dep_ == "relcl" for child in noun.children)
            or _worn_or_role(noun)
            or noun_lexname(noun.lemma_.lower()) not in COUNTABLE_THINGS
            or (noun.i + 1 < len(doc) and doc[noun.i + 1].pos_ in ("NOUN", "PROPN"))
        ):
            continue  # a noun right after the head: the parse is wrong ('a blue shirt look')
        plural = getInflection(noun.lemma_, tag="NNS")
        if plural and plural[0] != noun.text:
            candidates.append((token, noun, plural[0]))
    if not candidates:
        return None
    token, noun, plural = ctx.rng.choice(candidates)
    new_texts = {token.i: "two", noun.i: plural}
    if noun.dep_ in ("nsubj", "nsubjpass"):
        verbs = [noun.head, *(v for v in noun.head.conjuncts if not _has_subject(v))]
        for verb in verbs:
            for word in (verb, *(c for c in verb.children if c.dep_ in ("aux", "auxpass"))):
                if word.lower_ in PLURAL_VERB:
                    new_texts[word.i] = PLURAL_VERB[word.lower_]
                elif word.tag_ == "VBZ":
                    base = getInflection(verb_lemma(word), tag="VBP")
                    if not base:
                        return None
                    new_texts[word.i] = base[0]
    return replace_tokens(doc, new_texts, "NumErr/singular_to_two")


# Things one can see two of: 'two big smiles', 'two audiences' or 'two foamy baths' read
# as odd, not as a different number.
COUNTABLE_THINGS = frozenset(
    ("noun.artifact", "noun.animal", "noun.person", "noun.food", "noun.plant", "noun.object")
)


def _worn_or_role(noun: Token) -> bool:
    """Clothes and roles come one to a person: 'wearing two jackets', 'a man in two suits' or
    'served as two crew members' read as odd, not as a different number."""
    head = noun.head
    if noun.dep_ == "dobj" and head.lemma_ == "wear":
        return True
    if noun.dep_ == "pobj" and head.lower_ == "as":
        return True
    return noun.dep_ == "pobj" and head.lower_ == "in" and head.head.pos_ in ("NOUN", "PROPN")


def _has_subject(verb: Token) -> bool:
    return any(child.dep_ in ("nsubj", "nsubjpass", "expl") for child in verb.children)


RULES: dict[str, list[Rule]] = {
    "NumErr": [cardinal_digit, cardinal_word, ordinal, quantifier, singular_to_two],
}
