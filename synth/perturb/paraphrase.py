"""NoContr rules: meaning-preserving rewrites, so "differs from the reference" is no error cue.

Small numbers written as words or digits (3 <-> three), a synonym from the same WordNet
synset for a word whose dominant sense is that synset, negative and copula contractions
(is not <-> isn't, it is <-> it's), and swapping two short coordinated noun phrases
("A man and a woman" -> "A woman and a man"), and the text as a tokenizer writes it ("the
dog's ball." -> "the dog 's ball ."). Every rule keeps all number values, every
negation cue and every named entity of the input.
"""

from __future__ import annotations

import functools

from lemminflect import getInflection
from spacy.tokens import Doc, Token
from wordfreq import zipf_frequency

from mismatch_core.resources import lemma_count, wordnet
from synth.perturb.base import Change, Context, lemmas, replace, replace_word, swap_spans
from synth.perturb.lexicon_function_words import (
    EXPANDED_AUX,
    NEGATION_WORDS,
    NEGATIVE_CONTRACTIONS,
    NUMBER_WORDS,
)

NUMBER_VALUES = {value: word for word, value in NUMBER_WORDS.items() if value < 100}
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a"}
# Light verbs and very general words: any "synonym" of these changes the sense.
NO_SYNONYM = (
    "be",
    "have",
    "do",
    "get",
    "make",
    "go",
    "take",
    "give",
    "come",
    "put",
    "set",
    "let",
    "say",
    "see",
    "use",
    "man",
    "woman",
    "people",
    "person",
    "thing",
    "way",
    "time",
    "year",
    "day",
    "part",
    "other",
    "same",
    "own",
    "many",
    "much",
    "few",
    "first",
    "last",
    "new",
    "old",
    "good",
    "great",
    "little",
    "large",
    "small",
    "big",
    "high",
    "low",
    "long",
    "short",
    "total",
    "entire",
    "whole",
    "full",
    "main",
    "real",
)
MIN_DOMINANT_SHARE = 0.7  # 'plant' (0.63: a factory, then a flower) is too open
COPULA_SUBJECTS = ("it", "there", "that", "he", "she", "what", "here")
COUNT_ENTITIES = ("", "CARDINAL", "QUANTITY")
MIN_SYNONYM_COUNT = 5
MAX_RARER = 1.0  # a synonym may be at most this much rarer (Zipf scale) than the word
FINITE_TAGS = ("VBZ", "VBP", "VBD")


def number_words(doc: Doc, ctx: Context) -> Change | None:
    """Write a small cardinal the other way: "3 dogs" <-> "three dogs"."""
    candidates = []
    for token in doc:
        if token.tag_ != "CD" or token.dep_ != "nummod" or token.ent_type_ not in COUNT_ENTITIES:
            continue
        if token.i > 0 and doc[token.i - 1].pos_ == "PROPN":
            continue  # a name with a number: "Radio 4", "Big 12", "O 2"
        neighbours = [doc[i] for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)]
        if any(n.like_num or n.text in ("-", ".", ",", "/") for n in neighbours):
            continue  # part of a longer number ("twenty - five", "1,000", "3.5")
        if token.text.isdigit() and int(token.text) in NUMBER_VALUES and int(token.text) > 1:
            candidates.append((token, NUMBER_VALUES[int(token.text)]))
        elif NUMBER_WORDS.get(token.lower_, 0) > 1 and NUMBER_WORDS[token.lower_] < 100:
            candidates.append((token, str(NUMBER_WORDS[token.lower_])))
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_word(token, new, "NoContr/number_format")


@functools.lru_cache(maxsize=16384)
def _dominant_share(lemma: str, pos: str) -> float:
    """Share of the lemma's sense-tagged uses that fall on its first synset."""
    synsets = wordnet().synsets(lemma, pos=pos)
    counts = [
        sum(lemma_count(entry) for entry in s.lemmas() if entry.name().lower() == lemma)
        for s in synsets
    ]
    return counts[0] / sum(counts) if counts and counts[0] else 0.0


