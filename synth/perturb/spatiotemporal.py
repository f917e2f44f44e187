"""STErr rules: change a place, a direction, a spatial relation or a point in time.

Each rule changes where or when something is, never who or what: places are swapped with
another place of the same kind, spatial prepositions only when their object is a physical
thing or location, and time only as years, months, weekdays, days, seasons and clock times.
"""

from __future__ import annotations

import functools
import re

from spacy.tokens import Doc, Span, Token

from synth.perturb.base import (
    Change,
    Context,
    Rule,
    noun_lexname,
    replace,
    replace_tokens,
    replace_word,
)
from synth.perturb.lexicon_places import (
    CITIES,
    COUNTRIES,
    COUNTRY_ALIASES,
    FACILITIES,
    REGIONS,
    US_STATES,
)

# Word -> its spatial opposite; a direction is swapped only where the condition below holds.
COMPASS = {
    "north": "south", "south": "north", "east": "west", "west": "east",
    "northern": "southern", "southern": "northern", "eastern": "western", "western": "eastern",
    "northeast": "southwest", "southwest": "northeast", "northwest": "southeast",
    "southeast": "northwest", "northward": "southward", "southward": "northward",
}  # fmt: skip
OPPOSITES = {
    "inside": "outside", "outside": "inside", "indoors": "outdoors", "outdoors": "indoors",
    "indoor": "outdoor", "outdoor": "indoor", "above": "below", "below": "above",
    "upstairs": "downstairs", "downstairs": "upstairs", "uphill": "downhill",
    "downhill": "uphill", "upward": "downward", "downward": "upward", "upwards": "downwards",
    "downwards": "upwards", "underneath": "on top of", "beneath": "above",
}  # fmt: skip
SIDE = {"left": "right", "right": "left"}
SIDE_NOUNS = frozenset(
    "hand arm leg foot side lane corner eye ear shoulder knee wrist wing field turn bank "
    "cheek fist".split()
)
TURN_VERBS = frozenset("turn go move look veer swerve lean face head point steer".split())
UP_DOWN = {"up": "down", "down": "up"}
MOTION_VERBS = frozenset(
    "climb walk run go come jump look slide ski ride roll move head swim stare glance point "
    "race skate hike run travel drive fly float sail bike cycle crawl descend ascend".split()
)
# Spatial preposition -> replacements that put the thing somewhere else.
PREPOSITIONS = {
    "on": ("under", "next to", "beside"), "in": ("near", "outside", "behind"),
    "under": ("on", "above", "next to"), "behind": ("in front of", "next to"),
    "near": ("far from", "under", "behind"), "beside": ("behind", "under", "far from"),
    "inside": ("outside", "behind"), "onto": ("off",), "into": ("out of",),
}  # fmt: skip
# Things a person or object can plausibly be under (a floor, a bike or a lawn are not).
ROOFED_OBJECTS = frozenset(
    "table bench bridge tree umbrella desk chair car truck bus bed tent awning sign blanket "
    "canopy roof porch tarp counter stairs staircase boat arch archway overpass shelter "
    "balcony ledge tarp piano".split()
)
MOTION_VERBS = frozenset(
    "jump dive walk run go climb get fall ride drive step move come head swim fly throw "
    "kick hit pour put place push pull carry lead".split()
)
PHYSICAL_LEXNAMES = frozenset(
    ("noun.artifact", "noun.location", "noun.object", "noun.plant", "noun.substance")
)
NON_SPATIAL_OBJECTS = frozenset(
    "phone cellphone telephone tv television computer laptop internet screen radio camera "
    "air sun sunlight shade rain snow wind sky dark darkness light background foreground "
    "distance middle center centre front top bottom line way water attire uniform "
    "costume outfit clothing right left side".split()
)
NON_SPATIAL_HEADS = frozenset("dress clothe wear interest involve participate compete".split())
PLACE_PREPOSITIONS = frozenset("in from at near to of across through outside".split())
NON_SPATIAL_LEXNAMES = frozenset(
    ("noun.act", "noun.event", "noun.communication", "noun.cognition", "noun.state", "noun.time")
)
YEAR_PREVIOUS = frozenset(
    "in since from until till by year before after around circa c. between and to – - , of".split()
)
CLOTHING = ("clothing.n.01", "covering.n.02")
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SEASONS = ("summer", "winter", "spring", "autumn")
DAY_PARTS = ("morning", "afternoon", "evening", "night")
SUN_TIMES = ("sunrise", "sunset", "dawn", "dusk")
SEASON_NOUNS = frozenset("day morning evening night afternoon time season vacation holiday".split())
YEAR = re.compile(r"^(1[0-9]|20)\d\d$")
DECADE = re.compile(r"^(1[0-9]|20)\d0s$")
CLOCK = re.compile(r"^(\d{1,2})([:.]\d\d)?$")
CENTURY = re.compile(r"^(\d{1,2})(st|nd|rd|th)$")


