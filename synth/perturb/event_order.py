"""PredOrdErr rules: the same events in another order.

Swapped coordinated clauses in a narrated sequence, 'before' <-> 'after', sentences linked
by 'Then', simultaneous events made sequential ('while' -> 'before'/'after'), words that
state an order turned around ('followed by' -> 'preceded by'), cause and effect or a reason
and its consequence trading places, and two neighbouring sentences that each tell a past
event swapped. A different event is PredErr (``synth.perturb.predicate``).
"""

from __future__ import annotations

import functools
import re

from lemminflect import getInflection
from spacy.tokens import Doc, Span, Token

from synth.perturb import noise
from synth.perturb.base import (
    Change,
    Context,
    Rule,
    edit_change,
    moved_text,
    noun_lexname,
    replace,
    replace_tokens,
    swap_spans,
)
from synth.perturb.grammar import verb_lemma

SEQUENCE_ADVERBS = frozenset(("then", "later", "afterwards", "afterward", "finally", "next",
                              "subsequently", "eventually"))  # fmt: skip
# States that happen together ('sits and reads' is no sequence, so swapping its verbs
# changes no order).
SIMULTANEOUS = frozenset(
    "sit stand lie lay wear look smile hold watch wait pose be have seem appear talk laugh "
    "chat stare listen play enjoy relax rest hang dress carry use".split()
)
# Relations that hold rather than happen (WebNLG facts): listing them in another order
# changes no order of events.
STATIVE = frozenset(
    "be have include locate lead relate know own contain consist belong categorise categorize "
    "serve speak use associate succeed precede follow power operate manage affiliate "
    "represent call name comprise feature house base situate list make write link head "
    "connect border surround work star attend study go begin start live reside exist remain "
    "stay".split()
)
EVENT_LEXNAMES = frozenset(("noun.event", "noun.act"))
# States that last through the main event: 'standing while wearing a hat' has no order.
WHILE_STATES = frozenset("be have wear hold carry sit stand lie".split())
# Past events that a biography or news text narrates in the order they happened.
NARRATIVE_EVENTS = frozenset(
    "arrest take release jail convict sentence charge join leave die retire marry divorce "
    "graduate enrol enroll win lose score arrive depart enter exit return launch land sell buy "
    "kill capture escape flee move resign elect appoint hire fire sign transfer bear".split()
)
OPENING_ADVERBS = ("Then", "Later", "Afterwards", "Afterward", "Subsequently", "Next", "Finally")
# A sentence opening with one of these goes on with the story of the one before it ...
SEQUENCE_OPENERS = frozenset(OPENING_ADVERBS + ("After", "Eventually", "Soon", "Following"))
# ... and with one of these it adds a fact or a contrast, in no order of events.
ADDITIVE_OPENERS = frozenset(
    "Also However Nevertheless Moreover Meanwhile Similarly Likewise Additionally Furthermore "
    "Instead Still Yet".split()
)
# Past-tense roots that state a fact rather than tell an event ('Attendance included 350').
# 'was succeeded by Y' states an office's facts; order words are order_words' job.
FACT_VERBS = frozenset(
    "be have include contain consist comprise remain exist belong know own require succeed "
    "precede follow".split()
)


def _sequence(first: Token, second: Token) -> bool:
    """The two coordinated verbs narrate events in order, not simultaneous states."""
    lemmas = {verb_lemma(first), verb_lemma(second)}
    if lemmas & STATIVE:
        return False
    if "bear" in lemmas:
        return False  # 'born in X and died in Y' lists facts whose order needs no telling
    if any(c.lower_ in SEQUENCE_ADVERBS for c in second.children):
        return True
    tags = {first.tag_, second.tag_}
    if tags <= {"VBD", "VBN"}:
        if not lemmas <= NARRATIVE_EVENTS:
            return False  # 'was awarded X and fought in Y' lists facts in no set order
        # narrated past events ('was arrested and taken to prison'), not present passives
        auxiliaries = [c for v in (first, second) for c in v.children if c.dep_.startswith("aux")]
        if "VBN" in tags and not auxiliaries:
            return False  # 'a city linked to X and headed by Y' describes, it does not narrate
        return all(a.tag_ in ("VBD", "VBN") for a in auxiliaries)
    actions = not lemmas & SIMULTANEOUS
    # one agent's actions ('picks up the ball and throws it'); two subjects in the present
    # ('one in five birds live there, and one in five fish live here') tell no sequence
    shared_subject = not any(c.dep_ in ("nsubj", "nsubjpass") for c in second.children)
    # a relative clause describes its noun ('oxide that passivates the metal and slows
    # corrosion'): properties, not a sequence of actions
    return actions and shared_subject and tags <= {"VBZ", "VBP"} and first.dep_ != "relcl"


