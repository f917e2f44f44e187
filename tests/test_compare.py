"""`mismatch compare`: systems on the same references, each against the first, with intervals
and paired randomization p-values (``evaluator.system_comparison``)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_predict import GENS, REFS, REGRESSION_TASK, make_checkpoint, write_jsonl, write_lines

from evaluator.cli import main
from evaluator.evaluator import Evaluator
from evaluator.predict_io import Prediction
from evaluator.system_comparison import (
    Mean,
    compare_systems,
    comparison_report,
    mean_interval,
    paired_difference,
    randomization_is_exact,
)
from mismatch_core.checkpoint_files import checkpoint_sha256
from mismatch_core.taxonomy import CODES


def prediction(score: float, labels: list[str], fluency: float = 3.0, id_: str = "0") -> Prediction:
    return Prediction(id_, score, {"fluency": fluency}, dict.fromkeys(CODES, 0.0), labels)


def test_a_difference_in_every_pair_has_the_exact_randomization_p_value() -> None:
    """Five pairs all one way: 2**5 sign patterns, two as extreme as the one seen (all +, all -),
    so p = 2/32 exactly (scipy enumerates them all when resamples exceed them)."""
    baseline = np.zeros(5)
    system = np.array([0.1, 0.2, 0.3, 0.1, 0.2])
    difference = paired_difference(baseline, system, resamples=1000, seed=0)
    assert difference.delta == pytest.approx(0.18)
    assert difference.p_value == pytest.approx(2 / 32)
    assert 0.1 <= difference.low < difference.delta < difference.high <= 0.3


def test_the_randomization_is_exact_while_the_sign_patterns_fit_in_the_resamples() -> None:
    assert randomization_is_exact(7, 128) and randomization_is_exact(7, 200)
    assert not randomization_is_exact(8, 255) and randomization_is_exact(8, 256)
    assert not randomization_is_exact(200_000, 1000)


def test_the_p_value_counts_resamples_as_far_from_zero_either_way() -> None:
    """Sampled (2**40 sign patterns, 999 drawn): no pattern of 40 equal differences is as far
    from zero as all of them, so p is the smallest one, 1 / (R + 1), not twice it."""
    difference = paired_difference(np.zeros(40), np.ones(40), resamples=999, seed=0)
    assert difference.p_value == pytest.approx(1 / 1000)


def test_equal_systems_differ_by_nothing_with_p_one() -> None:
    values = np.array([0.2, 0.9, 0.4, 0.7])
    difference = paired_difference(values, values, resamples=200, seed=0)
    assert (difference.delta, difference.low, difference.high, difference.p_value) == (0, 0, 0, 1)


def test_a_mean_interval_holds_the_mean_and_a_constant_has_its_own_value() -> None:
    values = np.linspace(0.0, 1.0, 101)
    interval = mean_interval(values, resamples=500, seed=3)
    assert interval.mean == pytest.approx(0.5)
    assert 0.4 < interval.low < 0.5 < interval.high < 0.6
    assert mean_interval(values, resamples=500, seed=3) == interval  # seeded
    assert mean_interval(np.full(7, 0.25), resamples=500, seed=3) == Mean(0.25, 0.25, 0.25)


def test_a_clearly_better_system_is_significant_and_the_figures_are_its_shares() -> None:
    baseline = [prediction(0.2, ["NumErr"]) for _ in range(30)]
    better = [prediction(0.9, ["NoContr"], fluency=4.0) for _ in range(27)]
    better += [prediction(0.3, ["NumErr"], fluency=4.0) for _ in range(3)]
    comparison = compare_systems(["a", "b"], [baseline, better], ["fluency"], 500, seed=1)
    score = comparison["score"]
    assert "delta" not in score["a"] and score["a"]["mean"] == pytest.approx(0.2)
    assert score["b"]["delta"] == pytest.approx(0.64)
    assert score["b"]["p_value"] < 0.01 and score["b"]["delta_low"] > 0
    assert comparison["ratings"]["fluency"]["b"]["delta"] == pytest.approx(1.0)
    assert list(comparison["labels"]) == ["NumErr"]  # error classes some system lists
    assert comparison["labels"]["NumErr"]["a"]["mean"] == 1.0
    assert comparison["labels"]["NumErr"]["b"]["mean"] == pytest.approx(0.1)
    report = comparison_report(comparison, ["a", "b"])
    assert "rating fluency" in report
    assert "NumErr  100.0  10.0" in report and "-90.0 (p " in report


def test_a_figure_does_not_depend_on_the_others_computed() -> None:
    """Each figure draws from a fresh generator of the seed: adding a class or a system leaves
    the score's figures as they were."""
    rng = np.random.default_rng(0)
    a = [prediction(float(s), []) for s in rng.random(40)]
    b = [prediction(float(s), []) for s in rng.random(40)]
    c = [prediction(float(s), ["EntErr"]) for s in rng.random(40)]
    two = compare_systems(["a", "b"], [a, b], [], 300, seed=5)
    three = compare_systems(["a", "b", "c"], [a, b, c], [], 300, seed=5)
    assert three["score"]["b"] == two["score"]["b"]
    assert compare_systems(["a", "b"], [a, b], [], 300, seed=6)["score"]["b"] != two["score"]["b"]


