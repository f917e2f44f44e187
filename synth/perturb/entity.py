"""EntErr and HypErr rules: a different entity, or the same entity named more or less generally.

EntErr swaps a primary argument for a *different* one of the same type: a person name, an
organisation, a group, a gendered word, a noun for a WordNet co-hyponym (cat -> rat), or the
subject and object roles. HypErr names the same thing at another level of the WordNet
hierarchy (dog -> animal, dog -> puppy). A co-hyponym is never a hypernym or hyponym of the
original, so the two classes stay apart. Places, dates and numbers belong to STErr/NumErr.
Two nouns or two names of one kind that trade places (the stress tests' noun and entity
switching) are an EntErr too: each now stands in the other's role.
"""

from __future__ import annotations

import functools

from lemminflect import getInflection
from spacy.tokens import Doc, Span, Token
from wordfreq import zipf_frequency

from mismatch_core.resources import lemma_count
from synth.perturb import noise
from synth.perturb.base import (
    Change,
    Context,
    Rule,
    indefinite_article,
    is_indefinite_article,
    replace,
    replace_word,
    swap_spans,
    weighted,
)
from synth.perturb.lexicon_entities import (
    BROAD_GROUPS,
    CLUBS,
    FEMALE_NAMES,
    GENDER_SWAPS,
    HYPERNYMS,
    LANGUAGES,
    MALE_NAMES,
    MASS_NOUNS,
    NORP_KINDS,
    NORP_THING_HEADS,
    ORGANISATIONS,
    PART_OF,
    PERSON_HYPERNYMS,
    PERSON_HYPONYMS,
    ROLES,
    SURNAMES,
    UNIVERSITIES,
)

# Where a noun is an argument of its own (cohyponyms, role swaps).
ARGUMENT_DEPS = ("nsubj", "nsubjpass", "dobj", "pobj", "attr")
CONCRETE_LEXNAMES = frozenset(
    ("noun.animal", "noun.artifact", "noun.food", "noun.plant", "noun.person", "noun.object")
)
# wordfreq Zipf frequency (3 = once per million words): a noun we treat as a concrete
# argument must be at least this common.
COMMON_ZIPF = 3.0
GENERIC_NAME_WORDS = frozenset("the of university college fc f.c. united city club".split())
SEX_WORDS = frozenset(("male", "female"))  # WordNet's main sense is the animal
WH_WORDS = frozenset("what which who whom whose".split())
# 'A man' -> 'A person' fits nearly every caption; keep only this share so it does not
# crowd out other hypernyms.
PERSON_HYPERNYM_SHARE = 0.2
ORG_WORDS = frozenset(
    "records company inc corporation group band airlines airport university college school "
    "club united city park street road bridge river".split()
)
ORG_KINDS = (
    (("university", "college", "institute", "school"), UNIVERSITIES),
    (("fc", "f.c.", "club", "a.c.", "s.c.", "sv"), CLUBS),
)


@functools.lru_cache(maxsize=50000)
def _synsets(lemma: str):
    from mismatch_core.resources import wordnet

    return tuple(wordnet().synsets(lemma, pos="n"))


@functools.lru_cache(maxsize=50000)
def _plural_only(word: str) -> bool:
    """A plural form that WordNet lists as a word of its own (shorts, glasses, arms): its
    singular lemma would name something else."""
    from mismatch_core.resources import wordnet

    return bool(wordnet().lemmas(word, pos="n"))


def _main_synset(lemma: str):
    """The lemma's most frequent noun sense, or None."""
    synsets = _synsets(lemma.lower())
    return synsets[0] if synsets else None


@functools.lru_cache(maxsize=100000)
def _common(word: str, threshold: float = COMMON_ZIPF) -> bool:
    """A word (or phrase) people use often enough that swapping it in reads naturally."""
    return zipf_frequency(word, "en") >= threshold


