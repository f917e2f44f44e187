"""QuestErr rules: keep the question's content but change what it asks for.

Four moves: swap the wh-phrase for one asking something else (When <-> Where, "What year"
-> "Where", "which team" -> "how many teams", "How many N" -> "Which N", "Who founded X"
-> "How many people founded X"), turn a yes/no question into a wh-question ("Did you take
..." -> "When did you take ..."), turn a simple wh-question into a yes/no question ("When
did X start?" -> "Did X start?"), and ask whether the answer is known instead of asking for
it ("Who founded X?" -> "Is it known who founded X?"). Each swap is chosen by what the
question asks for, so the new question still reads as English: no "Who is another name for X?" and no "Why is
Normandy located?". Only questions are touched.
"""

from __future__ import annotations

import re

from lemminflect import getInflection
from spacy.tokens import Doc, Token

from synth.perturb.base import Change, Context, keeps_capital, replace
from synth.perturb.lexicon_questions import (
    EVENT_NOUNS,
    LOCATIVE_VERBS,
    NOT_COUNTED,
    PLACE_NOUNS,
    TIME_NOUNS,
    WH_WORDS,
)

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
)
# Where the adverbial wh-word may go, by the wh-word asked.
ADVERB_SWAPS: dict[str, tuple[str, ...]] = {
    "when": ("where", "why"),
    "where": ("when", "why"),
    "why": ("how", "when"),
    "how": ("why", "when"),
}
# Verbs whose subject "what" can become "who" without reading as nonsense is any verb but
# these: states, relations and events that only things have.
NOT_AGENTIVE = (
    "be",
    "have",
    "happen",
    "occur",
    "become",
    "mean",
    "include",
    "contain",
    "consist",
    "make",
    "represent",
    "remain",
    "seem",
    "appear",
    "exist",
    "result",
    "cause",
    "lead",
    "take",
    "go",
    "come",
    "get",
    "do",
)
# "How long/often did X ..." asks for a duration or a frequency: "When/Where/Why" swap in.
HOW_ADVERBS = ("long", "often", "far", "soon", "frequently", "quickly", "early", "late", "fast")
PLURAL_BE = {"is": "are", "was": "were", "has": "have", "does": "do", "'s": "are"}
FINITE = ("VBD", "VBZ", "VBP", "MD")
# Verbs whose object a purpose infinitive follows ("use X to swim"): a wh-word the parse
# hangs on the infinitive is the object of these verbs.
PURPOSE_VERBS = frozenset(("use", "need", "take", "require", "employ", "utilize"))


def _is_question(doc: Doc) -> bool:
    return len(doc) > 2 and doc.text.rstrip().endswith("?")


def _lower_first(token: Token) -> str:
    """The token as it reads mid-sentence: "Did" -> "did", but "I" and names keep case."""
    if keeps_capital(token):
        return token.text
    return token.text[:1].lower() + token.text[1:]


def _span_change(doc: Doc, start: int, end: int, new: str, rule: str) -> Change | None:
    """Replace tokens [start, end) and restore sentence-initial capitals."""
    span = doc[start:end]
    if start == 0 and span.text[:1].isupper():
        new = new[:1].upper() + new[1:]
    return replace(doc, span.start_char, span.end_char, new, rule)


def _main_verb(aux: Token) -> Token:
    """The verb an auxiliary belongs to (the auxiliary itself when it is the main verb)."""
    return aux.head if aux.dep_ in ("aux", "auxpass") else aux


def _subject_after(verb: Token, position: int) -> bool:
    return any(c.dep_ in ("nsubj", "nsubjpass", "expl") and c.i > position for c in verb.children)


def _has_stranded_preposition(doc: Doc) -> bool:
    """ "What can X be closed by?": the wh-word is the object of a final preposition."""
    return any(
        t.dep_ == "prep" and not any(c.dep_ in ("pobj", "pcomp") for c in t.children) for t in doc
    )


def _finite_verb(noun: Token) -> Token | None:
    """The verb form that agrees with a subject noun: its first auxiliary or its verb."""
    verb = noun.head
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i > noun.i]
    finite = auxes[0] if auxes else verb
    return finite if finite.i > noun.i and finite.tag_ in FINITE else None


