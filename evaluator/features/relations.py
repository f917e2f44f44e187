"""What changed between the texts, by kind: the WordNet relation of the swapped words, what
sort of words changed, and repetition.

Sentence vectors and overlap scores say *that* a word changed, not *how*: 'dog' -> 'animal'
(less specific, HypErr), 'dog' -> 'cat' (another kind, EntErr) and 'dog' -> 'hound' (the
same thing) move BERTScore alike. The relation between the removed and the added words says
which it is, and WordNet's file of a changed word says whether a time, a place or a person
changed ('summer' -> 'winter' is STErr). Likewise a doubled word ('the the', a disfluency)
and a repeated phrase (repeated information) are both "more tokens" to overlap metrics; the
repetition counts tell them apart.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

import numpy as np

from evaluator.features.lexical import multiset_f1, stop_words, word_tokens
from evaluator.features.registry import Metric, register

MAX_CHANGED_WORDS = 8  # per side: a rewrite changes many words and the pairs grow quadratically
SIBLING_DEPTH = 2  # two words are siblings when they share a hypernym this close above both
# Plurals WordNet files as their own lemma ('people' is a group, not the plural of 'person').
IRREGULAR_LEMMAS = {"people": ("people", "person")}


def content_words(text: str) -> list[str]:
    """Lower-cased alphabetic words that are not stop words, in text order."""
    return [w for w in word_tokens(text) if w.isalpha() and w not in stop_words()]


def changed_words(ref_words: list[str], gen_words: list[str]) -> tuple[list[str], list[str]]:
    """Distinct words only in the reference and only in the generated text (multiset
    difference, in text order, at most MAX_CHANGED_WORDS each)."""
    removed_counts = Counter(ref_words) - Counter(gen_words)
    added_counts = Counter(gen_words) - Counter(ref_words)
    removed = list(dict.fromkeys(w for w in ref_words if w in removed_counts))
    added = list(dict.fromkeys(w for w in gen_words if w in added_counts))
    return removed[:MAX_CHANGED_WORDS], added[:MAX_CHANGED_WORDS]


@functools.lru_cache(maxsize=200_000)
def synsets(word: str) -> frozenset:
    """Every WordNet sense of the word, found through its inflections (WordNet's morphy)."""
    from mismatch_core.resources import wordnet

    reader = wordnet()
    return frozenset(
        s for lemma in IRREGULAR_LEMMAS.get(word, (word,)) for s in reader.synsets(lemma)
    )


@functools.lru_cache(maxsize=200_000)
def ancestors(word: str) -> frozenset:
    """Every hypernym (and instance hypernym) of every sense of the word, transitively."""
    found = set()
    for synset in synsets(word):
        found.update(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))
    return frozenset(found)


@functools.lru_cache(maxsize=200_000)
def near_ancestors(word: str) -> frozenset:
    """Hypernyms at most SIBLING_DEPTH steps above a sense of the word."""
    found, frontier = set(), set(synsets(word))
    for _ in range(SIBLING_DEPTH):
        frontier = {h for s in frontier for h in s.hypernyms() + s.instance_hypernyms()}
        found |= frontier
    return frozenset(found)


@functools.lru_cache(maxsize=200_000)
def antonyms(word: str) -> frozenset[str]:
    """Lemma names WordNet lists as antonyms of any sense of the word."""
    return frozenset(
        a.name().lower() for s in synsets(word) for lemma in s.lemmas() for a in lemma.antonyms()
    )


def relation(removed: str, added: str) -> str | None:
    """How the added word relates to the removed one, the closest relation first."""
    old, new = synsets(removed), synsets(added)
    if not old or not new:
        return None
    if old & new:
        return "synonym"
    if added in antonyms(removed) or removed in antonyms(added):
        return "antonym"
    if new & ancestors(removed):
        return "hypernym"
    if old & ancestors(added):
        return "hyponym"
    if near_ancestors(removed) & near_ancestors(added):
        return "sibling"
    return None