@functools.lru_cache(maxsize=100000)
def _dominant(lemma: str, max_uncounted_senses: int = 1) -> bool:
    """The word nearly always means its main sense (WordNet sense counts), so a substitute
    chosen for that sense fits the text: 'picture' or 'circuit' are too ambiguous. Without
    sense counts, a word with at most ``max_uncounted_senses`` senses passes: one for a word
    read in context ('bike' is a motorcycle first in WordNet), a few for a word we insert."""
    synsets = _synsets(lemma)
    counts = [sum(lemma_count(x) for x in s.lemmas() if x.name().lower() == lemma) for s in synsets]
    total = sum(counts)
    if total >= 3:
        return counts[0] >= 0.6 * total
    return len(synsets) <= max_uncounted_senses


def _concrete(lemma: str) -> bool:
    """A common, unambiguous word whose main sense is a thing, animal, plant, food or person."""
    synset = _main_synset(lemma)
    return (
        synset is not None
        and synset.lexname() in CONCRETE_LEXNAMES
        and _common(lemma)
        and _dominant(lemma)
    )


def _hyponym_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for word, parents in HYPERNYMS.items():
        for parent in parents:
            table.setdefault(parent, []).append(word)
    return {parent: tuple(words) for parent, words in table.items()}


HYPONYMS = _hyponym_table()


@functools.lru_cache(maxsize=50000)
def _cohyponyms(lemma: str) -> tuple[str, ...]:
    """Other kinds under the same everyday hypernym (dog -> cat, horse), never one that is a
    kind of the other (dog -> puppy is HypErr)."""
    if lemma in ROLES:
        return tuple(r for r in ROLES if r != lemma)
    related = {lemma, *HYPERNYMS.get(lemma, ()), *HYPONYMS.get(lemma, ())}
    siblings = [
        w for p in HYPERNYMS.get(lemma, ()) for w in HYPONYMS[p]
        if w not in related and w not in PART_OF.get(lemma, ()) and lemma not in PART_OF.get(w, ())
    ]  # fmt: skip
    return tuple(w for w in dict.fromkeys(siblings) if lemma not in HYPERNYMS.get(w, ()))


def _hypernyms(lemma: str) -> tuple[str, ...]:
    """More general everyday words for the lemma (dog -> animal, woman -> person)."""
    return PERSON_HYPERNYMS.get(lemma, ()) or HYPERNYMS.get(lemma, ())


def _hyponyms(lemma: str) -> tuple[str, ...]:
    """More specific everyday words for the lemma (dog -> puppy, child -> girl)."""
    return PERSON_HYPONYMS.get(lemma, ()) or HYPONYMS.get(lemma, ())


def _inflect_like(token: Token, lemma: str) -> str | None:
    """``lemma`` in the grammatical number of ``token`` (multi-word: inflect the last word)."""
    if token.tag_ != "NNS":
        return lemma
    if lemma == "person":
        return "people"
    head, _, last = lemma.rpartition(" ")
    plural = getInflection(last, tag="NNS")
    return f"{head} {plural[0]}".strip() if plural else None


def _common_nouns(doc: Doc, deps: frozenset[str] | None) -> list[Token]:
    """Head nouns (not compound modifiers, not inside names) that a rule may replace."""
    return [
        t for t in doc
        if t.pos_ == "NOUN" and t.tag_ in ("NN", "NNS") and not t.ent_type_
        and t.dep_ != "compound" and t.is_alpha
        and not any(c.dep_ == "compound" for c in t.children)  # 'cell phone' is one thing
        and not (t.tag_ == "NNS" and _plural_only(t.lower_))
        and (deps is None or t.dep_ in deps or _is_agent_object(t))
    ]  # fmt: skip


def _is_agent_object(token: Token) -> bool:
    return token.dep_ == "pobj" and token.head.dep_ == "agent"


def _in_compound(token: Token) -> bool:
    """The noun ends a WordNet compound with the word before it ('hot dog', 'sea lion')."""
    from mismatch_core.resources import wordnet

    if token.i == 0:
        return False
    return bool(wordnet().synsets(f"{token.doc[token.i - 1].lower_}_{token.lemma_.lower()}", "n"))


def _fits(token: Token, new: str) -> bool:
    """A mass noun ('coffee', 'beef') only replaces a bare singular, and a bare singular only
    takes a mass noun: 'drinking coffee' -> 'drinking beverage' or 'a meat' read wrong."""
    bare_singular = token.tag_ == "NN" and not any(c.dep_ == "det" for c in token.children)
    return bare_singular == (new in MASS_NOUNS)