def _is_subject(noun: Token) -> bool:
    """True when the wh-noun is the subject: no other subject follows its finite verb.

    Checked on the words, not only the parse: "What type of X does Y discourage" is often
    parsed with "type" as subject, and "What civilization was the first" without one.
    """
    if noun.dep_ not in ("nsubj", "nsubjpass"):
        return False
    finite = _finite_verb(noun)
    if finite is None or finite.lemma_ == "do":
        return False  # do-support only appears when something else is the subject
    return not _subject_after(_main_verb(finite), finite.i)


def _plural_verb(verb: Token) -> str | None:
    """ "is" -> "are", "was" -> "were", "owns" -> "own"; past and modal forms stay."""
    if verb.lower_ in PLURAL_BE:
        return PLURAL_BE[verb.lower_]
    if verb.tag_ == "VBZ":
        forms = getInflection(verb.lemma_, tag="VBP")
        return forms[0] if forms else None
    return verb.text if verb.tag_ in ("VBD", "MD", "VBP") and verb.lower_ != "was" else None


def _with_plural_verb(doc: Doc, subject: Token, start: int, new: str, rule: str) -> Change | None:
    """Replace [start, subject] by ``new`` (a plural subject) and make its verb agree."""
    verb = _finite_verb(subject)
    plural = _plural_verb(verb) if verb is not None else None
    if verb is None or plural is None:
        return None
    new += doc.text[subject.idx + len(subject.text) : verb.idx] + plural
    return _span_change(doc, start, verb.i + 1, new, rule)


def _how_many(doc: Doc, wh: Token, noun: Token, rule: str) -> Change | None:
    """ "which [adj] noun" -> "how many [adj] nouns", re-agreeing a subject's verb."""
    lemma = noun.lemma_.lower()
    if lemma in UNCOUNTABLE or lemma in NOT_COUNTED or lemma in TIME_NOUNS or noun.pos_ != "NOUN":
        return None
    if noun.i <= wh.i or any(t.pos_ not in ("ADJ", "NOUN") for t in doc[wh.i + 1 : noun.i]):
        return None
    if noun.tag_ == "NNS":
        plural = noun.text
    elif noun.tag_ == "NN" and getInflection(noun.lemma_, tag="NNS"):
        plural = getInflection(noun.lemma_, tag="NNS")[0]
    else:
        return None
    new = f"how many{doc.text[wh.idx + len(wh.text) : noun.idx]}{plural}"
    following = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
    if (
        noun.tag_ == "NN"
        and not _is_subject(noun)
        and following is not None
        and following.tag_ == "VBZ"
    ):
        if not _subject_after(_main_verb(following), following.i):
            return None  # a subject the parse missed: "What monument is" -> "monuments is"
    if noun.tag_ == "NN" and _is_subject(noun):
        verb = _finite_verb(noun)
        if verb is not None and verb.lemma_ == "be" and _main_verb(verb) == verb:
            return None  # "What company is the largest?" has no countable reading
        return _with_plural_verb(doc, noun, wh.i, new, rule)
    return _span_change(doc, wh.i, noun.i + 1, new, rule)


def _wh_noun(doc: Doc, wh: Token, initial: bool, ctx: Context, rule: str) -> Change | None:
    """ "In what year did ..." -> "Where did ...", "Which team won" -> "How many teams won"."""
    noun = wh.head
    start = wh.i - 1 if wh.i > 0 and doc[wh.i - 1].dep_ == "prep" else wh.i
    after = doc[noun.i + 1] if noun.i + 1 < len(doc) else None
    adverbial = start < wh.i or noun.dep_ in ("npadvmod", "advmod")  # "In what year", "What year"
    asks_adverb = initial and noun.i == wh.i + 1 and after is not None and after.pos_ == "AUX"
    if asks_adverb and adverbial and after is not None and not _has_stranded_preposition(doc):
        verb = _main_verb(after)
        if (
            verb.lemma_ in LOCATIVE_VERBS
            or verb.lemma_ == "be"
            or not _subject_after(verb, after.i)
        ):
            return None
        if noun.lower_ in TIME_NOUNS:
            return _span_change(doc, start, noun.i + 1, ctx.rng.choice(("where", "why")), rule)
        if noun.lower_ in PLACE_NOUNS:
            return _span_change(doc, start, noun.i + 1, ctx.rng.choice(("when", "why")), rule)
    return _how_many(doc, wh, noun, rule)