@functools.lru_cache(maxsize=16384)
def _synonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """Single-word synonyms from the lemma's dominant synset that share that dominant sense.

    Both the word and the synonym must use this synset for most of their sense-tagged uses
    (so the sense is clear without context), the synonym must be common enough to be tagged,
    and derived forms (blue -> bluish, group -> grouping) are skipped: they shift meaning.
    """
    wn = wordnet()
    if _dominant_share(lemma, pos) < MIN_DOMINANT_SHARE:
        return ()
    first = wn.synsets(lemma, pos=pos)[0]
    found = []
    for candidate in first.lemmas():
        name = candidate.name()
        lower = name.lower()
        if not name.isalpha() or name[0].isupper() or lower == lemma:
            continue
        if lemma_count(candidate) < MIN_SYNONYM_COUNT or lower in NEGATION_WORDS:
            continue
        if lower.startswith(lemma[:4]) or wn.morphy(lower, pos) != lower:
            continue
        if pos == "n" and lower not in lemmas(lower, "NOUN"):
            continue  # a plural-only noun ('works') takes no further plural ('workses')
        own = wn.synsets(lower, pos=pos)
        if own and own[0] == first and _dominant_share(lower, pos) >= MIN_DOMINANT_SHARE:
            found.append(lower)
    return tuple(found)


@functools.lru_cache(maxsize=16384)
def _zipf(word: str) -> float:
    return zipf_frequency(word, "en")


def _inflect(synonym: str, token: Token) -> str | None:
    if token.pos_ == "ADJ":
        return synonym if token.tag_ == "JJ" else None
    forms = getInflection(synonym, tag=token.tag_)
    return forms[0] if forms else None


def synonym(doc: Doc, ctx: Context) -> Change | None:
    """Replace a content word by a same-sense WordNet synonym: "a couch" -> "a sofa"."""
    candidates = []
    for token in doc:
        pos = WORDNET_POS.get(token.pos_)
        lemma = token.lemma_.lower()
        if pos is None or token.ent_type_ or lemma in NO_SYNONYM or not token.is_alpha:
            continue
        if token.like_num or lemma in NUMBER_WORDS:
            continue
        if token.i > 0 and token.text[:1].isupper():
            continue  # a name or a title, whatever the NER says
        if token.pos_ == "VERB" and any(c.dep_ == "prt" for c in token.children):
            continue  # a phrasal verb means more than its verb: "help up" is no "aid up"
        if token.dep_ in ("neg", "compound") or token.lower_ in NEGATION_WORDS:
            continue  # compounds are fixed terms: "fault lines" is not "mistake lines"
        for name in _synonyms(lemma, pos):
            if _zipf(name) < _zipf(lemma) - MAX_RARER:
                continue  # a rare synonym shifts the register or sense: "babe", "metropolis"
            inflected = _inflect(name, token)
            if inflected and inflected.lower() != token.lower_:
                candidates.append((token, inflected))
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_word(token, new, "NoContr/synonym")


def contraction(doc: Doc, ctx: Context) -> Change | None:
    """Contract or expand: "is not" <-> "isn't", "cannot" <-> "can't", "it is" <-> "it's"."""
    candidates: list[tuple[int, int, str]] = []  # character span and replacement
    for token in doc[1:]:
        prev = doc[token.i - 1]
        start, end = prev.idx, token.idx + len(token.text)
        if token.lower_ == "not" and token.dep_ == "neg" and prev.lower_ in NEGATIVE_CONTRACTIONS:
            if prev.lower_ == "can" and not prev.whitespace_:
                candidates.append((start, end, _case(prev, "can't")))
            elif prev.whitespace_:
                candidates.append((start, end, _case(prev, NEGATIVE_CONTRACTIONS[prev.lower_])))
        elif token.lower_ == "n't" and prev.pos_ in ("AUX", "VERB", "PART"):
            full = EXPANDED_AUX.get(prev.lower_, prev.text)
            new = "cannot" if full.lower() == "can" else f"{full} not"
            candidates.append((start, end, _case(prev, new)))
        elif token.lower_ == "is" and prev.lower_ in COPULA_SUBJECTS and prev.whitespace_:
            candidates.append((start, end, f"{prev.text}'s"))
        elif token.lower_ == "'s" and token.lemma_ == "be" and prev.lower_ in COPULA_SUBJECTS:
            following = doc[token.i + 1] if token.i + 1 < len(doc) else None
            if following is None or following.pos_ not in ("NOUN", "ADJ", "PROPN"):
                candidates.append((start, end, f"{prev.text} is"))  # not a misspelt "its"
    if not candidates:
        return None
    start, end, new = ctx.rng.choice(candidates)
    return replace(doc, start, end, new, "NoContr/contraction")