def _dated(span: Span) -> bool:
    return any(t.ent_type_ in ("DATE", "TIME") for t in span)


def _clause_pair(first: Token, second: Token) -> tuple[Span, Span] | None:
    """Spans for 'V1 ... and (then) V2 ...' to swap: verb phrases, or whole clauses."""
    doc = first.doc
    conjunctions = [c for c in first.children if c.dep_ == "cc" and first.i < c.i < second.i]
    if len(conjunctions) != 1 or conjunctions[0].lower_ not in ("and", "then"):
        return None
    cc = conjunctions[0]
    if not doc[cc.i - 1].whitespace_:
        return None  # 'owned-and-operated' is one word
    own_subject = any(c.dep_ in ("nsubj", "nsubjpass") for c in second.children)
    start = first.left_edge.i if own_subject else first.i
    second_aux = any(c.dep_ in ("aux", "auxpass") for c in second.children)
    if not own_subject and (second_aux or first.tag_ != second.tag_):
        # 'was born ... and was awarded ...': each phrase keeps its own auxiliary
        start = min([first.i] + [c.i for c in first.children if c.dep_ in ("aux", "auxpass")])
    if own_subject and not doc[start].is_sent_start:
        return None
    end = cc.i
    while end > start and doc[end - 1].is_punct:
        end -= 1
    second_start = cc.i + 1
    while second_start < second.i and doc[second_start].lower_ in SEQUENCE_ADVERBS | {","}:
        second_start += 1
    second_end = second.right_edge.i + 1
    if doc[second_end - 1].is_punct:
        second_end -= 1
    if end <= first.i + 1 or second_end <= second_start:
        return None  # 'was born and resided in X': a bare first verb shares the second's phrase
    if second_end < len(doc) and not (doc[second_end].is_punct and doc[second_end].is_sent_end):
        return None  # the second clause must close the sentence, or the swap splits a phrase
    if any(t.dep_ == "conj" and t.head == second for t in doc[second_start:second_end]):
        return None  # a third event follows: swapping two of three is ambiguous
    first_span, second_span = doc[start:end], doc[second_start:second_end]
    if _dated(first_span) and _dated(second_span):
        return None  # explicit dates fix the order whatever the wording
    return first_span, second_span


def swap_coordinated(doc: Doc, ctx: Context) -> Change | None:
    """'X arrested him and took him to prison' -> 'X took him to prison and arrested him'."""
    if doc.text.rstrip().endswith("?"):
        return None  # a question narrates no events
    pairs = []
    for verb in doc:
        if verb.dep_ == "conj" and verb.pos_ == "VERB" and verb.head.pos_ == "VERB":
            if _sequence(verb.head, verb) and (pair := _clause_pair(verb.head, verb)):
                pairs.append(pair)
    if not pairs:
        return None
    first, second = ctx.rng.choice(pairs)
    return swap_spans(doc, first, second, "PredOrdErr/coordination")