@functools.lru_cache(maxsize=20000)
def _noun_synsets(lemma: str):
    from mismatch_core.resources import wordnet

    return tuple(wordnet().synsets(lemma, pos="n"))


@functools.lru_cache(maxsize=20000)
def _is_clothing(lemma: str) -> bool:
    synsets = _noun_synsets(lemma)
    if not synsets:
        return False
    closure = {s.name() for s in synsets[0].closure(lambda s: s.hypernyms())}
    return any(name in closure for name in CLOTHING)


def _place_pool(ent: Span) -> tuple[str, ...]:
    """Places of the same kind as ``ent``: country, US state, city, region or facility."""
    text = ent.text.removeprefix("the ")
    if text in COUNTRY_ALIASES:
        return COUNTRIES
    for pool in (COUNTRIES, US_STATES, CITIES):
        if text in pool or f"the {text}" in pool:
            return pool
    if ent.label_ == "LOC":
        return REGIONS
    if ent.label_ == "FAC":
        return FACILITIES
    return CITIES


def _known_place(ent: Span) -> bool:
    """spaCy also tags clubs and titles as GPE: trust it only for known names or clear uses."""
    text = ent.text.removeprefix("the ")
    known = (COUNTRIES, US_STATES, CITIES, REGIONS, FACILITIES, COUNTRY_ALIASES)
    if any(text in pool or f"the {text}" in pool for pool in known):
        return True
    if any(t.is_upper and len(t) <= 3 for t in ent):
        return False  # Hamburger SV, Ajax FC
    before = ent.doc[ent.start - 1] if ent.start > 0 else None
    after = ent.doc[ent.end] if ent.end < len(ent.doc) else None
    return (before is not None and before.lower_ in PLACE_PREPOSITIONS) or (
        after is not None and after.text == ","
    )


def place(doc: Doc, ctx: Context) -> Change | None:
    """'south Chicago' -> 'south Chile': a GPE/LOC/FAC entity becomes another of its kind."""
    ents = [
        e for e in doc.ents
        if e.label_ in ("GPE", "LOC", "FAC") and all(t.is_alpha or t.text in ".-" for t in e)
        and (e.text[:1].isupper() or e.text.startswith("the ")) and _known_place(e)
    ]  # fmt: skip
    if not ents:
        return None
    ent = ctx.rng.choice(ents)
    old = ent.text.removeprefix("the ")
    new = ctx.rng.choice([p for p in _place_pool(ent) if p.removeprefix("the ") != old])
    start = ent.start_char
    if ent.start > 0 and doc[ent.start - 1].lower_ == "the":
        start = doc[ent.start - 1].idx  # 'the United States' -> 'Chile', not 'the Chile'
        if doc[ent.start - 1].text == "The" and new.startswith("the "):
            new = "The " + new.removeprefix("the ")
    elif ent.start > 0 and doc[ent.start - 1].dep_ == "det" and new.startswith("the "):
        new = new.removeprefix("the ")
    if start == 0 and new.startswith("the "):
        new = "The " + new.removeprefix("the ")
    return replace(doc, start, ent.end_char, new, "STErr/place")


