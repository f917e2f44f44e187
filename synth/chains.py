"""Chains of meaning-preserving rewrites, so an error base differs from its reference in many
harmless ways and "any difference" is no error cue.

A chain stacks up to two clause-level rewrites of different families (voice, adverbial place:
``STRUCTURAL``), each on the parse of the one before, then word-level rewrites of other families
applied together to the last parse (their edits must not overlap); ``build_chains`` makes the
chains of a chunk's texts, parsing each stage in one batch. The similarity of a base to its reference is
measured with sentence chrF (sacrebleu), the figure the manifest reports.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable

from sacrebleu.metrics import CHRF
from spacy.tokens import Doc

from mismatch_core.resources import load_spacy
from synth.perturb import Context
from synth.rules import Edit, RuleSet

# whole-clause rewrites: their spans cover most of a sentence, so they go first, alone
STRUCTURAL = frozenset(("NoContr/passive", "NoContr/active", "NoContr/front_adverbial", "NoContr/back_adverbial"))
# rewrites of the whole text's tokens: they overlap every other edit and so stay out of chains
WHOLE_TEXT = frozenset(("NoContr/tokenized",))
# families that may edit several places of one text (one synonym per word)
REPEATABLE = frozenset(("synonym",))

# A chain: the parse of the rewritten text and the names of the rules that made it.
Chain = tuple[Doc, list[str]]

_CHRF = CHRF()


def chrf(hypothesis: str, reference: str) -> float:
    """Sentence chrF in [0, 1] (sacrebleu's chrF / 100)."""
    return round(_CHRF.sentence_score(hypothesis, [reference]).score / 100, 4)


def family(rule: str) -> str:
    """The rewrite family of a rule name: both directions of one rewrite are one family."""
    name = rule.split("/", 1)[-1]
    for suffix in ("_back", "_to_possessive"):
        name = name.removesuffix(suffix)
    return {"active": "passive", "back_adverbial": "front_adverbial", "of_possessive": "possessive"}.get(name, name)


def combine(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """The text with non-overlapping character edits (start, end, new) applied; spacing
    normalised and the first letter upper case unless the text's was lower case."""
    out, last = [], 0
    for start, end, new in sorted(edits):
        out.append(text[last:start] + new)
        last = end
    result = " ".join(("".join(out) + text[last:]).split())
    for mark in (",", "."):
        if f" {mark}" in result and f" {mark}" not in text:
            result = result.replace(f" {mark}", mark)
    if result[:1].islower() and not text[:1].islower():  # also '5 athletes' -> 'Five athletes'
        result = result[0].upper() + result[1:]
    return result


def local_edits(changes: Iterable[Edit], families: set[str], steps: int) -> list[tuple[int, int, str, str]]:
    """Up to ``steps`` word-level edits (start, end, new, rule) from ``changes`` (as
    ``RuleSet.changes`` yields them), each of a family not in ``families`` (but those
    in ``REPEATABLE``) and not overlapping an edit already taken."""
    taken: list[tuple[int, int, str, str]] = []
    for _, rule, detail in changes:
        if len(taken) >= steps:
            break
        if rule in STRUCTURAL or rule in WHOLE_TEXT or family(rule) in families - REPEATABLE:
            continue
        start, end = detail["span"]
        if any(start < e and s < end or start == s for s, e, _, _ in taken):
            continue
        taken.append((start, end, detail["new"], rule))
        families.add(family(rule))
    return taken


def build_chains(docs: list[Doc], rng: random.Random, max_rewrites: int, rules: RuleSet) -> dict[str, Chain]:
    """Text -> its chain of rewrites, for these texts (the origins of refs that take their
    errors on a divergent base).

    Word-level rewrites barely move chrF, so a chain stacks clause-level ones first: one
    (voice or adverbial place) where one applies, then on its parse a second of another
    family where one applies, then word-level ones on the last parse up to ``max_rewrites``
    in all. Each stage parses its outputs in one batch: spaCy parses a batch several times
    faster per text than one text at a time.
    """
    nlp = load_spacy()
    ctx = Context(rng=rng)
    current: dict[str, Chain] = {doc.text: (doc, []) for doc in docs}  # origin text -> latest
    for _ in range(2):  # clause-level stages
        moved: dict[str, tuple[str, list[str]]] = {}
        for text, (doc, names) in current.items():
            done = {family(r) for r in names}
            step = next((c for c in rules.changes("NoContr", doc, ctx) if c[1] in STRUCTURAL and family(c[1]) not in done), None)
            if step is not None:
                moved[text] = (step[0], names + [step[1]])
        parsed = nlp.pipe([new for new, _ in moved.values()], batch_size=128)
        for (text, (_, names)), doc in zip(moved.items(), parsed, strict=True):
            current[text] = (doc, names)
    finals: dict[str, tuple[str, list[str]]] = {}
    for text, (base, names) in current.items():
        # two passes over the rules: a repeatable family (synonyms) may edit a second word
        changes = list(itertools.chain(rules.changes("NoContr", base, ctx), rules.changes("NoContr", base, ctx)))
        edits = local_edits(changes, {family(r) for r in names}, max_rewrites - len(names))
        new = combine(base.text, [edit[:3] for edit in edits]) if edits else base.text
        if new != text:
            finals[text] = (new, names + [edit[3] for edit in edits])
    parsed_finals = nlp.pipe([new for new, _ in finals.values()], batch_size=128)
    return {text: (doc, names) for (text, (_, names)), doc in zip(finals.items(), parsed_finals, strict=True)}