def _case(like: Token, new: str) -> str:
    return new[0].upper() + new[1:] if like.text[:1].isupper() else new


def _is_simple_noun_phrase(noun: Token, right_limit: int) -> bool:
    """A short noun phrase with no modifier after the noun ("a small dog", "Paris")."""
    size = noun.i - noun.left_edge.i + 1
    right = [c for c in noun.children if c.i > noun.i and c.i < right_limit]
    return noun.pos_ in ("NOUN", "PROPN") and size <= 4 and not right


def _has_determiner(noun: Token) -> bool:
    return any(c.dep_ in ("det", "poss", "nummod") for c in noun.children)


def _splits_entity(doc: Doc, first: Token, second: Token) -> bool:
    """True when a named entity is not wholly inside one of the two conjuncts."""
    spans = ((first.left_edge.i, first.i + 1), (second.left_edge.i, second.i + 1))
    for ent in doc.ents:
        overlaps = ent.start < spans[1][1] and ent.end > spans[0][0]
        inside = any(start <= ent.start and ent.end <= end for start, end in spans)
        if overlaps and not inside:
            return True
    return False


def swap_coordination(doc: Doc, ctx: Context) -> Change | None:
    """ "A man and a woman sit" -> "A woman and a man sit"."""
    candidates = []
    for token in doc:
        conjuncts = [c for c in token.children if c.dep_ == "conj"]
        ccs = [c for c in token.children if c.dep_ == "cc" and c.lower_ == "and"]
        if len(conjuncts) != 1 or len(ccs) != 1 or token.dep_ == "conj":
            continue
        conj, cc = conjuncts[0], ccs[0]
        if cc.i != token.i + 1 or conj.left_edge.i != cc.i + 1 or conj.right_edge.i != conj.i:
            continue
        if not (_is_simple_noun_phrase(token, cc.i) and _is_simple_noun_phrase(conj, len(doc))):
            continue
        if doc[token.left_edge.i].dep_ == "preconj" or _splits_entity(doc, token, conj):
            continue  # "both A and B"; "Springer Science and Business Media"
        if _has_determiner(token) != _has_determiner(conj):
            continue  # "A man and lady": the article is shared, so it cannot move
        following = doc[conj.i + 1] if conj.i + 1 < len(doc) else None
        if following is not None and (
            following.pos_ in ("NOUN", "PROPN")
            or (following.tag_ in FINITE_TAGS and token.dep_ not in ("nsubj", "nsubjpass"))
        ):
            continue  # the parse joined words of different phrases
        candidates.append((token, conj))
    if not candidates:
        return None
    first, second = ctx.rng.choice(candidates)
    first_span = doc[first.left_edge.i : first.i + 1]
    second_span = doc[second.left_edge.i : second.i + 1]
    return swap_spans(doc, first_span, second_span, "NoContr/coordination")


SPLIT_MARKS = frozenset(". , ! ? ; :".split())
CLITICS = frozenset("'s n't 're 've 'll 'd 'm".split())
# Tokenising applies to nearly every text; the other rewrites apply to few. Offered to every
# text it would be most of NoContr, so it is offered to a quarter of them.
TOKENIZED_SHARE = 0.25


def tokenized(doc: Doc, ctx: Context) -> Change | None:
    """'The dog's ball.' -> 'The dog 's ball .': the same words, split as many systems output
    them (PTB-style tokens), so a surface difference alone never looks like an error."""
    if ctx.rng.random() >= TOKENIZED_SHARE:
        return None
    parts = []
    for token in doc:
        split = token.i > 0 and not doc[token.i - 1].whitespace_ and token.ent_iob_ != "I"
        if split and (token.text in SPLIT_MARKS or token.lower_ in CLITICS):
            parts.append(" ")
        parts.append(token.text_with_ws)
    new = "".join(parts)
    if new == doc.text:
        return None
    return Change(
        text=new, rule="NoContr/tokenized", span=(0, len(doc.text)), old=doc.text, new=new
    )


RULES = {"NoContr": [number_words, synonym, contraction, swap_coordination, tokenized]}
