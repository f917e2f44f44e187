"""What a perturbation rule is: a function from a parsed text to a changed text, or None.

A rule receives a spaCy ``Doc`` (full pipeline: tagger, parser, NER, lemmatizer) and a
``Context`` (seeded RNG, parsed texts from other groups). It returns a ``Change`` that records
the new text and exactly what changed, or ``None`` when it does not apply to this text.
Rules never raise on odd input: a rule that cannot apply returns ``None``.
"""

from __future__ import annotations

import functools
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from lemminflect import getLemma
from spacy.tokens import Doc, Span, Token

from synth.perturb.lexicon_function_words import NEGATION_WORDS


@dataclass(frozen=True)
class Change:
    """The result of one rule: the new text and what it changed, for audit and analysis."""

    text: str
    rule: str
    span: tuple[int, int]  # character span in the input text that was replaced
    old: str
    new: str


@dataclass
class Context:
    """What a rule may use besides its input: a seeded RNG and parsed texts from other groups."""

    rng: random.Random
    other_doc: Callable[[], Doc | None] = field(default=lambda: None)  # a reference of a different group


Rule = Callable[[Doc, Context], "Change | None"]

_WEIGHTS: dict[Rule, float] = {}  # rule -> its weight from ``weighted``


def weighted(rule: Rule, weight: float) -> Rule:
    """Give a rule a weight for the order in which a class's rules are tried (default 1).

    A rule that applies to almost any text (tokenising, swapping two nouns, truncating)
    would otherwise be the first applicable one so often that it crowds out the specific
    rules of its class.
    """
    _WEIGHTS[rule] = weight
    return rule


def rule_weight(rule: Rule) -> float:
    """The rule's weight from ``weighted``, 1 when it has none."""
    return _WEIGHTS.get(rule, 1.0)


def replace(doc: Doc, start: int, end: int, new: str, rule: str) -> Change | None:
    """Replace characters [start, end) of ``doc.text`` by ``new``; None when nothing changes.

    Collapses the double space left by deleting a word and fixes a leading lower-case
    letter, so deletions and insertions read like normal text.
    """
    text = doc.text
    old = text[start:end]
    if old == new:
        return None
    result = text[:start] + new + text[end:]
    result = " ".join(result.split())
    result = result.replace(" ,", ",").replace(" .", ".") if " ," not in text and " ." not in text else result
    for doubled, single in (("..", "."), (",.", "."), (".,", "."), (",,", ",")):
        if doubled in result and doubled not in text:  # a deletion or an appended sentence met punctuation
            result = result.replace(doubled, single)
    if result and result[0].islower() and text[:1].isupper():
        result = result[0].upper() + result[1:]
    if not result.strip() or result == text:
        return None
    return Change(text=result, rule=rule, span=(start, end), old=old, new=new)


def edit_change(text: str, new: str, rule: str) -> Change | None:
    """A Change for an edit anywhere in the text (several deletions, a swap): the span runs
    from the first to the last changed word; None when nothing changes."""
    if not new.strip() or new == text:
        return None
    start = len(os.path.commonprefix([text, new]))
    while start > 0 and not text[start - 1].isspace():
        start -= 1  # whole words: the paraphrase check looks the old words up in the ref
    tail = len(os.path.commonprefix([text[start:][::-1], new[start:][::-1]]))
    while tail > 0 and not text[len(text) - tail].isspace():
        tail -= 1
    end, new_end = len(text) - tail, len(new) - tail
    return Change(
        text=new, rule=rule, span=(start, end), old=text[start:end], new=new[start:new_end]
    )


def replace_token(token: Token, new: str, rule: str) -> Change | None:
    """Replace one token's text (keeping its trailing whitespace) and match its capitalisation."""
    return replace(token.doc, token.idx, token.idx + len(token.text), match_case(token.text, new), rule)


def replace_span(span: Span, new: str, rule: str) -> Change | None:
    """Replace a multi-token span's text."""
    return replace(span.doc, span.start_char, span.end_char, new, rule)


def match_case(old: str, new: str) -> str:
    """Give ``new`` the leading capital of ``old`` (sentence-initial words stay capitalised)."""
    if old[:1].isupper() and new[:1].islower():
        return new[0].upper() + new[1:]
    return new


def replace_tokens(doc: Doc, new_texts: dict[int, str], rule: str) -> Change | None:
    """Replace several tokens at once (token index -> new text; "" deletes the token).

    For edits that must stay consistent, such as a noun and its article or a subject and
    its verb. Each new text takes the capitalisation of the token it replaces.
    """
    if not new_texts:
        return None
    first, last = min(new_texts), max(new_texts)
    parts = []
    for token in doc[first : last + 1]:
        text = match_case(token.text, new_texts[token.i]) if token.i in new_texts else token.text
        parts.append(text + token.whitespace_ if token.i < last else text)
    start, end = doc[first].idx, doc[last].idx + len(doc[last].text)
    return replace(doc, start, end, "".join(parts), rule)


