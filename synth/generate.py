"""Generate balanced synthetic mismatch pairs from the grouped reference corpora.

The work runs in rounds. Each round hands chunks of groups (one split at a time) to worker
processes with the current per-class attempt weights; a worker parses its texts with
spaCy once and, for each reference, tries a few classes, each by its rules in random
order, on the reference itself or on a base that already differs from it harmlessly: a real
paraphrase (another text of the same group) or a chain of meaning-preserving rewrites
(``synth.chains``). The main process accepts candidates until every (split, class) quota is met and
no source exceeds its share. Rounds, chunks and RNG seeds are fixed up front, so the same
seed gives identical output whatever the timing and the number of the workers.

This module runs the rounds and the worker pool; the settings are ``synth.config``, quotas and
round planning ``synth.quotas``, what a reference is paired with ``synth.pairing``, rule
application ``synth.rules`` and the frames, manifest and files ``synth.output``.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable

import pandas as pd
from spacy.tokens import Doc

from mismatch_core.resources import load_spacy
from mismatch_core.taxonomy import CODES
from mismatch_core.workers import start_worker
from synth.chains import build_chains
from synth.config import SynthConfig
from synth.corpora import SOURCES, Corpus, Group, load_corpus, split_of
from synth.output import Candidate, build_manifest, pair_frame
from synth.pairing import Similarity, error_bases, group_paraphrases, make_errors, make_nocontr
from synth.perturb import Context, load_screens
from synth.quotas import Quotas, harvest_classes, plan_round
from synth.rules import Edit, shared_rules, weighted_sample

# A worker's task: a chunk of groups of one split, the attempt weights of the sampled classes,
# the harvested classes, the settings and the chunk's RNG seed.
Task = tuple[list[Group], dict[str, float], frozenset[str], SynthConfig, int]

# A source's texts of a round come in at least this many chunks (of 50 texts or more), so small
# late rounds keep two workers busy; a constant, not `processes`, since each chunk has its own
# RNG seed: the pairs must not depend on how many workers make them.
MIN_CHUNKS = 2


def _preload() -> None:
    """Load spaCy, the rules and the lazily loaded data they use (WordNet, a few seconds;
    lemminflect's tables) once in the parent, so forked workers share them instead of each
    loading its own."""
    from lemminflect import getAllLemmas

    from mismatch_core.resources import wordnet

    load_spacy()
    shared_rules()
    wordnet().synsets("dog")
    getAllLemmas("dogs")


def _work_chunk(task: Task) -> tuple[list[Candidate], Counter[tuple[str, str]], Counter[str]]:
    """Worker: parse one chunk of groups and propose candidates: for each text, a weighted
    sample of classes, plus every ``harvest`` class (rare errors: all that every rule makes on
    every base, see ``synth.pairing.make_errors``; the rules cost little next to parsing, so a
    text that can take a rare error gives all it can the first time it is parsed).

    Returns the candidates, how often each (source, class) was tried (so the main
    process can learn each success rate and plan the next round) and rule errors.
    """
    groups, weights, harvest, config, chunk_seed = task
    rules = shared_rules()
    rng = random.Random(chunk_seed)
    docs_by_group = _parse_groups(groups)
    # OutofRef content comes from another group of the same source and split (same style,
    # no leak across splits): the chunk's groups of that source, indexed by group position.
    by_source: dict[str, list[int]] = {}
    for position, group in enumerate(groups):
        by_source.setdefault(group.source, []).append(position)

    candidates: list[Candidate] = []
    tried: Counter[tuple[str, str]] = Counter()
    codes = [code for code in CODES if weights.get(code, 0) > 0 and code not in harvest]
    paraphrases = [
        group_paraphrases(group.source, group.texts, docs, config.min_paraphrase_overlap)
        for group, docs in zip(groups, docs_by_group, strict=True)
    ]
    # which refs take their errors on a divergent base: a real paraphrase or a chain of rewrites
    on_divergent = [[rng.random() < config.divergent_share for _ in group.texts] for group in groups]
    similarity = Similarity()
    # a chain starts from the ref's least similar real paraphrase, or from the ref without one
    origins = [
        [min((docs[j] for j in others), key=lambda d: similarity(d.text, doc.text)) if others else doc
         for doc, others in zip(docs, close, strict=True)]
        for docs, close in zip(docs_by_group, paraphrases, strict=True)
    ]  # fmt: skip
    chains = build_chains(
        [origin for starts, flags in zip(origins, on_divergent, strict=True)
         for origin, flag in zip(starts, flags, strict=True) if flag],
        rng, config.max_chain_rewrites, rules,
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
            bases: list[Doc] | None = None
            for code in chosen + sorted(harvest):
                tried[(group.source, code)] += 1
                if code == "NoContr":
                    nocontr = make_nocontr(ref_index, others, docs, chain, on_ref, config, rules, ctx)
                    made: list[Edit] = [nocontr] if nocontr else []
                else:
                    if bases is None:
                        divergent = on_divergent[position][ref_index]
                        bases = error_bases(ref_index, others, docs, divergent, rewrite, similarity, config.divergent_chrf, ctx)
                    made = make_errors(code, bases, docs[ref_index], rewrite if on_ref else None, code in harvest, rules, ctx)
                for gen, rule, detail in made:
                    if chain is not None and detail.get("base_text") == chain[0].text:
                        detail["rules"] = chain[1]
                    if code == "NoContr":
                        detail["chrf"] = similarity(gen, ref_text)
                    else:
                        detail["base_chrf"] = similarity(detail.get("base_text", ref_text), ref_text)
                    candidates.append(Candidate(ref_text, gen, code, group.source, group.key, rule, json.dumps(detail)))
    errors = Counter(rules.errors)
    rules.errors.clear()
    return candidates, tried, errors


def _parse_groups(groups: list[Group]) -> list[list[Doc]]:
    """The parsed texts of each group. A text that joins other texts of its group (a SQuAD
    passage) is built from their parses (spaCy ``Doc.from_docs``): passages repeat each
    sentence up to nine times, and parsing them again took most of SQuAD's parse time."""
    plain = [text for group in groups for i, text in enumerate(group.texts) if i not in group.parts]
    nlp = load_spacy()
    parsed = iter(list(nlp.pipe(plain, batch_size=128)))
    docs_by_group = []
    for group in groups:
        docs = {i: next(parsed) for i in range(len(group.texts)) if i not in group.parts}
        for i, run in group.parts.items():
            joined = Doc.from_docs([docs[j] for j in run])
            docs[i] = joined if joined.text == group.texts[i] else nlp(group.texts[i])
        docs_by_group.append([docs[i] for i in range(len(group.texts))])
    return docs_by_group


def _other_doc_picker(
    position: int, source: str, by_source: dict[str, list[int]], docs_by_group: list[list[Doc]], rng: random.Random
) -> Callable[[], Doc | None]:
    """A callable returning a parsed text of another group, same source if the chunk has one."""
    positions = [p for p in by_source[source] if p != position] or [
        p for p in range(len(docs_by_group)) if p != position
    ]

    def pick() -> Doc | None:
        return rng.choice(docs_by_group[rng.choice(positions)]) if positions else None

    return pick


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
    patterns = [screens[code] for code in open_classes if code in screens]
    if not patterns or len(patterns) < len(open_classes):
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


def generate(
    config: SynthConfig, corpus: Corpus | None = None, progress: Callable[[int], None] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Build (train, val, manifest) in memory; see ``synth.output.write`` for the files.

    Each round sends every source texts in proportion to its weight times how much of the
    open need it can serve (from the success rates seen so far), and each chunk's worker
    weights classes by need over that source's success rate: late rounds then parse only
    texts that can still fill a quota (SQuAD questions for QuestErr, say). When every open
    class has a screen (``synth.perturb.load_screens``), only groups with a matching text
    are parsed at all.
    """
    from mismatch_core.resources import data_dir

    started = time.perf_counter()
    # the sources the config draws from, in their fixed order (a user's config may leave some out)
    sources = tuple(source for source in SOURCES if source in config.source_weights)
    corpus = corpus or load_corpus(data_dir(), sources)
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

    _preload()
    context = multiprocessing.get_context("fork")
    with context.Pool(config.processes, start_worker, (os.getpid(),)) as pool:
        for round_index in range(config.max_rounds):
            round_started = time.perf_counter()
            tasks: list[Task] = []
            task_splits: list[str] = []
            harvested: set[str] = set()
            for split in ("train", "val"):
                open_classes = quotas.open_in(split)
                if not open_classes:
                    continue
                harvest = harvest_classes(open_classes, attempts, successes, screens, config)
                harvested |= harvest
                plan = plan_round(open_classes, harvest, quotas, attempts, successes, config)
                keep = _screen(open_classes, screens)
                for source, (texts, weights) in plan.items():
                    chunk_texts = max(min(config.texts_per_chunk, texts // MIN_CHUNKS), 50)
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
    frames = {split: pair_frame(split, rows) for split, rows in accepted.items()}
    manifest = build_manifest(config, corpus, frames, time.perf_counter() - started)
    manifest["rounds"] = rounds
    manifest["shortfall"] = quotas.still_open()
    manifest["rule_errors"] = dict(rule_errors)
    return frames["train"], frames["val"], manifest


def hash_seed(*parts: object) -> int:
    """A 64-bit seed from any parts, stable across processes (unlike hash())."""
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")

