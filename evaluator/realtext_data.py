"""The real-text bench's inputs: SICK TRIAL pairs, held-out real bases with every synth error
applied, and WMT19 DARR pairs (all measurement only; nothing here is trained or tuned on),
and the same kind of real bases from the complementary groups, which training may use.

Held-out groups (the real bases). Fine-tuning splits a task's records by a seeded hash of
their ``group`` (``human_data.split_by_group``); ``mismatch evaluate`` seed 0 tests on
``split_by_group(seed=0, test_fraction=0.2)``. That test part is the bench's partition of real
bases (``BENCH_SEED``, ``BENCH_FRACTION``): the pretrained base never saw human data, and a
task checkpoint measured here must be one fitted without these groups (evaluate's seed-0 fit).
The task checkpoints shipped before this bench were fitted on 90 % of all groups, these
included, so their figures here would not be clean.
Of them, only highly rated outputs serve: WMT15/16/17 DA with da_z >= 0.5, WebNLG 2020 with
correctness >= 90. A multi-reference record (WebNLG) is read against its first reference.
The other groups (``partitions``, part "train") are the ones task fine-tuning trains on; the
span tagger trains on their highly rated outputs with the same errors applied.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.human_data import HumanRecord, load_records, split_by_group
from mismatch_core.jsonl import iter_jsonl
from mismatch_core.pairs import has_text
from mismatch_core.taxonomy import ERROR_CODES
from synth.perturb import Context
from synth.rules import holds_against_reference, parse, shared_rules

BENCH_SEED = 0  # `mismatch evaluate` seed 0 ...
BENCH_FRACTION = 0.2  # ... tests on this share of groups (evaluator.finetune.evaluate)


@dataclass(frozen=True)
class BaseSource:
    """One dataset of real bases: its file under <data>/human and the rating an output needs
    to serve as a base."""

    name: str
    file: str
    criterion: str
    minimum: float
    dataset: str  # its records' "dataset", as a fit's train_datasets names it


BASE_SOURCES = (
    BaseSource("wmt15", "translation/wmt15_da.jsonl.gz", "da_z", 0.5, "wmt15-da"),
    BaseSource("wmt16", "translation/wmt16_da.jsonl.gz", "da_z", 0.5, "wmt16-da"),
    BaseSource("wmt17", "translation/wmt17_da.jsonl.gz", "da_z", 0.5, "wmt17-da"),
    BaseSource("webnlg2020", "data2text/webnlg2020.jsonl.gz", "correctness", 90.0, "webnlg2020"),
)
SICK_TRIAL = "sick/sick_trial.jsonl.gz"
DARR = "human/translation/darr/wmt19_darr.pairs.jsonl.gz"
# A rule's RNG seed names its module; rules that moved to another module keep the old name in
# their seed, so the bench's perturbed texts stay the ones measured before the move.
SEED_MODULES = {"synth.perturb.event_order": "synth.perturb.predicate"}


@dataclass(frozen=True)
class SickPair:
    ref: str
    gen: str
    paraphrase: bool
    contradiction: bool


def checked_value(record: object, key: str, kind: type, where: str) -> Any:
    """``record[key]``, checked: ValueError naming the file and line (``where``) and the key
    for a missing key or a value of another kind, an empty text too (the bench scored an
    empty reference, read "false" as true, or stopped with a traceback)."""
    if not isinstance(record, dict) or key not in record:
        raise ValueError(f"{where}: missing key {key!r}")
    value = record[key]
    if not isinstance(value, kind) or (isinstance(value, str) and not has_text(value)):
        wanted = "a text" if kind is str else f"a JSON {'object' if kind is dict else 'true/false'}"
        raise ValueError(f"{where}: key {key!r} must be {wanted}, got {json.dumps(value)[:80]}")
    return value


def load_sick(path: Path) -> list[SickPair]:
    """SICK pairs with ``a`` as the reference and ``b`` as the generated text."""
    pairs = []
    for line, value in iter_jsonl(path):
        where = f"{path}:{line}"
        texts = [checked_value(value, key, str, where) for key in ("a", "b")]
        flags = [checked_value(value, key, bool, where) for key in ("paraphrase", "contradiction")]
        pairs.append(SickPair(*texts, *flags))
    if not pairs:
        raise ValueError(f"{path}: no pairs")
    return pairs


PARTS = ("train", "held_out")  # the groups training may use; the bench's, measurement only


def bench_split(records: list[HumanRecord]) -> tuple[list[HumanRecord], list[HumanRecord]]:
    """(train, held_out): the records of the groups training may use, and of the bench's
    partition of groups (see the module docstring)."""
    return split_by_group(records, BENCH_SEED, BENCH_FRACTION)


def partitions(human_dir: Path) -> dict[str, dict[str, list[HumanRecord]]]:
    """Per dataset of ``BASE_SOURCES``, every record by partition of groups (``PARTS``)."""
    out = {}
    for source in BASE_SOURCES:
        train, test = bench_split(load_records(human_dir / source.file))
        out[source.name] = {"train": train, "held_out": test}
    return out


def bases_trained_on(training: object) -> list[str]:
    """The files of ``BASE_SOURCES`` a task checkpoint was fitted on, as its training record
    (config.json's "training") tells: named among its datasets (a shipped task's file, or a
    ratings file of that name) and not left out by its fit settings' train_datasets. Their
    held-out groups were in its training data."""
    if not isinstance(training, dict):
        return []
    datasets = str(training.get("datasets", ""))
    try:
        settings = json.loads(training.get("fit settings", "{}"))
        trained = settings.get("train_datasets") or []
    except (TypeError, ValueError, AttributeError):  # no settings recorded, or not a mapping
        trained = []
    return [
        source.file
        for source in BASE_SOURCES
        if Path(source.file).name in datasets and (not trained or source.dataset in trained)
    ]


def highly_rated(
    by_dataset: dict[str, dict[str, list[HumanRecord]]], part: str
) -> dict[str, list[HumanRecord]]:
    """Per dataset, the records of one partition rated high enough to serve as bases."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    return {
        source.name: [
            r
            for r in by_dataset[source.name][part]
            if r.scores.get(source.criterion, float("-inf")) >= source.minimum
        ]
        for source in BASE_SOURCES
    }