def before_after(doc: Doc, ctx: Context) -> Change | None:
    """'after winning the title, he retired' -> 'before winning the title, he retired'."""
    candidates = []
    for token in doc:
        if token.lower_ not in ("before", "after"):
            continue
        clause = token.dep_ == "mark" and token.head.pos_ in ("VERB", "AUX")
        gerund = token.dep_ == "prep" and any(
            c.dep_ == "pcomp" and c.tag_ == "VBG" for c in token.children
        )
        event = token.dep_ == "prep" and any(
            c.dep_ == "pobj" and not c.ent_type_ and noun_lexname(c.lemma_.lower()) in EVENT_LEXNAMES
            for c in token.children
        )  # 'after the game'; 'after 1990' is a date (STErr)
        if clause or gerund or event:
            candidates.append(token)
    if not candidates:
        return None
    token = ctx.rng.choice(candidates)
    new = "after" if token.lower_ == "before" else "before"
    return replace_tokens(doc, {token.i: new}, "PredOrdErr/before_after")


def _event_object(preposition: Token) -> bool:
    """The preposition governs an event noun ('during the war'), not a time or a date ('during
    the day', 'during 1990': that is STErr) nor a gerund."""
    return any(
        c.dep_ == "pobj" and not c.ent_type_ and noun_lexname(c.lemma_.lower()) in EVENT_LEXNAMES
        for c in preposition.children
    )


def event_preposition(doc: Doc, ctx: Context) -> Change | None:
    """'during the war' -> 'after the war', 'following the war' -> 'before the war', 'prior
    to the war' -> 'after the war': the event now comes before or after the other one."""
    candidates = []
    for token in doc:
        lower = token.lower_
        if lower in ("during", "following") and token.dep_ == "prep" and _event_object(token):
            new = ctx.rng.choice(("before", "after")) if lower == "during" else "before"
            candidates.append((token.i, token.i + 1, new))
        elif lower == "prior" and token.i + 1 < len(doc) and doc[token.i + 1].lower_ == "to":
            if _event_object(doc[token.i + 1]):
                candidates.append((token.i, token.i + 2, "after"))
    if not candidates:
        return None
    start, end, new = ctx.rng.choice(candidates)
    span = doc[start:end]
    if span[0].is_sent_start:
        new = new.capitalize()
    return replace(doc, span.start_char, span.end_char, new, "PredOrdErr/event_preposition")


@functools.lru_cache(maxsize=20000)
def _top_lexnames(lemma: str) -> tuple[str, ...]:
    """Lexicographer files of the noun's three most frequent senses: 'path' is an act, an
    artifact and a location, so it can lead somewhere without causing anything."""
    from mismatch_core.resources import wordnet

    return tuple(s.lexname() for s in wordnet().synsets(lemma.lower(), pos="n")[:3])


def swap_then_sentences(doc: Doc, ctx: Context) -> Change | None:
    """'He trained. Then he won.' -> 'He won. Then he trained.'"""
    sentences = list(doc.sents)
    candidates = []
    for first, second in zip(sentences, sentences[1:], strict=False):
        opener = second[0].text
        if opener in OPENING_ADVERBS and len(second) > 3 and len(first) > 2:
            body_start = second[1].i + (1 if second[1].text == "," else 0)
            candidates.append((first, second, doc[body_start : second.end]))
    if not candidates:
        return None
    first, second, body = ctx.rng.choice(candidates)
    opener = doc.text[second.start_char : body.start_char]
    first_text = moved_text(first, to_sentence_start=False)
    body_text = moved_text(body, to_sentence_start=True)
    if not body_text.endswith((".", "!", "?")) or not first_text.endswith((".", "!", "?")):
        return None
    gap = doc.text[first.end_char : second.start_char]
    new = body_text + gap + opener + first_text
    return replace(doc, first.start_char, second.end_char, new, "PredOrdErr/then_sentences")


