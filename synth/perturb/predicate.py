"""PredErr rules: a different event in the same frame.

A content verb is replaced by one that names a different event in the same frame
(enter -> leave, sit -> stand; a curated contrast list, then WordNet antonyms), inflected like
the original with lemminflect; never a synonym. Two verbs that trade places ('hired Alice and
fired Bob' -> 'fired Alice and hired Bob') are a PredErr too. The same events in another
order are PredOrdErr (``synth.perturb.event_order``).
"""

from __future__ import annotations

import functools

from lemminflect import getInflection
from spacy.tokens import Doc, Token
from wordfreq import zipf_frequency

from synth.perturb import noise
from synth.perturb.base import Change, Context, Rule, replace
from synth.perturb.grammar import verb_lemma
from synth.perturb.lexicon_verbs import CONTRASTS, NEEDS_OBJECT

CONTENT_DEPS = frozenset(("ROOT", "conj", "advcl", "relcl", "xcomp", "acl", "ccomp", "pcomp"))
# Verbs too general or too polysemous to swap safely.
NEVER_REPLACE = frozenset(
    "be have do make get take know say call name hold come go fill work".split()
)
# Antonyms that only deny the original ('features' -> 'lacks'): that is NegErr, not PredErr.
NEGATING_VERBS = frozenset(
    "lack miss fail forget ignore refuse deny exclude neglect omit disallow abstain".split()
)


@functools.lru_cache(maxsize=20000)
def _antonyms(lemma: str) -> tuple[str, ...]:
    """WordNet antonyms of the verb's main sense (win -> lose), common single words only."""
    from mismatch_core.resources import wordnet

    synsets = wordnet().synsets(lemma, pos="v")
    if not synsets:
        return ()
    words = []
    for item in synsets[0].lemmas():
        for antonym in item.antonyms():
            name = antonym.name()
            common = name.isalpha() and zipf_frequency(name, "en") >= 3.5
            if common and name not in NEGATING_VERBS and name not in words:
                words.append(name)
    return tuple(words)


def _replacements(verb: Token) -> tuple[str, ...]:
    lemma = verb_lemma(verb)
    if lemma in NEVER_REPLACE or any(c.dep_ == "ccomp" for c in verb.children):
        return ()
    return CONTRASTS.get(lemma) or _antonyms(lemma)


def _predicates(doc: Doc) -> list[Token]:
    """Content verbs whose meaning sits in the verb itself (no particle: 'hang out')."""
    return [
        t for t in doc
        if t.pos_ == "VERB" and t.tag_.startswith("VB") and t.dep_ in CONTENT_DEPS
        and not any(c.dep_ == "prt" for c in t.children)
    ]  # fmt: skip


def _born_died(doc: Doc) -> list[tuple[int, int, str]]:
    """'was born in' <-> 'died in' (WebNLG biographies): (start char, end char, new text)."""
    edits = []
    for token in doc:
        if token.lower_ == "born" and token.i > 0 and doc[token.i - 1].lower_ == "was":
            edits.append((doc[token.i - 1].idx, token.idx + len(token.text), "died"))
        elif token.lower_ == "died" and token.tag_ == "VBD":
            edits.append((token.idx, token.idx + len(token.text), "was born"))
    return edits


POSTURES = frozenset("sit stand lie kneel lay".split())


def _animate_subject(verb: Token, kinds: tuple[str, ...] = ("noun.person", "noun.animal")) -> bool:
    """The verb's subject is a person (or animal: ``kinds``) by its WordNet main sense, or a
    personal pronoun."""
    from mismatch_core.resources import wordnet

    head = verb
    while head.dep_ in ("conj", "xcomp") and head.head is not head:
        head = head.head
    subjects = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")]
    if not subjects and head.dep_ == "acl":
        subjects = [head.head]  # 'a man sitting on a bench'
    for subject in subjects:
        if subject.ent_type_ == "PERSON" or subject.lower_ in (
            "he",
            "she",
            "they",
            "i",
            "we",
            "you",
        ):
            return True
        synsets = wordnet().synsets(subject.lemma_.lower(), pos="n")
        if synsets and synsets[0].lexname() in kinds:
            return True
    return False


