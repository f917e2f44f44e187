"""Generate balanced synthetic mismatch pairs from the grouped reference corpora.

The work runs in rounds. Each round hands chunks of groups (one split at a time) to worker
processes with the current per-class attempt weights; a worker parses its texts with
spaCy once and, for each reference, tries a few classes, each by its rules in random
order, on the reference itself or on a base that already differs from it harmlessly: a real
paraphrase (another text of the same group) or a chain of meaning-preserving rewrites
(``synth.chains``). The main process accepts candidates until every (split, class) quota is met and
no source exceeds its share. Rounds, chunks and RNG seeds are fixed up front, so the same
seed gives identical output whatever the timing of the workers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import multiprocessing
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from mismatch_core.pairs import SYNTH_COLUMNS
from mismatch_core.resources import own_wordnet_files
from mismatch_core.taxonomy import CODES, index_of
from synth.chains import STRUCTURAL, chrf, combine, family, local_edits
from synth.corpora import (
    PARAPHRASE_SOURCES,
    SAME_MEANING_SOURCES,
    Corpus,
    Group,
    load_corpus,
    split_of,
)
from synth.perturb import Context, load_rules, load_screens, rule_weight

# Classes whose error replaces words of the text it is applied to (on a paraphrase, the
# replaced words must occur in the reference: "formerly" -> "later" is no order error
# against a reference that states no order).
SUBSTITUTION_CLASSES = frozenset(
    ("PredErr", "EntErr", "HypErr", "NumErr", "STErr", "AttrErr", "NegErr", "PredOrdErr")
)
PARAPHRASE_DRAWS = 4  # draws per rule for a substitution site shared with the ref
MIN_ROUND_TEXTS = 200  # per source and split
MAX_ROUND_TEXTS = 30_000


@dataclass
class SynthConfig:
    """Knobs of the generator; configs/synth.yaml holds the defaults used for the shipped data."""

    num_pairs: int = 200_000
    seed: int = 13
    val_fraction: float = 0.2
    # share of references whose errors go on a divergent base: a real paraphrase or, with none,
    # a chain of meaning-preserving rewrites (the rest take their errors on the reference)
    divergent_share: float = 0.9
    # a chain stacks up to this many rewrites of different families (clause-level ones first)
    max_chain_rewrites: int = 4
    # bases below this sentence chrF to the reference count as divergent (preferred as bases,
    # reported in the manifest)
    divergent_chrf: float = 0.6
    # captions of one image count as paraphrases when their content lemmas overlap this much
    min_paraphrase_overlap: float = 0.5
    # NoContr mix: real paraphrase / meaning-preserving rewrite / verbatim copy
    nocontr_real_share: float = 0.5
    nocontr_copy_share: float = 0.03
    # share of references drawn from each source (before quotas); none may end above max
    source_weights: dict[str, float] = field(
        default_factory=lambda: {"multi30k": 0.25, "webnlg": 0.40, "coco": 0.12, "squad": 0.15, "sick": 0.08}
    )
    max_source_share: float = 0.4
    classes_per_text: int = 5
    texts_per_chunk: int = 600
    processes: int = 2
    max_rounds: int = 40
    # stop once a round fills less than this share of the pairs still open: what is left cannot
    # be made from these corpora at a useful rate (the manifest then reports the shortfall)
    min_round_yield: float = 0.01
    # once a round fills less than half of what is open, a class at or above (1 - this) of its
    # quota is closed and its remaining pairs go to the classes that are full: the last few
    # percent of a class only a few texts can take (questions, event order) cost more time
    # than all the rest. The balance bar is +-10% of the mean.
    balance_tolerance: float = 0.08
    # a class that succeeds on fewer texts than this on every source is tried on every text
    # parsed (with all its rules and bases), not only when drawn among ``classes_per_text``
    scarce_rate: float = 0.1

    def __post_init__(self) -> None:
        """Reject a setting of the wrong type or out of range by name, before any work."""
        at_least_one = ("num_pairs", "classes_per_text", "texts_per_chunk", "processes", "max_rounds")
        if not isinstance(self.max_chain_rewrites, int) or isinstance(self.max_chain_rewrites, bool) or self.max_chain_rewrites < 2:
            raise ValueError(f"max_chain_rewrites must be an integer of at least 2, got {self.max_chain_rewrites!r}")
        for name in (*at_least_one, "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            if name in at_least_one and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        shares = {
            "val_fraction": (0.0, 1.0, False),
            "divergent_share": (0.0, 1.0, True),
            "divergent_chrf": (0.0, 1.0, True),
            "min_paraphrase_overlap": (0.0, 1.0, True),
            "nocontr_real_share": (0.0, 1.0, True),
            "nocontr_copy_share": (0.0, 1.0, True),
            "max_source_share": (0.0, 1.0, True),
            "min_round_yield": (0.0, 1.0, True),
            "balance_tolerance": (0.0, 1.0, False),
            "scarce_rate": (0.0, 1.0, True),
        }
        for name, (low, high, high_allowed) in shares.items():
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not (low <= value < high or (high_allowed and value == high)):
                bound = "]" if high_allowed else ")"
                raise ValueError(f"{name} must be in [{low:g}, {high:g}{bound}, got {value}")
        if self.nocontr_real_share + self.nocontr_copy_share > 1:
            raise ValueError("nocontr_real_share + nocontr_copy_share must not exceed 1")
        weights = self.source_weights
        if not isinstance(weights, dict) or not weights or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0
            for w in weights.values()
        ):
            raise ValueError(f"source_weights must map sources to positive weights, got {weights!r}")


@dataclass
class Candidate:
    ref: str
    gen: str
    label: str
    source: str
    group: str
    rule: str
    detail: str


# Set in the parent before forking so workers share the loaded pipeline and rules.
_NLP = None
_RULES: dict = {}
_RULE_ERRORS: Counter = Counter()  # per worker process, drained after every chunk


def _init_resources() -> None:
    """Load spaCy, the rules and the lazily loaded data they use (WordNet ~10 s, lemminflect's
    tables) once in the parent, so forked workers share them instead of each loading its own."""
    global _NLP, _RULES
    if _NLP is None:
        from lemminflect import getAllLemmas

        from mismatch_core.resources import load_spacy, wordnet

        _NLP = load_spacy()
        _RULES = load_rules()
        wordnet().synsets("dog")
        getAllLemmas("dogs")


def _changes(code: str, doc, ctx: Context):
    """Yield (text, rule, detail) for each rule of ``code`` that applies, in a random order
    weighted by ``rule_weight``.

    A rule that raises is a bug in that rule; one odd sentence must not end a long run, so
    the failure is counted (reported in the manifest as ``rule_errors``) and skipped.
    """
    rules = list(_RULES.get(code, ()))
    rules = weighted_sample(rules, {r: rule_weight(r) for r in rules}, len(rules), ctx.rng)
    for rule in rules:
        try:
            change = rule(doc, ctx)
        except Exception:  # counted and reported, see the docstring
            _RULE_ERRORS[f"{rule.__module__}.{rule.__name__}"] += 1
            continue
        if change is not None and change.text.strip() and change.text != doc.text:
            yield change.text, change.rule, {"span": list(change.span), "old": change.old, "new": change.new}


def _try_class(code: str, doc, ctx: Context) -> tuple[str, str, dict] | None:
    """The first rule of ``code`` (see ``_changes``) that applies, or None."""
    return next(_changes(code, doc, ctx), None)


def apply_class(code: str, doc, ctx: Context) -> tuple[str, str, dict] | None:
    """(text, rule, detail) of the first rule of class ``code`` that applies to a parsed text
    (rules tried in a random order weighted by ``rule_weight``, see ``_changes``), or None:
    the pretraining rules, for callers outside the generator (fine-tuning's contrast copies).
    Loads spaCy's rules and their lexical data on first use."""
    _init_resources()
    return _try_class(code, doc, ctx)


def parse(texts: list[str]) -> list:
    """spaCy parses of ``texts`` with the generator's pipeline (loaded once)."""
    _init_resources()
    return list(_NLP.pipe(texts))


def _make_nocontr(ref_index: int, others: list[int], docs: list, chain, on_ref: bool, config: SynthConfig, ctx: Context):
    """A NoContr gen: a real paraphrase (half of them rewritten once more), the ref's chain of
    rewrites (``chain``: its parsed text and rules, or None; ``on_ref``: made from the ref, not
    from a paraphrase), one rewrite of the ref, or a copy."""
    rng = ctx.rng
    roll = rng.random()
    if others and roll < config.nocontr_real_share:
        other = docs[rng.choice(others)]
        if rng.random() < 0.5:
            rewritten = _try_class("NoContr", other, ctx)
            if rewritten:
                return rewritten[0], "NoContr/paraphrase+" + rewritten[1].split("/", 1)[-1], rewritten[2] | {"base": "paraphrase", "base_text": other.text}
        return other.text, "NoContr/real_paraphrase", {"base": "paraphrase"}
    if roll > 1 - config.nocontr_copy_share:
        return docs[ref_index].text, "NoContr/copy", {"base": "ref"}
    if chain is not None and rng.random() < 0.8:
        return chain[0].text, "NoContr/chain", {"base": "ref" if on_ref else "paraphrase", "rules": chain[1]}
    rewritten = _try_class("NoContr", docs[ref_index], ctx)
    if rewritten:
        return rewritten[0], rewritten[1], rewritten[2] | {"base": "ref"}
    return None


def _work_chunk(task: tuple) -> tuple[list[Candidate], Counter, Counter]:
    """Worker: parse one chunk of groups and propose candidates: for each text, a weighted
    sample of classes, plus every ``harvest`` class (rare errors: all that every rule makes on
    every base, see ``_perturb``; the rules cost little next to parsing, so a text that can
    take a rare error gives all it can the first time it is parsed).

    Returns the candidates, how often each (source, class) was tried (so the main
    process can learn each success rate and plan the next round) and rule errors.
    """
    groups, weights, harvest, config, chunk_seed = task
    _init_resources()
    rng = random.Random(chunk_seed)
    docs_by_group = _parse_groups(groups)
    # OutofRef content comes from another group of the same source and split (same style,
    # no leak across splits): the chunk's groups of that source, indexed by group position.
    by_source: dict[str, list[int]] = {}
    for position, group in enumerate(groups):
        by_source.setdefault(group.source, []).append(position)

    candidates: list[Candidate] = []
    tried: Counter = Counter()
    codes = [code for code in CODES if weights.get(code, 0) > 0 and code not in harvest]
    paraphrases = [
        _paraphrases(group.source, group.texts, docs, config.min_paraphrase_overlap)
        for group, docs in zip(groups, docs_by_group, strict=True)
    ]
    # which refs take their errors on a divergent base: a real paraphrase or a chain of rewrites
    on_divergent = [[rng.random() < config.divergent_share for _ in group.texts] for group in groups]
    similarity = _Similarity()
    # a chain starts from the ref's least similar real paraphrase, or from the ref without one
    origins = [
        [min((docs[j] for j in others), key=lambda d: similarity(d.text, doc.text)) if others else doc
         for doc, others in zip(docs, close, strict=True)]
        for docs, close in zip(docs_by_group, paraphrases, strict=True)
    ]  # fmt: skip
    chains = _chains(
        [origin for starts, flags in zip(origins, on_divergent, strict=True)
         for origin, flag in zip(starts, flags, strict=True) if flag],
        rng, config.max_chain_rewrites,
    )  # fmt: skip
    for position, (group, docs) in enumerate(zip(groups, docs_by_group, strict=True)):
        ctx = Context(rng=rng, other_doc=_other_doc_picker(position, group.source, by_source, docs_by_group, rng))
        for ref_index, ref_text in enumerate(group.texts):
            others = paraphrases[position][ref_index]
            origin = origins[position][ref_index]
            chain = chains.get(origin.text)
            rewrite = chain[0] if chain else None
            # a chain on a paraphrase is a paraphrase: substitutions must hit words of the ref
            on_ref = origin is docs[ref_index]
            chosen = weighted_sample(codes, weights, config.classes_per_text, rng)
            bases = None
            for code in chosen + sorted(harvest):
                tried[(group.source, code)] += 1
                if code == "NoContr":
                    nocontr = _make_nocontr(ref_index, others, docs, chain, on_ref, config, ctx)
                    made = [nocontr] if nocontr else []
                else:
                    if bases is None:
                        divergent = on_divergent[position][ref_index]
                        bases = _bases(ref_index, others, docs, divergent, rewrite, similarity, config.divergent_chrf, ctx)
                    made = _perturb(code, bases, docs[ref_index], rewrite if on_ref else None, code in harvest, ctx)
                for gen, rule, detail in made:
                    if chain and detail.get("base_text") == rewrite.text:
                        detail["rules"] = chain[1]
                    if code == "NoContr":
                        detail["chrf"] = similarity(gen, ref_text)
                    else:
                        detail["base_chrf"] = similarity(detail.get("base_text", ref_text), ref_text)
                    candidates.append(Candidate(ref_text, gen, code, group.source, group.key, rule, json.dumps(detail)))
    errors = Counter(_RULE_ERRORS)
    _RULE_ERRORS.clear()
    return candidates, tried, errors


def _parse_groups(groups: list[Group]) -> list[list]:
    """The parsed texts of each group. A text that joins other texts of its group (a SQuAD
    passage) is built from their parses (spaCy ``Doc.from_docs``): passages repeat each
    sentence up to nine times, and parsing them again took most of SQuAD's parse time."""
    from spacy.tokens import Doc

    plain = [text for group in groups for i, text in enumerate(group.texts) if i not in group.parts]
    parsed = iter(list(_NLP.pipe(plain, batch_size=128)))
    docs_by_group = []
    for group in groups:
        docs = [None if i in group.parts else next(parsed) for i in range(len(group.texts))]
        for i, run in group.parts.items():
            joined = Doc.from_docs([docs[j] for j in run])
            docs[i] = joined if joined.text == group.texts[i] else _NLP(group.texts[i])
        docs_by_group.append(docs)
    return docs_by_group


def _chains(docs: list, rng: random.Random, max_rewrites: int) -> dict[str, tuple]:
    """Text -> (parsed chain of rewrites, its rules) for these texts (the origins of refs that
    take their errors on a divergent base); see ``synth.chains``.

    Word-level rewrites barely move chrF, so a chain stacks clause-level ones first: one
    (voice or adverbial place) where one applies, then on its parse a second of another
    family where one applies, then word-level ones on the last parse up to ``max_rewrites``
    in all. Each stage parses its outputs in one batch: spaCy parses a batch several times
    faster per text than one text at a time.
    """
    ctx = Context(rng=rng)
    current = {doc.text: (doc, []) for doc in docs}  # origin text -> (latest parse, rules)
    for _ in range(2):  # clause-level stages
        moved = {}
        for text, (doc, rules) in current.items():
            done = {family(r) for r in rules}
            step = next((c for c in _changes("NoContr", doc, ctx) if c[1] in STRUCTURAL and family(c[1]) not in done), None)
            if step is not None:
                moved[text] = (step[0], rules + [step[1]])
        parsed = _NLP.pipe([new for new, _ in moved.values()], batch_size=128)
        for (text, (_, rules)), doc in zip(moved.items(), parsed, strict=True):
            current[text] = (doc, rules)
    finals = {}
    for text, (base, rules) in current.items():
        # two passes over the rules: a repeatable family (synonyms) may edit a second word
        changes = list(itertools.chain(_changes("NoContr", base, ctx), _changes("NoContr", base, ctx)))
        edits = local_edits(changes, {family(r) for r in rules}, max_rewrites - len(rules))
        new = combine(base.text, [edit[:3] for edit in edits]) if edits else base.text
        if new != text:
            finals[text] = (new, rules + [edit[3] for edit in edits])
    parsed_finals = _NLP.pipe([new for new, _ in finals.values()], batch_size=128)
    return {text: (doc, rules) for (text, (_, rules)), doc in zip(finals.items(), parsed_finals, strict=True)}


class _Similarity:
    """Sentence chrF of a text to its reference, cached: a base serves several classes."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str, str], float] = {}

    def __call__(self, text: str, ref: str) -> float:
        if text == ref:
            return 1.0
        key = (text, ref)
        if key not in self.cache:
            self.cache[key] = chrf(text, ref)
        return self.cache[key]


CONTENT_POS = frozenset(("NOUN", "PROPN", "VERB", "ADJ", "NUM"))
DETAIL_POS = frozenset(("NOUN", "PROPN", "ADJ", "NUM"))


def _paraphrases(source: str, texts: list[str], docs: list, min_overlap: float) -> list[list[int]]:
    """For each text of a group, the other texts that paraphrase it.

    WebNLG lexicalisations of one triple set state the same facts, and so do SICK sentences
    that people judged to entail each other both ways: all count. Captions of
    one image mostly describe different details ("a sailboat in the water at sunrise" / "a
    sailboat in the water"), so two count only when they name the same things and qualities
    (equal noun, adjective and number lemmas) and share enough content lemmas (Jaccard).
    Sentences of one SQuAD paragraph are no paraphrases at all.
    """
    if source not in PARAPHRASE_SOURCES:
        return [[] for _ in docs]
    if source in SAME_MEANING_SOURCES:
        return [[j for j in range(len(texts)) if texts[j] != texts[i]] for i in range(len(texts))]
    content = [{t.lemma_.lower() for t in doc if t.pos_ in CONTENT_POS and not t.is_stop} for doc in docs]
    details = [{t.lemma_.lower() for t in doc if t.pos_ in DETAIL_POS and not t.is_stop} for doc in docs]
    result = []
    for i, words in enumerate(content):
        close = []
        for j, other in enumerate(content):
            union = words | other
            if (
                texts[j] != texts[i]
                and details[j] == details[i]
                and union
                and len(words & other) / len(union) >= min_overlap
            ):
                close.append(j)
        result.append(close)
    return result


def _other_doc_picker(position: int, source: str, by_source: dict, docs_by_group: list, rng: random.Random):
    """A callable returning a parsed text of another group, same source if the chunk has one."""
    positions = [p for p in by_source[source] if p != position] or [
        p for p in range(len(docs_by_group)) if p != position
    ]

    def pick():
        return rng.choice(docs_by_group[rng.choice(positions)]) if positions else None

    return pick


def _bases(ref_index: int, others: list[int], docs: list, divergent: bool, rewrite, similarity, max_chrf: float, ctx: Context) -> list:
    """The texts to apply an error to, in order of preference.

    A ref that takes its errors on a divergent base puts its real paraphrases and ``rewrite``
    (its parsed chain of rewrites; None when none applies) first: those below ``max_chrf`` to
    the ref in random order, then the others from the least similar. When those offer no
    place for the error, the ref follows: rare classes (event order, questions) then still
    find a base.
    """
    others = list(others)
    ctx.rng.shuffle(others)
    paraphrases = [docs[i] for i in others]
    ref = docs[ref_index]
    if not divergent:
        return [ref, *paraphrases]
    candidates = paraphrases + ([rewrite] if rewrite is not None else [])
    ctx.rng.shuffle(candidates)
    scored = [(similarity(doc.text, ref.text), k, doc) for k, doc in enumerate(candidates)]
    low = [doc for score, _, doc in scored if score < max_chrf]
    high = [doc for _, _, doc in sorted((item for item in scored if item[0] >= max_chrf), key=lambda item: item[:2])]
    return [*low, *high, ref]


def _perturb(code: str, bases: list, ref, rewrite, harvest: bool, ctx: Context) -> list[tuple[str, str, dict]]:
    """Errors of class ``code``: one, on the first of ``bases`` that takes one; or with
    ``harvest`` one per rule that applies on every base (for classes whose few possible texts
    must each give all they can).

    A substitution on a real paraphrase counts only when the replaced words also occur in the
    reference ``ref``: "a yellow cat" -> "a red cat" is no AttrErr against a ref without
    "yellow". On ``rewrite`` (the ref's meaning-preserving rewrite) it always counts: the
    rewrite means the same ('4' -> 'four' -> 'six'). Rules pick their site at random, so on a
    paraphrase each rule gets ``PARAPHRASE_DRAWS`` draws to hit words the two texts share
    (names, numbers, places) before the next base is tried. A harvested class takes the ref
    itself only when no divergent base took the error.
    """
    ref_text = ref.text.lower()
    made = []
    for base in bases:
        kind = "ref" if base is ref else "rewrite" if base is rewrite else "paraphrase"
        if kind == "ref" and made:
            break  # a harvested class that found a divergent base keeps it
        checked = kind == "paraphrase" and code in SUBSTITUTION_CLASSES
        draws = PARAPHRASE_DRAWS if checked else 1
        for gen, rule, detail in itertools.chain.from_iterable(_changes(code, base, ctx) for _ in range(draws)):
            if not checked or holds_against_reference(code, detail["old"], ref_text):
                made.append((gen, rule, detail | {"base": kind} | ({"base_text": base.text} if kind != "ref" else {})))
                if not harvest:
                    return made
    return made


def holds_against_reference(code: str, old: str, reference: str) -> bool:
    """Whether a change of class ``code`` that replaced ``old`` in a text other than the
    reference is that error relative to the reference: a substitution only when the replaced
    words occur in the reference ("a yellow cat" -> "a red cat" is no AttrErr against a
    reference without "yellow"); any other class always."""
    if code not in SUBSTITUTION_CLASSES:
        return True
    old = old.strip().lower()
    return bool(old) and old in reference.lower()


def weighted_sample(items: list, weights: dict, k: int, rng: random.Random) -> list:
    """k distinct items drawn with probability proportional to weight (Efraimidis–Spirakis)."""
    keyed = sorted(items, key=lambda c: rng.random() ** (1.0 / weights[c]), reverse=True)
    return keyed[:k]


@dataclass
class Quotas:
    """How many pairs each (split, class) still needs and how many each source may still give."""

    need: dict[tuple[str, str], int]
    source_left: dict[str, int]
    seen: set[tuple[str, str]] = field(default_factory=set)
    quota: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.quota = self.quota or dict(self.need)

    @classmethod
    def for_config(cls, config: SynthConfig) -> Quotas:
        per_class = [config.num_pairs // len(CODES)] * len(CODES)
        for i in range(config.num_pairs - sum(per_class)):
            per_class[i] += 1
        need = {}
        for code, total in zip(CODES, per_class, strict=True):
            val = round(total * config.val_fraction)
            need[("train", code)] = total - val
            need[("val", code)] = val
        cap = int(config.max_source_share * config.num_pairs)
        return cls(need, dict.fromkeys(config.source_weights, cap))

    def accept(self, split: str, candidate: Candidate) -> bool:
        key = (split, candidate.label)
        pair = (candidate.ref, candidate.gen)
        if self.need[key] <= 0 or self.source_left.get(candidate.source, 0) <= 0 or pair in self.seen:
            return False
        self.seen.add(pair)
        self.need[key] -= 1
        self.source_left[candidate.source] -= 1
        return True

    def open_in(self, split: str) -> dict[str, int]:
        return {code: self.need[(split, code)] for code in CODES if self.need[(split, code)] > 0}

    def still_open(self) -> dict[str, int]:
        """Class -> pairs it still needs, both splits together (only classes that need some)."""
        totals = {code: self.need[("train", code)] + self.need[("val", code)] for code in CODES}
        return {code: need for code, need in totals.items() if need > 0}

    def close_nearly_full(self, split: str, tolerance: float) -> int:
        """When every open class of ``split`` holds at least (1 - tolerance) of its quota,
        close them and share what they still need among the full classes; returns the pairs
        moved (0 when some open class is further behind, or none is open)."""
        open_classes = self.open_in(split)
        full = [code for code in CODES if code not in open_classes]
        if not open_classes or not full:
            return 0
        if any(need > tolerance * self.quota[(split, code)] for code, need in open_classes.items()):
            return 0
        moved = sum(open_classes.values())
        for code in open_classes:
            self.need[(split, code)] = 0
        for i, code in enumerate(full):
            self.need[(split, code)] += moved // len(full) + (i < moved % len(full))
        return moved


class GroupQueue:
    """Groups of one (split, source) in seeded random order, reshuffled when used up."""

    def __init__(self, groups: list[Group], rng: random.Random) -> None:
        self.groups, self.rng, self.position = list(groups), rng, 0
        self.rng.shuffle(self.groups)

    def take(self, texts: int, keep: Callable[[Group], bool] | None = None) -> list[Group]:
        """Next groups holding about ``texts`` texts; with ``keep``, only groups it accepts
        (the others are passed over; a whole pass with none accepted ends the take)."""
        taken, count, passed = [], 0, 0
        while self.groups and count < texts and passed < len(self.groups):
            if self.position == len(self.groups):
                self.rng.shuffle(self.groups)
                self.position = 0
            group = self.groups[self.position]
            self.position += 1
            if keep is not None and not keep(group):
                passed += 1
                continue
            passed = 0
            taken.append(group)
            count += len(group.texts)
        return taken


def _screen(open_classes: dict[str, int], screens: dict[str, re.Pattern]) -> Callable[[Group], bool] | None:
    """Keep groups with a text that some open class's screen matches; None (keep all) while any
    open class has no screen."""
    patterns = [screens.get(code) for code in open_classes]
    if not patterns or None in patterns:
        return None
    return lambda group: any(pattern.search(text) for pattern in patterns for text in group.texts)


def _chunks(groups: list[Group], texts_per_chunk: int) -> list[list[Group]]:
    chunks, current, size = [], [], 0
    for group in groups:
        current.append(group)
        size += len(group.texts)
        if size >= texts_per_chunk:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


def generate(config: SynthConfig, corpus: Corpus | None = None, progress=None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Build (train, val, manifest) in memory; see ``write`` for the files.

    Each round sends every source texts in proportion to its weight times how much of the
    open need it can serve (from the success rates seen so far), and each chunk's worker
    weights classes by need over that source's success rate: late rounds then parse only
    texts that can still fill a quota (SQuAD questions for QuestErr, say). When every open
    class has a screen (``synth.perturb.load_screens``), only groups with a matching text
    are parsed at all.
    """
    from mismatch_core.resources import data_dir

    started = time.perf_counter()
    corpus = corpus or load_corpus(data_dir())
    groups: dict[tuple[str, str], list[Group]] = {
        (split, source): [] for split in ("train", "val") for source in config.source_weights
    }
    for group in corpus.groups:
        if group.source in config.source_weights:
            groups[(split_of(group.key, config.seed, config.val_fraction), group.source)].append(group)
    queues = {key: GroupQueue(value, random.Random(hash_seed(config.seed, *key))) for key, value in groups.items()}
    quotas = Quotas.for_config(config)
    accepted: dict[str, list[Candidate]] = {"train": [], "val": []}
    attempts: Counter = Counter()  # (source, class) -> tries
    successes: Counter = Counter()  # (source, class) -> candidates made
    rounds = []
    rule_errors: Counter = Counter()
    screens = load_screens()

    _init_resources()
    context = multiprocessing.get_context("fork")
    with context.Pool(config.processes, initializer=own_wordnet_files) as pool:
        for round_index in range(config.max_rounds):
            round_started = time.perf_counter()
            tasks, task_splits, harvested = [], [], set()
            for split in ("train", "val"):
                open_classes = quotas.open_in(split)
                if not open_classes:
                    continue
                harvest = _harvest_classes(open_classes, attempts, successes, screens, config)
                harvested |= harvest
                plan = _plan_round(open_classes, harvest, quotas, attempts, successes, config)
                keep = _screen(open_classes, screens)
                for source, (texts, weights) in plan.items():
                    # at least one chunk per process, so small late rounds still use every core
                    chunk_texts = max(min(config.texts_per_chunk, texts // config.processes), 50)
                    for chunk in _chunks(queues[(split, source)].take(texts, keep), chunk_texts):
                        seed = hash_seed(config.seed, split, round_index, len(tasks))
                        tasks.append((chunk, weights, harvest, config, seed))
                        task_splits.append(split)
            if not tasks:
                break
            need_at_start = sum(sum(quotas.open_in(split).values()) for split in ("train", "val"))
            made = kept = 0
            for split, (candidates, tried, errors) in zip(task_splits, pool.imap(_work_chunk, tasks), strict=True):
                attempts.update(tried)
                rule_errors.update(errors)
                for candidate in candidates:
                    made += 1
                    if quotas.accept(split, candidate):  # rates count accepted pairs: duplicates
                        successes[(candidate.source, candidate.label)] += 1  # of used texts don't
                        accepted[split].append(candidate)
                        kept += 1
                if progress:
                    progress(sum(len(v) for v in accepted.values()))
            texts = sum(len(g.texts) for task in tasks for g in task[0])
            rounds.append(
                {"texts": texts, "candidates": made, "accepted": kept, "harvest": sorted(harvested),
                 "seconds": round(time.perf_counter() - round_started, 1),
                 "still_open": quotas.still_open()}
            )  # fmt: skip
            if kept < need_at_start / 2:
                moved = sum(quotas.close_nearly_full(split, config.balance_tolerance) for split in ("train", "val"))
                if moved:
                    rounds[-1]["moved_to_full_classes"] = moved
                    continue
            if kept == 0 or kept < config.min_round_yield * need_at_start:
                break  # what is still open cannot be made (at a useful rate) from these corpora
    frames = {split: _frame(split, rows) for split, rows in accepted.items()}
    manifest = _manifest(config, corpus, frames, time.perf_counter() - started)
    manifest["rounds"] = rounds
    manifest["shortfall"] = quotas.still_open()
    manifest["rule_errors"] = dict(rule_errors)
    return frames["train"], frames["val"], manifest


def _best_rate(code: str, attempts: Counter, successes: Counter, config: SynthConfig) -> float:
    """The class's success rate on its best source so far (1/2 before any try)."""
    return max((successes[(s, code)] + 1) / (attempts[(s, code)] + 2) for s in config.source_weights)


def _harvest_classes(
    open_classes: dict[str, int], attempts: Counter, successes: Counter, screens: dict, config: SynthConfig
) -> frozenset[str]:
    """Open classes to try on every text: those with a screen (few texts can take them: event
    order) and those that, after 200 tries, succeed on fewer than ``scarce_rate`` of the texts
    of every source (their best source's rate is below it)."""
    return frozenset(
        code
        for code in open_classes
        if code in screens
        or (
            sum(attempts[(s, code)] for s in config.source_weights) >= 200
            and _best_rate(code, attempts, successes, config) < config.scarce_rate
        )
    )


def _plan_round(
    open_classes: dict[str, int],
    harvest: frozenset[str],
    quotas: Quotas,
    attempts: Counter,
    successes: Counter,
    config: SynthConfig,
) -> dict[str, tuple[int, dict[str, float]]]:
    """source -> (texts to parse this round, attempt weights of the sampled classes there)."""
    total_need = sum(open_classes.values())
    budget = 0.0  # texts to parse: each class's need over its best success rate so far
    for code, need in open_classes.items():
        tried_on = 1 if code in harvest else config.classes_per_text  # of each text's tries
        budget += need / max(_best_rate(code, attempts, successes, config), 0.02) / tried_on
    budget = min(budget * 1.2, MAX_ROUND_TEXTS)
    shares: dict[str, tuple[float, dict[str, float]]] = {}
    for source, weight in config.source_weights.items():
        if quotas.source_left.get(source, 0) <= 0:
            continue
        class_weights, servable = {}, 0
        for code, need in open_classes.items():
            tries = attempts[(source, code)]
            rate = (successes[(source, code)] + 1) / (tries + 2)
            if tries >= 50 and rate < 0.01:
                continue  # this source cannot make this class (statements for QuestErr)
            if code not in harvest:
                class_weights[code] = need / max(rate, 0.02)
            servable += need
        if servable:
            norm = sum(class_weights.values())
            normalised = {code: w / norm * len(class_weights) for code, w in class_weights.items()} if norm else {}
            shares[source] = (weight * servable / total_need, normalised)
    share_total = sum(share for share, _ in shares.values()) or 1.0
    return {
        source: (max(int(budget * share / share_total), MIN_ROUND_TEXTS), weights)
        for source, (share, weights) in shares.items()
    }


def hash_seed(*parts) -> int:
    """A 64-bit seed from any parts, stable across processes (unlike hash())."""
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def _frame(split: str, rows: list[Candidate]) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(row) for row in rows], columns=list(Candidate.__dataclass_fields__))
    frame.insert(0, "id", [f"{split}-{i:07d}" for i in range(len(frame))])
    frame["label_id"] = frame["label"].map(index_of).astype("int64")
    return frame[list(SYNTH_COLUMNS)]


def _manifest(config: SynthConfig, corpus: Corpus, frames: dict[str, pd.DataFrame], seconds: float) -> dict:
    both = pd.concat(frames.values(), ignore_index=True)
    total = len(both)
    train_groups = set(frames["train"]["group"])
    return {
        "num_pairs": total,
        "seed": config.seed,
        "config": asdict(config),
        "splits": {s: len(f) for s, f in frames.items()},
        "per_class": {code: int((both["label"] == code).sum()) for code in CODES},
        "per_source": both["source"].value_counts().to_dict(),
        "per_source_share": (both["source"].value_counts() / max(total, 1)).round(4).to_dict(),
        "per_rule": both["rule"].value_counts().to_dict(),
        "paraphrase_based": int(both["detail"].str.contains('"base": "(?:paraphrase|rewrite)"').sum()),
        "divergence": _divergence(both, config.divergent_chrf),
        "groups_in_both_splits": len(train_groups & set(frames["val"]["group"])),
        "corpus_sha256": corpus.sha256,
        "excluded_for_human_overlap": {
            "groups": dict(corpus.excluded_groups),
            "texts": dict(corpus.excluded_texts),
        },
        "seconds": round(seconds, 1),
        "pairs_per_second": round(total / seconds, 1) if seconds else None,
    }


def _divergence(both: pd.DataFrame, threshold: float) -> dict:
    """How far error bases and NoContr gens are from their references (sentence chrF): the share
    below ``threshold``, quantiles, the per-class share, and the kinds of base used."""
    details = both["detail"].map(json.loads)
    errors = both["label"] != "NoContr"
    base = details[errors].map(lambda d: d["base_chrf"])
    gen = details[~errors].map(lambda d: d["chrf"])
    quantiles = (0.1, 0.25, 0.5, 0.75, 0.9)

    def summary(values: pd.Series) -> dict:
        if values.empty:
            return {"pairs": 0}
        return {
            "pairs": int(len(values)),
            f"share_below_{threshold:g}": round(float((values < threshold).mean()), 4),
            "quantiles": {f"{q:g}": round(float(values.quantile(q)), 4) for q in quantiles},
        }

    labels = both.loc[errors, "label"]
    return {
        "error_base_chrf": summary(base),
        "error_base_chrf_per_class": {
            code: round(float((base[labels == code] < threshold).mean()), 4) for code in CODES[1:] if (labels == code).any()
        },
        "error_base_kinds": details[errors].map(lambda d: d.get("base", "ref")).value_counts().to_dict(),
        "nocontr_gen_chrf": summary(gen),
    }


def write(out_dir: Path, train: pd.DataFrame, val: pd.DataFrame, manifest: dict) -> None:
    """Write train/val parquet and manifest.json atomically (temp file, then rename)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in (("train.parquet", train), ("val.parquet", val)):
        temp = out_dir / f".{name}.tmp"
        frame.to_parquet(temp, index=False)
        temp.replace(out_dir / name)
    temp = out_dir / ".manifest.json.tmp"
    temp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    temp.replace(out_dir / "manifest.json")
