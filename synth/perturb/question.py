"""QuestErr rules: keep the question's content but change what it asks for.

Three moves: swap the wh-phrase for one asking something else (When -> Where, Who -> What,
"What year" -> "Where", "which team" -> "how many teams"), turn a yes/no question into a
wh-question ("Did you take ..." -> "When did you take ..."), and a simple wh-question into
a yes/no question ("When did X start?" -> "Did X start?"). Only questions are touched.
"""

from __future__ import annotations

from lemminflect import getInflection
from spacy.tokens import Doc, Token

from synth.perturb.base import Change, Context, replace
from synth.perturb.lexicon_b_words import PLACE_NOUNS, TIME_NOUNS, WH_WORDS

ADVERB_WH = ("when", "where", "why", "how")
# Nouns that "how many" cannot count ("How many amounts of ..." is not English).
UNCOUNTABLE = (
    "amount",
    "percentage",
    "percent",
    "proportion",
    "money",
    "information",
    "evidence",
    "music",
    "water",
    "part",
    "portion",
    "size",
    "degree",
    "extent",
    "level",
    "role",
    "name",
    "purpose",
    "reason",
    "way",
    "manner",
    "color",
    "colour",
    "shape",
    "nationality",
    "ethnicity",
    "status",
    "rank",
    "time",
    "power",
    "energy",
    "work",
    "land",
    "evidence",
)


PLURAL_BE = {"is": "are", "was": "were", "has": "have", "does": "do", "'s": "are"}


def _is_question(doc: Doc) -> bool:
    return len(doc) > 2 and (doc.text.rstrip().endswith("?") or doc[0].lower_ in WH_WORDS)


def _lower_first(token: Token) -> str:
    """The token as it reads mid-sentence: "Did" -> "did", but "I" and names keep case."""
    if token.pos_ == "PROPN" or token.text == "I" or token.ent_type_:
        return token.text
    return token.text[:1].lower() + token.text[1:]


def _span_change(doc: Doc, start: int, end: int, new: str, rule: str) -> Change | None:
    """Replace tokens [start, end) and restore sentence-initial capitals."""
    span = doc[start:end]
    if start == 0 and span.text[:1].isupper():
        new = new[:1].upper() + new[1:]
    return replace(doc, span.start_char, span.end_char, new, rule)


def _pick(ctx: Context, options: tuple[str, ...], old: str) -> str:
    return ctx.rng.choice([option for option in options if option != old.lower()])


def _finite_verb(noun: Token) -> Token | None:
    """The verb form that agrees with a subject noun: its first auxiliary or its verb."""
    verb = noun.head
    doc = noun.doc
    if noun.dep_ not in ("nsubj", "nsubjpass"):
        following = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
        return following if following is not None and following.pos_ == "AUX" else None
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i > noun.i]
    finite = auxes[0] if auxes else verb
    return finite if finite.i > noun.i and finite.tag_ in ("VBZ", "VBD", "VBP", "MD") else None


def _is_subject(noun: Token) -> bool:
    """True when the wh-noun is the subject: no other subject follows its finite verb.

    Checked on the words, not only the parse: "What type of X does Y discourage" is often
    parsed with "type" as subject, and "What civilization was the first" without one.
    """
    finite = _finite_verb(noun)
    if finite is None or finite.lemma_ == "do":
        return False  # do-support only appears when something else is the subject
    verb = finite.head if finite.dep_ in ("aux", "auxpass") else finite
    subjects = ("nsubj", "nsubjpass", "expl")
    return not any(c.dep_ in subjects and c.i > finite.i for c in verb.children)


def _plural_verb(verb: Token) -> str | None:
    """ "is" -> "are", "was" -> "were", "owns" -> "own"; past and modal forms stay."""
    if verb.lower_ in PLURAL_BE:
        return PLURAL_BE[verb.lower_]
    if verb.tag_ == "VBZ":
        forms = getInflection(verb.lemma_, tag="VBP")
        return forms[0] if forms else None
    return verb.text


def _how_many(doc: Doc, wh: Token, noun: Token, rule: str) -> Change | None:
    """ "what/which [adj] noun" -> "how many [adj] nouns", re-agreeing a subject's verb."""
    if noun.lemma_.lower() in UNCOUNTABLE or noun.pos_ != "NOUN" or noun.i <= wh.i:
        return None
    if noun.tag_ == "NNS":
        plural = noun.text
    elif noun.tag_ == "NN" and getInflection(noun.lemma_, tag="NNS"):
        plural = getInflection(noun.lemma_, tag="NNS")[0]
    else:
        return None
    new = f"how many{doc.text[wh.idx + len(wh.text) : noun.idx]}{plural}"
    end = noun.i + 1
    if noun.tag_ == "NN" and _is_subject(noun):
        verb = _finite_verb(noun)
        plural_verb = _plural_verb(verb) if verb is not None else None
        if verb is None or plural_verb is None:
            return None
        new += doc.text[noun.idx + len(noun.text) : verb.idx] + plural_verb
        end = verb.i + 1
    return _span_change(doc, wh.i, end, new, rule)


