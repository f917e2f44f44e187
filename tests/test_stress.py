"""Stress tests: perturbations at their levels, noise ratio, verdict, metrics, report, CLI."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from test_predict import NLI_TASK, REGRESSION_TASK, make_checkpoint

from evaluator.cli import main
from evaluator.evaluator import Evaluator
from evaluator.features import FeatureScaler
from evaluator.hub import save_pretrained
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.stress.data import StressItem, items_from_jsonl, load_items, select
from evaluator.stress.metrics import feature_metric, mismatch_metric, parse_metrics, run_metric
from evaluator.stress.noise_ratio import noise_ratio
from evaluator.stress.perturbations import INJECTIONS, PERTURBATIONS, Source, count_for
from evaluator.stress.report import write_report
from evaluator.stress.runner import perturb_items, run_stress
from evaluator.stress.verdict import passes
from mismatch_core.errors import CheckpointError, DataError

GOLD = (
    "John Smith drove the red car to the hospital in Boston. "
    "The doctor examined him and sent him home. "
    "Mary Jones met the doctor in Chicago on Monday."
)
SRC = "A long source article about John Smith, a car, a hospital and a doctor."
FOREIGN = "The weather was sunny all week."


def apply(nlp, name: str, seed: int = 0, text: str = GOLD, src: str | None = SRC):
    source = Source(rng=random.Random(seed), src=src, foreign_sentence=lambda rng: FOREIGN)
    return PERTURBATIONS[name].apply(nlp(text), source)


def tokens(nlp, text: str) -> list[str]:
    return sorted(t.text for t in nlp(text))


@pytest.mark.parametrize("name", list(PERTURBATIONS))
def test_each_perturbation_is_deterministic_and_grows_with_the_level(nlp, name: str) -> None:
    test = PERTURBATIONS[name]
    texts = apply(nlp, name, seed=3)
    assert texts == apply(nlp, name, seed=3)
    assert len(texts) == len(test.levels)
    assert all(text and text != GOLD for text in texts)
    ratios = [noise_ratio(GOLD, text, test.switching) for text in texts]
    assert all(r > 0 for r in ratios)
    assert ratios == sorted(ratios), ratios


def test_truncation_keeps_a_shrinking_prefix(nlp) -> None:
    texts = apply(nlp, "truncation")
    lengths = [len(t.split()) for t in texts]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] < len(GOLD.split())
    assert all(GOLD.startswith(t) for t in texts)


def test_word_class_removals_reach_every_candidate_at_the_top_level(nlp) -> None:
    def count(text: str) -> int:
        return text.lower().split().count("the")

    articles = apply(nlp, "article_removal")
    assert count(articles[-1]) == 0 and 0 < count(articles[0]) < count(GOLD) == 4
    prepositions = apply(nlp, "preposition_removal")[-1].split()
    assert not {"to", "in", "on"} & set(prepositions)
    assert "Boston." in prepositions  # only the preposition goes


def test_verb_lemmatization_and_swaps_keep_the_words(nlp) -> None:
    assert "drive" in apply(nlp, "verb_lemmatization")[-1].split()
    for name in ("local_swap", "noun_switching", "verb_switching"):
        assert tokens(nlp, apply(nlp, name)[-1]) == tokens(nlp, GOLD), name


def test_repeated_token_and_repetition_add_copies(nlp) -> None:
    assert len(apply(nlp, "repeated_token")[0].split()) > len(GOLD.split())
    texts = apply(nlp, "repetition")
    for copies, text in zip(PERTURBATIONS["repetition"].levels, texts, strict=True):
        assert text == GOLD[:-1] + " in Chicago on Monday" * int(copies) + "."


def test_middle_swap_moves_the_start_of_each_sentence_to_its_end(nlp) -> None:
    texts = apply(nlp, "middle_swap")
    assert texts[0].startswith("drove the red car")
    assert "John Smith." in texts[0]


def test_sentence_tests_reorder_or_replace_whole_sentences(nlp) -> None:
    sentences = [s.text.strip() for s in nlp(GOLD).sents]
    switched = apply(nlp, "sentence_switching")[-1]
    assert switched != GOLD and sorted(switched.split()) == sorted(GOLD.split())
    assert all(sentence in switched for sentence in sentences)
    replaced = apply(nlp, "sentence_replacement")
    assert replaced[0].count(FOREIGN) == 1 and replaced[-1] == " ".join([FOREIGN] * 3)


def test_negation_uses_the_synth_rules_sentence_by_sentence(nlp) -> None:
    texts = apply(nlp, "negation")
    negations = [sum(t.count(w) for w in (" not ", "n't ", "No ")) for t in texts]
    assert negations[0] >= 1 and negations == sorted(negations) and negations[-1] >= 2


def test_entity_tests_name_generic_or_switched_entities(nlp) -> None:
    generic = apply(nlp, "generic_named_entity")[-1]
    assert "John Smith" not in generic and "the person" in generic.lower()
    switched = apply(nlp, "named_entity_switching")[0]
    assert switched.startswith(("Mary Jones drove", "John Smith drove"))
    assert tokens(nlp, switched) == tokens(nlp, GOLD)


def test_copy_source_and_injection(nlp) -> None:
    assert apply(nlp, "copy_source") == [SRC]
    assert apply(nlp, "copy_source", src=None) is None
    assert apply(nlp, "injection")[0] in INJECTIONS


def test_a_test_that_cannot_apply_returns_none(nlp) -> None:
    assert apply(nlp, "article_removal", text="Dogs bark loudly.") is None
    assert apply(nlp, "sentence_switching", text="Dogs bark loudly.") is None


def test_count_for_changes_at_least_one_and_at_most_all() -> None:
    assert [count_for(f, 3) for f in (0.25, 0.5, 0.75, 1.0)] == [1, 2, 3, 3]
    assert count_for(0.1, 4) == 1 and count_for(1.0, 4) == 4


def test_noise_ratio_is_levenshtein_over_length_halved_for_switching() -> None:
    assert noise_ratio("abcd", "abcd") == 0.0
    assert noise_ratio("abcd", "abce") == 0.25
    assert noise_ratio("abcd", "ab") == 0.5
    assert noise_ratio("abcd", "badc", switching=True) == pytest.approx(
        noise_ratio("abcd", "badc") / 2
    )
    with pytest.raises(ValueError, match="empty"):
        noise_ratio("", "x")


@pytest.mark.parametrize(
    ("scores", "below", "expected"),
    [
        ([0.9, 0.8, 0.7, 0.5], [0.9, 0.95, 1.0], True),
        ([0.9, 0.8, 0.85, 0.5], [0.9, 0.95, 1.0], False),  # not monotone
        ([0.9, 0.9, 0.8], [0.9, 1.0], False),  # a flat step is no decrease
        ([0.9, 0.95, 0.97], [0.1, 0.0], False),  # noise scores higher
        ([0.9, 0.8, 0.7], [0.4, 0.9], False),  # mean falls but most texts rank above gold
        ([0.9, 0.2], [1.0], True),  # one-level test
    ],
)
def test_verdict_on_constructed_curves(scores, below, expected) -> None:
    assert passes(scores, below) is expected


def test_verdict_rejects_inconsistent_lengths() -> None:
    with pytest.raises(ValueError, match="below-gold"):
        passes([0.9, 0.8], [0.5, 0.5])


def overlap(refs, gens, srcs) -> list[float]:
    """A toy callable metric: share of the closest reference's words (with counts) in the text."""
    return [
        max(sum((Counter(r.split()) & Counter(g.split())).values()) / len(r.split()) for r in rs)
        for rs, g in zip(refs, gens, strict=True)
    ]


