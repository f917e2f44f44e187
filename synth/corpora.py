"""Reference corpora for synth: loading, grouping, and exclusion of human-rating overlap.

A *group* is the unit of paraphrase and of splitting: all captions of one image, all
lexicalisations of one WebNLG triple set, one SQuAD paragraph's sentences (and its passages
of consecutive sentences: multi-sentence references whose sentence order tells the order of
events), one SQuAD question. Texts of one group say the same thing (captions,
lexicalisations) and so serve as real paraphrases for NoContr. SICK TRAIN adds its
sentence pairs that entail each other both ways (people judged them; ``sick/sick_train``):
pairs that share a sentence form one group, so no sentence is in both splits. SICK TRIAL is
measurement data and is never opened here. Any group that shares a text (normalised), an
image id or a triple set with the human-rating sets is excluded, so evaluation stays clean.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mismatch_core.errors import DataError, ResourceMissingError
from mismatch_core.groups import group_position
from mismatch_core.jsonl import iter_jsonl

CORPUS_FILES = ("squad", "coco", "webnlg", "multi30k")
SOURCES = (*CORPUS_FILES, "sick")  # every source synth draws references from
SICK_TRAIN = "sick/sick_train.jsonl.gz"  # the only SICK file synth reads (TRIAL is for measurement)
# Sources whose groups hold several texts with the same meaning (usable as paraphrases).
PARAPHRASE_SOURCES = frozenset({"coco", "multi30k", "webnlg", "sick"})
# Sources whose texts all say the same within a group (no overlap test needed).
SAME_MEANING_SOURCES = frozenset({"webnlg", "sick"})

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_FLICKR_ID = re.compile(r"^(\d+)")
PASSAGE_SENTENCES = (2, 3, 4)  # lengths of the SQuAD passages added to each paragraph group


def normalise(text: str) -> str:
    """Lower-case, drop punctuation and spacing: PTB-tokenised and raw text then compare equal."""
    return _NON_ALNUM.sub("", text.lower())


def normalise_triples(triples: list[str] | str) -> str:
    """One canonical string for a triple set, from a list of 's | p | o' or '( s , p , o )' text."""
    if isinstance(triples, str):
        parts = re.findall(r"\(([^()]*)\)", triples)
        items = [tuple(p.split(",", 2)) for p in parts if p.count(",") >= 2]
    else:
        items = [tuple(t.split("|", 2)) for t in triples]
    return "|".join(sorted("/".join(normalise(x) for x in item) for item in items))


@dataclass
class Group:
    """Texts that describe one source item; the split and paraphrase unit."""

    key: str
    source: str
    texts: list[str] = field(default_factory=list)
    # text index -> indices of the group's texts it joins with spaces (a SQuAD passage of
    # consecutive sentences): the generator builds its parse from theirs instead of parsing
    # the same sentences again
    parts: dict[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass
class Corpus:
    """All usable groups plus what was excluded and the input files' checksums."""

    groups: list[Group]
    excluded_groups: Counter
    excluded_texts: Counter
    sha256: dict[str, str]


def group_key(record: dict) -> str:
    """The group of a corpus record, by source (see the module docstring)."""
    source = record["source"]
    if source == "coco":
        return f"coco:{record['image_id']}"
    if source == "multi30k":
        return f"flickr:{flickr_photo_id(record['image'])}"
    if source == "webnlg":
        return "webnlg:" + hashlib.sha1(normalise_triples(record["triples"]).encode()).hexdigest()[:16]
    if source == "squad":
        if record["kind"] == "question":
            return f"squad-q:{record['id']}"
        title, paragraph = record["id"].split(":")[1:3]
        return f"squad-p:{title}:{paragraph}"
    raise ValueError(f"unknown corpus source {source!r} in record {record.get('id')!r}")


def flickr_photo_id(image_name: str) -> str:
    """Flickr photo id from a Flickr30k ('1000092795.jpg') or Flickr8k ('1056338697_4f7d...jpg') name."""
    match = _FLICKR_ID.match(image_name)
    return match.group(1) if match else image_name