def _direction_of(token: Token) -> str | None:
    """The opposite direction word for ``token`` where it really names a direction."""
    word = token.lower_
    if word in COMPASS and token.ent_type_ not in ("ORG", "PERSON", "WORK_OF_ART", "PRODUCT"):
        return COMPASS[word]
    if word in OPPOSITES and token.pos_ in ("ADP", "ADV", "ADJ", "NOUN"):
        if any(c.dep_ == "pobj" and c.pos_ == "PROPN" for c in token.children):
            return None  # 'Above the Veil' is a title
        return OPPOSITES[word]
    if word in SIDE and token.tag_ in ("JJ", "NN", "RB"):
        head = token.head
        if token.dep_ == "amod" and head.lemma_ in SIDE_NOUNS:
            return SIDE[word]
        if token.dep_ == "pobj" and head.lower_ in ("to", "on", "at"):
            return SIDE[word]
        if token.dep_ in ("advmod", "acomp") and head.lemma_ in TURN_VERBS:
            return SIDE[word]
    if word in UP_DOWN and token.head.lemma_ in MOTION_VERBS:
        has_object = any(child.dep_ == "pobj" for child in token.children)
        if has_object or token.dep_ in ("prt", "advmod"):
            return UP_DOWN[word]
    return None


def direction(doc: Doc, ctx: Context) -> Change | None:
    """'north' -> 'south', 'left hand' -> 'right hand', 'walks up the hill' -> 'walks down'."""
    candidates = [(t, new) for t in doc if (new := _direction_of(t))]
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_word(token, new, "STErr/direction")


def _spatial_object(prep: Token) -> Token | None:
    """The object of a spatial preposition when it is a determined physical thing."""
    objects = [c for c in prep.children if c.dep_ == "pobj" and c.pos_ == "NOUN"]
    if not objects or prep.head.pos_ not in ("VERB", "NOUN", "AUX"):
        return None
    noun = objects[0]
    if noun.lemma_ in NON_SPATIAL_OBJECTS or prep.head.lemma_ in NON_SPATIAL_HEADS:
        return None
    if noun.ent_type_ or not any(c.dep_ in ("det", "poss") for c in noun.children):
        return None  # 'on time', 'in line': idioms have no determiner
    senses = {s.lexname() for s in _noun_synsets(noun.lemma_.lower())[:2]}
    if senses & NON_SPATIAL_LEXNAMES:
        return None  # 'in a match', 'on a trip': an event, not a place
    if noun_lexname(noun.lemma_.lower()) == "noun.person" and prep.lower_ in ("behind", "near", "beside"):
        return noun
    if not senses & PHYSICAL_LEXNAMES or _is_clothing(noun.lemma_.lower()):
        return None  # the two main senses decide: 'table' is first a data table in WordNet
    return noun


def spatial_preposition(doc: Doc, ctx: Context) -> Change | None:
    """'sitting on a bench' -> 'sitting under a bench', 'in the yard' -> 'near the yard'."""
    candidates = [
        (t, noun)
        for t in doc
        if t.lower_ in PREPOSITIONS and t.dep_ == "prep" and (noun := _spatial_object(t))
    ]
    if not candidates:
        return None
    token, noun = ctx.rng.choice(candidates)
    options = PREPOSITIONS[token.lower_]
    artifact = noun_lexname(noun.lemma_.lower()) == "noun.artifact"
    if token.lower_ == "in" and not artifact:
        options = ("near",)  # 'outside the grass', 'behind the ocean': no inside to leave
    elif token.lower_ == "on" and not artifact:
        options = ("next to", "beside")  # 'men under the beach': nothing to be under
    if noun.lemma_.lower() not in ROOFED_OBJECTS:
        options = tuple(o for o in options if o != "under")  # 'under the floor', 'under his bike'
    if token.lower_ in ("into", "onto") and token.head.lemma_.lower() not in MOTION_VERBS:
        return None  # 'looks into a microscope' is no place to be moved out of
    if not options:
        return None
    return replace_word(token, ctx.rng.choice(options), "STErr/preposition")


def _cycle(word: str, pool: tuple[str, ...], ctx: Context) -> str:
    return ctx.rng.choice([w for w in pool if w.lower() != word.lower()])


