"""Loading the normalised human-rating schema: clear errors, group-disjoint splits, task registry."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from jsonl_files import write_jsonl_gz

from evaluator.human_data import HumanRecord, load_records, split_by_group
from evaluator.tasks import TASKS, get_task, load_task_records, read_ratings
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
    assert [r.id for r in loaded] == ["line 1", "line 2", "line 3", "x"]
    assert [r.group for r in loaded] == ["doc 1", "doc 1", "r2", "item 4"]


def test_a_repeated_id_names_both_lines(tmp_path):
    """Records are told apart by id (a split maps each back to its place by it)."""
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(i)).encode() for i in (1, 2, 1)])
    with pytest.raises(DataError, match=r"pairs.jsonl:3: key 'id': '1' is also the id of line 1"):
        load_records(path)


def test_a_line_that_is_no_json_object_says_where_and_what_jsonl_is(tmp_path):
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [b"ref,gen,overall", json.dumps(record(1)).encode()])
    with pytest.raises(DataError, match=r"pairs.jsonl:1: invalid JSON \(Expecting value, column 1\); JSONL holds one JSON object a line"):
        load_records(path)
    table = tmp_path / "pairs.csv"  # a table: the hint says what to write instead
    write_lines(table, [b"ref,gen,overall", json.dumps(record(1)).encode()])
    with pytest.raises(DataError, match=r"a line, not a table row: write each row as one object"):
        load_records(table)
    write_lines(path, [b"The cat, sadly, sat on the mat."])  # prose with commas: no such hint
    with pytest.raises(DataError, match=r"JSONL holds one JSON object a line$"):
        load_records(path)
    for ending in (b"", b"\n", b"\r\n"):  # cut short: the column after its 23 characters
        path.write_bytes(b'{"ref": "a", "gen": "x"' + ending)
        with pytest.raises(DataError, match=r"pairs.jsonl:1: invalid JSON \(.*, column 24\)$"):
            load_records(path)


def test_a_lone_surrogate_escape_is_named_by_key_not_met_by_the_tokenizer(tmp_path):
    """JSON's "\\ud800" without its pair reads as a Python string that no UTF-8 writer or
    tokenizer takes (a traceback deep in predict or a fit); a pair of escapes is text."""
    path = tmp_path / "pairs.jsonl"
    rows = [record(1), {**record(2), "ref": ["a ref", "b \ud800"]}]
    write_lines(path, [json.dumps(row).encode() for row in rows])
    with pytest.raises(DataError, match=r"pairs.jsonl:2: key 'ref\[1\]' holds a lone surrogate"):
        load_records(path)
    write_lines(path, [json.dumps({**record(1), "gen": "\U0001f600 \u00e9"}).encode()])
    assert load_records(path)[0].gen == "\U0001f600 \u00e9"
    unread = {**record(1), "meta": {"title": "cut \ud83d"}}  # metadata is not scored
    write_lines(path, [json.dumps(unread).encode()])
    assert load_records(path)[0].meta == {"title": "cut \ud83d"}


def test_a_key_given_twice_in_one_object_is_named(tmp_path):
    """json.loads keeps the last value without a word: {"gen": A, "gen": B} scored B."""
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1)).encode(), b'{"ref": "a", "gen": "x", "gen": "a"}'])
    with pytest.raises(DataError, match=r"pairs.jsonl:2: key 'gen' is given twice in one object"):
        load_records(path)
    nested = {**record(1), "meta": {"t": 1, "u": {"t": 2}}}  # one key in two objects
    write_lines(path, [json.dumps(nested).encode()])
    assert load_records(path)[0].meta == {"t": 1, "u": {"t": 2}}
    # metadata is not scored, and other tools write it: taken as json.loads takes it
    write_lines(path, [json.dumps(record(1))[:-1].encode() + b', "meta": {"t": 1, "t": 2}}'])
    assert load_records(path)[0].meta == {"t": 2}


def test_a_gzip_file_without_gz_in_its_name_is_named_so(tmp_path):
    path = tmp_path / "pairs.jsonl"
    write_jsonl_gz(path, [record(1)])
    with pytest.raises(DataError, match=r"pairs.jsonl:1: gzip-compressed; name it .jsonl.gz"):
        load_records(path)


def rated(items: int, **more) -> list[dict]:
    """One reference per item, two outputs each: an overall 1-5 and an adequacy 0-100 rating."""
    return [
        {"ref": f"ref {i}", "gen": f"gen {i} {k}", "scores": {"overall": 1 + (i + k) % 5, "adequacy": 10.0 * (i % 8)}}
        | more
        for i in range(items)
        for k in range(2)
    ]  # fmt: skip


def test_a_ratings_file_makes_a_task_of_its_criteria_and_scales(tmp_path):
    path = tmp_path / "my_ratings.JSONL.gz"
    rows = [*rated(20), {"ref": "ref 0", "gen": "only overall", "scores": {"overall": 3}}]
    write_jsonl_gz(path, rows)
    ratings = read_ratings(path, scales={"overall": (1, 5)})
    task = ratings.task
    assert task.name == "my_ratings" and task.kind == "regression"
    assert (ratings.records, ratings.items, ratings.sources) == (41, 20, 0)
    assert ratings.describe(reads_sources=False) == (
        f"my_ratings: {path}, 41 records of 20 items, criteria overall 1-5, adequacy 0-70"
    )
    assert [(c.key, c.low, c.high) for c in task.criteria] == [
        ("overall", 1, 5),  # given
        ("adequacy", 0, 70),  # the file's lowest to highest
    ]
    records = load_task_records(task)  # the file is read wherever the shared data is
    assert len(records) == 41 and records[-1].scores == {"overall": 3.0}
    assert read_ratings(path, name="mine").task.name == "mine"
    as_json = tmp_path / "ratings.json"  # JSON lines under .json: the task was 'ratings.json'
    as_json.write_bytes(gzip.decompress(path.read_bytes()))
    assert read_ratings(as_json).task.name == "ratings"
    # a file edited after it was described is not read as the task it described
    write_jsonl_gz(path, [*rows, {"ref": "ref 1", "gen": "more", "scores": {"overall": 2}}])
    with pytest.raises(DataError, match=r"my_ratings.JSONL.gz changed since it was first read"):
        load_task_records(task)


def test_a_ratings_file_with_sources_says_that_the_ratings_do_not_read_them(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [row | {"src": f"article {i // 2}", "scores": {"q": i % 3, "r": None}} for i, row in enumerate(rated(20))]
    write_lines(path, [json.dumps(row).encode() for row in rows])
    ratings = read_ratings(path)
    assert [c.key for c in ratings.task.criteria] == ["q"]  # null: not rated
    assert ratings.describe(reads_sources=False).endswith(
        "; 40 records have a src, which these ratings leave unread (--config "
        "configs/finetune/ratings_source.yaml reads it)"
    )
    assert "src" not in ratings.describe(reads_sources=True)
    assert ratings.source_problem(reads_sources=True) is None
    # one record without: named before a fit that reads sources computes any feature
    rows[3].pop("src")
    write_lines(path, [json.dumps(row).encode() for row in rows])
    ratings = read_ratings(path)
    assert ratings.source_problem(reads_sources=False) is None
    assert ratings.source_problem(reads_sources=True) == (
        f"{path}: record line 4 has no src; ratings that read the source "
        "(data.source_features) need it on every record"
    )


def test_a_ratings_file_that_cannot_make_a_task_says_why(tmp_path):
    def refused(rows: list[dict], message: str, **options) -> None:
        path = tmp_path / "mine.jsonl"
        write_lines(path, [json.dumps(row).encode() for row in rows])
        with pytest.raises(DataError, match=message):
            read_ratings(path, **options)

    refused(
        [row | {"scores": {**row["scores"], "q": 2}} for row in rated(20)],
        r"mine.jsonl: criterion 'q': all its 40 ratings are 2; give its scale \(--scale q=LOW:HIGH, or data.scales\)",
    )
    refused(rated(20), r"no record scores 'z' \(criteria: overall, adequacy\)", scales={"z": (0, 1)})
    refused(
        rated(20),
        r"mine.jsonl: record line 1: scores\['overall'\] = 1 is outside the scale given, 3 to 5",
        scales={"overall": (3, 5)},
    )
    for scale in ((5, 5), (1, float("inf"))):  # from Python; --scale refuses these itself
        refused(rated(20), r"the scale of 'overall' is .*: no range", scales={"overall": scale})
    refused(rated(19), r"38 records of 19 items \(groups\); fitting and measuring need at least 20")
    refused(rated(20, group="one"), r"40 records of 1 items")
    refused(
        [*rated(20), *[{"ref": f"r{i}", "gen": "g", "scores": {"rare": 1 + i}} for i in range(3)]],
        r"criterion 'rare' is rated for 3 items \(groups\)",
    )
    refused([*rated(20), {"ref": "r", "gen": "g", "scores": {}}], r"record line 41: key 'scores' holds no rating")
    refused([*rated(20), {"ref": "r", "gen": "g", "scores": {"": 1}}], r"record line 41: scores has an empty criterion name")
    for name in ("summarization", "base", "NLI"):
        refused(rated(20), rf"task name '{name}' is a shipped checkpoint's; choose another name \(--name, or data.task\)", name=name)
    refused(rated(20), r"task name '../x': use letters.*; choose another name", name="../x")
    path = tmp_path / "base.jsonl"
    write_lines(path, [json.dumps(row).encode() for row in rated(20)])
    with pytest.raises(DataError, match=r"task name 'base' is a shipped checkpoint's; give it a name \(--name NAME"):
        read_ratings(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataError, match=r"empty.jsonl: no records"):
        read_ratings(tmp_path / "empty.jsonl")
    with pytest.raises(DataError, match=r"absent.jsonl: no such file"):
        read_ratings(tmp_path / "absent.jsonl")
    (tmp_path / "ratings").mkdir()
    with pytest.raises(DataError, match=r"ratings is a directory; give a .jsonl or .jsonl.gz file"):
        read_ratings(tmp_path / "ratings")
    os.mkfifo(tmp_path / "piped.jsonl")  # `<(cmd)`: it was called a device
    with pytest.raises(
        DataError, match=r"piped.jsonl is a pipe, not a file; write it to a .jsonl file first"
    ):
        read_ratings(tmp_path / "piped.jsonl")
    (tmp_path / "plain.jsonl.gz").write_text("{}\n")  # read once, hashed and parsed alike
    with pytest.raises(DataError, match=r"plain.jsonl.gz: not a readable gzip file"):
        read_ratings(tmp_path / "plain.jsonl.gz")


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


@pytest.mark.parametrize(
    ("digits", "message"),
    [(400, r"scores\['q'\] must be a finite number"), (5000, "unreadable JSON \\(Exceeds the limit")],
)
def test_an_integer_score_no_float_holds_names_its_line(tmp_path, digits, message):
    """A 400-digit score was an OverflowError traceback; a 5,000-digit one Python's int limit."""
    line = json.dumps(record(2, scores={"q": 0})).replace('"q": 0', f'"q": {"9" * digits}')
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1)).encode(), line.encode()])
    with pytest.raises(DataError, match=rf"pairs.jsonl:2: {message}"):
        load_records(path)


