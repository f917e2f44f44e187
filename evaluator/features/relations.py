"""What changed between the texts, by kind: the WordNet relation of the swapped words, what
sort of words changed, and repetition.

Sentence vectors and overlap scores say *that* a word changed, not *how*: 'dog' -> 'animal'
(less specific, HypErr), 'dog' -> 'cat' (another kind, EntErr) and 'dog' -> 'hound' (the
same thing) move BERTScore alike. The relation between the removed and the added words says
which it is, and WordNet's file of a changed word says whether a time, a place or a person
changed ('summer' -> 'winter' is STErr). Likewise a doubled word ('the the', a disfluency)
and a repeated phrase (repeated information) are both "more tokens" to overlap metrics; the
repetition counts tell them apart. And 'When did X start?' -> 'Where did X start?' (another
question, QuestErr) or 'two years earlier' -> 'two years later' (another order of events,
PredOrdErr) change one short word that sentence vectors barely feel; what the question asks
for and which way an order word points say it.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from evaluator.features.lexical import multiset_f1, stop_words, word_tokens
from evaluator.features.registry import Metric, PairMetric, register

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


def verb_lemmas(word: str) -> tuple[str, ...]:
    """The verbs the word can be a form of ('fell' -> fall, fell)."""
    from lemminflect import getAllLemmas

    return getAllLemmas(word, upos="VERB").get("VERB", ())


@functools.lru_cache(maxsize=200_000)
def verb_antonyms(word: str) -> frozenset[str]:
    """WordNet's antonyms of every verb the word can be a form of ('rose' -> rise -> fall,
    set, ...): wordnet_antonym compares the word itself, so it misses inflected verbs."""
    from mismatch_core.resources import wordnet

    reader = wordnet()
    return frozenset(
        antonym.name().lower()
        for lemma in verb_lemmas(word)
        for synset in reader.synsets(lemma, pos="v")
        for name in synset.lemmas()
        for antonym in name.antonyms()
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


@register
class VerbContrast(PairMetric):
    """verb_antonym: the share of the changed content-word pairs (removed -> added, as in
    wordnet_relations) where a verb the added word can be a form of is a WordNet antonym of a
    verb the removed word can be a form of: 'prices rose' -> 'prices fell', 'she accepted' ->
    'she refused' (another event, PredErr), which wordnet_antonym misses once the verbs are
    inflected. The words are read out of context, so 'a rise' -> 'a fall' counts too.
    """

    name = "verb_contrast"
    version = 1
    columns = ("verb_antonym",)

    def score(self, ref: str, gen: str) -> float:
        removed, added = changed_words(content_words(ref), content_words(gen))
        if not removed or not added:
            return 0.0
        added_verbs = [verb_lemmas(new) for new in added]
        contrasts = sum(
            any(verb in verb_antonyms(old) for verb in verbs)
            for old in removed
            for verbs in added_verbs
        )
        return contrasts / (len(removed) * len(added))


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


# A sentence ends at '.', '!' or '?' (repeated: 'Really??') before a space or the end of the
# text, unless the word before it is a title ('Did Mr. Smith go?' is one question).
SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
TITLES = frozenset("mr mrs ms dr prof st jr sr mt".split())
# What a wh-word asks for; 'which' asks what 'what' asks ('which book' = 'what book').
WH_FORMS = {"who": "who", "whom": "who", "whose": "whose", "what": "what", "which": "what",
            "when": "when", "where": "where", "why": "why", "how": "how"}  # fmt: skip
# Auxiliaries, with the stems word_tokens leaves of their contractions ('didn't' -> 'didn').
AUXILIARIES = frozenset(
    "am is are was were do does did have has had can could will would shall should may might "
    "must isn aren wasn weren don doesn didn haven hasn hadn couldn wouldn shouldn won mustn "
    "ain".split()
)


def questions(text: str) -> list[str]:
    """The sentences of the text that end with '?'."""
    found, start = [], 0
    for end in SENTENCE_END.finditer(text):
        before = text[start : end.start()].split()
        if end.group() == "." and before and before[-1].lower() in TITLES:
            continue
        if "?" in end.group():
            found.append(text[start : end.end()])
        start = end.end()
    return found


def question_forms(text: str) -> Counter:
    """What each question of the text asks for, by the first of its words that is a wh-word
    or an auxiliary: the wh-word's form ('how many' and 'how much' apart from 'how'), or
    'yes/no' for an auxiliary ('Is it known who ...?', 'Didn't he ...?'); 'other' when it
    has neither."""
    forms: Counter = Counter()
    for question in questions(text):
        words = [w for w in word_tokens(question) if w.isalpha()]
        form = "other"
        for i, word in enumerate(words):
            if word in WH_FORMS:
                form = WH_FORMS[word]
                if form == "how" and words[i + 1 : i + 2] in (["many"], ["much"]):
                    form = "how many"
                break
            if word in AUXILIARIES:
                form = "yes/no"
                break
        forms[form] += 1
    return forms


@register
class QuestionForm(PairMetric):
    """question_changed: the share of the questions, on both sides, whose form (what they ask
    for, ``question_forms``) has no match on the other side; 0 unless both texts ask.

    'When did X start?' -> 'Where did X start?', 'Did X start?' or 'Is it known when X
    started?' all change it; 'When did X begin?' does not.
    """

    name = "question_form"
    version = 2  # 2: contracted auxiliaries, titles, '??'
    columns = ("question_changed",)

    def score(self, ref: str, gen: str) -> float:
        ref_forms, gen_forms = question_forms(ref), question_forms(gen)
        if not ref_forms or not gen_forms:
            return 0.0
        unmatched = (ref_forms - gen_forms).total() + (gen_forms - ref_forms).total()
        return unmatched / (ref_forms.total() + gen_forms.total())


# Which way a word orders events: the words the PredOrdErr rules turn around
# (synth.perturb.event_order), by direction.
ORDER_DIRECTIONS = {
    **dict.fromkeys(
        "before earlier previously beforehand formerly prior precede precedes preceded "
        "preceding predecessor predecessors".split(),
        "earlier",
    ),
    **dict.fromkeys(
        "after later subsequently afterwards afterward follow follows followed following "
        "succeed succeeds succeeded succeeding successor successors".split(),
        "later",
    ),
    **dict.fromkeys("during while meanwhile simultaneously".split(), "together"),
}


def order_directions(text: str) -> Counter:
    """How many of the text's words order events each way (``ORDER_DIRECTIONS``)."""
    return Counter(ORDER_DIRECTIONS[w] for w in word_tokens(text) if w in ORDER_DIRECTIONS)


@register
class OrderWords(PairMetric):
    """order_flipped: how many order words of the reference point another way in the
    generated text ('after' -> 'before', 'during' -> 'after', 'followed by' -> 'preceded
    by'). A reworded one ('after' -> 'following') keeps its direction and a dropped one
    flips nothing: the removed and the added directions pair up, at most one each.
    """

    name = "order_words"
    version = 2  # 2: 'succeed', 'succeeds', 'succeeding'
    columns = ("order_flipped",)

    def score(self, ref: str, gen: str) -> float:
        ref_directions, gen_directions = order_directions(ref), order_directions(gen)
        removed = (ref_directions - gen_directions).total()
        added = (gen_directions - ref_directions).total()
        return min(removed, added)
