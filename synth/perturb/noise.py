"""Graded text noise, shared by the synth rules and ``mismatch stress``: one implementation each.

Each function takes a parsed text, a seeded RNG and a list of levels and returns one text per
level, or None when it cannot change this text. Levels are intensities: a fraction of the
candidate units (articles, sentences, word pairs ...), a fraction of all words, a split point
or a repeat count. Candidates are drawn once in a random order and level k changes the first
ones of that order, so a higher level contains the lower one's edits. ``mismatch stress``
(He et al. 2023) runs them at fixed levels; synth GramErr, PredErr, EntErr, PredOrdErr,
MissInfo and RepErr rules run one random level as a labelled error (``noise_rule``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence

from spacy.tokens import Doc, Span, Token

from synth.perturb.base import Change, Context, Rule, edit_change, keeps_capital, match_case

ARTICLES = frozenset(("a", "an", "the"))
PUNCTUATION = (",", ".", ";", ":", "!", "?", "-")

Noise = Callable[[Doc, random.Random, Sequence[float]], "list[str] | None"]


# --- text assembly ----------------------------------------------------------------------


def normal(text: str) -> str:
    return " ".join(text.split())


def _render(pieces: Sequence[tuple[str, str]]) -> str:
    """Join (text, trailing whitespace) pieces and normalise the whitespace."""
    return normal("".join(text + space for text, space in pieces))


def _pieces(tokens: Iterable[Token]) -> list[tuple[str, str]]:
    return [(t.text, t.whitespace_) for t in tokens]


def _edit_tokens(doc: Doc, edits: dict[int, str]) -> str:
    """The text with some tokens replaced (token index -> new text; "" deletes it)."""
    pieces = _pieces(doc)
    for index, new in edits.items():
        pieces[index] = (new, pieces[index][1])  # a deleted word's space keeps its neighbours apart
    return _render(pieces)


def replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """Replace non-overlapping character spans (start, end, new) of ``text``."""
    out, last = [], 0
    for start, end, new in sorted(spans):
        out.append(text[last:start] + new)
        last = end
    return normal("".join(out) + text[last:])


def count_for(fraction: float, total: int) -> int:
    """How many of ``total`` units a level changes: at least one, at most all."""
    return min(total, max(1, math.ceil(fraction * total - 1e-9)))


def nested(candidates: Sequence, fractions: Sequence[float], rng: random.Random) -> list[list]:
    """Per level, the first ``count_for(fraction)`` candidates of one random order."""
    order = list(candidates)
    rng.shuffle(order)
    return [order[: count_for(f, len(order))] for f in fractions]


def _words(doc: Doc) -> list[Token]:
    return [t for t in doc if not (t.is_punct or t.is_space)]


# --- fluency ----------------------------------------------------------------------------


def truncation(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Cut the last fraction of the tokens."""
    n = len(doc)
    if n < 2:
        return None
    return [_render(_pieces(doc[: max(1, n - count_for(f, n))])) for f in levels]


