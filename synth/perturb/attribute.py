"""AttrErr rules: change an adjective of a noun or a manner adverb of a verb to a different value.

Values come from curated attribute scales (colour, size, age, material, ...; see
lexicon_attributes) and from WordNet antonyms (quickly -> slowly). Numbers, ordinals,
directions and places are left alone (NumErr, STErr), and so are adjectives inside names
and fixed compounds ("high school", "hot dog"), where a swap would change the entity.

Its harmless twin (NoContr) lives here too, since it takes the same adjectives: a near-synonym
on the same side of the scale ("a giant pulley" -> "a large pulley").
"""

from __future__ import annotations

import functools

from lemminflect import getInflection
from spacy.tokens import Doc, Token

from mismatch_core.resources import lemma_count, wordnet
from synth.perturb.base import Change, Context, lemmas, replace_word
from synth.perturb.lexicon_attributes import (
    ADVERB_OPPOSITES,
    ATTRIBUTE_SCALES,
    ELDERLY_HEADS,
    GRADABLE,
    NOT_ATTRIBUTES,
    QUANTITY_NOUNS,
    SAME_VALUE_ADJECTIVES,
    SAME_VALUE_HEADS,
)

ADJ_DEPS = ("amod", "acomp", "oprd", "conj", "attr", "compound")
MEASURE_UNITS = ("metres", "meters", "feet", "foot", "inches", "km", "miles", "cm", "mm", "m")
AGES = ("old", "young", "elderly", "older", "younger", "oldest", "youngest")
WEATHER = ("sunny", "rainy", "snowy", "cloudy")
WEATHER_HEADS = ("day", "weather", "sky", "afternoon", "morning", "evening", "night")
CHILD_NOUNS = ("child", "kid", "baby", "toddler", "infant", "boy", "girl", "son", "daughter")
COLOURS = tuple(ATTRIBUTE_SCALES[0].replace("/", " ").split())


@functools.lru_cache(maxsize=1)
def _scale_of() -> dict[str, tuple[str, ...]]:
    """Each scale word -> the values on the other side(s) of its first scale."""
    scales: dict[str, tuple[str, ...]] = {}
    for scale in ATTRIBUTE_SCALES:
        poles = [pole.split() for pole in scale.split("/")]
        for pole in poles:
            others = tuple(word for other in poles if other is not pole for word in other)
            for word in pole:
                scales.setdefault(word, others)
    return scales


@functools.lru_cache(maxsize=8192)
def _antonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """Single-word WordNet antonyms of the lemma's most frequent sense that has any."""
    for synset in wordnet().synsets(lemma, pos=pos)[:2]:
        for lemma_obj in synset.lemmas():
            if lemma_obj.name().lower() != lemma:
                continue
            names = tuple(
                a.name()
                for a in lemma_obj.antonyms()
                if "_" not in a.name() and not a.name().startswith("non") and lemma_count(a) > 0
            )
            if names:
                return names
    return ()


@functools.lru_cache(maxsize=8192)
def _is_compound(adjective: str, noun: str) -> bool:
    """True when "adjective noun" is a WordNet collocation (high school, hot dog).

    Person collocations ("old man", "young lady") still read as an attribute of a person.
    """
    wn = wordnet()
    if not wn.synsets(f"{adjective}_{noun}"):
        return False
    noun_senses = wn.synsets(noun, pos="n")
    return not noun_senses or noun_senses[0].lexname() != "noun.person"


@functools.lru_cache(maxsize=8192)
def _lexnames(noun: str) -> tuple[str, ...]:
    return tuple(s.lexname() for s in wordnet().synsets(noun, pos="n")[:1])


def _is_person(noun: str) -> bool:
    """True when the noun's most frequent sense is a person (man, girl, player)."""
    return _lexnames(noun) == ("noun.person",)


def _fits_head(adjective: str, head: Token) -> bool:
    """Whether swapping this adjective of this head stays an attribute change.

    A colour of a person is ethnicity ("a white American"), "little"/"old" of a child is
    age phrasing ("a little girl" -> "a huge girl"), and "full name" is a fixed phrase.
    """
    noun = head.lemma_.lower()
    if head.pos_ == "PROPN" or head.ent_type_:
        return adjective not in COLOURS
    person = head.pos_ == "NOUN" and _is_person(noun)
    if person and (adjective in COLOURS or adjective in ("little", "tiny")):
        return False
    if noun in CHILD_NOUNS and adjective in ("old", "young", "elderly", "little", "small", "big"):
        return False
    if adjective in AGES and not (
        person or (senses := _lexnames(noun)) and senses[0] == "noun.animal"
    ):
        return False  # "old parking meters" are not "young parking meters"
    if adjective in WEATHER and noun not in WEATHER_HEADS:
        return False  # "the snowy ground" is not "the cloudy ground"
    return not (adjective == "full" and noun in ("name", "title", "member", "time"))


