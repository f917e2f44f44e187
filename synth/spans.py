"""Where a synthetic pair's error is: the characters of gen its rule changed, and for an
omission the characters of ref that gen leaves out.

A rule is applied to a base: the reference itself or a harmless rewrite of it (the pair's
``detail`` holds ``base_text`` then). Comparing the base with gen word by word (difflib) gives
the changed words whatever the rule did (the generator also tidies spaces and punctuation
after an edit), and marks only the words a scattered edit touched (doubled words, punctuation
noise, the two halves of a swap). The rewording between reference and base is not part of
it, which is what teaches a span tagger that a reworded but correct phrase is no error. Regions are whole words without punctuation
at their edges, as ``evaluator.spans`` reports predicted spans. A deletion leaves no
characters in gen: for MissInfo the deleted words are found in ref; for other classes (a
dropped function word, GramErr) the words on either side of the gap mark the place.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

Region = tuple[int, int]  # character offsets, end exclusive


@dataclass(frozen=True)
class ErrorRegions:
    """Gold regions of one pair: in gen, and in ref (None: the omitted words could not be
    placed in ref, so the ref side is unknown)."""

    gen: list[Region]
    ref: list[Region] | None


def error_regions(ref: str, gen: str, label: str, detail: str | dict) -> ErrorRegions:
    """The gold regions of a synthetic pair (NoContr: none)."""
    if label == "NoContr":
        return ErrorRegions([], [])
    values = json.loads(detail) if isinstance(detail, str) else detail
    base = values.get("base_text", ref)
    return changed_regions(base, gen, ref, omission=label == "MissInfo")


def changed_regions(base: str, gen: str, ref: str, omission: bool) -> ErrorRegions:
    """What an edit of ``base`` into ``gen`` changed, as gold regions; ``omission``: the edit
    left words out (MissInfo), which are placed in ``ref``."""
    base_words, gen_words, changes = word_changes(base, gen, _bare)
    if not changes:  # only punctuation changed (punctuation noise)
        base_words, gen_words, changes = word_changes(base, gen)
    if omission:
        removed = [
            (base_words[i1][0], base_words[i2 - 1][1]) for _, i1, i2, _, _ in changes if i2 > i1
        ]
        if base == ref:
            return ErrorRegions([], [word_region(ref, *region) for region in removed])
        placed = []
        for start, end in removed:
            words = base[start:end]
            if ref.count(words) != 1:  # absent, or more than one place it could be
                return ErrorRegions([], None)
            at = ref.find(words)
            placed.append(word_region(ref, at, at + end - start))
        return ErrorRegions([], placed)
    regions: set[Region] = set()
    for _, _, _, j1, j2 in changes:
        if j2 > j1:
            regions.add(word_region(gen, gen_words[j1][0], gen_words[j2 - 1][1]))
        else:
            regions.update(_around_gap(gen, gen_words, j1))
    return ErrorRegions(sorted(regions), [])


def word_changes(
    old: str, new: str, key: Callable[[str], str] = str
) -> tuple[list[Region], list[Region], list[tuple]]:
    """(old's words, new's words, difflib's opcodes other than "equal") with the texts
    compared word by word (whitespace-delimited, each compared by ``key``), so a deleted "to"
    before "the" is not read as "o" deleted after a shared "t"."""
    old_words = [match.span() for match in re.finditer(r"\S+", old)]
    new_words = [match.span() for match in re.finditer(r"\S+", new)]
    matcher = difflib.SequenceMatcher(
        None,
        [key(old[start:end]) for start, end in old_words],
        [key(new[start:end]) for start, end in new_words],
        autojunk=False,
    )
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    return old_words, new_words, changes


def _bare(word: str) -> str:
    """A word without punctuation at its edges: "staff." and "staff" are the same word."""
    start, end = word_region(word, 0, len(word))
    return word[start:end]


def word_region(text: str, start: int, end: int) -> Region:
    """[start, end) widened to whole whitespace-delimited words, punctuation at the edges cut
    (kept when nothing else is left)."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    left, right = start, end
    while left < right and _is_punctuation(text[left]):
        left += 1
    while right > left and _is_punctuation(text[right - 1]):
        right -= 1
    return (left, right) if left < right else (start, end)


def _around_gap(text: str, words: list[Region], at: int) -> list[Region]:
    """The words on either side of the place before word ``at`` (where words were deleted)."""
    return [word_region(text, *words[i]) for i in (at - 1, at) if 0 <= i < len(words)]


def _is_punctuation(character: str) -> bool:
    return unicodedata.category(character).startswith("P")
