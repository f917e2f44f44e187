"""Loading the normalised human-rating schema: clear errors, group-disjoint splits, task registry."""

from __future__ import annotations

import json

import pytest
from jsonl_files import write_jsonl_gz

from evaluator.human_data import load_records, split_by_group
from evaluator.tasks import TASKS, get_task, load_task_records, ratings_task
from mismatch_core.errors import DataError


def write_lines(path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def record(i: int, **extra) -> dict:
    return {
        "id": str(i),
        "ref": "a ref",
        "gen": "a gen",
        "group": f"g{i % 7}",
        "scores": {"q": 1.0},
    } | extra


def test_missing_key_names_file_line_and_key(tmp_path):
    path = tmp_path / "pairs.jsonl"
    bad = record(2)
    del bad["gen"]
    write_lines(path, [json.dumps(record(1)).encode(), json.dumps(bad).encode()])
    with pytest.raises(DataError, match=r"pairs.jsonl:2: missing key 'gen'"):
        load_records(path)


def test_a_record_without_id_or_group_is_named_by_its_line_and_grouped_by_its_item(tmp_path):
    """A user's own ratings need no bookkeeping: the outputs of one source (or, without one,
    one reference) stay on one side of a split."""
    path = tmp_path / "mine.jsonl"
    rows = [
        {"ref": "r1", "gen": "g1", "src": "doc 1", "scores": {"q": 1}},
        {"ref": "r1", "gen": "g2", "src": "doc 1", "scores": {"q": 2}},
        {"ref": ["r2", "r3"], "gen": "g3", "scores": {"q": 3}},
        {"ref": "r4", "gen": "g4", "group": "item 4", "id": "x", "scores": {"q": 4}},
    ]
    write_lines(path, [json.dumps(row).encode() for row in rows])
    loaded = load_records(path)
    assert [r.id for r in loaded] == [f"{path}:1", f"{path}:2", f"{path}:3", "x"]
    assert [r.group for r in loaded] == ["doc 1", "doc 1", "r2", "item 4"]


def test_a_repeated_id_names_both_lines(tmp_path):
    """The feature caches are keyed by id: two records with one id would share features."""
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(i)).encode() for i in (1, 2, 1)])
    with pytest.raises(DataError, match=r"pairs.jsonl:3: key 'id': '1' is also the id of line 1"):
        load_records(path)


def test_a_ratings_file_makes_a_task_of_its_criteria_and_scales(tmp_path):
    path = tmp_path / "my_ratings.jsonl.gz"
    rows = [
        {"ref": "r", "gen": f"g{i}", "scores": {"overall": 1 + i % 5, "adequacy": 10.0 * i}}
        for i in range(8)
    ] + [{"ref": "r", "gen": "only overall", "scores": {"overall": 3}}]
    write_jsonl_gz(path, rows)
    task = ratings_task(path, scales={"overall": (1, 5)})
    assert task.name == "my_ratings" and task.kind == "regression"
    assert [(c.key, c.low, c.high) for c in task.criteria] == [
        ("overall", 1, 5),  # given
        ("adequacy", 0, 70),  # the file's lowest to highest
    ]
    records = load_task_records(task)  # the file is read wherever the shared data is
    assert len(records) == 9 and records[-1].scores == {"overall": 3.0}
    assert ratings_task(path, name="mine").name == "mine"
    # an edited file is never read from the cache of the old one (keyed by record id)
    before = task.cache_stem
    write_jsonl_gz(path, [*rows, {"ref": "r", "gen": "more", "scores": {"overall": 2}}])
    assert ratings_task(path).cache_stem not in (before, "my_ratings")
    assert ratings_task(path).cache_stem.startswith("my_ratings-")


def test_a_ratings_file_that_cannot_make_a_task_says_why(tmp_path):
    path = tmp_path / "mine.jsonl"
    write_lines(
        path,
        [
            json.dumps({"ref": "r", "gen": f"g{i}", "scores": {"q": 2, "p": i}}).encode()
            for i in range(3)
        ],
    )
    with pytest.raises(
        DataError,
        match=r"mine.jsonl: criterion 'q': every record leaves no range to learn \(2.0 to 2.0\)",
    ):
        ratings_task(path)
    with pytest.raises(DataError, match=r"no record scores 'z' \(criteria: q, p\)"):
        ratings_task(path, scales={"q": (1, 5), "z": (0, 1)})
    with pytest.raises(DataError, match=r"task name 'summarization' is a shipped task's"):
        ratings_task(path, name="summarization", scales={"q": (1, 5)})
    with pytest.raises(DataError, match=r"task name '../x': use letters"):
        ratings_task(path, name="../x", scales={"q": (1, 5)})
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataError, match=r"empty.jsonl: no records"):
        ratings_task(tmp_path / "empty.jsonl")
    with pytest.raises(DataError, match=r"absent.jsonl: no such file"):
        ratings_task(tmp_path / "absent.jsonl")


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1)).encode(), b'{"id": "2", "ref": "caf\xe9"}'])
    with pytest.raises(DataError, match=r"pairs.jsonl:2: invalid UTF-8"):
        load_records(path)


def test_non_finite_score_is_rejected(tmp_path):
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1, scores={"q": "high"})).encode()])
    with pytest.raises(DataError, match=r"pairs.jsonl:1: scores\['q'\]"):
        load_records(path)


def test_null_gen_is_an_empty_output_and_list_refs_are_kept(tmp_path):
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1, gen=None, ref=["r1", "r2"])).encode()])
    (loaded,) = load_records(path)
    assert loaded.gen == "" and loaded.refs == ("r1", "r2")


def test_split_keeps_every_group_on_one_side():
    records = load_task_records(get_task("dialogue"))
    train, test = split_by_group(records, seed=1)
    assert not {r.group for r in train} & {r.group for r in test}
    assert 0.1 < len(test) / len(records) < 0.3
    assert split_by_group(records, seed=1) == (train, test)
    assert split_by_group(records, seed=2) != (train, test)


def test_every_task_loads_with_its_criteria_in_range():
    for task in TASKS.values():
        records = load_task_records(task)
        assert records, task.name
        keys = {c.key for c in task.criteria}
        for r in records[:500]:
            assert set(r.scores) <= keys
            for criterion in task.criteria:
                if criterion.key in r.scores and criterion.key != "da_z":
                    assert 0.0 <= criterion.normalise(r.scores[criterion.key]) <= 1.0