def _adjective_values(token: Token) -> tuple[str, ...]:
    """Other values for an adjective, inflected like it (bigger -> smaller)."""
    if token.tag_ in ("JJR", "JJS"):
        lemma = (lemmas(token.lower_, "ADJ") or (token.lower_,))[0]
    else:
        lemma = token.lower_
    values = _scale_of().get(lemma) or _antonyms(lemma, "a")
    if token.tag_ not in ("JJR", "JJS"):
        return values
    inflected = (getInflection(value, tag=token.tag_) for value in values if value in GRADABLE)
    return tuple(forms[0] for forms in inflected if forms and " " not in forms[0])


def _is_candidate_adjective(token: Token) -> bool:
    doc = token.doc
    if token.dep_ not in ADJ_DEPS or token.lower_ in NOT_ATTRIBUTES or token.ent_type_:
        return False
    previous = doc[token.i - 1] if token.i > 0 else None
    if previous is not None and (
        token.text[:1].isupper() or previous.lower_ in ("how", "years", "year", "months")
    ):
        return False
    if token.pos_ != "ADJ" and not (token.lower_ in COLOURS and token.head.pos_ == "NOUN"):
        return False
    if token.dep_ == "compound" and token.lower_ not in COLOURS:
        return False
    head = token.head
    if token.i + 1 < len(doc) and doc[token.i + 1].lower_ in ("years", "year", "of", "up", "-"):
        return False  # "close up", "a well-known" are fixed forms
    if any(c.dep_ in ("npadvmod", "prt") or c.like_num for c in token.children):
        return False  # "252 metres long" is a measurement: NumErr
    if previous is not None and previous.lower_ in MEASURE_UNITS:
        return False
    if head.lemma_.lower() in QUANTITY_NOUNS:
        return False  # "a large group" states a quantity
    if not _fits_head(token.lower_, head):
        return False
    return not (head.pos_ == "NOUN" and _is_compound(token.lower_, head.lemma_.lower()))


def _candidates(doc: Doc) -> list[tuple[Token, tuple[str, ...], str]]:
    found: list[tuple[Token, tuple[str, ...], str]] = []
    for token in doc:
        values: tuple[str, ...]
        if token.pos_ == "ADV" and token.dep_ == "advmod" and token.head.pos_ == "VERB":
            values = (ADVERB_OPPOSITES[token.lower_],) if token.lower_ in ADVERB_OPPOSITES else ()
            if not values and token.lower_.endswith("ly"):
                values = _antonyms(token.lower_, "r")
            if values:
                found.append((token, values, "AttrErr/adverb"))
        elif _is_candidate_adjective(token):
            values = _adjective_values(token)
            if values:
                lemma = (lemmas(token.lower_, "ADJ") or (token.lower_,))[0]
                rule = "AttrErr/scale" if lemma in _scale_of() else "AttrErr/antonym"
                found.append((token, values, rule))
    return found


def swap_attribute(doc: Doc, ctx: Context) -> Change | None:
    """Replace one adjective or manner adverb by another value of the same attribute."""
    candidates = _candidates(doc)
    if not candidates:
        return None
    token, values, rule = ctx.rng.choice(candidates)
    present = {t.lower_ for t in doc}
    values = tuple(
        v for v in values if v not in present
    )  # not "orange and yellow" -> "yellow and yellow"
    if not values:
        return None
    return replace_word(token, ctx.rng.choice(values), rule)


def same_value_adjective(doc: Doc, ctx: Context) -> Change | None:
    """Trade an adjective of a noun that the attribute rule could swap for one of the same value
    (SAME_VALUE_ADJECTIVES: sideways or toned down): "a giant pulley" -> "a large pulley", the
    harmless twin of AttrErr/scale. Only of a noun it describes in that sense
    (SAME_VALUE_HEADS); "little" only after a determiner ("little time" is not much time)."""
    present = {t.lower_ for t in doc}
    candidates = []
    for token in doc:
        word, head, noun = token.lower_, token.head, token.head.lemma_.lower()
        if word not in SAME_VALUE_ADJECTIVES or token.tag_ != "JJ" or token.dep_ != "amod":
            continue
        if head.pos_ != "NOUN" or not _is_candidate_adjective(token):
            continue
        senses = _lexnames(noun)
        if not senses or senses[0] not in SAME_VALUE_HEADS[word]:
            continue
        if word == "little" and (token.i == 0 or doc[token.i - 1].pos_ != "DET"):
            continue
        if word == "old" and noun not in ELDERLY_HEADS:
            continue  # an "old friend" is a friend of long standing
        values = tuple(v for v in SAME_VALUE_ADJECTIVES[word] if v not in present)
        if values:
            candidates.append((token, values))
    if not candidates:
        return None
    token, values = ctx.rng.choice(candidates)
    return replace_word(token, ctx.rng.choice(values), "NoContr/same_value_adjective")


RULES = {"AttrErr": [swap_attribute], "NoContr": [same_value_adjective]}