def _adverb_wh(doc: Doc, wh: Token, after: Token, ctx: Context, rule: str) -> Change | None:
    """ "When did the war begin?" -> "Where did the war begin?"; not "When is X located?"."""
    verb = _main_verb(after)
    if verb.lemma_ in LOCATIVE_VERBS or not _subject_after(verb, after.i):
        return None
    if verb == after and verb.lemma_ == "be" and wh.lower_ in ("where", "how"):
        return None  # "Where is X?" and "How is X?" have no other adverbial reading
    if verb.lemma_ in ("call", "name", "spell", "pronounce", "say", "write") and wh.lower_ == "how":
        return None  # "How is X spelled?" asks for a form, not a manner
    options = ADVERB_SWAPS[wh.lower_]
    if verb == after and verb.lemma_ == "be":
        options = tuple(o for o in options if o != "when") or options
    return _span_change(doc, wh.i, wh.i + 1, ctx.rng.choice(options), rule)


def _what_is(doc: Doc, wh: Token, ctx: Context, rule: str) -> Change | None:
    """ "What was the Boxer Rebellion?" -> "When was the Boxer Rebellion?": events only."""
    be = wh.head
    subject = next((c for c in be.children if c.dep_ == "nsubj" and c.i > be.i), None)
    if subject is None or subject.pos_ not in ("NOUN", "PROPN") or be.i != wh.i + 1:
        return None
    if subject.right_edge.i + 2 != len(doc) or _has_stranded_preposition(doc):
        return None  # "What is X called/known as?" keeps a slot after the subject
    lemma = subject.lemma_.lower()
    if lemma in EVENT_NOUNS:
        return _span_change(doc, wh.i, wh.i + 1, ctx.rng.choice(("when", "where")), rule)
    if lemma in PLACE_NOUNS and not any(c.dep_ == "prep" for c in subject.children):
        return None  # "What is the largest city?" -> "Where is ..." keeps the answer
    return None


def swap_wh(doc: Doc, ctx: Context) -> Change | None:
    """Replace the question's wh-phrase by one that asks for something else."""
    if not _is_question(doc):
        return None
    wh = next((t for t in doc if t.tag_ in ("WDT", "WP", "WRB") and t.lower_ in WH_WORDS), None)
    if wh is None or wh.i + 2 >= len(doc):
        return None
    rule = "QuestErr/wh_swap"
    after = doc[wh.i + 1]
    initial = wh.i == 0 or (wh.i == 1 and doc[0].dep_ == "prep")
    if wh.lower_ in ("what", "which") and wh.dep_ == "det":
        return _wh_noun(doc, wh, initial, ctx, rule)
    if wh.lower_ == "how" and after.lower_ == "many":
        noun = after.head
        lemma = noun.lemma_.lower()
        if noun.pos_ == "NOUN" and noun.i == wh.i + 2 and lemma not in TIME_NOUNS + NOT_COUNTED:
            return _span_change(doc, wh.i, wh.i + 2, "which", rule)
        return None
    if not initial or after.lower_ == "much":
        return None
    if wh.lower_ == "how" and after.pos_ in ("ADJ", "ADV") and after.i + 1 < len(doc):
        aux = doc[after.i + 1]
        verb = _main_verb(aux)
        if after.lower_ not in HOW_ADVERBS or aux.pos_ != "AUX" or verb.lemma_ in NOT_AGENTIVE:
            return None  # "How old is X", "How concentrated do they get": a degree, not a time
        if verb.lemma_ in LOCATIVE_VERBS:
            return None
        if not _subject_after(verb, aux.i):
            return None
        return _span_change(doc, wh.i, wh.i + 2, ctx.rng.choice(("when", "where", "why")), rule)
    if wh.lower_ in ADVERB_SWAPS and after.pos_ == "AUX" and wh.dep_ == "advmod":
        return _adverb_wh(doc, wh, after, ctx, rule)
    if wh.lower_ == "who" and wh.dep_ == "nsubj" and wh.head.pos_ == "VERB":
        if wh.head.lemma_ in NOT_AGENTIVE or _has_stranded_preposition(doc):
            return None
        return _with_plural_verb(doc, wh, wh.i, "how many people", rule)
    if wh.lower_ == "what" and wh.dep_ == "nsubj" and wh.head.pos_ == "VERB":
        verb = wh.head
        objects = any(c.dep_ == "dobj" for c in verb.children)
        if verb.lemma_ in NOT_AGENTIVE or not objects or verb.tag_ not in ("VBD", "VBZ"):
            return None
        return _span_change(doc, wh.i, wh.i + 1, "who", rule)
    if wh.lower_ == "what" and wh.dep_ == "attr" and wh.head.lemma_ == "be":
        return _what_is(doc, wh, ctx, rule)
    return None