def _noun_substitution(ctx: Context, candidates, rule: str) -> Change | None:
    candidates = [(t, w) for t, w in candidates if not _in_compound(t)]
    if not candidates:
        return None
    token, words = ctx.rng.choice(candidates)
    options = [w for w in words if _fits(token, w)]
    if not options:
        return None
    new = _inflect_like(token, ctx.rng.choice(options))
    if not new:
        return None
    return replace_word(token, new, rule)


def _candidates(doc: Doc, words_for, deps) -> list[tuple[Token, tuple[str, ...]]]:
    return [
        (t, w) for t in _common_nouns(doc, deps)
        if t.lemma_.lower() not in SEX_WORDS and (w := words_for(t.lemma_.lower()))
    ]  # fmt: skip


def cohyponym(doc: Doc, ctx: Context) -> Change | None:
    """'A dog chased a cat' -> 'A dog chased a rat': subject/object noun -> a sibling kind."""
    candidates = _candidates(doc, _cohyponyms, ARGUMENT_DEPS)
    return _noun_substitution(ctx, candidates, "EntErr/cohyponym")


def gender(doc: Doc, ctx: Context) -> Change | None:
    """'A man rides' -> 'A woman rides', 'he' -> 'she', 'his' -> 'her'."""
    candidates = []
    for token in doc:
        word = token.lower_
        if token.ent_type_ in ("ORG", "WORK_OF_ART", "FAC", "GPE"):
            continue
        if word == "her":
            candidates.append((token, "his" if token.tag_ == "PRP$" else "him"))
        elif word in ("him", "his") and token.pos_ == "PRON":
            candidates.append((token, "her"))
        elif word in GENDER_SWAPS and token.pos_ in ("NOUN", "PRON", "PROPN", "ADJ"):
            candidates.append((token, GENDER_SWAPS[word]))
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_word(token, new, "EntErr/gender")


def _new_person(ent: Span, ctx: Context) -> str:
    """Another person name, same gender where the first name says it, as long as the old one."""
    first = ent[0].text
    firsts: tuple[str, ...]
    if first in FEMALE_NAMES:
        firsts = FEMALE_NAMES
    elif first in MALE_NAMES:
        firsts = MALE_NAMES
    else:
        firsts = ctx.rng.choice((MALE_NAMES, FEMALE_NAMES))
    if len(ent) == 1:
        pool = firsts if first in firsts else SURNAMES
        return ctx.rng.choice([n for n in pool if n != first])
    name = f"{ctx.rng.choice(firsts)} {ctx.rng.choice(SURNAMES)}"
    return name if name != ent.text else f"{ctx.rng.choice(firsts)} {SURNAMES[0]}"


def _org_pool(ent: Span) -> tuple[str, ...]:
    """Organisations of the same kind: a university for a university, a club for a club, a
    well-known body for a well-known body; () for an organisation of unknown kind."""
    words = {t.lower_ for t in ent}
    for keys, pool in ORG_KINDS:
        if words & set(keys):
            return pool
    known = {o.removeprefix("the ") for o in ORGANISATIONS}
    return ORGANISATIONS if ent.text.removeprefix("the ") in known else ()


def _inside_longer_name(ent: Span) -> bool:
    """Part of a longer name spaCy split up ('Philippine English', 'Adolfo Suarez
    Madrid-Barajas Airport'): a proper noun, another entity or a hyphen touches it."""
    doc = ent.doc
    after = doc[ent.end] if ent.end < len(doc) else None
    before = doc[ent.start - 1] if ent.start > 0 else None
    return any(
        t is not None and (t.pos_ == "PROPN" or t.ent_type_ or t.text == "-")
        for t in (before, after)
    )


def _norp_pool(ent: Span) -> tuple[str, ...]:
    """Nationalities for a nationality, religions for a religion; () where the word names a
    thing rather than people ('Turkish lira') or is no NORP we know (spaCy's guess)."""
    if ent.root.head.lemma_.lower() in NORP_THING_HEADS:
        return ()
    return next((kind for kind in NORP_KINDS if ent.text in kind), ())


