"""The demo's kind of wrong person on held-out real outputs: a full name whose first name
(a listed male or female one) is swapped for another of the same gender, the surname kept
("Kendall Jenner" -> "Kylie Jenner"), where the name also stands in the reference. Measured
on the realtext bench's held-out real bases (measurement only); per checkpoint: the share
of changed outputs read as NoContr, the share whose P(NoContr) falls below the unchanged
output's, and the share whose top error class is EntErr.

    python family_probe.py CHECKPOINT...
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from evaluator.evaluator import Evaluator
from evaluator.realtext_data import load_bases
from synth.perturb.lexicon_entities import FEMALE_NAMES, MALE_NAMES
from synth.rules import parse

HUMAN = Path("../shared/data/human")


def swaps() -> tuple[list[str], list[str], list[str]]:
    """(refs, bases, changed): one swap per output with such a name, seeded by its position."""
    records = [r for rows in load_bases(HUMAN, None, 13).values() for r in rows]
    refs, bases, changed = [], [], []
    for index, (record, doc) in enumerate(
        zip(records, parse([r.gen for r in records]), strict=True)
    ):
        ref = record.refs[0]
        for ent in doc.ents:
            first = ent[0].text
            pool = (
                FEMALE_NAMES if first in FEMALE_NAMES else MALE_NAMES if first in MALE_NAMES else ()
            )
            if ent.label_ != "PERSON" or len(ent) < 2 or not pool or ent.text not in ref:
                continue
            other = random.Random(f"family:{index}").choice([n for n in pool if n != first])
            text = doc.text[: ent[0].idx] + other + doc.text[ent[0].idx + len(first) :]
            refs.append(ref)
            bases.append(record.gen)
            changed.append(text)
            break
    return refs, bases, changed


def main() -> None:
    refs, bases, changed = swaps()
    print(f"{len(changed)} outputs with a swapped first name, e.g. {bases[0]!r} -> {changed[0]!r}")
    for path in sys.argv[1:]:
        evaluator = Evaluator.from_pretrained(path)
        before = evaluator.predict(refs, bases, progress=False, spans=False)
        after = evaluator.predict(refs, changed, progress=False, spans=False)
        n = len(after)
        nocontr = sum(p.score >= 0.5 for p in after) / n
        fell = sum(a.score < b.score for a, b in zip(after, before, strict=True)) / n
        ent = (
            sum(
                max((c for c in p.mismatch if c != "NoContr"), key=p.mismatch.__getitem__)
                == "EntErr"
                for p in after
            )
            / n
        )
        print(
            f"{path}: read as NoContr {nocontr:.3f}, P(NoContr) falls {fell:.3f}, top error EntErr {ent:.3f}"
        )


if __name__ == "__main__":
    main()
