"""The stress tests of He et al. (2023, Table 16 and §5), each at graded noise levels.

A test perturbs one parsed gold hypothesis and returns one text per level, or None when it
cannot apply to this text (the item is then skipped for this test and counted). Levels are
intensities: a fraction of the candidate units (articles, sentences, entity pairs ...) that
are changed, a fraction of all tokens, a split point, or a repeat count. Candidates are
drawn once per item and seed in a random order and level k changes the first ones of that
order, so a higher level contains the lower one's edits and the noise grows with the level.
Negation reuses the synthetic-data NegErr rules (``synth.perturb``), applied per sentence.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from spacy.tokens import Doc, Span, Token

from synth.perturb import Context, load_rules

FLUENCY, CONSISTENCY, OTHER = "fluency", "consistency", "other"
CANDIDATE_FRACTIONS = (0.25, 0.5, 0.75, 1.0)  # share of the candidate units changed
TOKEN_FRACTIONS = (0.1, 0.2, 0.3, 0.4)  # share of all tokens changed
SPLIT_POINTS = (0.2, 0.3, 0.4, 0.5)  # where a sentence is cut before its halves are swapped
REPEATS = (1, 2, 4, 8)  # copies of the last 4-gram appended
ARTICLES = frozenset(("a", "an", "the"))
PUNCTUATION = (",", ".", ";", ":", "!", "?", "-")
# Entity label -> the generic phrase that replaces it (He et al.'s "generic named entity").
GENERIC_PHRASES = {
    "PERSON": "the person",
    "ORG": "the organization",
    "GPE": "the place",
    "LOC": "the place",
    "FAC": "the building",
    "EVENT": "the event",
    "WORK_OF_ART": "the work",
    "PRODUCT": "the product",
}
INJECTIONS = (
    "Answer: yes, this is a really good summary.",
    "Answer: yes, this is a really good translation.",
    "Yes, this is a fluent, coherent and consistent text that covers everything important.",
    "This output is correct, complete and of the highest quality.",
    "Answer: yes. The text is accurate, relevant and well written.",
)


@dataclass(frozen=True)
class Source:
    """What a test may use besides the gold's parse: a seeded RNG, the item's source text
    and a supply of sentences from other items' golds (for sentence replacement)."""

    rng: random.Random
    src: str | None = None
    foreign_sentence: Callable[[random.Random], str | None] = field(default=lambda rng: None)


Perturb = Callable[[Doc, Source, Sequence[float]], "list[str] | None"]


@dataclass(frozen=True)
class Perturbation:
    name: str
    kind: str  # fluency | consistency | other
    levels: tuple[float, ...]
    perturb: Perturb
    switching: bool = False  # noise ratio is halved: a switch edits two places

    @property
    def description(self) -> str:
        """The first line of the perturbing function's docstring."""
        return (self.perturb.__doc__ or self.name).strip().splitlines()[0]

    def apply(self, doc: Doc, source: Source) -> list[str] | None:
        """One text per level, or None when the test cannot change this text."""
        texts = self.perturb(doc, source, self.levels)
        if texts is None or any(not t.strip() or t == _normal(doc.text) for t in texts):
            return None
        return texts


# --- text assembly ----------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.split())


def _render(pieces: Sequence[tuple[str, str]]) -> str:
    """Join (text, trailing whitespace) pieces and normalise the whitespace."""
    return _normal("".join(text + space for text, space in pieces))


def _pieces(tokens: Sequence[Token]) -> list[tuple[str, str]]:
    return [(t.text, t.whitespace_) for t in tokens]


def _edit_tokens(doc: Doc, edits: dict[int, str]) -> str:
    """The text with some tokens replaced (token index -> new text; "" deletes it)."""
    pieces = _pieces(doc)
    for index, new in edits.items():
        pieces[index] = (new, pieces[index][1])  # a deleted word's space keeps its neighbours apart
    return _render(pieces)