def removal(keep: Callable[[Token], bool], what: str) -> Noise:
    """Noise that deletes a share of the tokens for which ``keep`` is true."""

    def remove(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
        candidates = [t.i for t in doc if keep(t)]
        if not candidates:
            return None
        return [_edit_tokens(doc, dict.fromkeys(c, "")) for c in nested(candidates, levels, rng)]

    remove.__doc__ = f"Delete {what}."
    return remove


article_removal = removal(lambda t: t.lower_ in ARTICLES, "articles (a, an, the)")
preposition_removal = removal(lambda t: t.pos_ == "ADP", "prepositions")
stopword_removal = removal(lambda t: t.is_stop and not t.is_punct, "stop words")


def lemmatization(
    select: Callable[[Token], bool], what: str, lemma: Callable[[Token], str] = lambda t: t.lemma_
) -> Noise:
    """Noise that replaces a share of the selected inflected verbs by their lemma."""

    def lemmatize(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
        verbs = [t for t in doc if select(t) and lemma(t) and lemma(t).lower() != t.lower_]
        if not verbs:
            return None
        return [
            _edit_tokens(doc, {t.i: match_case(t.text, lemma(t)) for t in chosen})
            for chosen in nested(verbs, levels, rng)
        ]

    lemmatize.__doc__ = f"Replace {what} by their lemma."
    return lemmatize


verb_lemmatization = lemmatization(
    lambda t: t.pos_ in ("VERB", "AUX"), 'inflected verbs ("was going" -> "be go")'
)


def _token_fraction(doc: Doc, fraction: float, candidates: Sequence) -> int:
    """The number of candidates that makes up ``fraction`` of the text's words."""
    return min(len(candidates), max(1, math.ceil(fraction * len(_words(doc)) - 1e-9)))


def _by_token_fraction(
    doc: Doc, rng: random.Random, levels: Sequence[float], candidates: list
) -> list[list]:
    order = list(candidates)
    rng.shuffle(order)
    return [order[: _token_fraction(doc, f, order)] for f in levels]


def token_drop(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Delete random words."""
    words = [t.i for t in _words(doc)]
    if len(words) < 2:
        return None
    return [
        _edit_tokens(doc, dict.fromkeys(c, "")) for c in _by_token_fraction(doc, rng, levels, words)
    ]


def repeated_token(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Say random words twice ("the the")."""
    words = _words(doc)
    if not words:
        return None
    return [
        _edit_tokens(doc, {t.i: f"{t.text} {t.text}" for t in chosen})
        for chosen in _by_token_fraction(doc, rng, levels, words)
    ]


def local_swap(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Swap neighbouring words (disjoint pairs); the level is the share of words moved."""
    pairs = [
        i for i in range(len(doc) - 1)
        if not (doc[i].is_punct or doc[i + 1].is_punct or doc[i].is_space or doc[i + 1].is_space)
        and doc[i].lower_ != doc[i + 1].lower_
    ]  # fmt: skip
    disjoint = [i for i in pairs if i % 2 == 0] or [i for i in pairs if i % 2 == 1]
    if not disjoint:
        return None
    order = list(disjoint)
    rng.shuffle(order)
    texts = []
    for fraction in levels:
        chosen = order[: _token_fraction(doc, fraction / 2, order)]
        edits = {}
        for i in chosen:
            edits[i], edits[i + 1] = doc[i + 1].text, doc[i].text
        texts.append(_edit_tokens(doc, edits))
    return texts


def _rotated(sentence: Span, point: float) -> str | None:
    """The sentence with its part after the split point moved to the front (end mark kept)."""
    tokens = list(sentence)
    end = len(tokens)
    while end > 0 and (tokens[end - 1].is_punct or tokens[end - 1].is_space):
        end -= 1
    body, tail = tokens[:end], tokens[end:]
    if len(body) < 2:
        return None
    split = min(len(body) - 1, max(1, round(point * len(body))))
    first, second = body[:split], body[split:]
    pieces = _pieces(second[:-1]) + [(second[-1].text, " ")]
    pieces += _pieces(first[:-1]) + [(first[-1].text, body[-1].whitespace_)] + _pieces(tail)
    return _render(pieces)


def middle_swap(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Cut every sentence at a point and swap its two parts; the level is the cut point."""
    sentences = list(doc.sents)
    if not any(_rotated(s, levels[0]) for s in sentences):
        return None
    return [normal(" ".join(_rotated(s, p) or s.text for s in sentences)) for p in levels]


def noised_punctuation(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Delete or change punctuation marks and add new ones after words."""
    tokens = [t for t in doc if not t.is_space]
    if not tokens:
        return None
    actions = {}
    for t in tokens:
        if t.is_punct:
            actions[t.i] = rng.choice(["", *[p for p in PUNCTUATION if p != t.text]])
        else:
            actions[t.i] = t.text + rng.choice(PUNCTUATION)
    order = [t.i for t in tokens]
    rng.shuffle(order)
    texts = []
    for fraction in levels:
        chosen = order[: count_for(fraction, len(order))]
        texts.append(_edit_tokens(doc, {i: actions[i] for i in chosen}))
    return texts


# --- consistency ------------------------------------------------------------------------


def sentence_texts(doc: Doc) -> list[str]:
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def sentence_switching(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Move a share of the sentences round in a cycle (at least two change places)."""
    sentences = sentence_texts(doc)
    if len(set(sentences)) < 2:
        return None
    order = list(range(len(sentences)))
    rng.shuffle(order)
    texts = []
    for fraction in levels:
        chosen = order[: max(2, count_for(fraction, len(order)))]
        new = list(sentences)
        for k, position in enumerate(chosen):
            new[position] = sentences[chosen[(k + 1) % len(chosen)]]
        texts.append(normal(" ".join(new)))
    return texts


def _pairs(units: Sequence, group: Callable, text: Callable, rng: random.Random) -> list[tuple]:
    """Disjoint random pairs of units of the same group whose texts differ."""
    by_group: dict[str, list] = {}
    for unit in units:
        by_group.setdefault(group(unit), []).append(unit)
    pairs = []
    for members in by_group.values():
        rng.shuffle(members)
        free = list(members)
        while len(free) >= 2:
            first = free.pop()
            partner = next((m for m in free if text(m).lower() != text(first).lower()), None)
            if partner is None:
                continue
            free.remove(partner)
            pairs.append((first, partner))
    rng.shuffle(pairs)
    return pairs


def entity_switching(labels: frozenset[str] | None = None) -> Noise:
    """Noise that swaps named entities of one type (of ``labels``; None: any type)."""

    def switch(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
        """Swap the places of two named entities of the same type (a share of all such pairs)."""
        ents = [e for e in doc.ents if labels is None or e.label_ in labels]
        pairs = _pairs(ents, lambda e: e.label_, lambda e: e.text, rng)
        if not pairs:
            return None
        texts = []
        for fraction in levels:
            spans = []
            for a, b in pairs[: count_for(fraction, len(pairs))]:
                spans += [(a.start_char, a.end_char, b.text), (b.start_char, b.end_char, a.text)]
            texts.append(replace_spans(doc.text, spans))
        return texts

    return switch


named_entity_switching = entity_switching()


def _moved(word: Token, place: Token) -> str:
    """A common word moved to another word's place takes the capital of the place only;
    a name (``keeps_capital``) and a word with inner capitals ('NASA', 'iPod') keep their own."""
    if word.text[1:] != word.text[1:].lower() or (word.text[:1].isupper() and keeps_capital(word)):
        return word.text
    text = word.text.lower() if word.is_sent_start else word.text
    return match_case(place.text, text)


def word_switching(
    pos: str,
    what: str,
    kind: Callable[[Token], object] = lambda t: None,
    keep: Callable[[Token], bool] = lambda t: True,
) -> Noise:
    """Noise that swaps words of one part of speech (``kind``: only words of one kind trade
    places, e.g. one fine tag, so 'hired' trades with 'fired' but not with 'hiring'; ``keep``:
    which of them may move)."""

    def switch(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
        words = [t for t in doc if t.pos_ == pos and keep(t)]
        pairs = _pairs(words, kind, lambda t: t.text, rng)
        if not pairs:
            return None
        texts = []
        for fraction in levels:
            edits = {}
            for a, b in pairs[: count_for(fraction, len(pairs))]:
                edits[a.i], edits[b.i] = _moved(b, a), _moved(a, b)
            texts.append(_edit_tokens(doc, edits))
        return texts

    switch.__doc__ = f"Swap the places of two {what} (a share of all such pairs)."
    return switch


verb_switching = word_switching("VERB", "verbs")
noun_switching = word_switching("NOUN", "nouns")

# --- other blind spots ------------------------------------------------------------------


def repetition(doc: Doc, rng: random.Random, levels: Sequence[float]) -> list[str] | None:
    """Append k copies of the text's last 4-gram (before its final punctuation)."""
    tokens = list(doc)
    end = len(tokens)
    while end > 0 and (tokens[end - 1].is_punct or tokens[end - 1].is_space):
        end -= 1
    if end < 4:
        return None
    gram = doc[end - 4 : end]
    return [
        replace_spans(
            doc.text, [(gram.end_char, gram.end_char, " " + " ".join([gram.text] * int(k)))]
        )
        for k in levels
    ]


# --- as synth rules ---------------------------------------------------------------------


MIN_RULE_WORDS = 4  # 'Yes.' or 'Hello world' is too short to carry a disfluency as an error


def noise_rule(function: Noise, levels: Sequence[float], rule: str) -> Rule:
    """A synth rule that applies ``function`` at one of ``levels`` drawn at random, so the
    pairs of one rule carry one to several edits (graded severity, as in the stress tests)."""

    def apply(doc: Doc, ctx: Context) -> Change | None:
        if len(_words(doc)) < MIN_RULE_WORDS:
            return None
        texts = function(doc, ctx.rng, [ctx.rng.choice(levels)])
        return edit_change(doc.text, texts[0], rule) if texts else None

    apply.__name__ = rule.split("/", 1)[-1]
    apply.__doc__ = function.__doc__
    return apply
