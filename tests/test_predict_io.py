"""Error spans in the outputs: JSONL keys, the compact CSV/TSV columns and their parsers, and
how `mismatch predict` and `mismatch demo` pass and show them.

The model side (a span tagger) is not needed: predictions are built by hand, or the tiny
checkpoint's predictions are given spans by a wrapped Evaluator method.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from test_predict import GENS, REFS, make_checkpoint, write_jsonl

from evaluator.cli import main
from evaluator.evaluator import Evaluator
from evaluator.predict_io import (
    Prediction,
    PredictionWriter,
    SystemSummary,
    columns,
    parse_missing_column,
    parse_spans_column,
)
from mismatch_core.errors import DataError
from mismatch_core.taxonomy import CODES

REF = "Zürich — 東京 hat 12 Mitarbeiter in München eingestellt"
GEN = "Zürich — 東京 hat 21 Mitarbeiter 😀 eingestellt"
# a text with every separator the CSV/TSV forms use
AWKWARD = 'Sales | costs, "net": 21\tmillion'
COMPACT_KEYS = ("start", "end", "label", "prob")
MISSING_KEYS = ("ref_index", "ref_start", "ref_end", "label", "prob")


def span(text: str, part: str, label: str, prob: float) -> dict:
    start = text.index(part)
    return {"start": start, "end": start + len(part), "text": part, "label": label, "prob": prob}


def missing(ref: str, part: str, prob: float, ref_index: int = 0) -> dict:
    start = ref.index(part)
    return {
        "ref_index": ref_index,
        "ref_start": start,
        "ref_end": start + len(part),
        "text": part,
        "label": "MissInfo",
        "prob": prob,
    }


def prediction(item_id: str, spans: list[dict] | None, missed: list[dict] | None) -> Prediction:
    mismatch = {code: 0.0 for code in CODES} | {"NoContr": 0.25, "NumErr": 0.75}
    return Prediction(
        id=item_id,
        score=0.25,
        ratings={"coherence": 2.5},
        mismatch=mismatch,
        labels=["NumErr"],
        ref_index=0,
        spans=spans,
        missing=missed,
    )


def written(predictions: list[Prediction], output_format: str, spans: bool) -> str:
    stream = io.StringIO(newline="")
    PredictionWriter(stream, output_format, ["coherence"], spans=spans).write(predictions)
    return stream.getvalue()


def table(text: str, output_format: str) -> list[dict]:
    delimiter = "," if output_format == "csv" else "\t"
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))


# --- JSONL, CSV and TSV ----------------------------------------------------------------------


def test_jsonl_keeps_code_point_offsets_on_unicode_text(tmp_path: Path) -> None:
    spans = [
        span(GEN, "21", "NumErr", 0.93),
        span(GEN, "eingestellt", "PredErr", 0.41),  # after the emoji, a non-BMP character
    ]
    missed = [missing(REF, "in München", 0.88)]
    out = tmp_path / "out.jsonl"
    out.write_text(written([prediction("1", spans, missed)], "jsonl", True), encoding="utf-8")
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert list(record) == [
        "id", "score", "ratings", "mismatch", "labels", "ref_index", "spans", "missing"
    ]  # fmt: skip
    assert record["spans"] == spans and record["missing"] == missed
    assert GEN.index("eingestellt") > GEN.index("😀")
    for item in record["spans"]:
        assert GEN[item["start"] : item["end"]] == item["text"]
    for item in record["missing"]:
        assert REF[item["ref_start"] : item["ref_end"]] == item["text"]


@pytest.mark.parametrize("output_format", ["csv", "tsv"])
def test_compact_columns_round_trip_through_their_parsers(output_format: str) -> None:
    spans = [
        span(AWKWARD, '"net"', "EntErr", 0.93),
        span(AWKWARD, "|", "GramErr", 5e-06),  # Python writes this float as 5e-06
        span(AWKWARD, "21\tmillion", "NumErr", 0.5),
    ]
    missed = [missing(REF, "in München", 0.88, ref_index=1)]
    predictions = [
        prediction(AWKWARD, spans, missed),
        prediction("clean", [], []),
    ]
    records = table(written(predictions, output_format, True), output_format)
    assert list(records[0]) == [*columns(["coherence"]), "spans", "missing"]
    assert [record["id"] for record in records] == [AWKWARD, "clean"]
    assert records[0]["labels"] == "NumErr"
    read = parse_spans_column(records[0]["spans"])
    assert read == [{key: item[key] for key in COMPACT_KEYS} for item in spans]
    assert [AWKWARD[item["start"] : item["end"]] for item in read] == [s["text"] for s in spans]
    read_missing = parse_missing_column(records[0]["missing"])
    assert read_missing == [{key: item[key] for key in MISSING_KEYS} for item in missed]
    assert (records[1]["spans"], records[1]["missing"]) == ("", "")
    assert parse_spans_column("") == [] and parse_missing_column("") == []
    # as pandas reads the file: an empty cell is NaN, or NA with dtype="string"
    for dtype in (None, "string"):
        frame = pd.read_csv(io.StringIO(written(predictions, output_format, True)), dtype=dtype,
                            sep="," if output_format == "csv" else "\t")  # fmt: skip
        assert [parse_spans_column(cell) for cell in frame["spans"]] == [read, []]
        assert [parse_missing_column(cell) for cell in frame["missing"]] == [read_missing, []]
    with pytest.raises(DataError, match="expected a cell's text, got 3"):
        parse_spans_column(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("output_format", ["csv", "tsv"])
def test_an_id_with_a_carriage_return_stays_one_row(output_format: str) -> None:
    """csv quotes a line feed but not a lone carriage return, which readers take for a line
    end: the row split in two and every later id moved a row."""
    ids = ["before", "cr\rinside", "after"]
    text = written([prediction(item, None, None) for item in ids], output_format, False)
    records = table(text, output_format)
    assert [record["id"] for record in records] == ids
    assert {record["score"] for record in records} == {"0.25"}
    assert text.count("\n") == len(ids) + 1  # the header and a line per prediction
    frame = pd.read_csv(io.StringIO(text), sep="," if output_format == "csv" else "\t", dtype=str)
    assert list(frame["id"]) == ids


def test_the_summary_gives_the_system_means_and_the_pairs_each_class_names() -> None:
    one = prediction("a", None, None)  # NumErr, score 0.25, coherence 2.5
    clean = replace(one, id="b", score=0.75, ratings={"coherence": 4.0}, labels=["NoContr"])
    unsure = replace(one, id="c", score=0.5, ratings={"coherence": 3.0}, labels=[])
    both = replace(one, id="d", score=0.5, ratings={"coherence": 3.5}, labels=["NoContr", "EntErr"])
    summary = SystemSummary(["coherence"])
    summary.add([one, clean])  # added chunk by chunk, as predict writes
    summary.add([unsure, both])
    figures = summary.to_dict("checkpoint:x|version:y")
    assert figures["pairs"] == 4
    assert figures["mean_score"] == pytest.approx(0.5)
    assert figures["mean_ratings"] == {"coherence": pytest.approx(3.25)}
    assert list(figures["label_counts"]) == list(CODES)
    assert {code: n for code, n in figures["label_counts"].items() if n} == {
        "NoContr": 2, "NumErr": 1, "EntErr": 1,
    }  # fmt: skip
    assert (figures["flagged"], figures["unsure"]) == (2, 1)
    assert figures["signature"] == "checkpoint:x|version:y"
    empty = SystemSummary(["coherence"]).to_dict("s")
    assert empty["pairs"] == 0 and empty["mean_score"] is None
    assert empty["mean_ratings"] == {"coherence": None}


def test_compact_probabilities_keep_six_decimals() -> None:
    long_prob = [{"start": 0, "end": 2, "text": "21", "label": "NumErr", "prob": 0.123456789}]
    (record,) = table(written([prediction("1", long_prob, [])], "csv", True), "csv")
    assert record["spans"] == "0-2:NumErr:0.123457"


@pytest.mark.parametrize("output_format", ["jsonl", "csv", "tsv"])
def test_spans_not_computed_leave_keys_and_columns_out(output_format: str) -> None:
    text = written([prediction("1", None, None)], output_format, False)
    if output_format == "jsonl":
        keys = ["id", "score", "ratings", "mismatch", "labels", "ref_index"]
        assert list(json.loads(text)) == keys
        return
    header = [
        "id", "score", "rating.coherence", *(f"p.{code}" for code in CODES), "labels", "ref_index"
    ]  # fmt: skip
    (record,) = table(text, output_format)
    assert list(record) == header


def test_computed_but_empty_spans_are_written() -> None:
    record = json.loads(written([prediction("1", [], [])], "jsonl", True))
    assert (record["spans"], record["missing"]) == ([], [])


def test_span_columns_need_spans_on_every_prediction() -> None:
    with pytest.raises(ValueError, match="prediction '7' has no spans"):
        written([prediction("7", None, None)], "csv", True)


@pytest.mark.parametrize(
    ("parse", "value", "message"),
    [
        (parse_spans_column, "3-5:NumErr:0.9|3x5:NumErr:0.9", "spans item 2 '3x5:NumErr:0.9': expected START-END:LABEL:PROB"),
        (parse_spans_column, "3-5:NumErr:0.9|", "spans item 2 '': expected"),
        (parse_spans_column, "-3-5:NumErr:0.9", "spans item 1 '-3-5:NumErr:0.9': expected"),
        (parse_spans_column, "3-5:NumErr", "spans item 1 '3-5:NumErr': expected"),
        (parse_spans_column, "5-3:NumErr:0.9", "spans item 1 '5-3:NumErr:0.9': start 5 is after end 3"),
        (parse_spans_column, "3-5:Typo:0.9", "spans item 1 '3-5:Typo:0.9': label 'Typo'"),
        (parse_spans_column, "3-5:MissInfo:0.9", "label 'MissInfo' is not an error class of a span"),
        (parse_spans_column, "3-5:NoContr:0.9", "label 'NoContr' is not an error class of a span"),
        (parse_spans_column, "3-5:NumErr:1.5", "spans item 1 '3-5:NumErr:1.5': probability '1.5'"),
        (parse_spans_column, "3-5:NumErr:nan", "probability 'nan' is not a number in [0, 1]"),
        (parse_spans_column, "3-5:NumErr:high", "probability 'high' is not a number in [0, 1]"),
        (parse_missing_column, "3-5:MissInfo:0.9", "missing item 1 '3-5:MissInfo:0.9': expected REF_INDEX:START-END:LABEL:PROB"),
        (parse_missing_column, "0:3-5:MissInfo:0.9|x:3-5:MissInfo:0.9", "missing item 2 'x:3-5:MissInfo:0.9': expected"),
        (parse_missing_column, "0:3-5:NumErr:0.9", "missing item 1 '0:3-5:NumErr:0.9': label 'NumErr' is not MissInfo"),
        (parse_missing_column, "0:9-5:MissInfo:0.9", "start 9 is after end 5"),
        (parse_missing_column, "0:3-5:MissInfo:-0.1", "probability '-0.1'"),
    ],
)  # fmt: skip
def test_malformed_compact_items_are_named(parse, value: str, message: str) -> None:
    with pytest.raises(DataError, match=re.escape(message)):
        parse(value)


# --- mismatch predict ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny")


def test_has_spans_follows_the_model_span_tagger(checkpoint: Path) -> None:
    import torch

    evaluator = Evaluator.from_pretrained(checkpoint)
    assert not evaluator.has_spans
    evaluator.checkpoint.model.span_tagger = torch.nn.Identity()
    assert evaluator.has_spans


@pytest.mark.parametrize(
    ("tagger", "flags", "asked", "columns_on"),
    [(True, [], True, True), (True, ["--no-spans"], False, False), (False, [], True, False)],
)
def test_no_spans_reaches_the_evaluator_and_decides_the_columns(
    tagger: bool, flags: list[str], asked: bool, columns_on: bool,
    checkpoint: Path, tmp_path: Path, monkeypatch,
) -> None:  # fmt: skip
    calls = []
    stream = Evaluator.predict_stream

    def with_spans(self, chunks, total, **kwargs):
        calls.append(kwargs["spans"])
        # the model here has no tagger: score without spans, then mark them as a tagger would
        for predictions in stream(self, chunks, total, **{**kwargs, "spans": False}):
            marked = kwargs["spans"] and self.has_spans  # what the model side will do
            yield [
                replace(p, spans=[span(GENS[0], "Three", "NumErr", 0.9)], missing=[])
                if marked
                else p
                for p in predictions
            ]

    monkeypatch.setattr(Evaluator, "has_spans", property(lambda self: tagger))
    monkeypatch.setattr(Evaluator, "predict_stream", with_spans)
    rows = [{"ref": REFS[0], "gen": GENS[0]}]
    out = tmp_path / "out.csv"
    status = main([
        "predict", "--quiet", "--checkpoint", str(checkpoint), *flags,
        "--input", str(write_jsonl(tmp_path / "in.jsonl", rows)), "--output", str(out),
    ])  # fmt: skip
    assert status == 0
    assert calls == [asked]
    (record,) = table(out.read_text(encoding="utf-8"), "csv")
    assert list(record)[-1] == ("missing" if columns_on else "ref_index")
    if columns_on:
        assert parse_spans_column(record["spans"]) == [
            {"start": 0, "end": 5, "label": "NumErr", "prob": 0.9}
        ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.csv"]  # no temp left


# --- mismatch demo -------------------------------------------------------------------------


def test_demo_marks_spans_and_names_missing_words(
    checkpoint: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    gen = "The company plans to hire " + "new and experienced " * 6 + "21 staff in 2027"
    ref = "The company plans to hire 12 staff in Manchester in 2027"
    pairs = [
        {"id": "marked", "ref": ref, "gen": gen},
        {"id": "plain", "ref": REFS[1], "gen": GENS[1]},
        {"id": "two-refs", "ref": [REFS[0], ref], "gen": GENS[0]},
    ]
    examples = write_jsonl(tmp_path / "pairs.jsonl", pairs)
    predict = Evaluator.predict

    def with_spans(self, refs, gens, **kwargs):
        marked, plain, two_refs = predict(self, refs, gens, **kwargs)
        return [
            replace(
                marked,
                spans=[span(gen, "21", "NumErr", 0.93), span(gen, "2027", "STErr", 0.4)],
                missing=[missing(ref, "in Manchester", 0.88)],
            ),
            replace(plain, spans=[], missing=[]),
            replace(
                two_refs, ref_index=1, spans=[], missing=[missing(ref, "in Manchester", 0.5, 1)]
            ),
        ]

    monkeypatch.setattr(Evaluator, "predict", with_spans)
    assert main(["demo", "--checkpoint", str(checkpoint), "--examples", str(examples)]) == 0
    out = capsys.readouterr().out
    assert len(gen) > 96  # long enough that the demo shortens it when no span is shown
    assert "[[21]] staff in [[2027]]" in out  # wrapped, not cut before the end
    assert '    spans: NumErr 0.93 "21", STErr 0.40 "2027"' in out
    assert '    missing: MissInfo 0.88 "in Manchester"\n' in out
    assert '    missing: MissInfo 0.50 "in Manchester" (ref 2)' in out
    assert f"    ref 1: {REFS[0]}\n    ref 2 (read against it): {ref}\n" in out
    assert "    gen: " + GENS[1] + "\n" in out and out.count("[[") == 2
