"""Perturbation rules by mismatch class: ``RULES[code]`` is the list of rules for that class.

Each module owns one or two classes and exports ``RULES: dict[str, list[Rule]]``; this
registry merges them. NoContr rules here are meaning-preserving rewrites; real paraphrases
(other captions of the same image, other lexicalisations) are paired by the generator.
"""

from __future__ import annotations

import importlib
import re

from synth.perturb.base import Change, Context, Rule, rule_weight

MODULES = (
    "grammar",  # GramErr
    "predicate",  # PredErr
    "event_order",  # PredOrdErr
    "entity",  # EntErr, HypErr
    "numbers",  # NumErr
    "spatiotemporal",  # STErr
    "attribute",  # AttrErr, and its harmless twin (NoContr: a same-value adjective)
    "question",  # QuestErr
    "negation",  # NegErr
    "omission",  # MissInfo
    "addition",  # OutofRef, RepErr
    "paraphrase",  # NoContr (meaning-preserving rewrites: words)
    "paraphrase_forms",  # NoContr (spelling, numbers written another way)
    "paraphrase_syntax",  # NoContr (voice, adverbial place, possessives, light verbs)
)


def load_rules() -> dict[str, list[Rule]]:
    """Merge every module's RULES into one class -> rules mapping."""
    rules: dict[str, list[Rule]] = {}
    for name in MODULES:
        module = importlib.import_module(f"synth.perturb.{name}")
        for code, module_rules in module.RULES.items():
            rules.setdefault(code, []).extend(module_rules)
    return rules


def load_screens() -> dict[str, re.Pattern]:
    """Class -> a regex that every text some rule of that class applies to matches (but the
    rules a module names in ``UNSCREENED_RULES``, whose cue is too common to screen for).

    A cheap test on the raw text: when only screened classes are still open, the generator
    parses only the texts that can serve one of them. Classes without a screen apply widely.
    """
    screens: dict[str, re.Pattern] = {}
    for name in MODULES:
        screens.update(getattr(importlib.import_module(f"synth.perturb.{name}"), "SCREENS", {}))
    return screens


__all__ = ["Change", "Context", "Rule", "load_rules", "load_screens", "rule_weight"]
