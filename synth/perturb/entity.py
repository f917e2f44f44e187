"""EntErr and HypErr rules: a different entity, or the same entity named more or less generally.

EntErr swaps a primary argument for a *different* one of the same type: a person name, an
organisation, a group, a gendered word, a noun for a WordNet co-hyponym (cat -> rat), or the
subject and object roles. HypErr names the same thing at another level of the WordNet
hierarchy (dog -> animal, dog -> puppy). A co-hyponym is never a hypernym or hyponym of the
original, so the two classes stay apart. Places, dates and numbers belong to STErr/NumErr.
"""

from __future__ import annotations

import functools

from lemminflect import getInflection, getLemma
from spacy.tokens import Doc, Span, Token
from wordfreq import zipf_frequency

from evaluator.resources import lemma_count
from synth.perturb.base import (
    Change,
    Context,
    Rule,
    indefinite_article,
    is_indefinite_article,
    replace,
    replace_word,
)
from synth.perturb.lexicon_entities import (
    BROAD_GROUPS,
    CLUBS,
    FEMALE_NAMES,
    GENDER_SWAPS,
    LANGUAGES,
    MALE_NAMES,
    NORPS,
    ORGANISATIONS,
    PERSON_HYPERNYMS,
    PERSON_HYPONYMS,
    ROLES,
    SURNAMES,
    UNIVERSITIES,
)

ARGUMENT_DEPS = frozenset(("nsubj", "nsubjpass", "dobj", "attr", "appos"))
CONCRETE_LEXNAMES = frozenset(
    ("noun.animal", "noun.artifact", "noun.food", "noun.plant", "noun.person", "noun.object")
)
# wordfreq Zipf frequency (3 = once per million words): a noun we replace must be at least
# this common, a word we put in its place more so, because rare substitutes read as odd.
COMMON_ZIPF = 3.0
SUBSTITUTE_ZIPF = 3.5
GENERIC_NAME_WORDS = frozenset("the of university college fc f.c. united city club".split())
SEX_WORDS = frozenset(("male", "female"))  # WordNet's main sense is the animal
WH_WORDS = frozenset("what which who whom whose".split())
# Hypernyms too general to name the thing (dog -> entity says nothing).
TOO_ABSTRACT = frozenset(
    "entity.n.01 physical_entity.n.01 object.n.01 whole.n.02 abstraction.n.06 thing.n.12 "
    "matter.n.03 living_thing.n.01 organism.n.01 causal_agent.n.01 artifact.n.01 "
    "instrumentality.n.03 psychological_feature.n.01 group.n.01 attribute.n.02 event.n.01 "
    "act.n.02 measure.n.02 relation.n.01 communication.n.02 state.n.02 part.n.02 "
    "unit.n.03 physical_object.n.01 material.n.01 substance.n.01 commodity.n.01 "
    "container.n.01 device.n.01 structure.n.01 covering.n.02 implement.n.01 "
    "equipment.n.01 content.n.05 cognition.n.01 person.n.01".split()
)
ORG_KINDS = (
    (("university", "college", "institute", "school"), UNIVERSITIES),
    (("fc", "f.c.", "united", "club", "a.c.", "s.c.", "city", "sv"), CLUBS),
)


@functools.lru_cache(maxsize=50000)
def _synsets(lemma: str):
    from evaluator.resources import wordnet

    return tuple(wordnet().synsets(lemma, pos="n"))


@functools.lru_cache(maxsize=50000)
def _plural_only(word: str) -> bool:
    """A plural form that WordNet lists as a word of its own (shorts, glasses, arms): its
    singular lemma would name something else."""
    from evaluator.resources import wordnet

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


def _usable_word(name: str) -> bool:
    return (
        name.isalpha()
        and name.islower()
        and len(name) > 2
        and _common(name, SUBSTITUTE_ZIPF)
        and _dominant(name, 3)
        and getLemma(name, upos="NOUN")[:1] == (name,)  # 'colors' is no word for a flag
    )