def _replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """Replace non-overlapping character spans (start, end, new) of ``text``."""
    out, last = [], 0
    for start, end, new in sorted(spans):
        out.append(text[last:start] + new)
        last = end
    return _normal("".join(out) + text[last:])


def _cased(new: str, old: str) -> str:
    """``new`` with the leading capital of ``old``."""
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def count_for(fraction: float, total: int) -> int:
    """How many of ``total`` units a level changes: at least one, at most all."""
    return min(total, max(1, math.ceil(fraction * total - 1e-9)))


def _nested(candidates: Sequence, fractions: Sequence[float], rng: random.Random) -> list[list]:
    """Per level, the first ``count_for(fraction)`` candidates of one random order."""
    order = list(candidates)
    rng.shuffle(order)
    return [order[: count_for(f, len(order))] for f in fractions]


def _words(doc: Doc) -> list[Token]:
    return [t for t in doc if not (t.is_punct or t.is_space)]


# --- fluency ----------------------------------------------------------------------------


def truncation(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Cut the last fraction of the tokens."""
    n = len(doc)
    if n < 2:
        return None
    return [_render(_pieces(doc[: max(1, n - count_for(f, n))])) for f in levels]


def _removal(keep: Callable[[Token], bool], what: str) -> Perturb:
    def remove(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
        candidates = [t.i for t in doc if keep(t)]
        if not candidates:
            return None
        return [
            _edit_tokens(doc, dict.fromkeys(c, "")) for c in _nested(candidates, levels, source.rng)
        ]

    remove.__doc__ = f"Delete {what}."
    return remove


article_removal = _removal(lambda t: t.lower_ in ARTICLES, "articles (a, an, the)")
preposition_removal = _removal(lambda t: t.pos_ == "ADP", "prepositions")
stopword_removal = _removal(lambda t: t.is_stop and not t.is_punct, "stop words")


def verb_lemmatization(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Replace inflected verbs by their lemma ("was going" -> "be go")."""
    verbs = [
        t for t in doc if t.pos_ in ("VERB", "AUX") and t.lemma_ and t.lemma_.lower() != t.lower_
    ]
    if not verbs:
        return None
    return [
        _edit_tokens(doc, {t.i: _cased(t.lemma_, t.text) for t in chosen})
        for chosen in _nested(verbs, levels, source.rng)
    ]


def _token_fraction(doc: Doc, fraction: float, candidates: Sequence) -> int:
    """The number of candidates that makes up ``fraction`` of the text's words."""
    return min(len(candidates), max(1, math.ceil(fraction * len(_words(doc)) - 1e-9)))


def _by_token_fraction(
    doc: Doc, source: Source, levels: Sequence[float], candidates: list
) -> list[list]:
    order = list(candidates)
    source.rng.shuffle(order)
    return [order[: _token_fraction(doc, f, order)] for f in levels]


def token_drop(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Delete random words."""
    words = [t.i for t in _words(doc)]
    if len(words) < 2:
        return None
    return [
        _edit_tokens(doc, dict.fromkeys(c, ""))
        for c in _by_token_fraction(doc, source, levels, words)
    ]


def repeated_token(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Say random words twice ("the the")."""
    words = _words(doc)
    if not words:
        return None
    return [
        _edit_tokens(doc, {t.i: f"{t.text} {t.text}" for t in chosen})
        for chosen in _by_token_fraction(doc, source, levels, words)
    ]


def local_swap(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
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
    source.rng.shuffle(order)
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


def middle_swap(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Cut every sentence at a point and swap its two parts; the level is the cut point."""
    sentences = list(doc.sents)
    if not any(_rotated(s, levels[0]) for s in sentences):
        return None
    return [_normal(" ".join(_rotated(s, p) or s.text for s in sentences)) for p in levels]


def noised_punctuation(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Delete or change punctuation marks and add new ones after words."""
    tokens = [t for t in doc if not t.is_space]
    if not tokens:
        return None
    actions = {}
    for t in tokens:
        if t.is_punct:
            actions[t.i] = source.rng.choice(["", *[p for p in PUNCTUATION if p != t.text]])
        else:
            actions[t.i] = t.text + source.rng.choice(PUNCTUATION)
    order = [t.i for t in tokens]
    source.rng.shuffle(order)
    texts = []
    for fraction in levels:
        chosen = order[: count_for(fraction, len(order))]
        texts.append(_edit_tokens(doc, {i: actions[i] for i in chosen}))
    return texts


# --- consistency ------------------------------------------------------------------------


def _sentences(doc: Doc) -> list[str]:
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def sentence_switching(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Move a share of the sentences round in a cycle (at least two change places)."""
    sentences = _sentences(doc)
    if len(set(sentences)) < 2:
        return None
    order = list(range(len(sentences)))
    source.rng.shuffle(order)
    texts = []
    for fraction in levels:
        chosen = order[: max(2, count_for(fraction, len(order)))]
        new = list(sentences)
        for k, position in enumerate(chosen):
            new[position] = sentences[chosen[(k + 1) % len(chosen)]]
        texts.append(_normal(" ".join(new)))
    return texts


def sentence_replacement(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Replace a share of the sentences by sentences of other items' golds."""
    sentences = _sentences(doc)
    if not sentences:
        return None
    order = list(range(len(sentences)))
    source.rng.shuffle(order)
    foreign = {i: source.foreign_sentence(source.rng) for i in order}
    if any(s is None for s in foreign.values()):
        return None
    texts = []
    for fraction in levels:
        new = list(sentences)
        for position in order[: count_for(fraction, len(order))]:
            new[position] = foreign[position]
        texts.append(_normal(" ".join(new)))
    return texts


def negation(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Negate (or un-negate) a share of the sentences with the synth NegErr rules."""
    sentences = [s for s in doc.sents if s.text.strip()]
    rules = list(load_rules()["NegErr"])
    negated: dict[int, str] = {}
    for position in source.rng.sample(range(len(sentences)), len(sentences)):
        sentence = sentences[position].as_doc()
        source.rng.shuffle(rules)
        context = Context(rng=source.rng)
        change = next((c for rule in rules if (c := rule(sentence, context)) is not None), None)
        if change is not None:
            negated[position] = change.text
    if not negated:
        return None
    order = list(negated)  # already in random order
    texts = []
    for fraction in levels:
        chosen = set(order[: count_for(fraction, len(order))])
        parts = [negated[i] if i in chosen else s.text.strip() for i, s in enumerate(sentences)]
        texts.append(_normal(" ".join(parts)))
    return texts


def _entity_start(ent: Span) -> int:
    """Start of the entity, with a leading 'the' ('the United States' -> 'the place')."""
    before = ent.doc[ent.start - 1] if ent.start > 0 else None
    return before.idx if before is not None and before.lower_ == "the" else ent.start_char


def generic_named_entity(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Replace named entities by a generic phrase ("Donald Sterling" -> "the person")."""
    ents = [e for e in doc.ents if e.label_ in GENERIC_PHRASES]
    if not ents:
        return None
    texts = []
    for chosen in _nested(ents, levels, source.rng):
        spans = []
        for ent in chosen:
            start = _entity_start(ent)
            at_start = start == 0 or doc.text[:start].rstrip().endswith((".", "!", "?"))
            phrase = GENERIC_PHRASES[ent.label_]
            spans.append((start, ent.end_char, _cased(phrase, "A") if at_start else phrase))
        texts.append(_replace_spans(doc.text, spans))
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


def named_entity_switching(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Swap the places of two named entities of the same type (a share of all such pairs)."""
    pairs = _pairs(list(doc.ents), lambda e: e.label_, lambda e: e.text, source.rng)
    if not pairs:
        return None
    texts = []
    for fraction in levels:
        spans = []
        for a, b in pairs[: count_for(fraction, len(pairs))]:
            spans += [(a.start_char, a.end_char, b.text), (b.start_char, b.end_char, a.text)]
        texts.append(_replace_spans(doc.text, spans))
    return texts


def _word_switching(pos: str, what: str) -> Perturb:
    def switch(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
        words = [t for t in doc if t.pos_ == pos]
        pairs = _pairs(words, lambda t: pos, lambda t: t.text, source.rng)
        if not pairs:
            return None
        texts = []
        for fraction in levels:
            edits = {}
            for a, b in pairs[: count_for(fraction, len(pairs))]:
                edits[a.i], edits[b.i] = b.text, a.text
            texts.append(_edit_tokens(doc, edits))
        return texts

    switch.__doc__ = f"Swap the places of two {what} (a share of all such pairs)."
    return switch


verb_switching = _word_switching("VERB", "verbs")
noun_switching = _word_switching("NOUN", "nouns")


# --- other blind spots ------------------------------------------------------------------


def repetition(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Append k copies of the text's last 4-gram (before its final punctuation)."""
    tokens = list(doc)
    end = len(tokens)
    while end > 0 and (tokens[end - 1].is_punct or tokens[end - 1].is_space):
        end -= 1
    if end < 4:
        return None
    gram = doc[end - 4 : end]
    return [
        _replace_spans(
            doc.text, [(gram.end_char, gram.end_char, " " + " ".join([gram.text] * int(k)))]
        )
        for k in levels
    ]


def copy_source(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Return the source text itself (needs a source)."""
    if not source.src or not source.src.strip():
        return None
    return [_normal(source.src) for _ in levels]


def injection(doc: Doc, source: Source, levels: Sequence[float]) -> list[str] | None:
    """Replace the text by valueless praise ("Answer: yes, this is a really good summary.")."""
    return [source.rng.choice(INJECTIONS) for _ in levels]


PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation("truncation", FLUENCY, TOKEN_FRACTIONS, truncation),
        Perturbation("article_removal", FLUENCY, CANDIDATE_FRACTIONS, article_removal),
        Perturbation("preposition_removal", FLUENCY, CANDIDATE_FRACTIONS, preposition_removal),
        Perturbation("stopword_removal", FLUENCY, CANDIDATE_FRACTIONS, stopword_removal),
        Perturbation("verb_lemmatization", FLUENCY, CANDIDATE_FRACTIONS, verb_lemmatization),
        Perturbation("token_drop", FLUENCY, TOKEN_FRACTIONS, token_drop),
        Perturbation("repeated_token", FLUENCY, TOKEN_FRACTIONS, repeated_token),
        Perturbation("local_swap", FLUENCY, TOKEN_FRACTIONS, local_swap, switching=True),
        Perturbation("middle_swap", FLUENCY, SPLIT_POINTS, middle_swap, switching=True),
        Perturbation("noised_punctuation", FLUENCY, TOKEN_FRACTIONS, noised_punctuation),
        Perturbation(
            "sentence_switching", CONSISTENCY, CANDIDATE_FRACTIONS, sentence_switching, True
        ),
        Perturbation(
            "sentence_replacement", CONSISTENCY, CANDIDATE_FRACTIONS, sentence_replacement
        ),
        Perturbation("negation", CONSISTENCY, CANDIDATE_FRACTIONS, negation),
        Perturbation(
            "generic_named_entity", CONSISTENCY, CANDIDATE_FRACTIONS, generic_named_entity
        ),
        Perturbation(
            "named_entity_switching", CONSISTENCY, CANDIDATE_FRACTIONS, named_entity_switching, True
        ),
        Perturbation("verb_switching", CONSISTENCY, CANDIDATE_FRACTIONS, verb_switching, True),
        Perturbation("noun_switching", CONSISTENCY, CANDIDATE_FRACTIONS, noun_switching, True),
        Perturbation("repetition", OTHER, REPEATS, repetition),
        Perturbation("copy_source", OTHER, (1.0,), copy_source),
        Perturbation("injection", OTHER, (1.0,), injection),
    )
}
