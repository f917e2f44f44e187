"""`mismatch bench`: the dispatcher runs the asked targets with the shared settings, and the
features target reports every metric on the pairs it was given, and the predict target times
the pairs of a file (realtext end to end: tests/test_realtext_bench.py; synth, and predict
without a file, read the full corpora and real human sets, too slow for the suite)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import evaluator.cli.bench.features
import evaluator.cli.bench.predict
import evaluator.cli.bench.realtext
import evaluator.cli.bench.spans
import evaluator.cli.bench.synth
from evaluator.cli import main
from evaluator.cli.bench import TARGETS
from evaluator.features.registry import COLUMN_TO_METRIC, DEFAULT_FEATURES, is_encoder_metric

MODULES = {
    "synth": evaluator.cli.bench.synth,
    "features": evaluator.cli.bench.features,
    "predict": evaluator.cli.bench.predict,
    "realtext": evaluator.cli.bench.realtext,
    "spans": evaluator.cli.bench.spans,
}


@pytest.fixture
def calls(monkeypatch) -> list[tuple[str, int | None, int]]:
    """Each target's function replaced by one that records (target, --pairs, --seed)."""
    seen = []
    for target, spec in TARGETS.items():
        function = spec.split(":")[1]
        record = lambda args, target=target: seen.append((target, args.pairs, args.seed))  # noqa: E731
        monkeypatch.setattr(MODULES[target], function, record)
    return seen


def test_all_runs_every_target_once_in_order_with_the_shared_settings(calls) -> None:
    assert main(["bench", "all", "--pairs", "5", "--seed", "3"]) == 0
    assert calls == [
        (target, 5, 3) for target in ("synth", "features", "predict", "realtext", "spans")
    ]


def test_one_target_runs_only_that_target_with_its_defaults(calls) -> None:
    assert main(["bench", "features"]) == 0
    assert calls == [("features", None, 13)]


@pytest.mark.parametrize("pairs", ["0", "-1"])
def test_a_pair_count_below_one_is_refused_before_any_target(calls, capsys, pairs) -> None:
    assert main(["bench", "predict", "--pairs", pairs]) == 2 and calls == []
    assert f"--pairs must be at least 1, got {pairs}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["synth", "--seed", "-1"], "--seed must be in 0..4294967295, got -1"),
        (["spans", "--bases-limit", "-5"], "--bases-limit must not be negative"),
        (["realtext", "--darr-limit", "-1"], "--darr-limit must not be negative"),
    ],
)
def test_a_bad_seed_or_sample_size_is_one_line_before_any_target(
    calls, capsys, arguments, message
) -> None:
    """A negative seed was a traceback from the synth target; a negative --bases-limit reached
    the spans target after its model had loaded."""
    assert main(["bench", *arguments]) == 2 and calls == []
    assert capsys.readouterr().err == f"mismatch bench: error: {message}\n"


def test_real_text_options_are_refused_by_a_throughput_target(calls, capsys) -> None:
    assert main(["bench", "synth", "--parts", "sick", "--out", "x.json"]) == 2 and calls == []
    assert "--parts, --out: for the realtext and spans targets, not synth" in (
        capsys.readouterr().err
    )


def test_a_pair_count_is_refused_by_the_realtext_target(calls, capsys) -> None:
    """realtext's samples are set by --bases-limit and --darr-limit; --pairs would be ignored."""
    assert main(["bench", "realtext", "--pairs", "100"]) == 2 and calls == []
    assert "--pairs: for the synth, features, predict and spans targets, not realtext" in (
        capsys.readouterr().err
    )


def test_predict_options_are_refused_by_another_target(calls, capsys) -> None:
    assert main(["bench", "realtext", "--device", "cuda", "--input", "x.jsonl"]) == 2
    assert calls == []
    assert "--input, --device: for the predict target, not realtext" in capsys.readouterr().err


