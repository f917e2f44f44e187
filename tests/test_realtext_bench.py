"""`mismatch bench realtext`: its pure computations by value, the held-out group rule, and the
command end to end on tiny fixture files with tiny random checkpoints (structure, and a task
checkpoint's rating column against what ``Evaluator.predict`` rates)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from jsonl_files import write_jsonl_gz

from evaluator.bench.realtext import Scorer, auroc, kendall_like_tau, share
from evaluator.cli import main
from evaluator.cli.bench.realtext import bases_report
from evaluator.evaluator import Evaluator
from evaluator.features import FeatureScaler
from evaluator.hub import load, save_pretrained
from evaluator.human_data import HumanRecord
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.realtext_data import (
    SICK_TRIAL,
    bases_trained_on,
    bench_split,
    load_darr,
    load_sick,
    real_base_set,
)
from mismatch_core.checkpoint_files import checkpoint_sha256

FEATURES = ["bleu", "chrf", "rougeL_f"]
BASE_METRICS = ["P(NoContr)", "sentBLEU", "chrF", "BERTScore-MiniLM"]
TASKS = {
    "summarization": {
        "kind": "regression",
        "criteria": [
            {"key": "coherence", "low": 1.0, "high": 5.0},
            {"key": "relevance", "low": 1.0, "high": 5.0},
        ],
    },
    "nli": {
        "kind": "classification",
        "criteria": [
            {"key": key, "low": 0.0, "high": 1.0}
            for key in ("entailment", "neutral", "contradiction")
        ],
    },
}


def test_kendall_like_tau_counts_a_tie_as_discordant() -> None:
    # 2 concordant, 1 discordant, 1 tie: (2 - 2) / 4
    assert kendall_like_tau(np.array([2.0, 3.0, 1.0, 5.0]), np.array([1.0, 2.0, 4.0, 5.0])) == 0.0
    assert kendall_like_tau(np.array([2.0, 3.0, 1.0]), np.array([1.0, 2.0, 0.0])) == 1.0
    assert kendall_like_tau(np.array([1.0, 1.0]), np.array([1.0, 1.0])) == -1.0


def test_auroc_known_answers() -> None:
    # positives beat negatives in 5 of 6 (positive, negative) pairs
    assert auroc(np.array([0.9, 0.8, 0.4]), np.array([0.5, 0.3])) == pytest.approx(5 / 6)
    assert auroc(np.array([0.5]), np.array([0.5])) == 0.5  # a tie counts half
    assert auroc(np.array([0.1, 0.2]), np.array([0.7, 0.9])) == 0.0


def test_share() -> None:
    assert share(np.array([True, False, True, True])) == 0.75
    assert np.isnan(share(np.array([], dtype=bool)))


def hashed(seed: int, group: str) -> float:
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def record(group: str, index: int = 0, **scores: float) -> HumanRecord:
    return HumanRecord(f"{group}:{index}", ("ref",), "gen", None, group, scores)


def test_the_report_names_the_rules_our_score_drops_least() -> None:
    """Rules with 20+ pairs, lowest P(NoContr) drop first, at most five; a rule on fewer
    pairs says too little to be named (it stays in the JSON)."""

    def rule(code: str, pairs: int, drop: float) -> dict:
        return {
            "class": code,
            "pairs": pairs,
            "drop": {"P(NoContr)": drop, "chrF": 0.9},
            "top_error_is_class": 0.5,
            "read_as_nocontr": 0.25,
        }

    per_rule = {
        "GramErr/article": rule("GramErr", 40, 0.60),
        "GramErr/agreement": rule("GramErr", 20, 0.55),
        "NumErr/ordinal": rule("NumErr", 19, 0.10),  # too few pairs
        "NegErr/aux_not": rule("NegErr", 50, 0.97),
        "RepErr/phrase": rule("RepErr", 30, 0.90),
        "OutofRef/join_clause": rule("OutofRef", 30, 0.95),
        "MissInfo/sentence": rule("MissInfo", 30, 0.96),
    }
    result = {
        "bases": {"wmt15": 3},
        "pairs": 219,
        "base_nocontr_recall": 0.5,
        "base_nocontr_recall_by_dataset": {"wmt15": 0.5},
        "drop": {"P(NoContr)": 0.8, "chrF": 0.9},
        "meaning_pairs": 100,
        "drop_meaning": {"P(NoContr)": 0.85, "chrF": 0.95},
        "top_error_is_class_mean_over_classes": 0.5,
        "per_class": {},
        "per_rule": per_rule,
        "rule_errors": {},
    }
    line = next(x for x in bases_report(result).splitlines() if x.startswith("rules whose"))
    named = line.split(": ", 1)[1]
    assert named.startswith("GramErr/agreement 55.0% (20 pairs, 25.0% read as NoContr), ")
    assert [part.split(" ")[0] for part in named.split("), ")] == [
        "GramErr/agreement",
        "GramErr/article",
        "RepErr/phrase",
        "OutofRef/join_clause",
        "MissInfo/sentence",
    ]
    assert "NumErr/ordinal" not in line
    # a task checkpoint's rating gets its own line, ranked by its own drop
    result["drop"]["rating (summarization)"] = 0.8
    result["drop_meaning"]["rating (summarization)"] = 0.9
    for number, row in enumerate(per_rule.values()):
        row["drop"]["rating (summarization)"] = 1.0 - number / 10
    lines = [x for x in bases_report(result).splitlines() if x.startswith("rules whose")]
    assert [x.split(" drops")[0] for x in lines] == [
        "rules whose errors P(NoContr)",
        "rules whose errors rating (summarization)",
    ]
    assert lines[1].split(": ", 1)[1].startswith("MissInfo/sentence 40.0%")


def test_real_bases_come_from_the_test_groups_of_evaluate_seed_0() -> None:
    """Kept: exactly the groups whose seed-0 hash falls below 0.2 (evaluate seed 0 tests on
    them), every record of a kept group, and none of the others."""
    records = [record(f"g{i}", k) for i in range(2000) for k in range(2)]
    kept = bench_split(records)[1]
    assert {r.group for r in kept} == {r.group for r in records if hashed(0, r.group) < 0.2}
    assert len(kept) == 2 * len({r.group for r in kept})
    assert 300 < len({r.group for r in kept}) < 500  # about 0.2 of 2,000 groups


# --- end to end --------------------------------------------------------------------------


def held_out_groups(prefix: str, count: int) -> list[str]:
    candidates = [record(f"{prefix}:{i}") for i in range(3000)]
    return [r.group for r in bench_split(candidates)[1]][:count]


BASES = [
    (
        "Two dogs ran across the park in the morning.",
        "Two dogs ran through the park in the morning.",
    ),
    ("The company did not report a profit last year.", "The company reported no profit last year."),
]


def write_data(root: Path) -> None:
    sick = [
        {"a": "A man is playing a guitar.", "b": "A guitar is being played by a man.",
         "paraphrase": True, "contradiction": False},
        {"a": "A woman is slicing an onion.", "b": "An onion is being sliced by a woman.",
         "paraphrase": True, "contradiction": False},
        {"a": "A dog is running.", "b": "No dog is running.", "paraphrase": False, "contradiction": True},
        {"a": "Kids are playing.", "b": "Kids are not playing.", "paraphrase": False, "contradiction": True},
        {"a": "A cat sleeps.", "b": "A cat is on a sofa.", "paraphrase": False, "contradiction": False},
    ]  # fmt: skip
    write_jsonl_gz(root / "sick" / "sick_trial.jsonl.gz", sick)
    for name in ("wmt15", "wmt16", "wmt17"):
        groups = held_out_groups(name, len(BASES))
        rows = [
            {"id": f"{name}:{i}", "ref": ref, "gen": gen, "group": group, "scores": {"da_z": 0.9}}
            for i, ((ref, gen), group) in enumerate(zip(BASES, groups, strict=True))
        ]
        rows.append({"id": f"{name}:low", "ref": "A ref.", "gen": "A gen.", "group": groups[0],
                     "scores": {"da_z": 0.1}})  # fmt: skip
        write_jsonl_gz(root / "human" / "translation" / f"{name}_da.jsonl.gz", rows)
    group = held_out_groups("webnlg2020", 1)[0]
    write_jsonl_gz(
        root / "human" / "data2text" / "webnlg2020.jsonl.gz",
        [{"id": "w:0", "ref": ["Alan Bean was born in Texas.", "Bean's birthplace is Texas."],
          "gen": "Alan Bean was born in Texas.", "group": group, "scores": {"correctness": 95.0}}],
    )  # fmt: skip
    darr = []
    for lp in ("gu-en", "kk-en"):
        for i in range(4):
            ref = f"The {lp} minister met {i + 2} farmers in the village on Monday."
            darr.append(
                {
                    "lp": lp,
                    "ref": ref,
                    "better": {"gen": ref},
                    "worse": {"gen": "Minister farmers."},
                }
            )
    write_jsonl_gz(root / "human" / "translation" / "darr" / "wmt19_darr.pairs.jsonl.gz", darr)


def tiny_checkpoint(directory: Path, task: str | None = None, training: dict | None = None) -> Path:
    """A random metrics-only checkpoint; with ``task``, a rating head for TASKS[task] (its
    ratings also read the metrics, so they spread over pairs); ``training``: its record."""
    torch.manual_seed(0)
    ratings = len(TASKS[task]["criteria"]) if task else 0
    config = MismatchConfig(
        feature_names=FEATURES,
        use_text=False,
        num_ratings=ratings,
        rating_from_metrics=bool(ratings),
    )
    scales = [100.0, 100.0, 1.0]  # BLEU and chrF run 0-100: ratings do not saturate
    frame = pd.DataFrame(np.random.default_rng(0).random((40, 3)) * scales, columns=FEATURES)
    return save_pretrained(
        MismatchModel(config).eval(),
        directory,
        scaler=FeatureScaler.fit(frame),
        tasks={task: TASKS[task]} if task else None,
        training=training,
    )


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny")


@pytest.fixture(scope="module")
def task_checkpoints(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tasks")
    return {task: tiny_checkpoint(root / task, task) for task in TASKS}


def mean_ratings(checkpoint: Path, refs: list[str], gens: list[str]) -> np.ndarray:
    """What a user gets from the public API: the good class's probability for NLI, else the
    mean rating with each criterion mapped from its human scale to [0, 1]."""
    evaluator = Evaluator.from_pretrained(checkpoint)
    predictions = evaluator.predict(refs, gens, progress=False)
    if evaluator.kind == "classification":
        return np.array([p.ratings["entailment"] for p in predictions])
    return np.array(
        [np.mean([c.normalise(p.ratings[c.key]) for c in evaluator.criteria]) for p in predictions]
    )


@pytest.fixture
def data(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "data"
    write_data(root)
    monkeypatch.setenv("MISMATCH_DATA_DIR", str(root))
    return root


def refused(constant: str) -> None:
    """json.loads' hook for NaN and Infinity, which strict parsers refuse."""
    raise AssertionError(f"{constant} in JSON output")