def _time_change(token: Token, ctx: Context) -> str | None:
    """A different point in time for a date/time token, or None when it is no such token."""
    doc, text, in_date = token.doc, token.text, token.ent_type_ in ("DATE", "TIME")
    neighbours = {doc[j].text for j in (token.i - 1, token.i + 1) if 0 <= j < len(doc)}
    if YEAR.match(text) and in_date and _year_context(token):
        value = int(text)
        latest = max(value + 1, 2025)  # no past event moved into the future, but 2050 stays 2050-ish
        return str(ctx.rng.choice([v for v in range(value - 15, min(value + 16, latest)) if v != value]))
    if DECADE.match(text) and in_date:
        value = int(text[:4])
        return f"{ctx.rng.choice([v for v in range(value - 30, value + 31, 10) if v != value])}s"
    if (
        text in MONTHS
        and (in_date or token.pos_ == "PROPN")
        and text != "May"
        or (text == "May" and in_date)
    ):
        return _cycle(text, MONTHS, ctx)
    if text.rstrip("s") in WEEKDAYS:
        return _cycle(text.rstrip("s"), WEEKDAYS, ctx) + text[len(text.rstrip("s")) :]
    clock = CLOCK.match(text)
    if clock and token.ent_type_ == "TIME":
        hour = int(clock.group(1))
        return str(ctx.rng.choice([h for h in range(1, 13) if h != hour])) + (clock.group(2) or "")
    if clock and in_date and not clock.group(2) and neighbours & set(MONTHS):
        day = int(clock.group(1))
        return str(ctx.rng.choice([d for d in range(1, 29) if d != day]))
    century = CENTURY.match(text)
    if century and in_date and token.i + 1 < len(doc) and doc[token.i + 1].lemma_ == "century":
        value = int(century.group(1))
        new = ctx.rng.choice([v for v in range(max(1, value - 4), value + 3) if v != value])
        return f"{new}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(new % 10, 'th') if new not in (11, 12, 13) else 'th' }"
    lower = token.lower_
    if token.tag_ == "NN" and (in_date or token.head.lower_ in ("in", "during", "of")):
        if lower in SEASONS or (lower == "fall" and token.head.lower_ in ("in", "during")):
            return _cycle(lower, SEASONS, ctx)
        if lower in DAY_PARTS and lower != "night":
            return _cycle(lower, DAY_PARTS, ctx)
        if lower in SUN_TIMES:
            return _cycle(lower, SUN_TIMES, ctx)
    if lower in SEASONS[:2] and token.dep_ == "compound" and token.head.lemma_ in SEASON_NOUNS:
        return _cycle(lower, SEASONS[:2], ctx)
    return None


def _year_context(token: Token) -> bool:
    """A four-digit number used as a year: 'in 1966', 'July 4, 1776', 'the 2014 season'."""
    doc = token.doc
    if token.i == 0:
        return False  # WebNLG titles such as '1634: The Ram Rebellion'
    previous = doc[token.i - 1]
    following = doc[token.i + 1] if token.i + 1 < len(doc) else None
    if following is not None and following.text in ("-", "–", "/", ":"):
        return False
    if previous.lower_ == "of":
        return doc[token.i - 2].text in MONTHS if token.i > 1 else False
    if previous.lower_ == "the":
        return following is not None and following.pos_ == "NOUN"
    return previous.lower_ in YEAR_PREVIOUS or previous.text in MONTHS or previous.like_num


def date_time(doc: Doc, ctx: Context) -> Change | None:
    """'1966' -> '1972', 'February' -> 'October', 'Monday' -> 'Friday', 'morning' -> 'evening'."""
    candidates = [(t, new) for t in doc if (new := _time_change(t, ctx))]
    night = [t for t in doc if t.lower_ == "night" and t.i > 0 and doc[t.i - 1].lower_ == "at"]
    if not candidates and not night:
        return None
    if night and (not candidates or ctx.rng.random() < 0.5):
        token = ctx.rng.choice(night)
        new = ctx.rng.choice(("in the morning", "in the afternoon", "during the day"))
        return replace(doc, doc[token.i - 1].idx, token.idx + len(token.text), new, "STErr/time")
    token, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {token.i: new}, "STErr/time")


RULES: dict[str, list[Rule]] = {"STErr": [place, direction, spatial_preposition, date_time]}