def while_to_sequence(doc: Doc, ctx: Context) -> Change | None:
    """'look at their hands while hanging out' -> '... after hanging out' (at once -> in order)."""
    if doc.text.rstrip().endswith("?"):
        return None  # 'solved ... while maintaining polynomial time' asks about a condition
    candidates = [
        token
        for token in doc
        if token.lower_ == "while"
        and token.dep_ == "mark"
        and token.head.dep_ == "advcl"
        and token.head.tag_ == "VBG"
        and verb_lemma(token.head) not in WHILE_STATES
        and not any(c.lower_ in ("still", "also") for c in token.head.children)
    ]  # an action in progress ('while waiting'); 'while its period is ...' is contrast
    if not candidates:
        return None
    token = ctx.rng.choice(candidates)
    return replace_tokens(
        doc, {token.i: ctx.rng.choice(("before", "after"))}, "PredOrdErr/while_to_sequence"
    )


# Words that state which event came first, with a word that states the reverse order.
ORDER_WORDS = {
    "earlier": "later",
    "later": "earlier",
    "previously": "subsequently",
    "subsequently": "previously",
    "afterwards": "beforehand",
    "afterward": "beforehand",
    "beforehand": "afterwards",
    "formerly": "later",
}
ORDER_VERBS = {"follow": "precede", "precede": "follow", "succeed": "precede"}
# who came first in an office or a line ('his successor was X')
ORDER_NOUNS = {"successor": "predecessor", "predecessor": "successor"}
ORDER_OBJECTS = EVENT_LEXNAMES | {"noun.time", "noun.process", "noun.phenomenon"}


def order_words(doc: Doc, ctx: Context) -> Change | None:
    """'X was followed by Y' -> 'X was preceded by Y'; 'two years later' -> 'two years earlier';
    'his successor' -> 'his predecessor'."""
    candidates = []
    for token in doc:
        if token.lower_ in ORDER_WORDS and token.pos_ == "ADV":
            candidates.append((token, ORDER_WORDS[token.lower_]))
        elif (
            token.pos_ == "VERB"
            and token.lemma_.lower() in ORDER_VERBS
            and token.tag_ in ("VBN", "VBD", "VBZ", "VBP", "VBG")
        ):
            # 'followed by' (a sequence), not 'follow the rules' / 'his followers'
            if any(c.dep_ == "prt" for c in token.children):
                continue  # 'followed up by' has no 'preceded up by'
            if token.tag_ == "VBN" and not any(c.dep_ == "agent" for c in token.children):
                continue
            objects = [c for c in token.children if c.dep_ == "dobj"]
            people = ("PERSON",) if token.lemma_.lower() == "succeed" else ()
            if token.tag_ != "VBN" and not any(
                c.ent_type_ in ("DATE", "EVENT", *people) or noun_lexname(c.lemma_.lower()) in ORDER_OBJECTS
                for c in objects
            ):
                continue  # 'the war followed the coup', not 'forces follow a set of rules'
            inflected = getInflection(ORDER_VERBS[token.lemma_.lower()], tag=token.tag_)
            if inflected:
                candidates.append((token, inflected[0]))
        elif token.pos_ == "NOUN" and token.lemma_.lower() in ORDER_NOUNS and token.tag_ in ("NN", "NNS"):
            new = ORDER_NOUNS[token.lemma_.lower()] + ("s" if token.tag_ == "NNS" else "")
            candidates.append((token, new))
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {token.i: new}, "PredOrdErr/order_words")


# Verbs whose subject brings about their object ('the flood caused the famine'), with the
# preposition that introduces the effect where there is one ('led to', 'resulted in').
CAUSE_VERBS = {"cause": None, "trigger": None, "lead": "to", "result": "in"}
PHYSICAL_LEXNAMES = frozenset(
    ("noun.person", "noun.animal", "noun.artifact", "noun.location", "noun.object", "noun.group", "noun.body")
)


def _plain_phrase(span: Span) -> bool:
    """A noun phrase without a clause or a pronoun head: it can trade places whole."""
    return (
        0 < len(span) <= 8
        and span.root.pos_ in ("NOUN", "PROPN")
        and not any(t.pos_ in ("VERB", "AUX", "PUNCT") or t.dep_ == "cc" for t in span)
    )


