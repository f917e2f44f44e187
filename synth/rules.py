"""Applying the perturbation rules of ``synth.perturb`` to parsed texts.

One ``RuleSet`` per process (``shared_rules``) serves the generator and every caller outside it
(fine-tuning's contrast copies, the stress tests, the real-text bench), so they all apply the
pretraining rules the same way without importing the generator.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, TypeVar

from spacy.tokens import Doc

from mismatch_core.resources import load_spacy
from synth.perturb import Context, Rule, load_rules, rule_weight

# Classes whose error replaces words of the text it is applied to (on a paraphrase, the
# replaced words must occur in the reference: "formerly" -> "later" is no order error
# against a reference that states no order).
SUBSTITUTION_CLASSES = frozenset(
    ("PredErr", "EntErr", "HypErr", "NumErr", "STErr", "AttrErr", "NegErr", "PredOrdErr")
)

# One applied rule: the new text, the rule's name and what changed (span, old and new words).
Edit = tuple[str, str, dict[str, Any]]
Item = TypeVar("Item", bound=Hashable)


class RuleSet:
    """The rules of every class, tried class by class in a random order weighted by
    ``rule_weight``.

    A rule that raises is a bug in that rule; one odd sentence must not end a long run, so the
    failure is counted in ``errors`` (the generator reports them as ``rule_errors``) and the
    rule is skipped.
    """

    def __init__(self, rules: dict[str, list[Rule]]) -> None:
        self.rules = rules
        self.errors: Counter[str] = Counter()

    def of(self, code: str) -> list[Rule]:
        """The rules of class ``code`` in registry order (none for a class without rules)."""
        return list(self.rules.get(code, ()))

    def changes(self, code: str, doc: Doc, ctx: Context) -> Iterator[Edit]:
        """Each rule of ``code`` that changes ``doc``, in a random order weighted by
        ``rule_weight``."""
        rules = self.of(code)
        rules = weighted_sample(rules, {r: rule_weight(r) for r in rules}, len(rules), ctx.rng)
        for rule in rules:
            try:
                change = rule(doc, ctx)
            except Exception:  # counted and reported, see the class docstring
                self.errors[f"{rule.__module__}.{rule.__name__}"] += 1
                continue
            if change is not None and change.text.strip() and change.text != doc.text:
                yield change.text, change.rule, {"span": list(change.span), "old": change.old, "new": change.new}

    def first(self, code: str, doc: Doc, ctx: Context) -> Edit | None:
        """The first rule of ``code`` that applies (see ``changes``), or None."""
        return next(self.changes(code, doc, ctx), None)


@functools.cache
def shared_rules() -> RuleSet:
    """This process's RuleSet, built on first use; forked workers share their parent's."""
    return RuleSet(load_rules())


def parse(texts: list[str]) -> list[Doc]:
    """Parses of ``texts`` by the spaCy pipeline the rules expect (loaded once)."""
    return list(load_spacy().pipe(texts))


def holds_against_reference(code: str, old: str, reference: str) -> bool:
    """Whether a change of class ``code`` that replaced ``old`` in a text other than the
    reference is that error relative to the reference: a substitution only when the replaced
    words occur in the reference ("a yellow cat" -> "a red cat" is no AttrErr against a
    reference without "yellow"); any other class always."""
    if code not in SUBSTITUTION_CLASSES:
        return True
    old = old.strip().lower()
    return bool(old) and old in reference.lower()


def weighted_sample(items: Sequence[Item], weights: dict[Item, float], k: int, rng: random.Random) -> list[Item]:
    """k distinct items drawn with probability proportional to weight (Efraimidis–Spirakis)."""
    keyed = sorted(items, key=lambda c: rng.random() ** (1.0 / weights[c]), reverse=True)
    return keyed[:k]