@pytest.mark.parametrize("ref", ["", "  ", ["a ref", ""]])
def test_an_empty_reference_is_refused_naming_its_line(tmp_path, ref):
    """A ratings file took one and fitted on it, where mismatch predict refuses it."""
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1)).encode(), json.dumps(record(2, ref=ref)).encode()])
    with pytest.raises(DataError, match=r"pairs.jsonl:2: key 'ref' holds an empty reference$"):
        load_records(path)


@pytest.mark.parametrize(("key", "value"), [("id", ["x", 1]), ("group", {"a": 1}), ("id", True)])
def test_an_id_or_group_that_is_no_name_is_refused(tmp_path, key, value):
    """mismatch predict refuses such an id; a ratings file's became its Python form ("['x', 1]")
    in messages and results."""
    path = tmp_path / "pairs.jsonl"
    write_lines(path, [json.dumps(record(1, **{key: value})).encode()])
    with pytest.raises(DataError, match=rf"pairs.jsonl:1: key '{key}' must be a string, an int"):
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


def test_a_split_of_a_few_groups_can_hold_one_out_rather_than_none():
    """A tenth of a user's 16 training items rounds to none about one time in five: the fit
    then had no validation groups and stopped with a traceback. The early-stopping split asks
    for one; evaluate's test split and what mirrors it (real bases) keep the plain rule."""
    records = [
        HumanRecord(id=str(i), refs=("r",), gen="g", src=None, group=f"g{i // 2}", scores={})
        for i in range(32)
    ]
    plain_empty = 0
    for seed in range(40):
        train, held = split_by_group(records, seed=seed, test_fraction=0.1, at_least_one=True)
        assert held and train and not {r.group for r in train} & {r.group for r in held}
        plain = split_by_group(records, seed=seed, test_fraction=0.1)
        plain_empty += not plain[1]
        if plain[1]:  # where the plain rule holds some out, the same split
            assert (train, held) == plain
    assert plain_empty == 12  # seeds 3, 9, 14, ...: the plain rule as before
    only = [r for r in records if r.group == "g0"]
    assert split_by_group(only, seed=0, test_fraction=0.1, at_least_one=True) == (only, [])


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


def test_where_a_group_falls_in_a_split_stays_as_it_was() -> None:
    """Every split (human-rating seeds, synthetic train/val, the real val part, the span dev
    part) places a group by one hash; changing it would move held-out groups into training."""
    from mismatch_core.groups import group_position
    from synth.corpora import split_of

    assert group_position(0, "summeval:M0") == 0.06914059308932287
    assert group_position("val", "wmt17:1") == 0.6901901762726218
    assert group_position("spans-dev", "x") == 0.20227383591283238
    assert split_of("webnlg:abc", 13) == "train" and split_of("summeval:M0", 0, 0.1) == "val"
