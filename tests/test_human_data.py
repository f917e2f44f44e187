"""Loading the normalised human-rating schema: clear errors, group-disjoint splits, task registry."""

from __future__ import annotations

import json

import pytest

from evaluator.human_data import load_records, split_by_group
from evaluator.tasks import TASKS, get_task, load_task_records
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