def swap_wh(doc: Doc, ctx: Context) -> Change | None:
    """Replace the question's wh-phrase by one that asks for something else."""
    if not _is_question(doc):
        return None
    wh = next((t for t in doc if t.tag_ in ("WDT", "WP", "WRB") and t.lower_ in WH_WORDS), None)
    if wh is None:
        return None
    rule = "QuestErr/wh_swap"
    after = doc[wh.i + 1] if wh.i + 1 < len(doc) else None
    initial = wh.i == 0 or doc[wh.i - 1].text == "," or (wh.i == 1 and doc[0].dep_ == "prep")
    if wh.lower_ in ("what", "which") and wh.dep_ == "det":
        noun = wh.head
        start = wh.i - 1 if wh.i > 0 and doc[wh.i - 1].dep_ == "prep" else wh.i
        asks_adverb = initial and noun.i + 1 < len(doc) and doc[noun.i + 1].pos_ == "AUX"
        if asks_adverb and noun.lower_ in TIME_NOUNS:  # "In what year did" -> "Where did"
            new = ctx.rng.choice(("where", "why"))
            return _span_change(doc, start, noun.i + 1, new, rule)
        if asks_adverb and noun.lower_ in PLACE_NOUNS:
            new = ctx.rng.choice(("when", "why"))
            return _span_change(doc, start, noun.i + 1, new, rule)
        return _how_many(doc, wh, noun, rule)
    if after is None:
        return None
    if wh.lower_ == "how" and after.lower_ == "many":
        noun = after.head
        if noun.pos_ in ("NOUN", "PROPN") and noun.i == wh.i + 2 and noun.lower_ != "times":
            return _span_change(doc, wh.i, wh.i + 2, "which", rule)
        return None
    if not initial or after.lower_ == "much":
        return None
    if wh.lower_ == "how" and after.pos_ in ("ADJ", "ADV") and after.i + 1 < len(doc):
        verb = doc[after.i + 1]
        if verb.pos_ != "AUX" or verb.lemma_ == "be":  # "How old is X" has no wh-equivalent
            return None
        return _span_change(doc, wh.i, wh.i + 2, ctx.rng.choice(("when", "where", "why")), rule)
    if after.pos_ != "AUX" and wh.dep_ not in ("nsubj", "nsubjpass"):
        return None
    if wh.lower_ in ADVERB_WH:
        return _span_change(doc, wh.i, wh.i + 1, _pick(ctx, ADVERB_WH, wh.text), rule)
    if wh.lower_ in ("who", "whom"):
        if wh.dep_ == "nsubj" and wh.head.tag_ == "VBD" and wh.head.lemma_ != "be":
            new = ctx.rng.choice(("what", "how many people"))
        elif wh.dep_ in ("nsubj", "nsubjpass", "attr", "dobj", "pobj"):
            new = "what"
        else:
            return None
        return _span_change(doc, wh.i, wh.i + 1, new, rule)
    if wh.lower_ == "what":
        if wh.dep_ in ("nsubj", "nsubjpass") and wh.head.lemma_ != "happen":
            new = "who"
        elif wh.dep_ == "attr":
            new = ctx.rng.choice(("where", "who"))
        elif wh.dep_ in ("dobj", "pobj"):
            new = "who"
        else:
            return None
        return _span_change(doc, wh.i, wh.i + 1, new, rule)
    return None


def yes_no_to_wh(doc: Doc, ctx: Context) -> Change | None:
    """ "Did you take the gift?" -> "When did you take the gift?"."""
    if not doc.text.rstrip().endswith("?") or len(doc) < 3:
        return None
    first = doc[0]
    if first.pos_ != "AUX" or first.tag_ not in ("VBD", "VBZ", "VBP", "MD"):
        return None
    if not any(t.dep_ in ("nsubj", "nsubjpass", "expl") and t.i > 0 for t in doc):
        return None
    options = (
        ("where", "why") if first.lemma_ in ("be", "have") else ("when", "where", "why", "how")
    )
    new = f"{ctx.rng.choice(options).capitalize()} {_lower_first(first)}"
    return replace(doc, first.idx, first.idx + len(first.text), new, "QuestErr/yesno_to_wh")


def wh_to_yes_no(doc: Doc, ctx: Context) -> Change | None:
    """ "When did Tesla start ...?" -> "Did Tesla start ...?": drop an adverbial wh-word."""
    if not doc.text.rstrip().endswith("?") or len(doc) < 4:
        return None
    wh, aux = doc[0], doc[1]
    if wh.lower_ not in ADVERB_WH or wh.dep_ != "advmod":
        return None
    if aux.pos_ != "AUX" or aux.tag_ not in ("VBD", "VBZ", "VBP", "MD"):
        return None
    subject = next((t for t in doc if t.dep_ in ("nsubj", "nsubjpass", "expl")), None)
    if subject is None or subject.i <= aux.i:
        return None
    new = aux.text[:1].upper() + aux.text[1:]
    return replace(doc, wh.idx, aux.idx + len(aux.text), new, "QuestErr/wh_to_yesno")


RULES = {"QuestErr": [swap_wh, yes_no_to_wh, wh_to_yes_no]}