def test_all_hands_each_target_its_own_options(calls, capsys, tmp_path: Path) -> None:
    assert main(["bench", "all", "--device", "cpu", "--checkpoint", "ckpt"]) == 0
    assert [target for target, _, _ in calls] == list(TARGETS)
    calls.clear()  # a bad --device or --input is found before the first target, not at predict
    assert main(["bench", "all", "--device", "tpu"]) == 2 and calls == []
    assert "--device: unknown device 'tpu'" in capsys.readouterr().err
    missing = tmp_path / "none.jsonl"
    assert main(["bench", "all", "--input", str(missing)]) == 2 and calls == []
    assert f"--input: {missing}: no such file" in capsys.readouterr().err
    assert main(["bench", "predict", "--input", str(tmp_path)]) == 2 and calls == []
    assert f"--input: {tmp_path}: is a directory; give a .jsonl file" in capsys.readouterr().err


@pytest.mark.slow  # the shipped base, the packaged encoder and bert-score
def test_predict_times_the_pairs_of_a_file_on_the_device_asked(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        '{"ref": "Two dogs ran across the park.", "gen": "Three dogs ran across the park."}\n'
        '{"ref": ["A horse.", "A man on a horse."], "gen": "A man rides a camel."}\n'
        '{"ref": "She did not go.", "gen": "She went."}\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(evaluator.cli.bench.predict, "ROUNDS", 1)
    assert main(["bench", "predict", "--input", str(pairs), "--pairs", "2"]) == 0
    report, err = capsys.readouterr()
    assert report.startswith(f"predict bench: 2 pairs from {pairs}; checkpoint ")
    assert "; device cpu (" in report.splitlines()[0]
    for scorer in ("mismatch-eval predict", "bert_score.score"):
        assert re.search(rf"^{re.escape(scorer)} +\d+\.\d s +\d+\.\d pairs/s", report, re.M)
    assert "read the targets with care: 2 pairs, fewer than the 2000" in report
    assert "warning" not in err  # a timing does not repeat the short reference's count


def test_timing_caveats_name_a_small_run_and_a_busy_machine() -> None:
    from evaluator.cli.bench.predict import DEFAULT_PAIRS, timing_caveats

    assert timing_caveats(DEFAULT_PAIRS, 1.11, 2) == []  # docs/bench.md's run "alone"
    assert timing_caveats(DEFAULT_PAIRS, None, 2) == []  # no load average on this platform
    small, busy = timing_caveats(300, 3.5, 2)
    assert small.startswith("300 pairs, fewer than") and busy.startswith("load average 3.50 on 2")


def test_predict_refuses_a_device_it_cannot_use(tmp_path: Path, capsys) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"ref": "A cat.", "gen": "A dog."}\n', encoding="utf-8")
    assert main(["bench", "predict", "--input", str(pairs), "--device", "tpu"]) == 2
    assert "--device: unknown device 'tpu'; use cpu or cuda" in capsys.readouterr().err


def test_predict_names_the_bad_line_of_its_input(tmp_path: Path, capsys) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"ref": "A cat.", "gen": "A dog."}\n{"ref": "A cat."}\n', encoding="utf-8")
    assert main(["bench", "predict", "--input", str(pairs)]) == 2  # a user error, one line
    assert capsys.readouterr().err == f"mismatch bench: error: {pairs}:2: missing key 'gen'\n"


def test_an_unknown_target_is_refused(calls, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "everything"])
    assert exit_.value.code == 2 and calls == []
    assert "invalid choice: 'everything'" in capsys.readouterr().err


def test_features_names_a_pairs_file_that_holds_no_pairs(tmp_path, monkeypatch, capsys) -> None:
    """A file that was no parquet, or lacked a column, gave pyarrow's traceback."""
    broken = tmp_path / "pairs.parquet"
    broken.write_text('{"ref": "A.", "gen": "B."}\n')
    monkeypatch.setenv("MISMATCH_SYNTH_PAIRS", str(broken))
    assert main(["bench", "features", "--pairs", "2"]) == 2
    assert f"{broken} is not a readable parquet file of pairs" in capsys.readouterr().err
    pd.DataFrame({"ref": ["A."], "gen": ["B."]}).to_parquet(broken)
    assert main(["bench", "features", "--pairs", "2"]) == 2
    assert f"{broken} lacks column(s) id" in capsys.readouterr().err


