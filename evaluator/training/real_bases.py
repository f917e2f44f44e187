"""Mismatch pairs on divergent real bases, for continuing a base's training (issue #23).

Synthetic errors sit on the reference or a light rewrite of it, so a base trained only on them
reads "any difference" as an error and real outputs, which reword their references, as wrong.
These pairs put both labels on real rewordings:

- highly rated real outputs (``realtext_data.BASE_SOURCES``) of the groups that no seed of
  ``mismatch evaluate`` tests on (seeds 0, 1, 2 with 20 % of the groups each; seed 0's test
  part is also the realtext bench's held-out partition), so no task checkpoint fitted on the
  base is later tested on a text its base saw. A record sharing a reference or output
  (stripped) with any tested record is left out too (``untested_bases``, which span training
  shares with seed 0 alone);
- SICK TRAIN pairs that entail each other both ways, read in both directions.

Each base is a pair as itself (NoContr) and one pair per synth error rule that applies to it
(``realtext_data.perturb_bases``), capped per class. SICK TRAIN contradictions whose sentences
differ in their count of negation words add NegErr pairs, in both directions (not capped). With
``sick_substitutions`` the contradictions that swap two content words or substitute one
(``contradiction_class``) add pairs of that word's error class too: real contradictions that
reword nothing else, which the synth rules only make on near-copies. A tenth of the groups
(hashed) is the val split.

``graded_chains`` grows, on the real bases of such a split, chains of copies with one, two and
three errors of one class. Class labels say nothing about how wrong a text is, so a base
trained on them alone may rank an output with three errors above one with one; the chains
let continued training ask that each added error lowers P(NoContr) (``continued``).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evaluator.finetune.contrast import contrast_records
from evaluator.human_data import HumanRecord, load_records, split_by_group
from evaluator.realtext_data import BASE_SOURCES, BENCH_FRACTION, perturb_bases
from mismatch_core.errors import DataError
from mismatch_core.groups import group_position
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.pairs import read_pairs
from mismatch_core.taxonomy import index_of
from synth.corpora import sick_types_problem
from synth.rules import parse

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

EVALUATE_SEEDS = (0, 1, 2)  # `mismatch evaluate --seeds 3`
NEGATION = re.compile(r"\b(?:no|not|nobody|none|never|nothing|nowhere)\b|n't", re.IGNORECASE)
# a changed word's error class by its part of speech (a noun naming a place: STErr)
CLASS_BY_POS = {"VERB": "PredErr", "ADJ": "AttrErr", "ADV": "AttrErr", "NUM": "NumErr",
                "NOUN": "EntErr", "PROPN": "EntErr", "ADP": "STErr"}  # fmt: skip
PLACE_PREPOSITIONS = frozenset(
    "in on at into onto near by under over inside outside through across along behind beside "
    "from to toward towards around off up down".split()
)
COLUMNS = ["id", "ref", "gen", "label", "label_id", "source", "group", "rule", "detail"]
GRADED_COLUMNS = [*COLUMNS, "parent"]


@dataclass(frozen=True)
class RealBase:
    source: str
    group: str
    ref: str
    text: str


def untested_records(
    human_dir: Path, seeds: tuple[int, ...] = EVALUATE_SEEDS, test_fraction: float = BENCH_FRACTION
) -> dict[str, list[HumanRecord]]:
    """Per dataset of ``BASE_SOURCES``, every record of the groups no seed in ``seeds`` tests
    on, in file order, whatever its rating. WMT's language pairs into English share
    references, so a record sharing a text (stripped) with a tested record of any dataset is
    left out too."""
    records = {source.name: load_records(human_dir / source.file) for source in BASE_SOURCES}
    tested = {
        name: {r.group for seed in seeds for r in split_by_group(rows, seed, test_fraction)[1]}
        for name, rows in records.items()
    }
    tested_texts = {
        text.strip()
        for name, rows in records.items()
        for record in rows
        if record.group in tested[name]
        for text in (*record.refs, record.gen)
    }
    return {
        name: [
            record
            for record in rows
            if record.group not in tested[name]
            and tested_texts.isdisjoint(text.strip() for text in (*record.refs, record.gen))
        ]
        for name, rows in records.items()
    }


def untested_bases(
    human_dir: Path, seeds: tuple[int, ...] = EVALUATE_SEEDS, test_fraction: float = BENCH_FRACTION
) -> list[RealBase]:
    """Highly rated outputs among ``untested_records``, in file order."""
    records = untested_records(human_dir, seeds, test_fraction)
    return [
        RealBase(source.name, f"{source.name}:{record.group}", record.refs[0], record.gen)
        for source in BASE_SOURCES
        for record in records[source.name]
        if record.scores.get(source.criterion, float("-inf")) >= source.minimum
    ]


def contradiction_class(ref: Doc, gen: Doc) -> str | None:
    """The error class of a contradiction that swaps content words (nouns or verbs among them:
    EntErr, who does what; adjectives or adverbs only: AttrErr) or substitutes one content word
    for another of the same class (``CLASS_BY_POS``, places STErr); None for any other change,
    which has no one class."""
    ref_words, gen_words = _content(ref), _content(gen)
    ref_lemmas, gen_lemmas = ([t.lemma_.lower() for t in w] for w in (ref_words, gen_words))
    if len(ref_lemmas) != len(gen_lemmas):
        return None
    changed = [i for i, (a, b) in enumerate(zip(ref_lemmas, gen_lemmas, strict=True)) if a != b]
    if sorted(ref_lemmas) == sorted(gen_lemmas):  # a swap, or no change at all (no error)
        moved = {ref_words[i].pos_ for i in changed}
        if moved & {"NOUN", "PROPN", "VERB"}:
            return "EntErr"  # who does what: swapped roles
        return "AttrErr" if moved and moved <= {"ADJ", "ADV"} else None
    if len(changed) != 1:
        return None
    old, new = _word_class(ref_words[changed[0]]), _word_class(gen_words[changed[0]])
    return old if old == new else None


def _content(doc: Doc) -> list[Token]:
    return [t for t in doc if t.pos_ in CLASS_BY_POS and t.dep_ != "prt"]


def _word_class(token: Token) -> str | None:
    if token.pos_ == "ADP":  # only a preposition of place is an STErr
        return "STErr" if token.lemma_.lower() in PLACE_PREPOSITIONS else None
    place = token.dep_ == "pobj" and token.head.lemma_.lower() in PLACE_PREPOSITIONS
    return "STErr" if token.pos_ in ("NOUN", "PROPN") and place else CLASS_BY_POS[token.pos_]


def sick_rows(sick_train: Path, substitutions: bool = False) -> tuple[list[RealBase], list[dict]]:
    """SICK TRAIN's two-way entailments as bases and its negation contradictions as NegErr
    rows, each in both directions; with ``substitutions``, the other contradictions that
    ``contradiction_class`` names too."""
    bases, contradictions, others = [], [], []
    lines = 0
    for line, value in iter_jsonl(sick_train):
        lines += 1
        try:
            a, b, pair_id = value["a"], value["b"], value["id"]
            paraphrase, contradiction = value["paraphrase"], value["contradiction"]
        except KeyError as error:
            raise ValueError(f"{sick_train}:{line}: missing key {error.args[0]!r}") from None
        problem = sick_types_problem(value)
        if problem:
            raise ValueError(f"{sick_train}:{line}: {problem}")
        group = f"sick:{pair_id}"
        if paraphrase:
            bases += [RealBase("sick", group, a, b), RealBase("sick", group, b, a)]
        if contradiction and len(NEGATION.findall(a)) != len(NEGATION.findall(b)):
            contradictions += [
                _row(ref, gen, "NegErr", "sick", group, "sick_contradiction")
                for ref, gen in ((a, b), (b, a))
            ]
        elif contradiction and substitutions:
            others.append((group, a, b))
    if not lines:  # it made no SICK pair, exit 0
        raise ValueError(f"{sick_train}: no records")
    docs = parse([text for _, a, b in others for text in (a, b)]) if others else []
    for position, (group, a, b) in enumerate(others):
        a_doc, b_doc = docs[2 * position], docs[2 * position + 1]
        for ref, gen, code in (
            (a, b, contradiction_class(a_doc, b_doc)),
            (b, a, contradiction_class(b_doc, a_doc)),
        ):
            if code is not None:
                contradictions.append(_row(ref, gen, code, "sick", group, "sick_substitution"))
    return bases, contradictions


def real_base_pairs(
    human_dir: Path,
    sick_train: Path,
    seed: int = 23,
    cap_per_class: int = 1500,
    val_fraction: float = 0.1,
    sick_substitutions: bool = False,
) -> dict[str, pd.DataFrame]:
    """``{"train": ..., "val": ...}`` pairs in the synth schema (``COLUMNS``)."""
    bases = untested_bases(human_dir)
    sick_bases, contradictions = sick_rows(sick_train, sick_substitutions)
    bases += sick_bases
    rows = [_row(b.ref, b.text, "NoContr", b.source, b.group, "real_base") for b in bases]
    perturbed = perturb_bases(
        [b.ref for b in bases], [b.text for b in bases], [b.group for b in bases], seed
    )
    errors = [
        _row(bases[item.base].ref, item.text, item.code, bases[item.base].source,
             bases[item.base].group, item.rule, base_text=bases[item.base].text)
        for item in perturbed.items
    ]  # fmt: skip
    random.Random(seed).shuffle(errors)
    taken: Counter = Counter()
    for row in errors:
        if taken[row["label"]] < cap_per_class:
            taken[row["label"]] += 1
            rows.append(row)
    if not rows and not contradictions:  # a KeyError on the empty frame's columns
        raise ValueError(f"no pairs: {human_dir} and {sick_train} hold no usable base")
    frame = pd.DataFrame(rows + contradictions).drop_duplicates(subset=["ref", "gen"])
    in_val = frame["group"].map(lambda group: group_position("val", group) < val_fraction)
    splits = {}
    for split, part in (("train", frame[~in_val]), ("val", frame[in_val])):
        part = part.reset_index(drop=True)
        # ids from the content, so a feature cache never attaches to other pairs
        part.insert(0, "id", [_pair_id(r.ref, r.gen, r.label) for r in part.itertuples()])
        splits[split] = part[COLUMNS]
    return splits


def read_real_bases(pairs_dir: Path, split: str) -> pd.DataFrame:
    """A split of a ``mismatch adapt pairs`` folder, checked before chains are made on it:
    the columns ``graded_chains`` copies and at least one real base (a synth folder has none:
    its chains would be empty)."""
    path = Path(pairs_dir) / f"{split}.parquet"
    frame = read_pairs(path, labelled=True)
    missing = [column for column in COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(
            f"{path} lacks column(s) {', '.join(missing)}: not a `mismatch adapt pairs` split"
        )
    if not (frame["rule"] == "real_base").any():
        raise DataError(
            f"{path} holds no real bases (rule 'real_base'): not a `mismatch adapt pairs` split"
        )
    return frame


def graded_chains(split: pd.DataFrame, depth: int = 3, seed: int = 31) -> pd.DataFrame:
    """The real bases of a ``real_base_pairs`` split (rule ``real_base``, NoContr) and, per
    base, one chain of up to ``depth`` copies (``finetune.contrast.contrast_records``): the
    first copy has one error, each next one more of the same class. Columns ``GRADED_COLUMNS``;
    ``parent`` is the id of the pair a copy was made from (a base's or the copy before it; ""
    for a base), ``detail`` holds each copy's depth. A copy that gives a (ref, gen) pair the
    set already holds (two bases on one reference can meet) ends its chain there. Same
    split, depth and seed -> same pairs."""
    bases = split[split["rule"] == "real_base"].reset_index(drop=True)
    records = [
        HumanRecord(id=row.id, refs=(row.ref,), gen=row.gen, src=None, group=row.group, scores={})
        for row in bases.itertuples()
    ]
    copies, owners, parents = contrast_records(records, depth * len(records), seed, depth)
    rows = [{**bases.loc[i, COLUMNS].to_dict(), "parent": ""} for i in range(len(bases))]
    seen = {(row["ref"], row["gen"]) for row in rows}
    kept: list[tuple[str, int] | None] = []  # per copy: (its id, its depth); None: chain ended
    for copy, owner, parent in zip(copies, owners, parents, strict=True):
        base = bases.loc[owner]
        above = (base.id, 0) if parent < 0 else kept[parent]  # the base has no error
        if above is None or (base.ref, copy.gen) in seen:
            kept.append(None)
            continue
        parent_id, depth = above[0], above[1] + 1
        code = copy.id.split("~")[1]  # contrast_records' ids: <record>~<class>~<text hash>
        row = _row(base.ref, copy.gen, code, base.source, base.group, f"graded/{code}",
                   depth=depth)  # fmt: skip
        row["id"] = _pair_id(base.ref, copy.gen, code)
        row["parent"] = parent_id
        seen.add((base.ref, copy.gen))
        kept.append((row["id"], depth))
        rows.append(row)
    return pd.DataFrame(rows, columns=GRADED_COLUMNS)


def _row(ref: str, gen: str, label: str, source: str, group: str, rule: str, **detail) -> dict:
    return {
        "ref": ref,
        "gen": gen,
        "label": label,
        "label_id": index_of(label),
        "source": source,
        "group": group,
        "rule": rule,
        "detail": json.dumps({"base": "real", **detail}),
    }


def _pair_id(ref: str, gen: str, label: str) -> str:
    return "real-" + hashlib.sha256(f"{label}\n{ref}\n{gen}".encode()).hexdigest()[:20]
