"""Lexical metrics: thin batched wrappers over the reference libraries, plus surface cues.

ROUGE (rouge-score, Porter stemmer), sentence BLEU (sacrebleu, effective order), chrF, chrF++
and TER (sacrebleu), METEOR (nltk + WordNet), normalised character edit distance (rapidfuzz)
return exactly what those libraries return for one reference. Length ratio, an unfinished
end, Grusky et al. (2018) fragment statistics and number / negation / name agreement are
defined here because no maintained library computes them; their definitions are in the
docstrings.
"""

from __future__ import annotations

import functools
import re
from abc import abstractmethod
from collections import Counter
from collections.abc import Sequence

import numpy as np

from evaluator.features.registry import Metric, PairMetric, register

TOKEN_PATTERN = re.compile(r"\w+|[^\w\s]")


def word_tokens(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens: the unit of the surface statistics below."""
    return TOKEN_PATTERN.findall(text.lower())


class RecentTokens:
    """rouge-score's stemming tokenizer, remembering its last few texts.

    ROUGE-L reads the tokens the n-gram scorer has just made; stemming them twice would
    double the metric's cost.
    """

    def __init__(self) -> None:
        from rouge_score.tokenizers import DefaultTokenizer

        self.tokenizer = DefaultTokenizer(use_stemmer=True)
        self.tokenize = functools.lru_cache(maxsize=4)(self._tokenize)

    def _tokenize(self, text: str) -> list[str]:
        return self.tokenizer.tokenize(text)


def rouge_l(ref_tokens: Sequence[str], gen_tokens: Sequence[str]) -> tuple[float, float, float]:
    """ROUGE-L precision, recall and F as rouge-score computes them.

    rouge-score finds the longest common subsequence with a Python table of len(ref) x len(gen)
    cells: 72 s and 1.15 GB for a pair of 50,000-character texts, out of memory a few times
    longer. rapidfuzz finds the same length bit-parallel in linear memory; the arithmetic
    after it is rouge-score's own.
    """
    from rapidfuzz.distance import LCSseq
    from rouge_score.scoring import fmeasure

    if not ref_tokens or not gen_tokens:
        return 0.0, 0.0, 0.0
    length = LCSseq.similarity(ref_tokens, gen_tokens)
    precision = length / len(gen_tokens)
    recall = length / len(ref_tokens)
    return precision, recall, fmeasure(precision, recall)


@register
class Rouge(Metric):
    name = "rouge"
    version = 1
    columns = tuple(f"{kind}_{part}" for kind in ("rouge1", "rouge2", "rougeL") for part in "prf")

    def __init__(self) -> None:
        from rouge_score.rouge_scorer import RougeScorer

        self.tokens = RecentTokens()
        self.scorer = RougeScorer(["rouge1", "rouge2"], tokenizer=self.tokens)

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        rows = []
        for ref, gen in zip(refs, gens, strict=True):
            scores = self.scorer.score(ref, gen)
            rows.append(
                [value for kind in ("rouge1", "rouge2") for value in scores[kind]]
                + list(rouge_l(self.tokens.tokenize(ref), self.tokens.tokenize(gen)))
            )
        return np.asarray(rows, dtype=np.float64).reshape(len(refs), len(self.columns))


class SacrebleuMetric(PairMetric):
    """A sacrebleu sentence-level metric against one reference; the score on its own scale."""

    @abstractmethod
    def make(self):
        """The configured sacrebleu metric object."""

    def __init__(self) -> None:
        self.metric = self.make()

    def score(self, ref: str, gen: str) -> float:
        return self.metric.sentence_score(gen, [ref]).score


@register
class Bleu(SacrebleuMetric):
    name = "bleu"
    version = 1
    columns = ("bleu",)

    def make(self):
        from sacrebleu.metrics import BLEU

        return BLEU(effective_order=True)


@register
class Chrf(SacrebleuMetric):
    name = "chrf"
    version = 1
    columns = ("chrf",)

    def make(self):
        from sacrebleu.metrics import CHRF

        return CHRF()


@register
class ChrfPlusPlus(SacrebleuMetric):
    name = "chrf_pp"
    version = 1
    columns = ("chrf_pp",)

    def make(self):
        from sacrebleu.metrics import CHRF

        return CHRF(word_order=2)


@register
class Ter(SacrebleuMetric):
    name = "ter"
    version = 1
    columns = ("ter",)

    def make(self):
        from sacrebleu.metrics import TER

        return TER()


class MemoWordNet:
    """WordNet reader whose `synsets` is memoised: METEOR asks for the same words again and again."""

    def __init__(self, reader) -> None:
        self.synsets = functools.lru_cache(maxsize=200_000)(reader.synsets)


class MemoStemmer:
    """nltk's default PorterStemmer with a memo; METEOR stems every token of every pair."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self.stem = functools.lru_cache(maxsize=200_000)(PorterStemmer().stem)


def meteor_tokens(text: str) -> list[str]:
    """nltk's Treebank word tokenisation without sentence splitting (as HF `evaluate` does)."""
    from nltk.tokenize import word_tokenize

    return word_tokenize(text, preserve_line=True)


@register
class Meteor(Metric):
    name = "meteor"
    version = 1
    columns = ("meteor",)

    def __init__(self) -> None:
        from mismatch_core.resources import wordnet

        self.wordnet = MemoWordNet(wordnet())
        self.stemmer = MemoStemmer()

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        from nltk.translate.meteor_score import meteor_score

        tokens = functools.lru_cache(maxsize=None)(meteor_tokens)
        scores = [
            meteor_score([tokens(ref)], tokens(gen), stemmer=self.stemmer, wordnet=self.wordnet)
            for ref, gen in zip(refs, gens, strict=True)
        ]
        return np.asarray(scores, dtype=np.float64).reshape(-1, 1)


@register
class LengthRatio(PairMetric):
    """Generated / reference length in whitespace tokens; an empty reference counts as length 1."""

    name = "length_ratio"
    version = 1
    columns = ("length_ratio",)

    def score(self, ref: str, gen: str) -> float:
        return len(gen.split()) / max(len(ref.split()), 1)


# A sentence-final mark, then only closing quotes, brackets or space to the end of the text.
FINISHED_END = re.compile(r"[.!?\u2026][\s'\"\u2019\u201d)\]}]*\Z")


@register
class UnfinishedEnd(PairMetric):
    """1 when gen stops without a sentence-final mark (after any closing quotes or brackets;
    an empty text too), else 0: an output cut off by its length limit, which the overlap
    metrics score as a shorter, equally supported text. It reads gen alone, so it means the
    same read against a reference or a source. People rate such outputs lower for fluency
    (docs/experiments/2026-11-27-unfinished-end)."""

    name = "unfinished_end"
    version = 2  # 1 read a trailing `` (an opening quote) as closing
    columns = ("unfinished_end",)

    def score(self, ref: str, gen: str) -> float:
        return float(FINISHED_END.search(gen) is None)


@register
class EditDistance(PairMetric):
    """Character Levenshtein distance / length of the longer text (rapidfuzz), 0 = identical."""

    name = "edit_distance"
    version = 1
    columns = ("edit_distance",)

    def score(self, ref: str, gen: str) -> float:
        from rapidfuzz.distance import Levenshtein

        return Levenshtein.normalized_distance(ref, gen)


def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def extractive_fragments(article: list[str], summary: list[str]) -> list[int]:
    """Lengths of the greedy shared fragments of Grusky et al. (2018), Algorithm 1.

    For each summary position the longest run of tokens that also appears contiguously in
    the article is taken; the search then resumes after that run. Algorithm 1 scans the
    whole article for every summary position (8 s for two 50,000-character texts, minutes
    for longer ones); this visits only the article positions that hold the token, in the
    same order and with the same skips past each run, so it finds the same fragments.
    """
    positions: dict[str, list[int]] = {}
    for position, token in enumerate(article):
        positions.setdefault(token, []).append(position)
    lengths = []
    i = 0
    while i < len(summary):
        best = 0
        j = 0
        for start in positions.get(summary[i], ()):
            if start < j:
                continue  # inside the last run, which Algorithm 1 skips
            i_end, j_end = i, start
            while (
                i_end < len(summary) and j_end < len(article) and summary[i_end] == article[j_end]
            ):
                i_end, j_end = i_end + 1, j_end + 1
            best = max(best, i_end - i)
            j = j_end
        i += max(best, 1)
        if best:
            lengths.append(best)
    return lengths


@register
class Fragments(Metric):
    """Grusky et al. (2018) statistics with the reference as article and the generation as summary.

    novel_Ngram: share of the generation's distinct N-grams absent from the reference (0 when
    it has none); coverage: share of generated tokens inside shared fragments; density: mean
    squared fragment length per generated token; compression: reference / generated token
    count. Token counts of 0 are taken as 1, so empty texts give finite values.
    """

    name = "fragments"
    version = 1
    columns = ("novel_1gram", "novel_2gram", "novel_3gram", "coverage", "density", "compression")

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        rows = []
        for ref, gen in zip(refs, gens, strict=True):
            article, summary = word_tokens(ref), word_tokens(gen)
            row = []
            for n in (1, 2, 3):
                generated = ngrams(summary, n)
                novel = generated - ngrams(article, n)
                row.append(len(novel) / len(generated) if generated else 0.0)
            lengths = extractive_fragments(article, summary)
            size = max(len(summary), 1)
            row.append(sum(lengths) / size)
            row.append(sum(length * length for length in lengths) / size)
            row.append(len(article) / size)
            rows.append(row)
        return np.asarray(rows, dtype=np.float64).reshape(len(refs), len(self.columns))


def multiset_f1(ref_items: Counter, gen_items: Counter) -> float:
    """F1 of two multisets; 1.0 when both are empty (nothing to disagree about)."""
    total = sum(ref_items.values()) + sum(gen_items.values())
    if total == 0:
        return 1.0
    return 2 * sum((ref_items & gen_items).values()) / total


NUMBER_WORDS: dict[str, int | str] = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70})
NUMBER_WORDS.update({"eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000})
NUMBER_WORDS.update({"million": 10**6, "billion": 10**9, "dozen": 12, "once": 1, "twice": 2})
ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()
NUMBER_WORDS.update({word: f"#{rank}" for rank, word in enumerate(ORDINALS, 1)})
NUMBER_PATTERN = re.compile(r"\d+(?:[.,:/]\d+)*(?:st|nd|rd|th)?|[a-z]+")
NEGATION_PATTERN = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|nowhere|without|cannot)\b|n[’']t\b"
)
CAPITALISED_PATTERN = re.compile(r"\b[^\W\d_][\w'’-]*")


def numbers(text: str) -> Counter:
    """Numbers as digits (commas dropped, ordinal suffixes as '#n') and number words as values."""
    items: Counter = Counter()
    for token in NUMBER_PATTERN.findall(text.lower()):
        if token[0].isdigit():
            digits = token.replace(",", "")
            ordinal = digits.endswith(("st", "nd", "rd", "th"))
            items[f"#{digits[:-2]}" if ordinal else digits] += 1
        elif token in NUMBER_WORDS:
            items[str(NUMBER_WORDS[token])] += 1
    return items


def negations(text: str) -> Counter:
    """Count of negation cues (not, no, never, n't, without, ...), all as one item."""
    return Counter({"neg": len(NEGATION_PATTERN.findall(text.lower()))})


@functools.cache
def stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def names(text: str) -> Counter:
    """Capitalised words that are not stop words (a cheap proxy for named entities), lowered."""
    words = (word for word in CAPITALISED_PATTERN.findall(text) if word[0].isupper())
    return Counter(word.lower() for word in words if word.lower() not in stop_words())


@register
class Agreement(Metric):
    """Multiset F1 between ref and gen of numbers, negation cues and capitalised names."""

    name = "agreement"
    version = 1
    columns = ("numbers_agree", "negation_agree", "entities_agree")

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        rows = [
            [multiset_f1(extract(ref), extract(gen)) for extract in (numbers, negations, names)]
            for ref, gen in zip(refs, gens, strict=True)
        ]
        return np.asarray(rows, dtype=np.float64).reshape(len(refs), len(self.columns))