def test_command_end_to_end(data: Path, checkpoint: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "results.json"
    args = ["bench", "realtext", "--checkpoint", str(checkpoint), "--darr-limit", "3"]
    assert main([*args, "--out", str(out)]) == 0
    printed, told = capsys.readouterr()
    # each part says that it started, before its minutes of silence
    assert [line for line in told.splitlines() if line.startswith("part ")] == [
        "part 1 of 3: sick ...",
        "part 2 of 3: bases ...",
        "part 3 of 3: darr ...",
    ]
    assert "AUROC" in printed and "Kendall-like tau" in printed and "top error = class" in printed
    result = json.loads(out.read_text(), parse_constant=refused)  # strict JSON: no bare NaN
    assert f"\nsignature {result['signature']['signature']}\n" in printed  # beside the table
    assert result["signature"]["sha256"] == checkpoint_sha256(checkpoint)
    assert result["signature"]["threshold"] == 0.5
    assert (result["threshold"], result["seed"], result["darr_limit"]) == (0.5, 13, 3)
    assert set(result["seconds"]) == {"sick", "bases", "darr"}
    sick = result["sick"]
    assert (sick["pairs"], sick["paraphrases"], sick["contradictions"]) == (5, 2, 2)
    # the base checkpoint has no rating column anywhere
    assert "rating" not in printed
    assert list(sick["auroc"]) == BASE_METRICS
    # the headline column is the checkpoint's P(NoContr), as predict gives it
    evaluator = Evaluator.from_pretrained(checkpoint)

    def ours(refs: list[str], gens: list[str]) -> np.ndarray:
        return np.array([p.score for p in evaluator.predict(refs, gens, progress=False)])

    judged = load_sick(data / "sick" / "sick_trial.jsonl.gz")
    scored = ours([p.ref for p in judged], [p.gen for p in judged])
    paraphrase = np.array([p.paraphrase for p in judged])
    contradiction = np.array([p.contradiction for p in judged])
    assert sick["auroc"]["P(NoContr)"] == pytest.approx(
        auroc(scored[paraphrase], scored[contradiction])
    )
    assert sick["paraphrase_nocontr_recall"] == pytest.approx(np.mean(scored[paraphrase] >= 0.5))
    bases = result["bases"]
    base_set = real_base_set(data / "human", 150, 13)
    items = base_set.perturbations.items
    before = ours(base_set.refs, base_set.gens)[[p.base for p in items]]
    after = ours([base_set.refs[p.base] for p in items], [p.text for p in items])
    assert np.ptp(after) > 0.01  # the errors are scored apart
    assert bases["drop"]["P(NoContr)"] == pytest.approx(np.mean(before > after))
    # the low-rated record of a held-out group is no base
    assert bases["bases"] == {"wmt15": 2, "wmt16": 2, "wmt17": 2, "webnlg2020": 1}
    assert bases["pairs"] == sum(row["pairs"] for row in bases["per_class"].values()) > 0
    assert 0.0 <= bases["drop"]["P(NoContr)"] <= 1.0
    assert list(bases["drop"]) == BASE_METRICS
    assert all(list(row["drop"]) == BASE_METRICS for row in bases["per_class"].values())
    # the meaning drop is the pair-weighted drop of every class but GramErr and RepErr
    meaning = {c: row for c, row in bases["per_class"].items() if c not in ("GramErr", "RepErr")}
    assert bases["meaning_pairs"] == sum(row["pairs"] for row in meaning.values()) > 0
    for metric in BASE_METRICS:
        dropped = sum(
            row["drop"][metric] * row["pairs"] for row in meaning.values() if row["pairs"]
        )
        assert bases["drop_meaning"][metric] == pytest.approx(dropped / bases["meaning_pairs"])
    assert any(line.startswith("meaning ") for line in printed.splitlines())
    for code, row in bases["per_class"].items():  # the rules of a class make up its pairs
        rules = [r for r in bases["per_rule"].values() if r["class"] == code]
        assert sum(r["pairs"] for r in rules) == row["pairs"]
    assert all(rule.startswith(f"{row['class']}/") for rule, row in bases["per_rule"].items())
    assert "rules whose errors P(NoContr) drops least" in printed
    darr = result["darr"]
    assert darr["pairs"] == {"gu-en": 3, "kk-en": 3}
    # the better output is the reference itself: every lexical metric ranks it first
    assert darr["tau"]["sentBLEU"] == {"gu-en": 1.0, "kk-en": 1.0, "mean": 1.0}
    assert darr["distinct_scored"] == 12  # 6 references, each with itself and the worse output
    assert list(darr["tau"]) == BASE_METRICS
    # a sample of the same seed is the same
    assert main([*args, "--parts", "darr", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["darr"] == darr


def test_the_p_nocontr_column_is_what_predict_scores(checkpoint: Path) -> None:
    """The bench's headline column comes from its own model pass: it must be the score
    ``Evaluator.predict`` gives each pair, P(NoContr), not another class's probability."""
    refs = ["A man is playing a guitar.", "A dog is running.", "The minister met 3 farmers."]
    gens = ["A guitar is being played by a man.", "No dog is running.", "Minister farmers."]
    column = Scorer(load(checkpoint)).score(refs, gens)["P(NoContr)"]
    predicted = Evaluator.from_pretrained(checkpoint).predict(refs, gens, progress=False)
    np.testing.assert_allclose(column, [p.score for p in predicted], atol=1e-6)


@pytest.mark.parametrize("task", TASKS)
def test_a_task_checkpoints_rating_is_what_predict_rates(
    task: str, task_checkpoints: dict[str, Path]
) -> None:
    """The rating column comes from the bench's one model pass; it must equal the mean
    normalised rating (NLI: P(entailment)) that ``Evaluator.predict`` gives for the pairs."""
    refs = ["A man is playing a guitar.", "A dog is running.", "The minister met 3 farmers."]
    gens = ["A guitar is being played by a man.", "No dog is running.", "Minister farmers."]
    scorer = Scorer(load(task_checkpoints[task]))
    assert scorer.metrics == ("P(NoContr)", f"rating ({task})", *BASE_METRICS[1:])
    rating = scorer.score([*refs, refs[0]], [*gens, gens[0]])[f"rating ({task})"]
    expected = mean_ratings(task_checkpoints[task], refs, gens)
    assert np.ptp(expected) > 0.01  # the pairs are rated differently
    np.testing.assert_allclose(rating, [*expected, expected[0]], atol=1e-5)


def test_command_reports_a_task_checkpoints_rating(
    data: Path, task_checkpoints: dict[str, Path], tmp_path: Path, capsys
) -> None:
    """Every part reports the rating beside the other scores, in print and in the JSON."""
    checkpoint, column = task_checkpoints["summarization"], "rating (summarization)"
    out = tmp_path / "results.json"
    argv = ["bench", "realtext", "--checkpoint", str(checkpoint), "--darr-limit", "0"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"drop {column}" in printed
    assert sum(line.startswith(f"{column}  ") for line in printed.splitlines()) == 2  # AUROC, tau
    result = json.loads(out.read_text())
    metrics = ["P(NoContr)", column, *BASE_METRICS[1:]]
    sick = load_sick(data / "sick" / "sick_trial.jsonl.gz")
    rated = mean_ratings(checkpoint, [p.ref for p in sick], [p.gen for p in sick])
    paraphrase = np.array([p.paraphrase for p in sick])
    contradiction = np.array([p.contradiction for p in sick])
    assert list(result["sick"]["auroc"]) == metrics
    assert result["sick"]["auroc"][column] == pytest.approx(
        auroc(rated[paraphrase], rated[contradiction])
    )
    bases = result["bases"]
    assert list(bases["drop"]) == metrics and 0.0 <= bases["drop"][column] <= 1.0
    assert all(list(row["drop"]) == metrics for row in bases["per_class"].values())
    darr = load_darr(data / "human" / "translation" / "darr" / "wmt19_darr.pairs.jsonl.gz", None, 0)
    assert list(result["darr"]["tau"]) == metrics
    for lp, pairs in darr.items():
        better = mean_ratings(checkpoint, [p.ref for p in pairs], [p.better for p in pairs])
        worse = mean_ratings(checkpoint, [p.ref for p in pairs], [p.worse for p in pairs])
        assert result["darr"]["tau"][column][lp] == pytest.approx(kendall_like_tau(better, worse))


def test_bad_input_is_a_clear_error(data: Path, checkpoint: Path, tmp_path: Path, capsys) -> None:
    assert main(["bench", "realtext", "--checkpoint", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err
    missing = data / "human" / "translation" / "darr" / "wmt19_darr.pairs.jsonl.gz"
    missing.unlink()
    assert main(["bench", "realtext", "--checkpoint", str(checkpoint), "--parts", "darr"]) == 2
    assert str(missing) in capsys.readouterr().err
    (data / "human" / "translation" / "wmt16_da.jsonl.gz").unlink()
    assert main(["bench", "realtext", "--checkpoint", str(checkpoint), "--parts", "bases"]) == 2
    assert "wmt16_da.jsonl.gz" in capsys.readouterr().err
    assert main(["bench", "realtext", "--parts", "sick,nonsense"]) == 2
    assert "--parts 'sick,nonsense': unknown part(s) nonsense;" in capsys.readouterr().err
    assert main(["bench", "realtext", "--out", str(tmp_path)]) == 2
    assert f"--out {tmp_path}" in capsys.readouterr().err
    sick = data / SICK_TRIAL  # it was replaced by the report, exit 0
    before = sick.read_bytes()
    assert main(["bench", "realtext", "--parts", "sick", "--out", str(sick)]) == 2
    assert f"--out {sick} is an input of this run; name another file" in capsys.readouterr().err
    assert sick.read_bytes() == before
    assert main(["bench", "realtext", "--out", str(tmp_path / "r.json.gz")]) == 2
    assert "the report is plain JSON; drop the .gz" in capsys.readouterr().err
    config = checkpoint / "config.json"
    assert main(["bench", "realtext", "--checkpoint", str(checkpoint), "--out", str(config)]) == 2
    assert f"--out {config} is an input of this run" in capsys.readouterr().err
    for limit, part in (("--darr-limit", "darr"), ("--bases-limit", "bases")):  # were ignored
        assert main(["bench", "realtext", "--parts", "sick", limit, "5"]) == 2
        assert f"{limit}: for the {part} part; this run has sick" in capsys.readouterr().err
    assert main(["bench", "realtext", "--out", " "]) == 2
    assert "--out is empty; give a path" in capsys.readouterr().err


def test_a_task_checkpoint_fitted_on_the_bases_is_not_measured_on_them(
    data: Path, tmp_path: Path, capsys
) -> None:
    """A task checkpoint fitted on the bases' datasets (the shipped translation one, README's
    example) had "held-out" figures on groups it was trained on."""
    training = {"datasets": "translation/wmt15_da.jsonl.gz, translation/wmt21_da.jsonl.gz"}
    fitted = tiny_checkpoint(tmp_path / "fitted", "summarization", training)
    assert main(["bench", "realtext", "--checkpoint", str(fitted), "--parts", "sick,bases"]) == 2
    assert (
        f"{fitted} was fitted on translation/wmt15_da.jsonl.gz (its training record), whose "
        "held-out groups the bases part scores"
    ) in capsys.readouterr().err
    out = tmp_path / "left_out.json"  # by default the part is left out, and the report says so
    assert main(["bench", "realtext", "--checkpoint", str(fitted), "--out", str(out)]) == 0
    told = capsys.readouterr().err
    assert "bases part left out: " in told and "part 2 of 2: darr" in told
    assert set(json.loads(out.read_text())["left_out"]) == {"bases"}
    assert "bases" not in json.loads(out.read_text())
    # a ratings file of a base's name (recorded with its hash) counts; a fit whose
    # train_datasets leave the bases out does not
    assert bases_trained_on({"datasets": "wmt17_da.jsonl.gz (sha256 0ee6a5014fee)"}) == [
        "translation/wmt17_da.jsonl.gz"
    ]
    only_wmt21 = {**training, "fit settings": json.dumps({"train_datasets": ["wmt21-da"]})}
    assert bases_trained_on(only_wmt21) == []
    assert bases_trained_on(["not", "a", "record"]) == []


def test_a_malformed_sick_or_darr_record_is_named(tmp_path: Path) -> None:
    """A SICK text that was a number stopped the bench with a TypeError traceback, an empty one
    was scored, a flag "false" read as true; a DARR `better` that was no object said "missing
    key" with the TypeError's text; an empty file ended in a KeyError."""
    sick = {
        "a": "A dog runs.",
        "b": "A dog is running.",
        "paraphrase": True,
        "contradiction": False,
    }
    path = tmp_path / "sick.jsonl.gz"
    for change, problem in (
        ({"a": 5}, ":1: key 'a' must be a text, got 5"),
        ({"b": " "}, ":1: key 'b' must be a text, got \" \""),
        ({"paraphrase": "false"}, ":1: key 'paraphrase' must be a JSON true/false, got \"false\""),
        ({"contradiction": None}, ":1: key 'contradiction' must be a JSON true/false, got null"),
    ):
        write_jsonl_gz(path, [{**sick, **change}])
        with pytest.raises(ValueError, match="^" + re.escape(f"{path}{problem}") + "$"):
            load_sick(path)
    darr = {"lp": "gu-en", "ref": "A dog runs.", "better": {"gen": "A dog runs."},
            "worse": {"gen": "Dog."}}  # fmt: skip
    for change, problem in (
        ({"better": "India"}, ":1: key 'better' must be a JSON object, got \"India\""),
        ({"worse": {}}, ":1: worse: missing key 'gen'"),
        ({"lp": None}, ":1: key 'lp' must be a text, got null"),
    ):
        write_jsonl_gz(path, [{**darr, **change}])
        with pytest.raises(ValueError, match="^" + re.escape(f"{path}{problem}") + "$"):
            load_darr(path, None, 0)
    write_jsonl_gz(path, [])
    for load_file in (load_sick, lambda p: load_darr(p, None, 0)):
        with pytest.raises(ValueError, match=re.escape(f"{path}: no pairs")):
            load_file(path)