@register
class WordRelations(Metric):
    """Share of the changed content-word pairs in each WordNet relation (removed -> added).

    wordnet_synonym: share a sense; wordnet_antonym: listed antonyms; wordnet_hypernym: the added
    word is more general than the removed one ('dog' -> 'animal'); wordnet_hyponym: more
    specific; wordnet_sibling: kinds under a common hypernym at most two levels up ('dog' ->
    'cat'); wordnet_changed: 1 - multiset F1 of the content words (changed, relation or not).
    Each pair gets its closest relation; shares are over the removed x added pairs (0 when no
    word was both removed and added).
    """

    name = "wordnet_relations"
    version = 1
    relations = ("synonym", "antonym", "hypernym", "hyponym", "sibling")
    columns = (*(f"wordnet_{kind}" for kind in relations), "wordnet_changed")

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        scores = np.zeros((len(refs), len(self.columns)), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            ref_words, gen_words = content_words(ref), content_words(gen)
            scores[row, -1] = 1 - multiset_f1(Counter(ref_words), Counter(gen_words))
            removed, added = changed_words(ref_words, gen_words)
            if not removed or not added:
                continue
            found = Counter(relation(old, new) for old in removed for new in added)
            total = len(removed) * len(added)
            for column, kind in enumerate(self.relations):
                scores[row, column] = found[kind] / total
        return scores


@functools.lru_cache(maxsize=200_000)
def main_lexname(word: str) -> str | None:
    """WordNet's file for the word's most frequent sense ('winter' -> noun.time), if any."""
    from mismatch_core.resources import wordnet

    senses = wordnet().synsets(IRREGULAR_LEMMAS.get(word, (word,))[-1])
    return senses[0].lexname() if senses else None


@register
class ChangedKind(Metric):
    """What the changed content words are, by WordNet's file of their most frequent sense.

    A changed season or hour (noun.time), place (noun.location), person (noun.person) or
    quality (an adjective, or a noun.attribute such as a colour): the share of the changed
    words (removed and added, as in wordnet_relations) of each kind, 0 when no word changed.
    'summer' -> 'winter' and 'Madrid' -> 'London' differ from 'dog' -> 'cat' in kind, not in
    how much of the text they change.
    """

    name = "changed_kind"
    version = 1
    kinds = {  # column -> the WordNet files (or file-name prefixes) it counts
        "changed_time": ("noun.time",),
        "changed_place": ("noun.location",),
        "changed_person": ("noun.person",),
        "changed_attribute": ("adj.", "noun.attribute"),  # 'big', 'red' (a noun first)
    }
    columns = tuple(kinds)

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        scores = np.zeros((len(refs), len(self.columns)), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            removed, added = changed_words(content_words(ref), content_words(gen))
            lexnames = [main_lexname(word) or "" for word in removed + added]
            if lexnames:
                for column, prefix in enumerate(self.kinds.values()):
                    share = sum(name.startswith(prefix) for name in lexnames) / len(lexnames)
                    scores[row, column] = share
        return scores


def adjacent_repeats(tokens: list[str], n: int) -> int:
    """Positions where an n-gram is immediately followed by the same n-gram ('the the' for 1)."""
    return sum(
        tokens[i : i + n] == tokens[i + n : i + 2 * n] for i in range(len(tokens) - 2 * n + 1)
    )


def repeated_trigrams(tokens: list[str]) -> Counter:
    """Each word trigram that occurs more than once, with its number of extra occurrences."""
    counts = Counter(tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2))
    return Counter({gram: count - 1 for gram, count in counts.items() if count > 1})


@register
class Repetition(Metric):
    """Repetition the generated text adds over the reference, per generated word.

    repeat_word: doubled words ('the the'); repeat_phrase: phrases of 2-4 words said twice in a
    row; repeat_trigram: extra occurrences of trigrams anywhere in the text (a sentence said
    again later). Each counts the generated text's cases beyond the reference's, so a reference
    that itself repeats is not held against the output.
    """

    name = "repetition"
    version = 1
    columns = ("repeat_word", "repeat_phrase", "repeat_trigram")

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        scores = np.zeros((len(refs), len(self.columns)), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            ref_words = [w for w in word_tokens(ref) if w.isalnum()]
            gen_words = [w for w in word_tokens(gen) if w.isalnum()]
            size = max(len(gen_words), 1)
            word = adjacent_repeats(gen_words, 1) - adjacent_repeats(ref_words, 1)
            phrase = sum(
                adjacent_repeats(gen_words, n) - adjacent_repeats(ref_words, n) for n in (2, 3, 4)
            )
            trigram = repeated_trigrams(gen_words) - repeated_trigrams(ref_words)
            scores[row] = max(word, 0) / size, max(phrase, 0) / size, sum(trigram.values()) / size
        return scores