def yes_no_to_wh(doc: Doc, ctx: Context) -> Change | None:
    """ "Did you take the gift?" -> "When did you take the gift?"."""
    if not _is_question(doc):
        return None
    first = doc[0]
    if first.pos_ != "AUX" or first.tag_ not in FINITE:
        return None
    if not any(t.dep_ in ("nsubj", "nsubjpass", "expl") and t.i > 0 for t in doc):
        return None
    verb = _main_verb(first)
    if verb.lemma_ in LOCATIVE_VERBS:
        return None
    options = (
        ("where", "why") if first.lemma_ in ("be", "have") else ("when", "where", "why", "how")
    )
    new = f"{ctx.rng.choice(options).capitalize()} {_lower_first(first)}"
    return replace(doc, first.idx, first.idx + len(first.text), new, "QuestErr/yesno_to_wh")


def wh_to_yes_no(doc: Doc, ctx: Context) -> Change | None:
    """ "When did Tesla start ...?" -> "Did Tesla start ...?": drop an adverbial wh-word.

    Only where a main verb or a predicate follows the subject: "When was the war?" ->
    "Was the war?" and "Where is X located?" -> "Is X located?" say nothing.
    """
    if not _is_question(doc) or len(doc) < 4:
        return None
    wh, aux = doc[0], doc[1]
    if wh.lower_ not in ("when", "why", "how") or wh.dep_ != "advmod":
        return None  # "where" often fills a place the verb needs: "Where was X going to be?"
    if aux.pos_ != "AUX" or aux.tag_ not in FINITE:
        return None
    verb = _main_verb(aux)
    if verb.lemma_ in LOCATIVE_VERBS or not _subject_after(verb, aux.i):
        return None
    if verb == aux and not any(c.dep_ in ("acomp", "attr") and c.i > aux.i for c in verb.children):
        return None
    new = aux.text[:1].upper() + aux.text[1:]
    return replace(doc, wh.idx, aux.idx + len(aux.text), new, "QuestErr/wh_to_yesno")


def _filler(doc: Doc, wh: Token, head: Token) -> str | None:
    """What stands for the asked-for phrase in a yes/no question: anyone, anything, any N."""
    if head == wh:
        return {"who": "anyone", "whom": "anyone", "what": "anything"}.get(wh.lower_)
    if any(t.pos_ not in ("ADJ", "NOUN", "PROPN") for t in doc[wh.i + 1 : head.i]):
        return None
    if head.lemma_.lower() in NOT_COUNTED + UNCOUNTABLE + TIME_NOUNS:
        return None  # "Did X take any type of beings" reads wrong
    return "any " + doc[wh.i + 1 : head.i + 1].text


def _subject_to_yes_no(doc: Doc, head: Token, filler: str, rule: str) -> Change | None:
    """ "Who founded X?" -> "Did anyone found X?", "What law connects" -> "Does any law connect"."""
    verb, after = head.head, doc[head.i + 1]
    if after.pos_ == "AUX" and after.head == verb and after.dep_ in ("aux", "auxpass"):
        if after.lemma_ == "do" and verb.tag_ != "VB":
            return None  # a misparse: "What does being an MSP share" has no subject "what"
        new = f"{after.text[:1].upper()}{after.text[1:]} {filler}"
    elif after == verb and verb.lemma_ == "be":
        if not any(c.dep_ == "acomp" for c in verb.children):
            return None  # "Who was the first X?" has no yes/no form with "anyone"
        new = f"{after.text[:1].upper()}{after.text[1:]} {filler}"
    elif after == verb and verb.tag_ in ("VBD", "VBZ", "VBP") and verb.pos_ == "VERB":
        do = {"VBD": "Did", "VBZ": "Does", "VBP": "Do"}[verb.tag_]
        if (head.tag_ == "NNS" and do == "Does") or (head.tag_ == "NN" and do == "Do"):
            return None  # the question's own verb does not agree: "What battle involve"
        new = f"{do} {filler} {verb.lemma_}"
    else:
        return None
    return replace(doc, 0, after.idx + len(after.text), new, rule)