def _cause_effect(verb: Token) -> tuple[Span, Span] | None:
    """The cause (subject) and effect (object) phrases of a causal verb, or None."""
    lemma = verb.lemma_.lower()
    if lemma not in CAUSE_VERBS or verb.pos_ != "VERB" or verb.tag_ not in ("VBD", "VBZ", "VBP"):
        return None
    subjects = [c for c in verb.children if c.dep_ == "nsubj"]
    if CAUSE_VERBS[lemma] is None:
        effects = [c for c in verb.children if c.dep_ == "dobj"]
    else:
        preps = [c for c in verb.children if c.dep_ == "prep" and c.lower_ == CAUSE_VERBS[lemma]]
        effects = [c for p in preps for c in p.children if c.dep_ == "pobj"]
    if len(subjects) != 1 or len(effects) != 1:
        return None
    doc = verb.doc
    cause = doc[subjects[0].left_edge.i : subjects[0].right_edge.i + 1]
    effect = doc[effects[0].left_edge.i : effects[0].right_edge.i + 1]
    if not (_plain_phrase(cause) and _plain_phrase(effect)):
        return None
    if PHYSICAL_LEXNAMES & set(_top_lexnames(cause.root.lemma_)) or cause.root.ent_type_ in ("PERSON", "ORG", "GPE"):
        return None  # 'a path leads to a pagoda', 'the guide led them to ...': a way, not a cause
    return cause, effect


def cause_effect(doc: Doc, ctx: Context) -> Change | None:
    """'The drought led to a famine' -> 'A famine led to the drought': cause and effect trade."""
    if doc.text.rstrip().endswith("?"):
        return None
    pairs = [pair for verb in doc if (pair := _cause_effect(verb))]
    if not pairs:
        return None
    cause, effect = ctx.rng.choice(pairs)
    return swap_spans(doc, cause, effect, "PredOrdErr/cause_effect")


def because_swap(doc: Doc, ctx: Context) -> Change | None:
    """'He resigned because he was ill.' -> 'He was ill because he resigned.': the reason and
    its consequence trade places. Both clauses need their own subject and the reason clause
    must close the sentence."""
    if doc.text.rstrip().endswith("?"):
        return None
    candidates: list[tuple[Span, Span, Token]] = []
    for mark in doc:
        if mark.lower_ != "because" or mark.dep_ != "mark" or mark.head.dep_ != "advcl":
            continue
        reason, main = mark.head, mark.head.head
        sentence = mark.sent
        subject, reason_subject = (
            next((c for c in v.children if c.dep_ in ("nsubj", "nsubjpass")), None) for v in (main, reason)
        )
        if subject is None or reason_subject is None or subject.left_edge.i != sentence.start:
            continue  # the main clause opens the sentence with its subject ('Otherwise, ...' no)
        if main.lemma_ == "be" and subject.lower_ in ("this", "that", "it"):
            continue  # 'This is because X' states the reason, it tells no second event
        if reason.left_edge.i != mark.i or main.i > mark.i or not doc[mark.i + 1].is_alpha:
            continue  # 'Because X, Y' or a reason in the middle: the swap would split a phrase
        if any(t.dep_ == "cc" or t.is_quote for t in doc[sentence.start : sentence.end]):
            continue  # 'because X or because Y', quoted speech: no clean pair of clauses
        end = reason.right_edge.i + 1
        if end != sentence.end - 1 or not doc[end].is_punct:
            continue
        start = sentence.start
        main_end = mark.i
        while main_end > start and doc[main_end - 1].is_punct:
            main_end -= 1
        if main_end - start < 2 or end - mark.i < 3:
            continue
        candidates.append((doc[start:main_end], doc[mark.i + 1 : end], mark))
    if not candidates:
        return None
    consequence, cause, mark = ctx.rng.choice(candidates)
    new = f"{moved_text(cause, True)} {mark.text} {moved_text(consequence, False)}"
    return replace(doc, consequence.start_char, cause.end_char, new, "PredOrdErr/because")