def items() -> list[StressItem]:
    names = [("John Smith", "Boston"), ("Anna Lee", "Paris"), ("Tom Hardy", "Rome")]
    return [
        StressItem(gold=GOLD.replace("John Smith", a).replace("Boston", b), refs=(GOLD,), src=SRC)
        for a, b in names
    ]


@pytest.fixture(scope="module")
def result(nlp):
    tests = ["truncation", "article_removal", "negation", "copy_source", "injection"]
    metrics = {"overlap": overlap, "chrf": feature_metric("chrf")}
    return run_stress(items(), metrics, tests=tests, seeds=2, min_items=1, nlp=nlp)


def test_a_callable_metric_plugs_in_and_truncation_lowers_it(result) -> None:
    curve = result.curves["overlap"]["truncation"]
    assert curve.passed and curve.levels[0] == 0.0 and curve.levels == sorted(curve.levels)
    assert result.tests["truncation"].items == 3 and result.tests["copy_source"].intensities == [
        1.0
    ]
    assert set(result.curves) == {"overlap", "chrf"}


def test_report_has_the_documented_shape(result, tmp_path: Path) -> None:
    signatures = {"overlap": {"signature": "checkpoint:x|sha256:0"}}  # as signatures() gives
    written = write_report(
        result, tmp_path / "out", title="toy", command="mismatch stress ...", signatures=signatures
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for metric in ("overlap", "chrf"):
        tests = report["metrics"][metric]["tests"]
        assert set(tests) == {
            "truncation",
            "article_removal",
            "negation",
            "copy_source",
            "injection",
        }
        for entry in tests.values():
            assert isinstance(entry["pass"], bool)
            assert len(entry["levels"]) == len(entry["scores"]) == len(entry["std"])
            assert len(entry["below_gold"]) == len(entry["levels"]) - 1
    assert (tmp_path / "out" / "plots" / "overlap.png").read_bytes()[:4] == b"\x89PNG"
    assert "| truncation |" in (tmp_path / "out" / "report.md").read_text()
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "\n- signature of overlap: `checkpoint:x|sha256:0`\n" in markdown
    assert report["signatures"] == signatures
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == sorted(
        [p.name for p in written] + ["plots"]
    )  # no temp files left
    (tmp_path / "out" / "plots" / "my_figure.png").write_bytes(b"mine")  # a user's file
    chrf_only = dataclasses.replace(result, curves={"chrf": result.curves["chrf"]})
    write_report(chrf_only, tmp_path / "out", title="toy", command="mismatch stress ...")
    assert sorted(p.name for p in (tmp_path / "out" / "plots").iterdir()) == [
        "chrf.png",
        "my_figure.png",
    ]  # the plot no report links is gone, the user's stays


def test_metrics_whose_names_read_alike_as_files_keep_a_plot_each(result, tmp_path: Path) -> None:
    """``x/y`` and ``x_y`` both became plots/x_y.png: one plot was lost, both sections of the
    report linked the other."""
    twins = ("mismatch=exp/v1", "mismatch=exp_v1")
    renamed = dataclasses.replace(
        result,
        curves=dict.fromkeys(twins, result.curves["chrf"]),
        seconds=dict.fromkeys(twins, result.seconds["chrf"]),
    )
    written = write_report(renamed, tmp_path, "toy", "cmd")
    assert sorted(p.name for p in written if p.suffix == ".png") == [
        "mismatch_exp_v1-2.png",
        "mismatch_exp_v1.png",
    ]
    assert "(plots/mismatch_exp_v1-2.png)" in (tmp_path / "report.md").read_text()


def test_levels_that_change_no_text_are_dropped(nlp) -> None:
    one_sentence = [StressItem(f"{name} met the doctor in Chicago.", (GOLD,)) for name in "AB"]
    docs = [nlp(item.gold) for item in one_sentence]
    outputs, kept = perturb_items(PERTURBATIONS["negation"], one_sentence, docs, seeds=2)
    assert kept == [0.25] and all(len(texts) == 1 for texts in outputs.values())
    outputs, kept = perturb_items(PERTURBATIONS["truncation"], one_sentence, docs, seeds=1)
    assert kept == [0.1, 0.2, 0.3]  # 7 tokens: cutting 30% and 40% both cut three


def test_a_metric_with_a_wrong_output_is_named() -> None:
    with pytest.raises(ValueError, match="'bad' returned shape"):
        run_metric("bad", lambda refs, gens, srcs: [0.0], [["a"], ["b"]], ["a", "b"], [None, None])


def failing_metric(refs, gens, srcs):
    raise KeyError("vocabulary")


def test_a_failing_callable_metric_is_named() -> None:
    metric = parse_metrics("test_stress:failing_metric")["test_stress:failing_metric"]
    with pytest.raises(ValueError, match="metric 'test_stress:failing_metric' failed .*KeyError"):
        run_metric("x", metric, [["a"]], ["a"], [None])
    with pytest.raises(ValueError, match="'words' did not return one number per pair"):
        run_metric("words", lambda refs, gens, srcs: ["high"], [["a"]], ["a"], [None])


def test_parse_metrics_maps_names_and_rejects_unknown_ones() -> None:
    metrics = parse_metrics("bleu, rougeL,chrf_pp,test_stress:overlap")
    assert list(metrics) == ["bleu", "rougeL", "chrf_pp", "test_stress:overlap"]
    assert metrics["rougeL"]([["a cat sat"]], ["a cat sat"], [None])[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        parse_metrics("bleu,nope")
    with pytest.raises(ValueError, match="named twice"):
        parse_metrics("bleu,bleu")


def test_mismatch_metric_is_p_no_contradiction_of_a_checkpoint(tmp_path: Path) -> None:
    features = ["bleu", "chrf", "rougeL_f"]
    torch.manual_seed(0)
    model = MismatchModel(MismatchConfig(feature_names=features, use_text=False)).eval()
    rng = np.random.default_rng(0)
    scaler = FeatureScaler.fit(pd.DataFrame(rng.random((20, 3)), columns=features))
    path = save_pretrained(model, tmp_path / "ckpt", scaler=scaler)
    refs, gens = [["a cat sat", "a dog sat"], ["x"]], ["a cat sat", "y"]
    scores = mismatch_metric(path)(refs, gens, [None, None])
    assert scores.shape == (2,) and ((scores > 0) & (scores < 1)).all()
    predicted = Evaluator.from_pretrained(path).predict(refs, gens, progress=False)
    # P(NoContr), not another class's probability
    assert scores.tolist() == pytest.approx([p.score for p in predicted], abs=1e-6)


def test_mismatch_metric_reads_the_ratings_of_a_fine_tuned_checkpoint(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "summarization", REGRESSION_TASK)
    refs, gens = [["a cat sat", "a dog sat"], ["x"]], ["a cat sat", "y"]
    predictions = Evaluator.from_pretrained(path).predict(refs, gens, progress=False)
    fluency = parse_metrics(f"mismatch={path}#fluency")[f"mismatch={path}#fluency"]
    assert fluency(refs, gens, [None, None]).tolist() == [p.ratings["fluency"] for p in predictions]
    mean = mismatch_metric(path, "ratings")(refs, gens, [None, None])
    expected = [
        ((p.ratings["coherence"] - 1) / 4 + (p.ratings["fluency"] - 1) / 4) / 2 for p in predictions
    ]
    assert mean == pytest.approx(expected)
    with pytest.raises(
        ValueError, match=r"rates \['coherence', 'fluency'\] \(or 'ratings'\), not 'overall'"
    ):
        mismatch_metric(path, "overall")
    nli = make_checkpoint(tmp_path / "nli", NLI_TASK)
    assert mismatch_metric(nli, "entailment")(refs, gens, [None, None]).shape == (2,)
    with pytest.raises(ValueError, match="classifies; name one class"):
        mismatch_metric(nli, "ratings")
    with pytest.raises(ValueError, match="not fine-tuned on a task"):
        mismatch_metric(make_checkpoint(tmp_path / "base"), "fluency")
    with pytest.raises(CheckpointError, match="metric 'mismatch=x@': checkpoint 'x@': expected"):
        parse_metrics("bleu,mismatch=x@")  # which metric names a bad checkpoint


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return path


def test_items_from_jsonl_validate_and_select_deterministically(tmp_path: Path) -> None:
    rows = [{"ref": ["r1", "r2"], "gen": f"gold  {i}", "src": None} for i in range(5)]
    path = write_jsonl(tmp_path / "items.jsonl.gz", rows + rows[:1])
    loaded = items_from_jsonl(path)
    assert loaded[0] == StressItem("gold 0", ("r1", "r2"), None)
    assert select(loaded, 3) == select(list(reversed(loaded)), 3) and len(select(loaded, None)) == 5
    bad = write_jsonl(tmp_path / "bad.jsonl.gz", [rows[0], {"ref": "r"}])
    with pytest.raises(DataError, match=r"bad.jsonl.gz:2: missing key 'gen'"):
        items_from_jsonl(bad)
    with pytest.raises(DataError, match="neither a file nor a task"):
        load_items(str(tmp_path / "missing.jsonl"))


def test_a_plot_that_fails_leaves_no_report_linking_it(result, tmp_path: Path, monkeypatch) -> None:
    """report.md links the plots: written first, a failed plot left a report with a dead link."""
    import evaluator.stress.report as report

    def broken(*args):
        raise RuntimeError("no plot")

    monkeypatch.setattr(report, "plot_metric", broken)
    with pytest.raises(RuntimeError, match="no plot"):
        write_report(result, tmp_path / "out", title="toy", command="mismatch stress ...")
    assert not (tmp_path / "out" / "report.md").exists()
    assert not (tmp_path / "out" / "report.json").exists()


def test_cli_writes_the_report(tmp_path: Path, capsys) -> None:
    rows = [
        {"ref": GOLD, "gen": GOLD.replace("Boston", city), "src": SRC}
        for city in "Paris Rome Oslo Bern Lima Riga Kyiv Doha Baku Suva Apia".split()
    ]
    data = write_jsonl(tmp_path / "gold.jsonl.gz", rows)
    out = tmp_path / "report"
    argv = ["stress", "--metrics", "bleu", "--data", str(data), "--out", str(out)]
    assert main([*argv, "--seeds", "1", "--tests", "truncation,injection"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["bleu"]["tests"]["truncation"]["pass"] is True
    assert "bleu: " in capsys.readouterr().out
    assert main([*argv, "--tests", "nope"]) == 2
    assert "unknown test(s) nope" in capsys.readouterr().err
    assert main([*argv, "--tests", ","]) == 2  # not "all": an empty selection is a mistake
    assert "--tests ',' names no test" in capsys.readouterr().err
    assert json.loads((out / "report.json").read_text()) == report  # the report is kept
    # no test with a verdict: a matplotlib traceback after report.md had linked a missing plot
    plain = write_jsonl(
        tmp_path / "plain.jsonl.gz", [{"ref": r["ref"], "gen": r["gen"]} for r in rows]
    )
    empty = tmp_path / "empty"
    argv = ["stress", "--metrics", "bleu", "--data", str(plain), "--out", str(empty)]
    assert main([*argv, "--seeds", "1", "--tests", "copy_source"]) == 2
    assert (  # 11 items: a verdict needs half of them
        "no test gives a verdict on these 11 items: copy_source applies to 0 of 11 items (< 6)"
    ) in capsys.readouterr().err
    assert not empty.exists()


def test_cli_refuses_an_unusable_out_before_scoring(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "gold.jsonl", [{"ref": GOLD, "gen": GOLD}])
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    argv = ["stress", "--metrics", "bleu", "--data", str(data), "--out", str(taken)]
    assert main(argv) == 2
    assert f"--out: {taken} exists and is not a directory" in capsys.readouterr().err
    assert taken.read_text() == "keep me\n"
    # an empty --out wrote the report into the working directory; a --data that is the report
    # this run writes was replaced by it
    assert main(["stress", "--metrics", "bleu", "--data", str(data), "--out", " "]) == 2
    assert "--out is empty; give a folder" in capsys.readouterr().err
    report = tmp_path / "report.md"
    report.write_text("keep me\n")
    assert main(["stress", "--data", str(report), "--out", str(tmp_path)]) == 2
    assert f"--data {report} is a report this run writes to --out {tmp_path}" in (
        capsys.readouterr().err
    )
    assert report.read_text() == "keep me\n"
    # a criterion left out after '#' scored P(NoContr) under the metric's name
    gold = write_jsonl(tmp_path / "gold.jsonl.gz", [{"ref": GOLD, "gen": GOLD}])
    given = ["stress", "--data", str(gold), "--out", str(tmp_path / "o")]
    assert main([*given, "--metrics", "mismatch=checkpoints/mismatch-base#"]) == 2
    assert "name a criterion or 'ratings' after '#'" in capsys.readouterr().err
    # a module of the working directory is not importable from the console script
    assert main([*given, "--metrics", "mymetric:score"]) == 2
    assert "No module named 'mymetric'; a module of your own must be importable: run with" in (
        capsys.readouterr().err
    )


def test_a_file_that_is_not_gzip_is_named(tmp_path: Path, capsys) -> None:
    fake = tmp_path / "gold.jsonl.gz"
    fake.write_text(json.dumps({"ref": GOLD, "gen": GOLD}) + "\n")
    argv = ["stress", "--metrics", "bleu", "--data", str(fake), "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    assert f"{fake}: not a readable gzip file" in capsys.readouterr().err