def load_bases(human_dir: Path, limit: int | None, seed: int) -> dict[str, list[HumanRecord]]:
    """Per dataset, its highly rated held-out records (up to ``limit``, a seeded sample)."""
    bases = highly_rated(partitions(human_dir), "held_out")
    if limit is None:
        return bases
    return {
        name: random.Random(seed).sample(good, limit) if len(good) > limit else good
        for name, good in bases.items()
    }


@dataclass(frozen=True)
class Perturbed:
    base: int  # position of its base
    code: str  # the rule's class
    rule: str
    text: str


@dataclass
class Perturbations:
    items: list[Perturbed]
    rule_errors: Counter = field(default_factory=Counter)  # rule -> exceptions raised


def perturb_bases(refs: list[str], gens: list[str], groups: list[str], seed: int) -> Perturbations:
    """Every error rule that applies to each generated text, one perturbed text per rule.

    The generated text is not the reference, so, as the generator does for paraphrases, a
    substitution keeps only when the words it replaces occur in the reference
    (synth.rules.holds_against_reference). A rule that raises is counted, not fatal (as in
    synth.rules.RuleSet). Each (base, rule) gets its own RNG seeded by (seed, base position,
    rule), so adding a rule or a base leaves the other perturbations unchanged.
    """
    rules = shared_rules()
    docs = parse(gens)
    out = Perturbations([])
    for index, doc in enumerate(docs):
        for code in ERROR_CODES:
            for rule in rules.of(code):
                name = f"{rule.__module__}.{rule.__name__}"
                seed_name = f"{SEED_MODULES.get(rule.__module__, rule.__module__)}.{rule.__name__}"
                rng = random.Random(f"{seed}:{index}:{seed_name}")
                context = Context(rng=rng, other_doc=_other_doc_picker(docs, groups, index, rng))
                try:
                    change = rule(doc, context)
                except Exception:  # a rule bug: counted and reported, one text must not end the run
                    out.rule_errors[name] += 1
                    continue
                if change is None or not change.text.strip() or change.text == doc.text:
                    continue
                if not holds_against_reference(code, change.old, refs[index]):
                    continue
                out.items.append(Perturbed(index, code, change.rule, change.text))
    return out


@dataclass(frozen=True)
class RealBaseSet:
    """The real-bases set of ``mismatch bench realtext`` and ``mismatch bench spans``: per
    dataset its bases (``load_bases``), each output read against its first reference, and
    every error rule that applies to each output (``perturb_bases``)."""

    by_dataset: dict[str, list[HumanRecord]]
    refs: list[str]
    gens: list[str]
    perturbations: Perturbations


def real_base_set(human_dir: Path, limit: int | None, seed: int) -> RealBaseSet:
    """The benches' real-bases set (``RealBaseSet``); same arguments -> same set."""
    by_dataset = load_bases(human_dir, limit, seed)
    records = [r for records in by_dataset.values() for r in records]
    refs = [r.refs[0] for r in records]
    gens = [r.gen for r in records]
    perturbations = perturb_bases(refs, gens, [r.group for r in records], seed)
    return RealBaseSet(by_dataset, refs, gens, perturbations)


def _other_doc_picker(docs: list, groups: list[str], index: int, rng: random.Random):
    """Context.other_doc: a parsed base of another group (OutofRef adds its content)."""

    def pick():
        for _ in range(20):
            other = rng.randrange(len(docs))
            if groups[other] != groups[index]:
                return docs[other]
        return None

    return pick


@dataclass(frozen=True)
class DarrPair:
    lp: str
    ref: str
    better: str
    worse: str


def load_darr(path: Path, limit: int | None, seed: int) -> dict[str, list[DarrPair]]:
    """Per language pair, its DARR pairs (up to ``limit``, a seeded sample; None: all)."""
    by_lp: dict[str, list[DarrPair]] = {}
    for line, value in iter_jsonl(path):
        where = f"{path}:{line}"
        better, worse = (checked_value(value, key, dict, where) for key in ("better", "worse"))
        pair = DarrPair(
            checked_value(value, "lp", str, where),
            checked_value(value, "ref", str, where),
            checked_value(better, "gen", str, f"{where}: better"),
            checked_value(worse, "gen", str, f"{where}: worse"),
        )
        by_lp.setdefault(pair.lp, []).append(pair)
    if not by_lp:
        raise ValueError(f"{path}: no pairs")
    if limit is not None:
        by_lp = {
            lp: random.Random(seed).sample(pairs, limit) if len(pairs) > limit else pairs
            for lp, pairs in by_lp.items()
        }
    return dict(sorted(by_lp.items()))
