"""Contrast copies of human-rated outputs: the output with one synthetic error in it.

Human ratings never show a rating head what cutting, repeating or reordering an output does
(no two rated outputs differ by one such edit), so a head fit to them alone can leave such
an edit unpunished or even reward it (docs/stress.md). Fine-tuning therefore also asks that
a copy of a training output carrying an error rate below the output itself. The errors come
from the pretraining rules of ``synth/`` (all 13 error classes) applied to rated outputs; some
of those rules share their code with stress perturbations (``synth/perturb/noise.py``), so
the stress tests of such edits are not independent of this training.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import replace

from evaluator.human_data import HumanRecord
from synth.perturb import Context
from synth.taxonomy import CODES

ERROR_CLASSES = tuple(code for code in CODES if code != "NoContr")


def contrast_records(
    records: list[HumanRecord], size: int, seed: int
) -> tuple[list[HumanRecord], list[int]]:
    """Up to ``size`` copies of records, each with one error: records are taken in a random
    order, and again from the start when ``size`` exceeds their number, so no record gets
    more than ``ceil(size / len(records))`` copies, each of another class.

    Returns the copies (id ``<record id>~<class>~<hash of the copy's text>``, so the feature
    cache, keyed by id, never serves a copy's features for another text after the rules
    change; no scores) and, for each, the position of its original in ``records``. A record
    takes the first classes, in a random order, that one of their rules applies to. OutofRef
    content comes from an output of another group, of any split: another output's text, never
    a rating. Same records, size and seed -> same copies.
    """
    from synth.generate import apply_class, parse

    rng = random.Random(seed)
    order = rng.sample(range(len(records)), len(records))
    wanted = Counter(order[j % len(order)] for j in range(size))
    chosen = sorted(wanted)
    docs = parse([records[i].gen for i in chosen])

    def other_doc(group: str):
        for _ in range(20):
            position = rng.randrange(len(chosen))
            if records[chosen[position]].group != group:
                return docs[position]
        return None

    copies, owners = [], []
    for index, doc in zip(chosen, docs, strict=True):
        record = records[index]
        context = Context(rng=rng, other_doc=lambda group=record.group: other_doc(group))
        made = 0
        for code in rng.sample(ERROR_CLASSES, len(ERROR_CLASSES)):
            if made == wanted[index]:
                break
            change = apply_class(code, doc, context)
            if change is not None:
                digest = hashlib.sha1(change[0].encode("utf-8")).hexdigest()[:10]
                copy_id = f"{record.id}~{code}~{digest}"
                copies.append(replace(record, id=copy_id, gen=change[0], scores={}))
                owners.append(index)
                made += 1
    return copies, owners
