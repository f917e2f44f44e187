"""Chains of meaning-preserving rewrites, so an error base differs from its reference in many
harmless ways and "any difference" is no error cue.

A chain is one clause-level rewrite (voice, adverbial place: ``STRUCTURAL``) applied to the
parse of the text, then up to two word-level rewrites of other families applied together to the
parse of that result (their edits must not overlap). Only the first step needs a new parse, and
callers parse all texts of a chunk in one batch. The similarity of a base to its reference is
measured with sentence chrF (sacrebleu), the figure the manifest reports.
"""

from __future__ import annotations

from collections.abc import Iterable

from sacrebleu.metrics import CHRF

# whole-clause rewrites: their spans cover most of a sentence, so they go first, alone
STRUCTURAL = frozenset(("NoContr/passive", "NoContr/active", "NoContr/front_adverbial", "NoContr/back_adverbial"))
# rewrites of the whole text's tokens: they overlap every other edit and so stay out of chains
WHOLE_TEXT = frozenset(("NoContr/tokenized",))
# families that may edit several places of one text (one synonym per word)
REPEATABLE = frozenset(("synonym",))

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


def local_edits(changes: Iterable[tuple[str, str, dict]], families: set[str], steps: int) -> list[tuple[int, int, str, str]]:
    """Up to ``steps`` word-level edits (start, end, new, rule) from ``changes`` (as the
    generator's ``_changes`` yields them), each of a family not in ``families`` (but those
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