# vowel letters with a consonant sound ('a university'); 'uni' words with the prefix un-
# ('an unimportant', 'an unidentified') keep 'an', so the 'uni' prefixes are listed one by one
_AN_EXCEPTIONS = (
    "unic", "unif", "unil", "unio", "uniq", "unis", "unit", "univ", "use", "usu", "uti", "eu", "one", "once", "ewe",
)  # fmt: skip
NAME_ENTITIES = frozenset(
    ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")
)


def keeps_capital(token: Token) -> bool:
    """Whether a sentence-initial word keeps its capital when it moves inside the sentence:
    names and 'I' do (a name's leading 'The' only in a title), and so do nouns whose WordNet
    lemmas are all capitalised ('Huguenots', which the tagger calls a common noun) and words
    WordNet does not know; common words and numbers ('Four men') do not."""
    from mismatch_core.resources import wordnet

    if token.lower_ == "the":
        return token.ent_type_ == "WORK_OF_ART"  # 'in Kourou, the Guiana Space Centre'; titles keep it
    if token.pos_ == "PROPN" or token.text == "I" or token.ent_type_ in NAME_ENTITIES:
        return True
    if token.is_alpha and token.pos_ in ("NOUN", "ADJ", "VERB", "X") and not wordnet().synsets(token.lower_):
        return True  # a word no dictionary knows is a name the tagger missed: 'Alfons'
    if token.pos_ != "NOUN":
        return False  # 'Who' is no 'WHO'
    names = [
        lemma.name()
        for synset in wordnet().synsets(token.text, pos="n")
        for lemma in synset.lemmas()
        if lemma.name().lower() == token.text.lower() or lemma.name().lower() == token.lemma_.lower()
    ]
    return bool(names) and all(name[:1].isupper() for name in names)


@functools.cache
def lemmas(word: str, upos: str) -> tuple[str, ...]:
    """lemminflect's lemmas of a lower-cased word as a universal POS ("VERB"), cached: the rules
    ask for the same words again and again, and uncached these lookups took a fifth of synth's
    time."""
    return tuple(getLemma(word, upos=upos))


@functools.lru_cache(maxsize=20000)
def noun_lexname(lemma: str) -> str:
    """The WordNet lexicographer file of the noun's most frequent sense ("noun.artifact"), or
    "" when WordNet has no such noun."""
    from mismatch_core.resources import wordnet

    senses = wordnet().synsets(lemma, pos="n")
    return senses[0].lexname() if senses else ""


def opens_sentence(token: Token) -> bool:
    """Whether the token is its sentence's first word, after any opening quotes or brackets."""
    return all(t.is_punct for t in token.doc[token.sent.start : token.i])


def moved_text(span: Span, to_sentence_start: bool) -> str:
    """A phrase's text for a new place: capitalised at a sentence start, lower-cased where only
    the sentence start made it upper case (``keeps_capital``)."""
    text = span.text
    if to_sentence_start:
        return text[:1].upper() + text[1:]
    if opens_sentence(span[0]) and not keeps_capital(span[0]):
        return text[:1].lower() + text[1:]
    return text


def swap_spans(doc: Doc, first: Span, second: Span, rule: str) -> Change | None:
    """Two phrases trade places (``first`` before ``second``); a sentence-initial capital stays
    at the start of the sentence."""
    middle = doc.text[first.end_char : second.start_char]
    new = moved_text(second, opens_sentence(first[0])) + middle + moved_text(first, False)
    return replace(doc, first.start_char, second.end_char, new, rule)


_AN_SILENT_H = ("hour", "honest", "honor", "honour", "heir")


def indefinite_article(word: str) -> str:
    """'a' or 'an' for the word that follows, by its first sound (an hour, a university)."""
    lower = word.lower()
    if lower.startswith(_AN_SILENT_H):
        return "an"
    if lower.startswith(_AN_EXCEPTIONS):
        return "a"
    return "an" if lower[:1] in "aeiou" else "a"


def replace_word(token: Token, new: str, rule: str) -> Change | None:
    """Replace one word and make a directly preceding a/an agree with the new word."""
    new_texts = {token.i: new}
    if token.i > 0 and is_indefinite_article(token.doc[token.i - 1]):
        new_texts[token.i - 1] = indefinite_article(new)
    return replace_tokens(token.doc, new_texts, rule)


def is_negation_cue(token: Token) -> bool:
    """A word that negates ('not', "n't", 'no', 'never', 'without' ...): omission and addition
    rules keep these out of what they drop or add, since a lost or gained negation is NegErr."""
    return token.dep_ == "neg" or token.lower_ in NEGATION_WORDS


def has_negation(tokens) -> bool:
    """Whether any of the tokens (a Doc, Span or list) is a negation cue."""
    return any(is_negation_cue(t) for t in tokens)


def is_indefinite_article(token: Token) -> bool:
    """True for the indefinite article a/an."""
    return token.lower_ in ("a", "an") and token.tag_ == "DT"
