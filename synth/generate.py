"""Generate balanced synthetic mismatch pairs from the grouped reference corpora.

The work runs in rounds. Each round hands chunks of groups (one split at a time) to worker
processes with the current per-class attempt weights; a worker parses its texts with
spaCy once and, for each reference, tries a few classes, each by its rules in random
order, on the reference itself or on a real paraphrase of it (another text of the same
group). The main process accepts candidates until every (split, class) quota is met and
no source exceeds its share. Rounds, chunks and RNG seeds are fixed up front, so the same
seed gives identical output whatever the timing of the workers.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from synth.corpora import Corpus, Group, by_source, load_corpus, split_of
from synth.perturb import Context, load_rules
from synth.taxonomy import CODES, index_of

COLUMNS = ("id", "ref", "gen", "label", "label_id", "source", "group", "rule", "detail")


@dataclass
class SynthConfig:
    """Knobs of the generator; configs/synth.yaml holds the defaults used for the shipped data."""

    num_pairs: int = 200_000
    seed: int = 13
    val_fraction: float = 0.2
    # share of error pairs whose error is applied to a real paraphrase of the reference
    paraphrase_share: float = 0.35
    # NoContr mix: real paraphrase / meaning-preserving rewrite / verbatim copy
    nocontr_real_share: float = 0.5
    nocontr_copy_share: float = 0.05
    # share of references drawn from each source (before quotas); none may end above max
    source_weights: dict[str, float] = field(
        default_factory=lambda: {"multi30k": 0.36, "webnlg": 0.26, "coco": 0.2, "squad": 0.18}
    )
    max_source_share: float = 0.4
    classes_per_text: int = 3
    texts_per_chunk: int = 600
    processes: int = 2
    max_rounds: int = 40


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


def _init_resources() -> None:
    global _NLP, _RULES
    if _NLP is None:
        from evaluator.resources import load_spacy

        _NLP = load_spacy()
        _RULES = load_rules()


def _try_class(code: str, doc, ctx: Context) -> tuple[str, str, dict] | None:
    """Apply the first rule of ``code`` (in random order) that applies to ``doc``."""
    rules = list(_RULES.get(code, ()))
    ctx.rng.shuffle(rules)
    for rule in rules:
        change = rule(doc, ctx)
        if change is not None and change.text.strip() and change.text != doc.text:
            return change.text, change.rule, {"span": list(change.span), "old": change.old, "new": change.new}
    return None


def _make_nocontr(ref_index: int, docs: list, config: SynthConfig, ctx: Context):
    """A NoContr gen: a real paraphrase, a rewrite of the ref or of a paraphrase, or a copy."""
    rng = ctx.rng
    others = [i for i in range(len(docs)) if i != ref_index and docs[i].text != docs[ref_index].text]
    roll = rng.random()
    if others and roll < config.nocontr_real_share:
        other = docs[rng.choice(others)]
        if rng.random() < 0.5:
            rewritten = _try_class("NoContr", other, ctx)
            if rewritten:
                return rewritten[0], "NoContr/paraphrase+" + rewritten[1].split("/", 1)[-1], rewritten[2] | {"base": "paraphrase"}
        return other.text, "NoContr/real_paraphrase", {"base": "paraphrase"}
    if roll > 1 - config.nocontr_copy_share:
        return docs[ref_index].text, "NoContr/copy", {"base": "ref"}
    rewritten = _try_class("NoContr", docs[ref_index], ctx)
    if rewritten:
        return rewritten[0], rewritten[1], rewritten[2] | {"base": "ref"}
    return None


def _work_chunk(task: tuple) -> tuple[list[Candidate], Counter]:
    """Worker: parse one chunk of groups, propose candidates for weighted classes.

    Returns the candidates and how often each class was tried, so the main process can
    learn each class's success rate and weight the next round.
    """
    groups, weights, config, chunk_seed = task
    _init_resources()
    rng = random.Random(chunk_seed)
    texts = [text for group in groups for text in group.texts]
    parsed = iter(list(_NLP.pipe(texts, batch_size=128)))
    docs_by_group = [[next(parsed) for _ in group.texts] for group in groups]
    same_source: dict[str, list[str]] = {}
    for group in groups:
        same_source.setdefault(group.source, []).extend(group.texts)

    candidates: list[Candidate] = []
    tried: Counter = Counter()
    codes = [code for code in CODES if weights.get(code, 0) > 0]
    for group, docs in zip(groups, docs_by_group, strict=True):
        pool = [t for t in same_source[group.source] if t not in group.texts] or texts
        ctx = Context(rng=rng, other_text=lambda pool=pool: rng.choice(pool))
        for ref_index, ref_doc in enumerate(docs):
            chosen = _weighted_sample(codes, weights, config.classes_per_text, rng)
            for code in chosen:
                tried[code] += 1
                if code == "NoContr":
                    made = _make_nocontr(ref_index, docs, config, ctx)
                else:
                    made = _perturb(code, ref_index, docs, config, ctx)
                if made is None:
                    continue
                gen, rule, detail = made
                candidates.append(
                    Candidate(ref_doc.text, gen, code, group.source, group.key, rule, json.dumps(detail))
                )
    return candidates, tried


def _perturb(code: str, ref_index: int, docs: list, config: SynthConfig, ctx: Context):
    """An error of class ``code`` applied to a paraphrase (in a share of pairs) or to the ref."""
    others = [i for i in range(len(docs)) if i != ref_index]
    if others and ctx.rng.random() < config.paraphrase_share:
        made = _try_class(code, docs[ctx.rng.choice(others)], ctx)
        if made:
            return made[0], made[1], made[2] | {"base": "paraphrase"}
    made = _try_class(code, docs[ref_index], ctx)
    if made:
        return made[0], made[1], made[2] | {"base": "ref"}
    return None


def _weighted_sample(codes: list[str], weights: dict[str, float], k: int, rng: random.Random) -> list[str]:
    """k distinct codes drawn with probability proportional to weight (Efraimidis–Spirakis)."""
    keyed = sorted(codes, key=lambda c: rng.random() ** (1.0 / weights[c]), reverse=True)
    return keyed[:k]


@dataclass
class Quotas:
    """How many pairs each (split, class) still needs and how many each source may still give."""

    need: dict[tuple[str, str], int]
    source_left: dict[str, int]
    seen: set[tuple[str, str]] = field(default_factory=set)

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


def _interleave_groups(groups: list[Group], weights: dict[str, float], rng: random.Random) -> list[Group]:
    """Shuffle groups within each source, then interleave sources so texts follow the weights."""
    pools = by_source(groups)
    for pool in pools.values():
        rng.shuffle(pool)
    order: list[Group] = []
    drawn = Counter()
    positions = dict.fromkeys(pools, 0)
    while any(positions[s] < len(pools[s]) for s in pools):
        live = [s for s in pools if positions[s] < len(pools[s])]
        # pick the live source furthest below its target share of texts drawn so far
        total = sum(drawn.values()) + 1
        source = min(live, key=lambda s: drawn[s] / total - weights.get(s, 0.0))
        group = pools[source][positions[source]]
        positions[source] += 1
        drawn[source] += len(group.texts)
        order.append(group)
    return order


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
    """Build (train, val, manifest) in memory; see ``write`` for the files."""
    from evaluator.resources import data_dir

    started = time.perf_counter()
    corpus = corpus or load_corpus(data_dir())
    rng = random.Random(config.seed)
    splits = {"train": [], "val": []}
    for group in corpus.groups:
        if group.source in config.source_weights:
            splits[split_of(group.key, config.seed, config.val_fraction)].append(group)
    queues = {s: _chunks(_interleave_groups(g, config.source_weights, rng), config.texts_per_chunk) for s, g in splits.items()}
    quotas = Quotas.for_config(config)
    accepted: dict[str, list[Candidate]] = {"train": [], "val": []}
    attempts: Counter = Counter()
    successes: Counter = Counter()

    _init_resources()
    context = multiprocessing.get_context("fork")
    with context.Pool(config.processes) as pool:
        for round_index in range(config.max_rounds):
            tasks, task_splits = [], []
            for split in ("train", "val"):
                open_classes = quotas.open_in(split)
                if not open_classes:
                    continue
                weights = _attempt_weights(open_classes, attempts, successes)
                needed_texts = sum(open_classes.values()) / config.classes_per_text * 1.3
                taken = 0
                while queues[split] and taken < max(needed_texts, config.texts_per_chunk):
                    chunk = queues[split].pop(0)
                    taken += sum(len(g.texts) for g in chunk)
                    seed = hash_seed(config.seed, split, round_index, len(tasks))
                    tasks.append((chunk, weights, config, seed))
                    task_splits.append(split)
                if not queues[split]:  # corpus exhausted for this split: start over with new seeds
                    queues[split] = _chunks(
                        _interleave_groups(splits[split], config.source_weights, rng), config.texts_per_chunk
                    )
            if not tasks:
                break
            for split, (candidates, tried) in zip(task_splits, pool.imap(_work_chunk, tasks), strict=True):
                attempts.update(tried)
                for candidate in candidates:
                    successes[candidate.label] += 1
                    if quotas.accept(split, candidate):
                        accepted[split].append(candidate)
                if progress:
                    progress(sum(len(v) for v in accepted.values()))
    frames = {split: _frame(split, rows) for split, rows in accepted.items()}
    manifest = _manifest(config, corpus, frames, time.perf_counter() - started)
    return frames["train"], frames["val"], manifest


def _attempt_weights(open_classes: dict[str, int], attempts: Counter, successes: Counter) -> dict[str, float]:
    """Weight each open class by what it still needs over how often it has succeeded so far."""
    weights = {}
    for code, need in open_classes.items():
        rate = (successes[code] + 1) / (attempts[code] + 2)
        weights[code] = max(need / max(rate, 0.02), 1e-6)
    total = sum(weights.values())
    return {code: w / total * len(weights) for code, w in weights.items()}


def hash_seed(*parts) -> int:
    """A 64-bit seed from any parts, stable across processes (unlike hash())."""
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def _frame(split: str, rows: list[Candidate]) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(row) for row in rows], columns=list(Candidate.__dataclass_fields__))
    frame.insert(0, "id", [f"{split}-{i:07d}" for i in range(len(frame))])
    frame["label_id"] = frame["label"].map(index_of).astype("int64")
    return frame[list(COLUMNS)]


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
        "paraphrase_based": int(both["detail"].str.contains('"base": "paraphrase"').sum()),
        "groups_in_both_splits": len(train_groups & set(frames["val"]["group"])),
        "corpus_sha256": corpus.sha256,
        "excluded_for_human_overlap": {
            "groups": dict(corpus.excluded_groups),
            "texts": dict(corpus.excluded_texts),
        },
        "seconds": round(seconds, 1),
        "pairs_per_second": round(total / seconds, 1) if seconds else None,
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
