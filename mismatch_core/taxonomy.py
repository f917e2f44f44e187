"""The fixed 14-class mismatch taxonomy; the order is the class index stored in checkpoints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MismatchClass:
    index: int
    code: str
    meaning: str
    example: str


TAXONOMY: tuple[MismatchClass, ...] = (
    MismatchClass(0, "NoContr", "gen says what ref says (may be a paraphrase)", ""),
    MismatchClass(1, "GramErr", "grammar/usage error", "Two paintings are -> Two painting is"),
    MismatchClass(2, "PredErr", "wrong predicate", "John entered the kitchen -> John found the kitchen"),
    MismatchClass(3, "EntErr", "wrong primary argument (entity, name, gender, swapped roles)", "A dog chased a cat -> ... a rat"),
    MismatchClass(4, "PredOrdErr", "causal/temporal order of events changed", "arrested then taken to prison -> reversed"),
    MismatchClass(5, "HypErr", "hypernym/hyponym substituted", "mechanical engineering -> architectural science"),
    MismatchClass(6, "NumErr", "number, quantity, ordinal, quantifier", "four apples -> six apples"),
    MismatchClass(7, "STErr", "spatial/geographic/temporal info (place, date, time, direction)", "south Chicago -> south Chile"),
    MismatchClass(8, "AttrErr", "attribute/modifier of an entity or predicate", "two small dogs -> two big dogs"),
    MismatchClass(9, "QuestErr", "nature/intent of a question changed", "Did you take... -> When did you take..."),
    MismatchClass(10, "NegErr", "negated relative to ref", "took the gift -> did not take the gift"),
    MismatchClass(11, "MissInfo", "key detail of ref missing", "drove to the hospital and saw a doctor -> saw a doctor"),
    MismatchClass(12, "OutofRef", "details not in ref added", "... friends. -> ... friends. Jack plays football."),
    MismatchClass(13, "RepErr", "information repeated", "Tom met Sam -> Tom went to the party. Tom met Sam at the party."),
)

CODES: tuple[str, ...] = tuple(c.code for c in TAXONOMY)
ERROR_CODES: tuple[str, ...] = CODES[1:]
# Errors that change what gen says: all but a slip of form (GramErr) and saying a thing twice
# (RepErr). Issue #27 asks a rating to fall under these.
MEANING_ERROR_CODES: tuple[str, ...] = tuple(c for c in ERROR_CODES if c not in ("GramErr", "RepErr"))
NUM_CLASSES = len(TAXONOMY)
INDEX = {c.code: c.index for c in TAXONOMY}


def index_of(code: str) -> int:
    """Class index of a code, with a clear error for an unknown one."""
    try:
        return INDEX[code]
    except KeyError:
        raise KeyError(f"unknown mismatch class {code!r}; known: {', '.join(CODES)}") from None