def _confident_person(ent: Span) -> bool:
    """Looks like a real person name: capitalised words or initials, no article before it,
    no place preposition before it, and no common noun after it that it would modify."""
    doc = ent.doc
    if len(ent) == 1 and ent[0].text not in MALE_NAMES + FEMALE_NAMES:
        return False
    if any(not (t.is_title or (t.is_upper and len(t.text.rstrip(".")) == 1)) for t in ent):
        return False  # 'San Sebastian de los Reyes' is a place
    if ent[-1].lower_ in ORG_WORDS:
        return False  # 'Polydor Records' is a company
    before = doc[ent.start - 1].lower_ if ent.start > 0 else ""
    if before in ("a", "an", "the", "in", "of", "at", "from", "near", "to"):
        return False
    return not (ent.end < len(doc) and doc[ent.end].pos_ == "NOUN")


def named_entity(doc: Doc, ctx: Context) -> Change | None:
    """A person, organisation, group or language name -> another of the same type and kind."""
    choices: list[tuple[Span, tuple[str, ...]]] = []
    for e in doc.ents:
        if not (all(t.is_alpha or t.text in ".-'" for t in e) and e.text[:1].isupper()):
            continue
        if (
            _inside_longer_name(e)
            or set(e.text.split()) & BROAD_GROUPS
            or (
                e.root.dep_ == "compound" and e.root.head.pos_ == "NOUN"  # 'Amazon forest'
            )
        ):
            continue
        if e.label_ == "PERSON" and _confident_person(e):
            choices.append((e, ()))
        elif e.label_ == "ORG" and (pool := _org_pool(e)):
            choices.append((e, pool))
        elif e.label_ == "NORP" and (pool := _norp_pool(e)):
            choices.append((e, pool))
        elif e.label_ == "LANGUAGE" and e.text in LANGUAGES:
            choices.append((e, LANGUAGES))
    if not choices:
        return None
    ent, pool = ctx.rng.choice(choices)
    if ent.label_ == "PERSON":
        new = _new_person(ent, ctx)
    else:
        old_words = {w.lower() for w in ent.text.split()} - GENERIC_NAME_WORDS
        options = [p for p in pool if not {w.lower() for w in p.split()} & old_words]
        if not options:
            return None
        new = ctx.rng.choice(options)  # sharing no word: BBC Radio Newcastle -> the BBC is HypErr
    start = ent.start_char
    before = doc[ent.start - 1] if ent.start > 0 else None
    if before is not None and is_indefinite_article(before):
        start = before.idx
        new = f"{indefinite_article(new)} {new}"  # an Asian man -> a Chinese man
    elif before is not None and before.lower_ == "the":
        start = before.idx  # an organisation's article goes with its name: 'the BBC', 'Microsoft'
        if new.startswith("the "):
            new = before.text + new.removeprefix("the")
        elif ent.label_ != "ORG":
            new = f"{before.text} {new}"  # 'the French' -> 'the Dutch'
    elif new.startswith("the ") and ent.start_char == 0:
        new = "The " + new.removeprefix("the ")
    return replace(doc, start, ent.end_char, new, f"EntErr/{ent.label_.lower()}")


def _phrase(token: Token) -> Span | None:
    """The noun phrase of an entity-like head noun, when it is short and simple."""
    if token.pos_ != "PROPN" and not _concrete(token.lemma_.lower()):
        return None  # 'Tourism has seen a revival': abstract nouns have no roles to swap
    span = token.doc[token.left_edge.i : token.right_edge.i + 1]
    if len(span) > 8 or any(
        t.dep_ in ("conj", "cc", "appos", "punct") or t.pos_ == "PRON" or t.lower_ in WH_WORDS
        for t in span
    ):
        return None
    return span


def _kind(token: Token) -> str | None:
    """'animate' for a person or animal, else None: roles are swapped only between beings
    that can do things to each other ('A man holds a drink' -> 'A drink holds a man' is
    nonsense; spaCy's ORG spans often cover awards and titles)."""
    if token.ent_type_ == "PERSON":
        return "animate"
    if token.pos_ == "NOUN" and not token.ent_type_ and _concrete(token.lemma_.lower()):
        if _main_synset(token.lemma_.lower()).lexname() in ("noun.person", "noun.animal"):
            return "animate"
    return None