def _object_to_yes_no(doc: Doc, head: Token, filler: str, rule: str) -> Change | None:
    """ "What did X publish in 1984?" -> "Did X publish anything in 1984?"."""
    aux = doc[head.i + 1]
    if aux.pos_ != "AUX" or aux.tag_ not in FINITE:
        return None
    governor = head.head
    if head.dep_ == "dobj" and (governor.pos_ == "VERB" or governor.dep_ == "ROOT"):
        if governor.lemma_ in ("call", "name", "term", "refer", "describe", "define", "consider"):
            return None  # "What is X called?" asks for a name
        if any(
            c.dep_ in ("dobj", "dative", "ccomp", "xcomp") for c in governor.children if c != head
        ):
            return None
        if governor.dep_ == "xcomp" and governor.head.lemma_ in PURPOSE_VERBS:
            return None  # "What does X use to swim?" asks for the object of "use"
        gap = governor.i + 1
        while gap < len(doc) and doc[gap].dep_ == "prt" and doc[gap].head == governor:
            gap += 1
    elif head.dep_ == "pobj" and governor.dep_ == "prep" and governor.i > aux.i:
        gap = governor.i + 1
        if gap >= len(doc) or doc[gap].text != "?":
            return None
    else:
        return None
    if not _subject_after(_main_verb(aux), aux.i) or gap >= len(doc):
        return None
    before = doc.text[aux.idx : doc[gap].idx].rstrip()
    rest = doc.text[doc[gap].idx :]
    joiner = "" if doc[gap].is_punct else " "
    new = f"{before[:1].upper()}{before[1:]} {filler}{joiner}{rest}"
    return replace(doc, 0, len(doc.text), new, rule)


def wh_phrase_to_yes_no(doc: Doc, ctx: Context) -> Change | None:
    """Ask whether, not what: "Who founded X?" -> "Did anyone found X?", "What did X publish
    in 1984?" -> "Did X publish anything in 1984?", "What is the capital of X?" -> "Is the
    capital of X known?"."""
    if not _is_question(doc) or len(doc) < 4 or doc[0].lower_ not in ("what", "who", "which"):
        return None
    wh = doc[0]
    head = wh.head if wh.dep_ == "det" else wh
    if head.i + 2 >= len(doc) or (_has_stranded_preposition(doc) and head.dep_ != "pobj"):
        return None
    if any(t.dep_ == "neg" for t in doc):
        return None  # "What doesn't ..." -> "Does anythingn't ..."
    rule = "QuestErr/wh_to_yesno"
    if wh.lower_ == "what" and wh.dep_ == "attr" and wh.head.lemma_ == "be" and wh.head.i == 1:
        subject = next((c for c in wh.head.children if c.dep_ == "nsubj" and c.i > 1), None)
        if subject is None or subject.pos_ != "NOUN" or subject.right_edge.i + 2 != len(doc):
            return None
        if doc[2].lower_ != "the" or doc[2].head != subject:
            return None  # "What is a sacrament?" asks for a definition
        if subject.right_edge.i > 9 or any(
            t.pos_ in ("VERB", "AUX") for t in doc[2 : subject.right_edge.i + 1]
        ):
            return None  # "Is the X that ... known?" loses its reader
        be = doc[1]
        new = f"{be.text[:1].upper()}{be.text[1:]} {doc[2 : subject.right_edge.i + 1].text} known"
        return replace(
            doc, 0, doc[subject.right_edge.i].idx + len(doc[subject.right_edge.i].text), new, rule
        )
    filler = _filler(doc, wh, head)
    if filler is None:
        return None
    if head.dep_ in ("nsubj", "nsubjpass"):
        return _subject_to_yes_no(doc, head, filler, rule)
    return _object_to_yes_no(doc, head, filler, rule)


