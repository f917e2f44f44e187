"""What a reference is paired with: its real paraphrases, the bases its errors go on, the
errors made on them and its NoContr texts.

A base that differs from the reference harmlessly (a real paraphrase: another text of the same
group, or a chain of meaning-preserving rewrites, ``synth.chains``) keeps an error from being
just "the one token that differs from the reference".
"""

from __future__ import annotations

import itertools

from spacy.tokens import Doc

from synth.chains import Chain, chrf
from synth.config import SynthConfig
from synth.corpora import PARAPHRASE_SOURCES, SAME_MEANING_SOURCES
from synth.perturb import Context
from synth.rules import SUBSTITUTION_CLASSES, Edit, RuleSet, holds_against_reference

PARAPHRASE_DRAWS = 4  # draws per rule for a substitution site shared with the ref

CONTENT_POS = frozenset(("NOUN", "PROPN", "VERB", "ADJ", "NUM"))
DETAIL_POS = frozenset(("NOUN", "PROPN", "ADJ", "NUM"))


def group_paraphrases(source: str, texts: list[str], docs: list[Doc], min_overlap: float) -> list[list[int]]:
    """For each text of a group, the other texts that paraphrase it.

    WebNLG lexicalisations of one triple set state the same facts, and so do SICK sentences
    that people judged to entail each other both ways: all count. Captions of
    one image mostly describe different details ("a sailboat in the water at sunrise" / "a
    sailboat in the water"), so two count only when they name the same things and qualities
    (equal noun, adjective and number lemmas) and share enough content lemmas (Jaccard).
    Sentences of one SQuAD paragraph are no paraphrases at all.
    """
    if source not in PARAPHRASE_SOURCES:
        return [[] for _ in docs]
    if source in SAME_MEANING_SOURCES:
        return [[j for j in range(len(texts)) if texts[j] != texts[i]] for i in range(len(texts))]
    content = [{t.lemma_.lower() for t in doc if t.pos_ in CONTENT_POS and not t.is_stop} for doc in docs]
    details = [{t.lemma_.lower() for t in doc if t.pos_ in DETAIL_POS and not t.is_stop} for doc in docs]
    result = []
    for i, words in enumerate(content):
        close = []
        for j, other in enumerate(content):
            union = words | other
            if (
                texts[j] != texts[i]
                and details[j] == details[i]
                and union
                and len(words & other) / len(union) >= min_overlap
            ):
                close.append(j)
        result.append(close)
    return result


class Similarity:
    """Sentence chrF of a text to its reference, cached: a base serves several classes."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str, str], float] = {}

    def __call__(self, text: str, ref: str) -> float:
        if text == ref:
            return 1.0
        key = (text, ref)
        if key not in self.cache:
            self.cache[key] = chrf(text, ref)
        return self.cache[key]


def error_bases(
    ref_index: int,
    others: list[int],
    docs: list[Doc],
    divergent: bool,
    rewrite: Doc | None,
    similarity: Similarity,
    max_chrf: float,
    ctx: Context,
) -> list[Doc]:
    """The texts to apply an error to, in order of preference.

    A ref that takes its errors on a divergent base puts its real paraphrases and ``rewrite``
    (its parsed chain of rewrites; None when none applies) first: those below ``max_chrf`` to
    the ref in random order, then the others from the least similar. When those offer no
    place for the error, the ref follows: rare classes (event order, questions) then still
    find a base.
    """
    others = list(others)
    ctx.rng.shuffle(others)
    paraphrases = [docs[i] for i in others]
    ref = docs[ref_index]
    if not divergent:
        return [ref, *paraphrases]
    candidates = paraphrases + ([rewrite] if rewrite is not None else [])
    ctx.rng.shuffle(candidates)
    scored = [(similarity(doc.text, ref.text), k, doc) for k, doc in enumerate(candidates)]
    low = [doc for score, _, doc in scored if score < max_chrf]
    high = [doc for _, _, doc in sorted((item for item in scored if item[0] >= max_chrf), key=lambda item: item[:2])]
    return [*low, *high, ref]


def make_errors(
    code: str, bases: list[Doc], ref: Doc, rewrite: Doc | None, harvest: bool, rules: RuleSet, ctx: Context
) -> list[Edit]:
    """Errors of class ``code``: one, on the first of ``bases`` that takes one; or with
    ``harvest`` one per rule that applies on every base (for classes whose few possible texts
    must each give all they can).

    A substitution on a real paraphrase counts only when the replaced words also occur in the
    reference ``ref``: "a yellow cat" -> "a red cat" is no AttrErr against a ref without
    "yellow". On ``rewrite`` (the ref's meaning-preserving rewrite) it always counts: the
    rewrite means the same ('4' -> 'four' -> 'six'). Rules pick their site at random, so on a
    paraphrase each rule gets ``PARAPHRASE_DRAWS`` draws to hit words the two texts share
    (names, numbers, places) before the next base is tried. A harvested class takes the ref
    itself only when no divergent base took the error.
    """
    ref_text = ref.text.lower()
    made: list[Edit] = []
    for base in bases:
        kind = "ref" if base is ref else "rewrite" if base is rewrite else "paraphrase"
        if kind == "ref" and made:
            break  # a harvested class that found a divergent base keeps it
        checked = kind == "paraphrase" and code in SUBSTITUTION_CLASSES
        draws = PARAPHRASE_DRAWS if checked else 1
        for gen, rule, detail in itertools.chain.from_iterable(rules.changes(code, base, ctx) for _ in range(draws)):
            if not checked or holds_against_reference(code, detail["old"], ref_text):
                made.append((gen, rule, detail | {"base": kind} | ({"base_text": base.text} if kind != "ref" else {})))
                if not harvest:
                    return made
    return made


def make_nocontr(
    ref_index: int,
    others: list[int],
    docs: list[Doc],
    chain: Chain | None,
    on_ref: bool,
    config: SynthConfig,
    rules: RuleSet,
    ctx: Context,
) -> Edit | None:
    """A NoContr gen: a real paraphrase (half of them rewritten once more), the ref's chain of
    rewrites (``chain``: its parsed text and rules, or None; ``on_ref``: made from the ref, not
    from a paraphrase), one rewrite of the ref, or a copy."""
    rng = ctx.rng
    roll = rng.random()
    if others and roll < config.nocontr_real_share:
        other = docs[rng.choice(others)]
        if rng.random() < 0.5:
            rewritten = rules.first("NoContr", other, ctx)
            if rewritten:
                return rewritten[0], "NoContr/paraphrase+" + rewritten[1].split("/", 1)[-1], rewritten[2] | {"base": "paraphrase", "base_text": other.text}
        return other.text, "NoContr/real_paraphrase", {"base": "paraphrase"}
    if roll > 1 - config.nocontr_copy_share:
        return docs[ref_index].text, "NoContr/copy", {"base": "ref"}
    if chain is not None and rng.random() < 0.8:
        return chain[0].text, "NoContr/chain", {"base": "ref" if on_ref else "paraphrase", "rules": chain[1]}
    rewritten = rules.first("NoContr", docs[ref_index], ctx)
    if rewritten:
        return rewritten[0], rewritten[1], rewritten[2] | {"base": "ref"}
    return None