@pytest.mark.slow  # the packaged encoder
def test_features_reports_every_metric_on_the_pairs_given(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    pairs = tmp_path / "pairs.parquet"
    frame = pd.DataFrame({
        "id": ["a", "b", "c", "d"],
        "ref": ["Two dogs ran across the park.", "A man rides a horse.", "She did not go.", "Kids play."],
        "gen": ["Three dogs ran across the park.", "A man rides a camel.", "She went.", "Kids play."],
        "label": ["NumErr", "EntErr", "NegErr", "NoContr"],
    })  # fmt: skip
    frame.to_parquet(pairs)
    monkeypatch.setenv("MISMATCH_SYNTH_PAIRS", str(pairs))
    assert main(["bench", "features", "--pairs", "3", "--seed", "0"]) == 0
    report = capsys.readouterr().out
    assert report.startswith(f"features bench: 3 synth pairs from {pairs};")
    sampled = frame.sample(n=3, random_state=0)
    distinct = len(set(sampled["ref"]) | set(sampled["gen"]))
    assert re.search(
        rf"^encoder +\d+\.\d{{3}}  shared pass, {distinct} distinct texts", report, re.M
    )
    metrics = dict.fromkeys(COLUMN_TO_METRIC[name] for name in DEFAULT_FEATURES)
    reported_columns = set()
    for metric in metrics:
        row = re.search(rf"^{metric} +(\d+\.\d{{3}})  (.*)$", report, re.M)
        assert row, f"no timing row for {metric}"
        reported_columns |= set(row.group(2).split(" (+")[0].split(", "))
    assert set(DEFAULT_FEATURES) <= reported_columns
    lexical = sum(not is_encoder_metric(COLUMN_TO_METRIC[name]) for name in DEFAULT_FEATURES)
    assert re.search(
        rf"^lexical set \({lexical} features, 2 processes\): \d+ pairs/s$", report, re.M
    )
    assert re.search(
        rf"^full default set \({len(DEFAULT_FEATURES)} features\): \d+ pairs/s$", report, re.M
    )


def test_spans_names_a_synthetic_pairs_file_it_cannot_place_errors_in(
    tmp_path: Path, capsys
) -> None:
    """A file without detail, or with a detail that is no JSON object, gave a traceback
    (AttributeError) or a JSON error naming no file; an empty file "No objects to
    concatenate". Each is named before the model loads."""
    path = tmp_path / "val.parquet"
    good = {"id": "a", "ref": "A dog ran.", "gen": "A cat ran.", "label": "EntErr",
            "label_id": 3, "group": "g", "detail": '{"rule": "x"}'}  # fmt: skip
    common = ["bench", "spans", "--synth-pairs", str(path), "--parts", "synth"]
    for frame, problem in (
        (pd.DataFrame([good]).drop(columns="detail"), f"{path} lacks column(s) detail"),
        (pd.DataFrame([{**good, "detail": None}]), "row 1 (id 'a'): detail must be a JSON object"),
        (pd.DataFrame([{**good, "detail": "xx"}]), "row 1 (id 'a'): detail is not valid JSON"),
        (pd.DataFrame([good]).iloc[:0], f"{path}: no pairs"),
    ):
        frame.to_parquet(path)
        assert main([*common, "--checkpoint", str(tmp_path / "absent")]) == 2
        assert problem in capsys.readouterr().err


def test_the_spans_mean_row_counts_the_pairs_it_averages() -> None:
    """It gave every sampled pair (NoContr's too) beside a mean over the error classes."""
    from evaluator.cli.bench.spans import synth_report

    result = {
        "pairs": 28, "pairs_file": "val.parquet", "missinfo_unplaced": 1,
        "per_class": {
            "NoContr": {"pairs": 2, "any_span": {"ours": 0.5, "baseline": 0.5}},
            "EntErr": {"pairs": 3, "ours": 0.5, "baseline": 0.4},
            "NumErr": {"pairs": 22, "ours": 0.7, "baseline": 0.6},
        },
        "mean_f1": {"ours": 0.6, "baseline": 0.5},
    }  # fmt: skip
    mean = next(line for line in synth_report(result).splitlines() if line.startswith("mean"))
    assert mean.split()[:5] == ["mean", "over", "classes", "25", "0.600"]