# Yes/no frames that ask whether the answer is on record instead of asking for it (not a
# polite request for it: "Does anyone know ...?" asks the same question, so is no QuestErr).
KNOWN_FRAMES = ("Is it known", "Is it recorded")
DO_TENSE = {"did": "VBD", "does": "VBZ", "do": "VBP"}


def embed_as_yes_no(doc: Doc, ctx: Context) -> Change | None:
    """Ask whether the answer is known: "Who founded X?" -> "Is it known who founded X?",
    "When did Tesla start X?" -> "Is it known when Tesla started X?", "What is the capital
    of X?" -> "Is it recorded what the capital of X is?". The asked-for content stays;
    the answer becomes yes or no."""
    if not _is_question(doc) or len(doc) < 4 or any(t.dep_ == "neg" for t in doc):
        return None
    wh = doc[0] if doc[0].lower_ in WH_WORDS and doc[0].tag_ in ("WDT", "WP", "WRB") else None
    if wh is None or wh.lower_ == "how" and doc[1].lower_ in ("many", "much"):
        return None  # "How many ..." keeps its noun between wh-word and verb: handled above
    frame = ctx.rng.choice(KNOWN_FRAMES)
    phrase_end = wh.head.i + 1 if wh.dep_ == "det" and wh.head.i < 5 else wh.i + 1
    if phrase_end >= len(doc) - 1:
        return None
    after = doc[phrase_end]
    wh_phrase = _lower_first(wh) + doc.text[wh.idx + len(wh.text) : after.idx].rstrip()
    after_wh = doc.text[wh.idx + len(wh.text) :]  # kept as written: "What's" stays "what's"
    rule = "QuestErr/embedded_yesno"
    if after.pos_ != "AUX" or after.tag_ not in FINITE:
        # the wh-phrase is the subject: "Who founded X?" reads the same when embedded
        if not _is_subject(doc[phrase_end - 1]) or after.pos_ != "VERB":
            return None
        return replace(doc, 0, len(doc.text), f"{frame} {_lower_first(wh)}{after_wh}", rule)
    verb = _main_verb(after)
    subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") and c.i > after.i), None)
    if subject is None:
        # "Who was the first X?": the wh-word is the subject of the auxiliary or copula; with
        # do-support ("What did the Mongols build?") something else is the subject, misparsed
        if after.lemma_ == "do":
            return None
        if not _is_subject(doc[phrase_end - 1]) and not (
            wh.lower_ in ("who", "what") and verb.lemma_ == "be" and verb == after
        ):
            return None
        return replace(doc, 0, len(doc.text), f"{frame} {_lower_first(wh)}{after_wh}", rule)
    start, end = subject.left_edge.i, subject.right_edge.i
    if (
        start != after.i + 1
        or end + 1 >= len(doc)
        or any(t.pos_ in ("VERB", "AUX") for t in doc[start : end + 1])
    ):
        return None  # the subject must directly follow the auxiliary and be a plain phrase
    subject_text = _lower_first(doc[start]) + doc.text[doc[start].idx + len(doc[start].text) : doc[end].idx + len(doc[end].text)]
    rest = doc.text[doc[end + 1].idx :]
    if after.lower_ in DO_TENSE:
        if verb == after or verb.i != end + 1 or verb.tag_ != "VB":
            return None
        forms = getInflection(verb.lemma_, tag=DO_TENSE[after.lower_])
        if not forms:
            return None
        rest = forms[0] + doc.text[verb.idx + len(verb.text) :]
        new = f"{frame} {wh_phrase} {subject_text} {rest}"
    elif verb == after:
        # copula: "What is the capital of X?" -> "... what the capital of X is?"
        if doc[end + 1].text != "?":
            return None
        new = f"{frame} {wh_phrase} {subject_text} {after.lower_}?"
    else:
        new = f"{frame} {wh_phrase} {subject_text} {after.lower_} {rest}"
    return replace(doc, 0, len(doc.text), new, rule)


RULES = {"QuestErr": [swap_wh, yes_no_to_wh, wh_to_yes_no, wh_phrase_to_yes_no, embed_as_yes_no]}
# Only a text that ends in a question mark takes a QuestErr rule (see _is_question).
SCREENS = {"QuestErr": re.compile(r"\?\s*$")}