@dataclass
class HumanOverlap:
    """What of the human-rating sets must not occur in synthetic training data."""

    texts: set[str]
    flickr_ids: set[str]
    triple_sets: set[str]


@contextmanager
def named_record(path: Path, line: int) -> Iterator[None]:
    """A record the readers cannot use (a key missing, a value of another kind, an unknown
    source) named by its file and line, as a DataError (synth used to stop with a
    traceback)."""
    try:
        yield
    except KeyError as error:
        raise DataError(f"{path}:{line}: missing key {error.args[0]!r}") from None
    except (TypeError, AttributeError, ValueError) as error:
        raise DataError(f"{path}:{line}: {error}") from None


def human_overlap(human_dir: Path) -> HumanOverlap:
    """Collect normalised refs/gens, Flickr photo ids and WebNLG triple sets of every human set.
    None found is an error, not an empty overlap: the pairs would then hold the very texts the
    task ratings are tested on."""
    texts: set[str] = set()
    flickr_ids: set[str] = set()
    triple_sets: set[str] = set()
    paths = sorted(human_dir.glob("*/*.jsonl.gz"))
    if not paths:
        raise ResourceMissingError(
            f"{human_dir} holds no human-rating sets (<task>/*.jsonl.gz): synth leaves out every "
            "corpus group that overlaps them, so it needs them (../shared/data/human)"
        )
    for path in paths:
        for line, record in iter_jsonl(path):
            with named_record(path, line):
                refs = record["ref"] if isinstance(record["ref"], list) else [record["ref"]]
                for text in [*refs, record["gen"]]:
                    if text:
                        texts.add(normalise(text))
                image = (record.get("meta") or {}).get("image")
                if image:
                    flickr_ids.add(flickr_photo_id(image))
                if record["task"] == "data2text" and record.get("src"):
                    triple_sets.add(normalise_triples(record["src"]))
    texts.discard("")
    return HumanOverlap(texts, flickr_ids, triple_sets)