def _concrete(lemma: str) -> bool:
    """A common, unambiguous word whose main sense is a thing, animal, plant, food or person."""
    synset = _main_synset(lemma)
    return (
        synset is not None
        and synset.lexname() in CONCRETE_LEXNAMES
        and _common(lemma)
        and _dominant(lemma)
    )


def _word_for(synset) -> str | None:
    """A single common word whose main sense is ``synset`` (so the word means that thing)."""
    for lemma in sorted(synset.lemmas(), key=lambda x: -lemma_count(x)):
        name = lemma.name()
        if _usable_word(name) and _main_synset(name) == synset:
            return name
    return None


@functools.lru_cache(maxsize=50000)
def _cohyponyms(lemma: str) -> tuple[str, ...]:
    """Words for siblings of the lemma's main sense (cat -> dog, rat?): same kind, other thing."""
    if lemma in ROLES:
        return tuple(r for r in ROLES if r != lemma)
    synset = _main_synset(lemma)
    if not _concrete(lemma) or synset.lexname() == "noun.person":
        return ()
    above = set(synset.closure(lambda s: s.hypernyms()))
    words = []
    parents = synset.hypernyms()
    for level in range(2):
        for parent in parents:
            for sibling in parent.hyponyms():
                if sibling == synset or sibling in above:
                    continue
                if synset in set(sibling.closure(lambda s: s.hypernyms())):
                    continue  # a kind of the original: that is HypErr
                if sibling.lexname() != synset.lexname():
                    continue
                word = _word_for(sibling)
                if word and any(x.lexname() == "noun.person" for x in _synsets(word)):
                    continue  # dog -> male: a sex or role word is no sibling kind
                if word and word != lemma and word not in words:
                    words.append(word)
        if len(words) >= 3 or level == 1:
            break
        parents = [g for p in parents for g in p.hypernyms() if g.name() not in TOO_ABSTRACT]
    return tuple(words)


@functools.lru_cache(maxsize=50000)
def _hypernyms(lemma: str) -> tuple[str, ...]:
    """Words for the main sense's hypernyms, skipping ones too abstract to name the thing."""
    if not _concrete(lemma):
        return ()
    if _main_synset(lemma).lexname() == "noun.person":
        return PERSON_HYPERNYMS.get(lemma, ())
    words = []
    for parent in _main_synset(lemma).hypernyms():
        if parent.name() in TOO_ABSTRACT or parent.min_depth() < 4:
            continue
        for item in parent.lemmas():
            name = item.name()
            # one word: WordNet's compounds read as jargon ('public transport', 'place of business')
            if name.isalpha() and name.islower() and name != lemma and _common(name):
                words.append(name)
                break
    return tuple(words)


@functools.lru_cache(maxsize=50000)
def _hyponyms(lemma: str) -> tuple[str, ...]:
    """Common single words for kinds of the main sense (dog -> puppy, poodle)."""
    if not _concrete(lemma):
        return ()
    if _main_synset(lemma).lexname() == "noun.person":
        return PERSON_HYPONYMS.get(lemma, ())
    words = []
    for child in _main_synset(lemma).hyponyms():
        word = _word_for(child)
        if word and word != lemma:
            words.append(word)
    return tuple(words)


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


def _countable_use(token: Token) -> bool:
    """Plural, or singular with a determiner: 'some grass' or 'full of furniture' are mass
    uses, where a count-noun substitute breaks the grammar."""
    if token.tag_ == "NNS":
        return True
    return any(c.dep_ in ("det", "poss") and c.lower_ not in ("some", "any", "much", "no")
               for c in token.children)  # fmt: skip


def _noun_substitution(doc: Doc, ctx: Context, words_for, deps, rule: str) -> Change | None:
    candidates = [
        (t, w) for t in _common_nouns(doc, deps)
        if t.lemma_.lower() not in SEX_WORDS and _countable_use(t)
        and (w := words_for(t.lemma_.lower()))
    ]  # fmt: skip
    if not candidates:
        return None
    token, words = ctx.rng.choice(candidates)
    new = _inflect_like(token, ctx.rng.choice(words))
    if not new:
        return None
    return replace_word(token, new, rule)