def role_swap(doc: Doc, ctx: Context) -> Change | None:
    """'A dog chased a cat' -> 'A cat chased a dog'; 'X was founded by Y' -> 'Y ... by X'."""
    candidates = []
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        objects = [c for c in verb.children if c.dep_ == "dobj"]
        objects += [g for c in verb.children if c.dep_ == "agent" for g in c.children
                    if g.dep_ == "pobj"]  # fmt: skip
        if len(subjects) != 1 or len(objects) != 1:
            continue
        subject, obj = subjects[0], objects[0]
        if {subject.pos_, obj.pos_} - {"NOUN", "PROPN"} or subject.lower_ == obj.lower_:
            continue
        if (subject.tag_ == "NNS") != (obj.tag_ == "NNS") and verb.tag_ in ("VBZ", "VBP"):
            continue  # swapping would break subject-verb agreement
        if any(c.dep_ in ("aux", "auxpass") and c.tag_ in ("VBZ", "VBP") for c in verb.children):
            if (subject.tag_ == "NNS") != (obj.tag_ == "NNS"):
                continue
        if _kind(subject) is None or _kind(subject) != _kind(obj):
            continue  # 'A man holds a drink' -> 'A drink holds a man' is nonsense, not EntErr
        first, second = _phrase(subject), _phrase(obj)
        if first is None or second is None or not first.end <= verb.i < second.start:
            continue
        candidates.append((first, second))
    if not candidates:
        return None
    first, second = ctx.rng.choice(candidates)
    return swap_spans(doc, first, second, "EntErr/role_swap")


def hypernym(doc: Doc, ctx: Context) -> Change | None:
    """'dog' -> 'canine': a noun named by a more general, still informative, kind."""
    candidates = [
        (t, w) for t, w in _candidates(doc, _hypernyms, None)
        if t.lemma_.lower() not in PERSON_HYPERNYMS or ctx.rng.random() < PERSON_HYPERNYM_SHARE
    ]  # fmt: skip
    return _noun_substitution(ctx, candidates, "HypErr/hypernym")


def hyponym(doc: Doc, ctx: Context) -> Change | None:
    """'dog' -> 'puppy': a noun named by a more specific kind."""
    return _noun_substitution(ctx, _candidates(doc, _hyponyms, None), "HypErr/hyponym")


ANIMATE_LEXNAMES = ("noun.person", "noun.animal")


def _noun_kind(noun: Token) -> tuple[str, str | None]:
    """Number and WordNet class: a person trades places with a person, an animal with an animal."""
    synset = _main_synset(noun.lemma_)
    return noun.tag_, synset.lexname() if synset else None


def _role_noun(noun: Token) -> bool:
    """A person or animal that is an argument of its own: swapping two swaps their roles ("a man
    holds a fish for a child" -> "a child holds a fish for a man"). Things trade places into
    nonsense ("a man in a counter stands behind a sweatshirt"); a noun in a list ("a dog and a
    cat") trades into the same statement; one next to a hyphen is part of a word."""
    doc = noun.doc
    if noun.dep_ not in ARGUMENT_DEPS or any(c.dep_ == "conj" for c in noun.children):
        return False
    if noun.i > 0 and doc[noun.i - 1].text == "-" or noun.i + 1 < len(doc) and doc[noun.i + 1].text == "-":
        return False
    return _noun_kind(noun)[1] in ANIMATE_LEXNAMES


swap_nouns = noise.noise_rule(
    noise.word_switching("NOUN", "people or animals of one number", kind=_noun_kind, keep=_role_noun),
    (0.25, 1.0),
    "EntErr/swap_nouns",
)
# People, organisations, groups and works, not places, dates or numbers (STErr/NumErr).
swap_names = noise.noise_rule(
    noise.entity_switching(frozenset(("PERSON", "ORG", "NORP", "WORK_OF_ART", "PRODUCT"))),
    (0.25, 1.0),
    "EntErr/swap_names",
)

RULES: dict[str, list[Rule]] = {
    "EntErr": [named_entity, gender, cohyponym, role_swap, weighted(swap_nouns, 0.3), swap_names],
    "HypErr": [hypernym, hyponym],
}