def _narrated(sentence: Span) -> bool:
    """A sentence that tells a past event ('He retired in 1980', 'It was built in 1990'), not
    a state ('London is led by ...', 'He was a pilot')."""
    root = sentence.root
    if verb_lemma(root) in FACT_VERBS:
        return False
    if any(c.dep_ == "aux" and c.lower_ == "had" for c in root.children):
        return False  # the past perfect ('He had been mentored by X') gives background
    if root.tag_ == "VBD":
        return True
    return root.tag_ == "VBN" and any(
        c.dep_ in ("aux", "auxpass") and c.tag_ == "VBD" for c in root.children
    )


def _continues(first: Span, second: Span) -> bool:
    """The second sentence goes on with the first one's story: it opens with a word of
    sequence ('After the miss, ...'), or its subject is the first one's agent (he, she, they,
    or a name the first sentence uses). Two facts about different things tell no order."""
    opener = second[0].text
    if opener in ADDITIVE_OPENERS or any(c.lower_ == "also" for s in (first, second) for c in s.root.children):
        return False  # 'X also agreed to ...' adds a fact
    if opener in SEQUENCE_OPENERS:
        return True
    subjects = [c for c in second.root.children if c.dep_ in ("nsubj", "nsubjpass")]
    if not subjects:
        return False
    if subjects[0].lower_ in ("he", "she", "they"):
        return True
    names = {t.text for t in first if t.pos_ == "PROPN"}
    return subjects[0].pos_ == "PROPN" and subjects[0].text in names


def swap_sentences(doc: Doc, ctx: Context) -> Change | None:
    """'X was born in Boston. He retired in 1980.' -> 'He retired in 1980. X was born in Boston.'

    Two neighbouring sentences that each tell a past event of one story (``_continues``): the
    narration gives their order, so swapping them reverses the events (the stress tests'
    sentence switching)."""
    sentences = [s for s in doc.sents if s.text.strip()]
    candidates = [
        k
        for k in range(1, len(sentences))
        if _narrated(sentences[k])
        and _narrated(sentences[k - 1])
        and sentences[k - 1].text.rstrip().endswith((".", "!"))
        # 'X was signed to A. X was signed to B.' lists two facts of one kind, in no order
        and verb_lemma(sentences[k].root) != verb_lemma(sentences[k - 1].root)
        and _continues(sentences[k - 1], sentences[k])
        # 'He graduated in 1955. He was chosen in 1963.': the dates, not the telling, give
        # the order, so telling them the other way round changes no event's time
        and not (_dated(sentences[k - 1]) and _dated(sentences[k]))
    ]
    if not candidates:
        return None
    k = ctx.rng.choice(candidates)
    texts = [s.text.strip() for s in sentences]
    texts[k - 1], texts[k] = texts[k], texts[k - 1]
    return edit_change(doc.text, noise.normal(" ".join(texts)), "PredOrdErr/swap_sentences")


# A text with no second sentence and none of these words takes no PredOrdErr rule above
# except swap_coordinated, so once event order is all that is still needed the generator
# parses only texts that match. Coordinated events are left out on purpose: their only cue,
# 'and', is in two of three captions, and they give about 4% of the event-order pairs (523
# of 13,856 in the sixth run, docs/synth.md), all from the first rounds, which parse every text.
UNSCREENED_RULES = ("swap_coordinated",)
ORDER_SCREEN = re.compile(
    r"[.!?]['\")\]]?\s+\S|\b(?:then|before|after|while|follow\w*|preced\w*|because|"
    r"caus\w*|trigger\w*|prompt\w*|led|leads?|result\w*|during|prior|succeed\w*|"
    r"successors?|predecessors?|"
    + "|".join(ORDER_WORDS)
    + r")\b",
    re.IGNORECASE,
)
SCREENS = {"PredOrdErr": ORDER_SCREEN}

RULES: dict[str, list[Rule]] = {
    "PredOrdErr": [
        swap_coordinated,
        before_after,
        swap_then_sentences,
        while_to_sequence,
        order_words,
        swap_sentences,
        cause_effect,
        because_swap,
        event_preposition,
    ],
}