def test_the_command_defaults_are_the_librarys() -> None:
    """The parser writes them out (its --help does not load scipy); they must not drift."""
    import argparse
    import inspect

    from evaluator.cli import compare
    from evaluator.system_comparison import DEFAULT_RESAMPLES

    parser = argparse.ArgumentParser()
    compare.add_arguments(parser)
    defaults = inspect.signature(compare_systems).parameters
    assert parser.get_default("resamples") == DEFAULT_RESAMPLES == defaults["resamples"].default
    assert parser.get_default("seed") == defaults["seed"].default
    # the threshold the scoring commands write out (their --help does not load torch)
    from evaluator.cli.scoring import DEFAULT_THRESHOLD

    library = inspect.signature(Evaluator.from_pretrained).parameters["threshold"].default
    assert parser.get_default("threshold") == DEFAULT_THRESHOLD == library


def test_systems_that_cannot_be_compared_are_refused() -> None:
    one = [prediction(0.5, []), prediction(0.6, [])]
    with pytest.raises(ValueError, match="two or more systems"):
        compare_systems(["a"], [one], [])
    with pytest.raises(ValueError, match="different numbers of pairs: \\[1, 2\\]"):
        compare_systems(["a", "b"], [one, one[:1]], [])
    with pytest.raises(ValueError, match="at least 2 pairs"):
        compare_systems(["a", "b"], [one[:1], one[:1]], [])
    with pytest.raises(ValueError, match="each system needs its own name"):
        compare_systems(["a", "a"], [one, one], [])
    with pytest.raises(ValueError, match="resamples must be at least 100, got 99"):
        compare_systems(["a", "b"], [one, one], [], resamples=99)
    # a NaN compared as p 0.0, the most significant there is
    unrated = [prediction(0.5, [], id_="x"), prediction(0.6, [], fluency=float("nan"), id_="y")]
    with pytest.raises(ValueError, match="system 'b', pair 'y': rating 'fluency' is nan"):
        compare_systems(["a", "b"], [one, unrated], ["fluency"])
    unrated[1].ratings.pop("fluency")  # a KeyError
    with pytest.raises(ValueError, match="system 'b', pair 'y': no rating 'fluency'"):
        compare_systems(["a", "b"], [one, unrated], ["fluency"])


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    return {
        "refs": write_lines(root / "refs.txt", REFS),
        "mt": write_lines(root / "mt.txt", GENS[:4] + ["Kids are playing."]),
        "copy": write_lines(root / "copy.txt", REFS),
        "short": write_lines(root / "short.txt", REFS[:3]),
    }