def cohyponym(doc: Doc, ctx: Context) -> Change | None:
    """'A dog chased a cat' -> 'A dog chased a rat': subject/object noun -> a sibling kind."""
    return _noun_substitution(doc, ctx, _cohyponyms, ARGUMENT_DEPS, "EntErr/cohyponym")


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
    words = {t.lower_ for t in ent}
    for keys, pool in ORG_KINDS:
        if words & set(keys):
            return pool
    return ORGANISATIONS


def named_entity(doc: Doc, ctx: Context) -> Change | None:
    """A person, organisation, group or language name -> another of the same type."""
    ents = [
        e for e in doc.ents
        if e.label_ in ("PERSON", "ORG", "NORP", "LANGUAGE")
        and all(t.is_alpha or t.text in ".-'" for t in e) and e.text[:1].isupper()
        and not set(e.text.split()) & BROAD_GROUPS
        and not (e.root.dep_ == "compound" and e.root.head.pos_ == "NOUN")  # 'Amazon forest'
        and not (e.label_ == "PERSON" and len(e) == 1 and e.start > 0
                 and e.doc[e.start - 1].lower_ in ("in", "of", "at", "from", "near"))
    ]  # fmt: skip
    if not ents:
        return None
    ent = ctx.rng.choice(ents)
    if ent.label_ == "PERSON":
        new = _new_person(ent, ctx)
    else:
        pool = {"NORP": NORPS, "LANGUAGE": LANGUAGES}.get(ent.label_) or _org_pool(ent)
        old_words = {w.lower() for w in ent.text.split()} - GENERIC_NAME_WORDS
        options = [p for p in pool if not {w.lower() for w in p.split()} & old_words]
        if not options:
            return None
        new = ctx.rng.choice(options)  # sharing no word: BBC Radio Newcastle -> the BBC is HypErr
    start = ent.start_char
    if ent.start > 0 and is_indefinite_article(doc[ent.start - 1]):
        article = doc[ent.start - 1]
        start = article.idx
        new = f"{indefinite_article(new)} {new}"  # an Asian man -> a Chinese man
    if new.startswith("the ") and ent.start > 0 and doc[ent.start - 1].lower_ == "the":
        new = new.removeprefix("the ")
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


def _moved(span: Span, to_sentence_start: bool) -> str:
    """Phrase text for its new position: capitalised at a sentence start, else lower-cased
    where only the sentence start made it upper case (names keep their capitals)."""
    text = span.text
    if to_sentence_start:
        return text[:1].upper() + text[1:]
    if span[0].is_sent_start and span[0].pos_ != "PROPN" and span[0].text != "I":
        text = text[:1].lower() + text[1:]
    return text


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
        first, second = _phrase(subject), _phrase(obj)
        if first is None or second is None or not first.end <= verb.i < second.start:
            continue
        candidates.append((first, second))
    if not candidates:
        return None
    first, second = ctx.rng.choice(candidates)
    middle = doc.text[first.end_char : second.start_char]
    new = _moved(second, first[0].is_sent_start) + middle + _moved(first, False)
    return replace(doc, first.start_char, second.end_char, new, "EntErr/role_swap")


def hypernym(doc: Doc, ctx: Context) -> Change | None:
    """'dog' -> 'canine': a noun named by a more general, still informative, kind."""
    return _noun_substitution(doc, ctx, _hypernyms, None, "HypErr/hypernym")


def hyponym(doc: Doc, ctx: Context) -> Change | None:
    """'dog' -> 'puppy': a noun named by a more specific kind."""
    return _noun_substitution(doc, ctx, _hyponyms, None, "HypErr/hyponym")


RULES: dict[str, list[Rule]] = {
    "EntErr": [named_entity, gender, cohyponym, role_swap],
    "HypErr": [hypernym, hyponym],
}
