"""synth keeps no corpus group that overlaps a human-rating set: checked against an expected
list written out by hand (not computed with synth's own matching functions)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

from synth.corpora import load_corpus


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)


def human(task: str, ref, gen: str, src: str | None = None, meta: dict | None = None) -> dict:
    return {"id": "h", "task": task, "dataset": "d", "ref": ref, "gen": gen, "src": src,
            "system": None, "group": "g", "scores": {}, "meta": meta or {}}  # fmt: skip


def test_groups_sharing_a_text_an_image_or_a_triple_set_with_human_data_are_excluded(tmp_path):
    root = tmp_path / "data"
    write(root / "human" / "summarization" / "s.jsonl.gz", [
        # a reference in other case, spacing and punctuation than the COCO caption
        human("summarization", ["a RED bus , parked by the road ."], "Unrelated output text."),
    ])  # fmt: skip
    write(root / "human" / "question_generation" / "q.jsonl.gz", [
        # a generated text equal to a SQuAD question
        human("question_generation", "Some reference question?", "what year did the war end ?"),
    ])  # fmt: skip
    write(root / "human" / "captioning" / "c.jsonl.gz", [
        # a Flickr8k image name: the same photo as Flickr30k's 1056338697.jpg
        human("captioning", ["A person waves."], "Someone is waving.",
              meta={"image": "1056338697_4f7d7ce270.jpg"}),
    ])  # fmt: skip
    write(root / "human" / "data2text" / "d.jsonl.gz", [
        # the triple set of the first WebNLG entry, written the human sets' way, other order
        human("data2text", "elliot see died on 28 february , 1966 .", "He died.",
              src='( Elliot_See , nationality , United_States ) ( Elliot_See , deathDate , "1966-02-28" )'),
    ])  # fmt: skip
    write(root / "corpora" / "coco.jsonl.gz", [
        {"id": "c1", "source": "coco", "image_id": 1, "text": "A red bus parked by the road."},
        {"id": "c2", "source": "coco", "image_id": 1, "text": "A bus waits at the kerb."},
        {"id": "c3", "source": "coco", "image_id": 2, "text": "Two cats sleep on a sofa."},
    ])  # fmt: skip
    write(root / "corpora" / "multi30k.jsonl.gz", [
        {"id": "m1", "source": "multi30k", "image": "1056338697.jpg", "text": "A woman hails a taxi."},
        {"id": "m2", "source": "multi30k", "image": "2000000001.jpg", "text": "A boy jumps into a lake."},
    ])  # fmt: skip
    write(root / "corpora" / "webnlg.jsonl.gz", [
        {"id": "w1", "source": "webnlg", "text": "Elliot See, an American, passed away in February 1966.",
         "triples": ['Elliot_See | deathDate | "1966-02-28"', "Elliot_See | nationality | United_States"]},
        {"id": "w2", "source": "webnlg", "text": "Elliot See was an American.",
         "triples": ["Elliot_See | nationality | United_States"]},
    ])  # fmt: skip
    write(root / "corpora" / "squad.jsonl.gz", [
        {"id": "q1", "source": "squad", "kind": "question", "text": "What year did the war end?"},
        {"id": "q2", "source": "squad", "kind": "question", "text": "Who signed the treaty?"},
        {"id": "squad:T:p0:s0", "source": "squad", "kind": "context_sentence", "text": "The war ended in 1945."},
    ])  # fmt: skip
    write(root / "sick" / "sick_train.jsonl.gz", [
        # a pair with a sentence the human sets hold (the Flickr8k caption above) goes whole
        {"id": "sick:1", "split": "train", "a": "Someone is waving.", "b": "A person is waving.", "paraphrase": True},
        {"id": "sick:2", "split": "train", "a": "A dog runs on grass.", "b": "A dog is running on the grass.",
         "paraphrase": True},
        {"id": "sick:3", "split": "train", "a": "A man sings.", "b": "A man is not singing.", "paraphrase": False},
    ])  # fmt: skip
    corpus = load_corpus(root)
    kept = sorted(text for group in corpus.groups for text in group.texts)
    assert kept == sorted([
        "Two cats sleep on a sofa.",
        "A boy jumps into a lake.",
        "Elliot See was an American.",  # a subset of the human triple set is another set
        "Who signed the treaty?",
        "The war ended in 1945.",
        "A dog runs on grass.",  # SICK TRAIN: two-way entailments only
        "A dog is running on the grass.",
    ])  # fmt: skip
    assert corpus.excluded_groups == Counter(
        {"coco": 1, "multi30k": 1, "webnlg": 1, "squad": 1, "sick": 1}
    )
    assert corpus.excluded_texts == Counter(
        {"coco": 2, "multi30k": 1, "webnlg": 1, "squad": 1, "sick": 2}
    )


def test_a_record_synth_cannot_read_is_named_by_file_and_line(tmp_path):
    """A corpus record without its text, a human record without gen, or an unknown source
    stopped synth with a KeyError or ValueError traceback."""
    import pytest

    from mismatch_core.errors import DataError

    root = tmp_path / "data"
    write(root / "human" / "captioning" / "c.jsonl.gz", [human("captioning", ["A dog."], "A cat.")])
    caption = {"id": "c1", "source": "coco", "image_id": 1, "text": "A bus."}
    for rows, problem in (
        ([caption, {"id": "c2", "source": "coco", "image_id": 1}], ":2: missing key 'text'"),
        ([{**caption, "source": "flickr"}], ":1: unknown corpus source 'flickr' in record 'c1'"),
    ):
        write(root / "corpora" / "coco.jsonl.gz", rows)
        with pytest.raises(DataError, match=f"coco.jsonl.gz{problem}"):
            load_corpus(root, sources=("coco",))
    sentence = {"id": "squad:T:p1", "source": "squad", "kind": "context_sentence", "text": "A b."}
    write(root / "corpora" / "squad.jsonl.gz", [sentence])  # an IndexError traceback
    with pytest.raises(DataError, match="squad.jsonl.gz:1: sentence id 'squad:T:p1' ends in no"):
        load_corpus(root, sources=("squad",))
    write(root / "human" / "captioning" / "c.jsonl.gz", [{"task": "captioning", "ref": "A dog."}])
    with pytest.raises(DataError, match="c.jsonl.gz:1: missing key 'gen'"):
        load_corpus(root, sources=("coco",))
    write(root / "human" / "captioning" / "c.jsonl.gz", [human("captioning", ["A dog."], "A cat.")])
    pair = {"id": "sick:1", "split": "train", "a": "A b.", "b": "A c.", "paraphrase": True}
    for bad, problem in (
        ({"paraphrase": "yes"}, ":2: key 'paraphrase' must be true or false"),
        ({"split": "trial"}, ":2: split 'trial', expected 'train'"),
    ):
        write(root / "sick" / "sick_train.jsonl.gz", [pair, {**pair, **bad}])
        with pytest.raises(DataError, match=f"sick_train.jsonl.gz{problem}"):
            load_corpus(root, sources=("sick",))


def test_without_the_human_sets_synth_stops_instead_of_excluding_nothing(tmp_path):
    """A data folder without human/ gave pairs with no group left out, and no word of it."""
    import pytest

    from mismatch_core.errors import ResourceMissingError

    write(tmp_path / "corpora" / "coco.jsonl.gz", [
        {"id": "c1", "source": "coco", "image_id": 1, "text": "A bus."}
    ])  # fmt: skip
    with pytest.raises(ResourceMissingError, match="human holds no human-rating sets"):
        load_corpus(tmp_path, sources=("coco",))