def test_the_command_prints_and_writes_every_figure(tmp_path: Path, files, capsys) -> None:
    checkpoint = make_checkpoint(tmp_path / "task", REGRESSION_TASK)
    out = tmp_path / "figures.json"
    argv = ["compare", "--refs", str(files["refs"]), "--gens", str(files["mt"]),
            str(files["copy"]), "--names", "mt,copy", "--checkpoint", str(checkpoint),
            "--resamples", "200", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    figures = json.loads(out.read_text())
    evaluator = Evaluator.from_pretrained(checkpoint)
    assert figures["signature"]["sha256"] == checkpoint_sha256(checkpoint)
    assert f"signature {evaluator.signature}" in printed
    assert (figures["pairs"], figures["baseline"], figures["resamples"]) == (5, "mt", 200)
    # 2 ** 5 sign patterns, fewer than the resamples: the p-values are exact, and say so
    assert figures["randomization_exact"] is True
    assert "200 bootstrap resamples, randomization exact over all 32 sign patterns" in printed
    assert figures["systems"] == {"mt": str(files["mt"]), "copy": str(files["copy"])}
    assert set(figures["ratings"]) == {"coherence", "fluency"}
    # the figures are those of the predictions predict gives, compared in the library
    scored = [evaluator.predict(REFS, open(files[n]).read().splitlines(), progress=False)
              for n in ("mt", "copy")]  # fmt: skip
    expected = compare_systems(["mt", "copy"], scored, evaluator.rating_keys, 200, seed=13)
    for key in ("score", "ratings", "labels"):
        assert figures[key] == json.loads(json.dumps(expected[key])), key
    assert comparison_report(expected, ["mt", "copy"]).splitlines()[1] in printed
    assert main(argv) == 0 and json.loads(out.read_text()) == figures  # seeded


def test_default_names_and_several_references(tmp_path: Path, files, capsys) -> None:
    """Systems are named by their file names (a compressed one's too); a second reference file
    gives each pair two references, the closest deciding (a copy of either reads as a copy)."""
    checkpoint = make_checkpoint(tmp_path / "base")
    other = write_lines(tmp_path / "other.txt", [ref.upper() for ref in REFS])
    packed = tmp_path / "copy.txt.gz"
    packed.write_bytes(gzip.compress(files["copy"].read_bytes()))
    argv = ["compare", "--refs", str(other), str(files["refs"]), "--gens", str(files["mt"]),
            str(packed), "--checkpoint", str(checkpoint), "--resamples", "100",
            "--quiet", "--out", str(tmp_path / "f.json")]  # fmt: skip
    assert main(argv) == 0
    figures = json.loads((tmp_path / "f.json").read_text())
    assert list(figures["systems"]) == ["mt", "copy"] and figures["baseline"] == "mt"
    single = Evaluator.from_pretrained(checkpoint).predict(REFS, REFS, progress=False)
    assert figures["score"]["copy"]["mean"] == pytest.approx(np.mean([p.score for p in single]))
    assert "\ncopy " in capsys.readouterr().out


def test_bad_input_is_refused_before_scoring(tmp_path: Path, files, capsys) -> None:
    refs, mt, copy = str(files["refs"]), str(files["mt"]), str(files["copy"])
    for argv, message in (
        (["--gens", mt], "--gens: give two or more systems' files"),
        (["--gens", mt, copy, "--names", "a"], "--names: give one non-empty name per system file"),
        (["--gens", mt, copy, "--names", "a,a"], "--names: each system needs its own name"),
        (["--gens", mt, copy, "--resamples", "99"], "--resamples must be at least 100 (fewer"),
        (["--gens", mt, mt], "a system file is given twice; give --names"),
        (["--gens", mt, copy, "--inputs", mt, copy], "give either --inputs or --refs/--gens"),
        (["--gens", mt, copy, "--task", "summarization"], "give --srcs FILE"),
        (["--gens", mt, copy, "--seed", "-1"], "--seed must be in 0..4294967295, got -1"),
        (["--gens", mt, copy, "--out", mt], f"--out {mt} is an input of this run"),
        (["--gens", mt, copy, "--out", str(tmp_path / "f.json.gz")], "plain JSON; drop the .gz"),
        (["--gens", mt, copy, "--out", "-"], "--out -: name a file"),  # not a file named "-"
        (["--gens", mt, str(files["short"])], "has 5 line(s) but"),
        (["--gens", mt, copy, "--device", "tpu"], "--device: unknown device 'tpu'"),
    ):
        assert main(["compare", "--refs", refs, *argv, "--quiet"]) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert main(["compare", "--gens", mt, copy]) == 2
    assert "line-aligned input needs both --refs and --gens" in capsys.readouterr().err
    assert main(["compare"]) == 2
    assert "no input: give --refs F --gens A B, or --inputs A.jsonl B.jsonl" in (
        capsys.readouterr().err
    )
    assert not list(tmp_path.iterdir())


def test_a_score_that_is_not_a_number_is_one_line(files, capsys, monkeypatch) -> None:
    """compare_systems' refusal reached the command as a traceback."""
    scored = Evaluator.predict

    def unscored(self, *args, **kwargs) -> list[Prediction]:
        return [replace(p, score=float("nan")) for p in scored(self, *args, **kwargs)]

    monkeypatch.setattr(Evaluator, "predict", unscored)
    argv = ["compare", "--refs", str(files["refs"]), "--gens", str(files["mt"]), str(files["copy"])]
    assert main([*argv, "--quiet"]) == 2
    assert "mismatch compare: error: system 'mt', pair '1': the score is nan" in (
        capsys.readouterr().err
    )


def test_the_figures_may_not_replace_the_checkpoint_read(tmp_path: Path, files, capsys) -> None:
    """--out naming the checkpoint's config.json replaced it with the figures, exit 0."""
    checkpoint = make_checkpoint(tmp_path / "base")
    config = checkpoint / "config.json"
    before = config.read_bytes()
    argv = ["compare", "--refs", str(files["refs"]), "--gens", str(files["mt"]), str(files["copy"])]
    assert main([*argv, "--checkpoint", str(checkpoint), "--out", str(config), "--quiet"]) == 2
    assert f"--out {config} is an input of this run" in capsys.readouterr().err
    assert config.read_bytes() == before


def test_jsonl_inputs_are_read_as_predict_reads_them(tmp_path: Path, files, capsys) -> None:
    """--inputs: one JSONL per system (a list of references per pair allowed); the figures are
    those of the same pairs given as line-aligned files; other references are refused."""
    checkpoint = make_checkpoint(tmp_path / "base")
    mt_gens = files["mt"].read_text().splitlines()
    for name, gens in (("mt", mt_gens), ("copy", REFS)):
        pairs = zip(REFS, gens, strict=True)
        rows = [{"id": f"p{i}", "ref": ref, "gen": gen} for i, (ref, gen) in enumerate(pairs)]
        write_jsonl(tmp_path / f"{name}.jsonl", rows)
    common = ["--checkpoint", str(checkpoint), "--resamples", "100", "--quiet"]
    jsonl = ["--inputs", str(tmp_path / "mt.jsonl"), str(tmp_path / "copy.jsonl")]
    aligned = ["--refs", str(files["refs"]), "--gens", str(files["mt"]), str(files["copy"])]
    for argv, out in ((jsonl, "j.json"), (aligned, "a.json")):
        assert main(["compare", *argv, *common, "--out", str(tmp_path / out)]) == 0
    by_jsonl = json.loads((tmp_path / "j.json").read_text())
    by_lines = json.loads((tmp_path / "a.json").read_text())
    assert list(by_jsonl["systems"]) == ["mt", "copy"]
    for key in ("pairs", "score", "ratings", "labels"):
        assert by_jsonl[key] == by_lines[key], key
    other = [{"ref": [ref, "Another reference."], "gen": ref} for ref in REFS]
    write_jsonl(tmp_path / "other.jsonl", other)
    assert main(["compare", "--inputs", str(tmp_path / "mt.jsonl"), str(tmp_path / "other.jsonl"),
                 *common]) == 2  # fmt: skip
    assert "other.jsonl: pair 1 (id '1') has other references than pair 1 of" in (
        capsys.readouterr().err
    )  # an id of its own and a line number are not compared
    for row in other:  # no ids in either file: each pair is named by its line
        row["ref"] = row["ref"][0]
    no_ids = [json.dumps(dict(row, gen="x")) for row in other]  # a blank line shifts line numbers
    (tmp_path / "mt_no_ids.jsonl").write_text(no_ids[0] + "\n\n" + "\n".join(no_ids[1:]) + "\n")
    other[-1]["ref"] = "Another reference."  # reached past the lines the blank one shifted
    write_jsonl(tmp_path / "other.jsonl", other)
    assert main(["compare", "--inputs", str(tmp_path / "mt_no_ids.jsonl"),
                 str(tmp_path / "other.jsonl"), *common]) == 2  # fmt: skip
    last = len(REFS)
    assert f"other.jsonl: pair {last} (id '{last}') has other references than pair {last} of" in (
        capsys.readouterr().err
    )
    shuffled = [{"id": f"p{i}", "ref": ref, "gen": ref} for i, ref in enumerate(REFS)]
    shuffled[0]["id"], shuffled[1]["id"] = "p1", "p0"  # same references, pairs in another order
    write_jsonl(tmp_path / "shuffled.jsonl", shuffled)
    assert main(["compare", "--inputs", str(tmp_path / "mt.jsonl"), str(tmp_path / "shuffled.jsonl"),
                 *common]) == 2  # fmt: skip
    assert "shuffled.jsonl: pair 1 has id 'p1', pair 1 of" in capsys.readouterr().err