def load_corpus(data_dir: Path, sources: tuple[str, ...] = SOURCES) -> Corpus:
    """Load and group the corpora (and SICK TRAIN's paraphrase pairs), dropping every group
    that overlaps the human-rating sets."""
    overlap = human_overlap(data_dir / "human")
    groups: dict[str, Group] = {}
    tainted: set[str] = set()
    sentences: dict[str, list[tuple[int, int]]] = {}  # SQuAD paragraph -> (index, text position)
    sha256: dict[str, str] = {}
    for source in sources:
        if source == "sick":
            continue
        path = data_dir / "corpora" / f"{source}.jsonl.gz"
        sha256[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        for line, record in iter_jsonl(path):
            with named_record(path, line):
                key = group_key(record)
                group = groups.setdefault(key, Group(key, record["source"]))
                group.texts.append(record["text"])
                if key.startswith("squad-p:"):
                    sentences.setdefault(key, []).append(
                        (sentence_index(record), len(group.texts) - 1)
                    )
                if (
                    normalise(record["text"]) in overlap.texts
                    or (
                        source == "multi30k"
                        and flickr_photo_id(record["image"]) in overlap.flickr_ids
                    )
                    or (
                        source == "webnlg"
                        and normalise_triples(record["triples"]) in overlap.triple_sets
                    )
                ):
                    tainted.add(key)
    excluded_groups: Counter = Counter()
    excluded_texts: Counter = Counter()
    kept = []
    for key, group in groups.items():
        if key in tainted:
            excluded_groups[group.source] += 1
            excluded_texts[group.source] += len(group.texts)
        else:
            for run in passages(sentences.get(key, [])):
                group.parts[len(group.texts)] = run
                group.texts.append(" ".join(group.texts[i] for i in run))
            kept.append(group)
    if "sick" in sources:
        path = data_dir / SICK_TRAIN
        sha256[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        for group in sick_groups(path):
            if any(normalise(text) in overlap.texts for text in group.texts):
                excluded_groups["sick"] += 1
                excluded_texts["sick"] += len(group.texts)
            else:
                kept.append(group)
    return Corpus(kept, excluded_groups, excluded_texts, sha256)


def sick_types_problem(record: dict) -> str | None:
    """What makes a SICK line's keys unreadable, or None: the texts a and b must be strings
    with text (an empty one made a base of nothing), the flags paraphrase and contradiction
    booleans (a string "false" would read as true)."""
    for key in ("a", "b"):
        if key in record and not isinstance(record[key], str):
            return f"key {key!r} must be a string"
        if key in record and not record[key].strip():
            return f"key {key!r} is an empty text"
    for key in ("paraphrase", "contradiction"):
        if key in record and not isinstance(record[key], bool):
            return f"key {key!r} must be true or false"
    return None


def sick_paraphrases(path: Path) -> list[tuple[str, str, str]]:
    """(pair id, a, b) of SICK TRAIN's two-way entailment pairs, whitespace normalised, in file
    order. Refuses any file but SICK TRAIN: TRIAL is measurement data."""
    if path.name != Path(SICK_TRAIN).name:
        raise ValueError(f"{path}: only SICK TRAIN ({SICK_TRAIN}) is read, never another split")
    pairs = []
    for line, record in iter_jsonl(path):
        if record.get("split") != "train":
            raise DataError(f"{path}:{line}: split {record.get('split')!r}, expected 'train'")
        problem = sick_types_problem(record)
        if problem:
            raise DataError(f"{path}:{line}: {problem}")
        try:
            if record["paraphrase"]:
                a, b = (" ".join(record[k].split()) for k in ("a", "b"))
                pairs.append((record["id"], a, b))
        except KeyError as error:
            raise DataError(f"{path}:{line}: missing key {error.args[0]!r}") from None
    return pairs


def sick_groups(path: Path) -> list[Group]:
    """SICK TRAIN's two-way entailment pairs as groups (``paraphrase_groups``)."""
    return paraphrase_groups(sick_paraphrases(path))


def paraphrase_groups(pairs: list[tuple[str, str, str]]) -> list[Group]:
    """(pair id, a, b) paraphrase pairs as groups: pairs that share a sentence are joined
    (union-find), so a sentence never sits in two groups, and the group is named after its
    first pair."""
    parent: dict[str, str] = {}

    def root(text: str) -> str:
        while parent[text] != text:
            parent[text] = parent[parent[text]]
            text = parent[text]
        return text

    first_pair: dict[str, str] = {}
    for pair_id, a, b in pairs:
        for text in (a, b):
            if text not in parent:
                parent[text] = text
                first_pair[text] = pair_id
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[rb] = ra
    members: dict[str, list[str]] = {}
    for text in parent:
        members.setdefault(root(text), []).append(text)
    return [Group(first_pair[texts[0]], "sick", texts) for texts in members.values()]


def sentence_index(record: dict) -> int:
    """Position of a SQuAD context sentence in its paragraph ('...:p3:s2' -> 2); ValueError
    for an id without it."""
    _, marker, index = record["id"].rpartition(":s")
    if not (marker and index.isdigit()):
        raise ValueError(f"sentence id {record['id']!r} ends in no ':s<index>'")
    return int(index)


def passages(sentences: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    """Runs of PASSAGE_SENTENCES consecutive sentences, given as (sentence index, position)
    pairs: the positions of each run (by index: a dropped sentence breaks a run)."""
    ordered = sorted(sentences)
    out = []
    for size in PASSAGE_SENTENCES:
        for start in range(len(ordered) - size + 1):
            run = ordered[start : start + size]
            if run[-1][0] - run[0][0] == size - 1:
                out.append(tuple(position for _, position in run))
    return out


def split_of(group_key: str, seed: int | str, val_fraction: float = 0.2) -> str:
    """'train' or 'val' for a group, stable for a seed and independent of corpus order."""
    return "val" if group_position(seed, group_key) < val_fraction else "train"