def _watchable(verb: Token) -> bool:
    """'playing volleyball' -> 'watching volleyball': a game played, not music or a club."""
    from mismatch_core.resources import wordnet

    if any(c.dep_ == "prep" and c.lower_ == "for" for c in verb.children):
        return False
    for obj in (c for c in verb.children if c.dep_ == "dobj"):
        synsets = wordnet().synsets(obj.lemma_.lower(), pos="n")
        return bool(synsets) and synsets[0].lexname() in ("noun.act", "noun.event")
    return False


def wrong_verb(doc: Doc, ctx: Context) -> Change | None:
    """'John entered the kitchen' -> 'John left the kitchen'; 'was born in' -> 'died in'."""
    candidates: list[tuple[int, int, str]] = _born_died(doc)
    for verb in _predicates(doc):
        if verb_lemma(verb) in POSTURES and not _animate_subject(verb):
            continue  # 'The monument lies in Pennsylvania' -> 'kneels': a location, not a pose
        objects = [c for c in verb.children if c.dep_ == "dobj"]
        has_object = any(c.pos_ == "NOUN" and c.lower_ not in ("others", "other") for c in objects)
        for lemma in _replacements(verb):
            if lemma in NEEDS_OBJECT and not has_object:
                continue  # 'Children playing in a pool' -> 'watching in a pool' is no event
            if lemma == "kneel" and not _animate_subject(verb, ("noun.person",)):
                continue  # 'A cat kneels'
            if lemma == "watch" and not _watchable(verb):
                continue  # 'plays jazz music', 'played football for Genoa': no spectator
            form = getInflection(lemma, tag=verb.tag_)
            if form and form[0].lower() != verb.lower_:
                candidates.append((verb.idx, verb.idx + len(verb.text), form[0]))
    if not candidates:
        return None
    start, end, new = ctx.rng.choice(candidates)
    if doc.text[start].isupper():
        new = new[0].upper() + new[1:]
    return replace(doc, start, end, new, "PredErr/verb")


def _swappable_predicate(verb: Token) -> bool:
    """A verb heading a clause of its own, not a participle modifier ('a microphone wrapped
    with tape') nor a part of a word ('re-melted') nor one of a bare verb pair ('standing or
    sitting'), which swapped says the same."""
    doc = verb.doc
    if verb.dep_ not in ("ROOT", "conj", "advcl") or not verb.is_alpha or verb.lemma_ in ("be", "have"):
        return False
    if verb.i > 0 and doc[verb.i - 1].text == "-" or verb.i + 1 < len(doc) and doc[verb.i + 1].text == "-":
        return False
    bare_pair = [c for c in verb.children if c.dep_ == "conj" and c.i == verb.i + 2]
    if verb.dep_ == "conj" and verb.head.i == verb.i - 2:
        bare_pair.append(verb.head)
    return not any(doc[min(verb.i, o.i) + 1].dep_ == "cc" for o in bare_pair)


def _verb_kind(verb: Token) -> tuple[str, bool, int]:
    """Form, whether it takes a direct object, and the clause it joins: verbs trade only with
    a verb of the same frame in a clause joined to theirs ("was written by X and is published
    in Y"). "sits on a wall" and "sprays graffiti" do not trade ("sits graffiti" is nonsense,
    not a wrong verb), nor do verbs of unrelated sentences."""
    head = verb
    while head.dep_ in ("conj", "advcl") and head.head.pos_ == "VERB":
        head = head.head
    return verb.tag_, any(c.dep_ == "dobj" for c in verb.children), head.i


# One or a few swaps: a wrong predicate, not a text whose every verb moved.
swap_verbs = noise.noise_rule(
    noise.word_switching("VERB", "verbs of one form and frame", kind=_verb_kind, keep=_swappable_predicate),
    (0.0, 0.25),
    "PredErr/swap_verbs",
)


RULES: dict[str, list[Rule]] = {"PredErr": [wrong_verb, swap_verbs]}
