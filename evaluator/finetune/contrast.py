"""Contrast copies of human-rated outputs: the output with one synthetic error in it.

Human ratings never show a rating head what cutting, repeating or reordering an output does
(no two rated outputs differ by one such edit), so a head fit to them alone can leave such
an edit unpunished or even reward it (docs/stress.md). Fine-tuning therefore also asks that
a copy of a training output carrying an error rate below the output itself, and, with graded
copies (chains of 1, 2, 3 ... errors), each copy below the one it was made from: more of an
error must never rate higher, which is what the stress tests check level by level. The errors come
from the pretraining rules of ``synth/`` (all 13 error classes) applied to rated outputs; some
of those rules share their code with stress perturbations (``synth/perturb/noise.py``), so
the stress tests of such edits are not independent of this training.

Rated outputs sit far from their references, so none of the above shows a rating head the
region where a near-copy of the reference with one wrong fact lies. Reference triples do
(``reference_triples``): a copy of the reference and a paraphrase of it (another reference
of the record, or the reference rewritten by synth's meaning-preserving rules) stand as
anchors, and a copy of the reference with one synthetic error must rate below each. A
rewrite by rule changes a word or two; a person's paraphrase changes much more of the surface,
and the lexical metrics then prefer a near-copy with a wrong fact to it. Paraphrase triples
(``paraphrase_triples``) show that case: a sentence of a SICK TRAIN pair that people judged to
entail each other both ways stands as the reference, the other sentence as its paraphrase
(the anchor), and a copy of the reference with one meaning error must rate below it.

Ratings that read the source (a summary against its document) reward what the source
supports, and nothing supports more of it than the source itself: no rated output copies its
source, so source copies (``source_copies``) show that an output which repeats its source
must rate below the output. The stress test ``copy_source`` checks the same edit, so it is
not independent of this training either.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from spacy.tokens import Doc

from evaluator.human_data import HumanRecord
from mismatch_core.pairs import has_text
from mismatch_core.taxonomy import ERROR_CODES, MEANING_ERROR_CODES
from synth.perturb import Context
from synth.rules import parse, shared_rules, weighted_sample

ANCHOR = -2  # the parent of a copy that must not rate below anything (a reference triple's anchor)
PARAPHRASE_REWRITES = 3  # meaning-preserving rewrites tried on a single reference
SOURCE_COPY = "~copy-source"  # the id suffix of a source copy
PARAPHRASE_TRIPLE = "~sick-"  # in the id of a paraphrase triple's copies


def check_class_weights(weights: dict[str, float]) -> None:
    """Weights name error classes and are positive; the error names the bad key."""
    for code, weight in weights.items():
        if code not in ERROR_CODES:
            raise ValueError(
                f"unknown error class {code!r} in contrast class weights; known: {', '.join(ERROR_CODES)}"
            )
        if not isinstance(weight, int | float) or not weight > 0:
            raise ValueError(f"contrast class weight of {code} must be above 0, got {weight}")


def context_maker(
    rng: random.Random, groups: list[str], docs: list[Doc]
) -> Callable[[str], Context]:
    """group -> the Context a rule gets for a text of that group: the shared ``rng`` and, for
    OutofRef content, a parsed text (``docs[i]``, of group ``groups[i]``) of another group."""

    def other_doc(group: str) -> Doc | None:
        for _ in range(20):
            position = rng.randrange(len(docs))
            if groups[position] != group:
                return docs[position]
        return None

    def context(group: str) -> Context:
        return Context(rng=rng, other_doc=functools.partial(other_doc, group))

    return context


def contrast_records(
    records: list[HumanRecord],
    size: int,
    seed: int,
    depth: int = 1,
    class_weights: dict[str, float] | None = None,
) -> tuple[list[HumanRecord], list[int], list[int]]:
    """Up to ``size`` copies of records, in chains of up to ``depth`` copies: a chain's first
    copy has one error, each next copy one more error of the same class added to the copy
    before it, so the copies of a chain are graded. Records are taken in a random order, and
    again from the start when the ``size // depth`` chains outnumber them, so no record gets
    more than ``ceil(size // depth / len(records))`` chains, each of another class.

    Returns the copies (id ``<record id>~<class>~<hash of the copy's text>``, unique among the
    copies; no scores), for each the position of its original in ``records``, and the
    position among the copies of the copy it was made from (-1: made from the original).
    A chain takes the first class, in a random order (weighted by ``class_weights``, 1 for a
    class not named; uniform without), that one of its rules applies to; it
    ends early when no rule of its class applies any more or an edit gives back a text the
    chain already had (a swap undone). OutofRef content comes from an output of another
    group, of any split: another output's text, never a rating. Same records, size, depth,
    weights and seed -> same copies.
    """
    if depth < 1:
        raise ValueError(f"contrast depth must be at least 1, got {depth}")
    check_class_weights(class_weights or {})
    rules = shared_rules()
    rng = random.Random(seed)
    order = rng.sample(range(len(records)), len(records))
    wanted = Counter(order[j % len(order)] for j in range(size // depth))
    chosen = sorted(wanted)
    docs = parse([records[i].gen for i in chosen])

    contexts = context_maker(rng, [records[i].group for i in chosen], docs)

    def context(index: int) -> Context:
        return contexts(records[index].group)

    copies, owners, parents = [], [], []
    chains: list[tuple[int, str, list[int]]] = []  # (record, class, its copies so far)

    def add(index: int, code: str, text: str, parent: int) -> None:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
        copy_id = f"{records[index].id}~{code}~{digest}"
        copies.append(replace(records[index], id=copy_id, gen=text, scores={}))
        owners.append(index)
        parents.append(parent)

    def class_order() -> list[str]:
        if not class_weights:
            return rng.sample(ERROR_CODES, len(ERROR_CODES))
        weights = {code: class_weights.get(code, 1.0) for code in ERROR_CODES}
        return weighted_sample(list(ERROR_CODES), weights, len(ERROR_CODES), rng)

    for index, doc in zip(chosen, docs, strict=True):
        made = 0
        for code in class_order():
            if made == wanted[index]:
                break
            change = rules.first(code, doc, context(index))
            if change is not None:
                add(index, code, change[0], -1)
                chains.append((index, code, [len(copies) - 1]))
                made += 1
    for length in range(1, depth):
        growing = [chain for chain in chains if len(chain[2]) == length]
        last_docs = parse([copies[chain[-1]].gen for _, _, chain in growing])
        for (index, code, chain), doc in zip(growing, last_docs, strict=True):
            change = rules.first(code, doc, context(index))
            had = {records[index].gen, *(copies[c].gen for c in chain)}
            if change is not None and change[0] not in had:
                add(index, code, change[0], chain[-1])
                chain.append(len(copies) - 1)
    return copies, owners, parents


def source_copies(records: list[HumanRecord]) -> tuple[list[HumanRecord], list[int]]:
    """(copies, the position of each one's record): per record with a source, a copy whose
    output is that source (it must rate below the record's own output)."""
    copies, kept = [], []
    for i, record in enumerate(records):
        if has_text(record.src):
            copies.append(
                replace(record, id=f"{record.id}{SOURCE_COPY}", gen=record.src, scores={})
            )
            kept.append(i)
    return copies, kept


def reference_triples(
    records: list[HumanRecord], ref_positions: list[int], size: int, seed: int
) -> tuple[list[HumanRecord], list[int], list[int]]:
    """Up to ``size`` copies of records whose gen is built from the reference the record
    trains on (``ref_positions[i]`` into ``records[i].refs``), in the shape of
    ``contrast_records``' result: for each chosen record an exact copy of that reference and
    a paraphrase of it (another of the record's references when it has one, else the
    reference after up to ``PARAPHRASE_REWRITES`` of synth's NoContr rules; none when no rule
    applies), both with parent ``ANCHOR``, and per anchor a copy of the reference with one
    error of a class drawn at random, whose parent is that anchor: a fact changed in an
    otherwise copied reference must rate below the reference said in other words. Same
    records, positions, size and seed -> same copies.
    """
    rules = shared_rules()
    rng = random.Random(seed)
    order = rng.sample(range(len(records)), len(records))[: size // 4]
    chosen = sorted(order)
    refs = [records[i].refs[ref_positions[i]] for i in chosen]
    docs = parse(refs)

    contexts = context_maker(rng, [records[i].group for i in chosen], docs)

    def context(position: int) -> Context:
        return contexts(records[chosen[position]].group)

    def paraphrase(position: int) -> str | None:
        record, ref = records[chosen[position]], refs[position]
        others = [r for r in record.refs if r != ref]
        if others:
            return rng.choice(others)
        doc, text = docs[position], None
        for _ in range(PARAPHRASE_REWRITES):
            change = rules.first("NoContr", doc, context(position))
            if change is None:
                break
            text = change[0]
            (doc,) = parse([text])
        return text if text != ref else None

    copies: list[HumanRecord] = []
    owners: list[int] = []
    parents: list[int] = []

    def add(position: int, kind: str, text: str, parent: int) -> None:
        record = records[chosen[position]]
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
        copies.append(replace(record, id=f"{record.id}~ref-{kind}~{digest}", gen=text, scores={}))
        owners.append(chosen[position])
        parents.append(parent)

    for position, ref in enumerate(refs):
        anchors = [("copy", ref), ("paraphrase", paraphrase(position))]
        for kind, anchor in anchors:
            if anchor is None:
                continue
            for code in rng.sample(ERROR_CODES, len(ERROR_CODES)):
                change = rules.first(code, docs[position], context(position))
                if change is not None and change[0] != anchor:
                    add(position, kind, anchor, ANCHOR)
                    add(position, f"{kind}-{code}", change[0], len(copies) - 1)
                    break
    return copies, owners, parents


def paraphrase_triples(
    records: list[HumanRecord], pairs: list[tuple[str, str, str]], size: int, seed: int
) -> tuple[list[HumanRecord], list[int], list[int]]:
    """Up to ``size`` copies in the shape of ``contrast_records``' result, from ``pairs``
    (group, reference, paraphrase) that people judged to say the same (SICK TRAIN's two-way
    entailments; an OutofRef error adds a sentence of another group, never a paraphrase of
    the reference): per pair drawn, the paraphrase as gen (parent ``ANCHOR``) and the reference
    with one meaning error (``MEANING_ERROR_CODES``, the first class in a random order whose
    rules apply) as gen, whose parent is that anchor. Both read the pair's reference alone
    (``refs`` is that one sentence) and, for ratings that read a source, the reference as
    the source too, as ``mismatch bench realtext`` reads pairs without one. A pair belongs to
    no record: each is owned by a record drawn at random, so it travels in that record's
    batches and split. Same records, pairs, size and seed -> same copies."""
    rules = shared_rules()
    rng = random.Random(seed)
    distinct = list(dict.fromkeys(pairs))
    drawn = rng.sample(distinct, min(size // 2, len(distinct)))
    docs = parse([ref for _, ref, _ in drawn])
    contexts = context_maker(rng, [group for group, _, _ in drawn], docs)
    copies: list[HumanRecord] = []
    owners: list[int] = []
    parents: list[int] = []

    def add(owner: int, kind: str, ref: str, paraphrase: str, text: str, parent: int) -> None:
        digest = hashlib.sha1(f"{ref}\n{paraphrase}\n{text}".encode()).hexdigest()[:12]
        copy_id = f"{records[owner].id}{PARAPHRASE_TRIPLE}{kind}~{digest}"
        copies.append(
            replace(records[owner], id=copy_id, refs=(ref,), gen=text, src=ref, scores={})
        )
        owners.append(owner)
        parents.append(parent)

    for (group, ref, paraphrase), doc in zip(drawn, docs, strict=True):
        owner = rng.randrange(len(records))
        for code in rng.sample(MEANING_ERROR_CODES, len(MEANING_ERROR_CODES)):
            change = rules.first(code, doc, contexts(group))
            if change is not None and change[0] not in (ref, paraphrase):
                add(owner, "paraphrase", ref, paraphrase, paraphrase, ANCHOR)
                add(owner, code, ref, paraphrase, change[0], len(copies) - 1)
                break
    return copies, owners, parents
