"""The numbers behind docs/results.md: τ-b, Spearman, RMSE, the baselines' orientation and the
per-task averages, on small examples whose answers are worked out by hand (and by scipy)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from evaluator.finetune.evaluate import (
    ABLATIONS,
    baseline_kendall,
    criterion_scores,
    dataset_scores,
    results_markdown,
    summarise,
)
from evaluator.tasks import SATURATION, bounded_ratings, get_task


def test_criterion_scores_are_tau_b_spearman_and_rmse_over_the_rated_records() -> None:
    # column 0: no ties; 2 of 10 pairs discordant -> tau 0.6; sum d^2 = 4 -> rho 0.8
    # column 1: ties on both sides -> tau-b 4 / sqrt(5 * 5) = 0.8 (tau-a would be 4/6);
    #           the fifth record has no rating for it and is left out
    scores = np.array([[0.1, 0.1], [0.2, 0.1], [0.3, 0.2], [0.4, 0.3], [0.5, 0.9]])
    targets = np.array([[0.1, 0.1], [0.3, 0.2], [0.2, 0.2], [0.5, 0.3], [0.4, np.nan]])
    out = criterion_scores(scores, targets)
    assert out[0]["kendall"] == pytest.approx(0.6)
    assert out[0]["spearman"] == pytest.approx(0.8)
    assert out[0]["rmse"] == pytest.approx(np.sqrt(4 * 0.01 / 5))
    assert out[0]["n"] == 5
    assert out[1]["kendall"] == pytest.approx(0.8)
    assert out[1]["rmse"] == pytest.approx(np.sqrt(0.01 / 4))
    assert out[1]["n"] == 4
    for column in (0, 1):
        present = ~np.isnan(targets[:, column])
        x, y = scores[present, column], targets[present, column]
        assert out[column]["kendall"] == pytest.approx(kendalltau(x, y).statistic)
        assert out[column]["spearman"] == pytest.approx(spearmanr(x, y).statistic)


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_a_constant_side_gives_zero_not_nan() -> None:
    out = criterion_scores(np.full((4, 1), 0.5), np.array([[0.1], [0.2], [0.3], [0.4]]))
    assert out[0]["kendall"] == 0.0 and out[0]["spearman"] == 0.0


def prepared(
    features: dict[str, list[float]],
    targets: list[list[float]],
    task: str = "captioning",
    datasets: list[str] | None = None,
):
    """The parts of a PreparedTask that the result functions read (one reference per record,
    so a record's features are its one pair's)."""
    frame = pd.DataFrame(features)
    return SimpleNamespace(
        task=get_task(task),
        records=[SimpleNamespace(dataset=name) for name in datasets or [""] * len(targets)],
        inputs=SimpleNamespace(
            features=frame,
            record_features=lambda scaled: frame,
            targets=np.array(targets),
        ),
        features=None,
    )


def test_baselines_are_oriented_by_their_train_sign_only() -> None:
    train, test = np.arange(0, 4), np.arange(4, 8)
    rating = [0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4]
    task = prepared(
        {
            # a distance: falls as the rating rises, on train and test -> counts as +1
            "distance": [4, 3, 2, 1, 4, 3, 2, 1],
            # rises on train, falls on test: the test part must not flip it -> -1
            "fickle": [1, 2, 3, 4, 4, 3, 2, 1],
        },
        [[r, r] for r in rating],
    )
    out = baseline_kendall(task, train, test)
    assert out == {"distance": {0: pytest.approx(1.0), 1: pytest.approx(1.0)},
                   "fickle": {0: pytest.approx(-1.0), 1: pytest.approx(-1.0)}}  # fmt: skip


def run(ours: list[float], baselines: dict[str, list[float]], ablation: float) -> dict:
    """One seed's results for a 2-criterion task (captioning: relevance, yes_fraction)."""

    def cell(tau: float) -> dict:
        return {"kendall": tau, "spearman": tau / 2, "rmse": 1 - tau, "n": 10}

    return {
        "n_test": 10,
        "variants": {
            "ours": {c: cell(t) for c, t in enumerate(ours)},
            **{name: {c: cell(ablation) for c in range(2)} for name in ABLATIONS},
        },
        "baselines": {m: dict(enumerate(taus)) for m, taus in baselines.items()},
        "datasets": {},
    }


def test_summarise_averages_over_seeds_then_over_criteria() -> None:
    task = prepared({"bleu": [0.0] * 4, "chrf": [0.0] * 4}, [[0.0, 0.0]] * 4)
    runs = [
        run([0.2, 0.4], {"bleu": [0.1, 0.5], "chrf": [0.3, 0.2]}, 0.1),
        run([0.4, 0.6], {"bleu": [0.3, 0.5], "chrf": [0.3, 0.4]}, 0.3),
    ]
    out = summarise(task, runs, [0, 1])
    relevance = out["criteria"]["relevance"]
    assert relevance["ours"]["kendall"] == pytest.approx(0.3)
    assert relevance["ours"]["kendall_std"] == pytest.approx(0.1)
    assert relevance["ours"]["spearman"] == pytest.approx(0.15)
    assert relevance["ours"]["rmse"] == pytest.approx(0.7)
    assert relevance["baselines"]["bleu"]["kendall"] == pytest.approx(0.2)
    assert relevance["ablations"]["no_metrics"]["kendall"] == pytest.approx(0.2)
    summary = out["summary"]
    assert summary["ours_kendall"] == pytest.approx(0.4)  # seed means 0.3 and 0.5
    assert summary["ours_kendall_std"] == pytest.approx(0.1)
    # criterion-averaged: bleu (0.2 + 0.5) / 2 = 0.35 beats chrf (0.3 + 0.3) / 2 = 0.3
    assert summary["best_baseline"] == "bleu"
    assert summary["best_baseline_kendall"] == pytest.approx(0.35)
    assert summary["named_baselines"] == {"bleu": pytest.approx(0.35), "chrf": pytest.approx(0.3)}
    assert summary["ablations"]["no_pretraining"] == pytest.approx(0.2)
    assert summary["records"] == 4 and summary["n_test_mean"] == 10


NAN = float("nan")


def test_each_dataset_is_scored_on_its_own_records_and_criteria() -> None:
    """Captioning: the expert set rates relevance only, the CF set yes_fraction only. Ours
    ranks the expert records right and the CF records backwards; the metric rises with the
    rating on train, on expert test and falls on CF test."""
    names = ["expert", "cf"] * 2 + ["expert"] * 4 + ["cf"] * 4
    rating = [0.1, 0.1, 0.4, 0.4, 0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4]
    targets = [[r, NAN] if n == "expert" else [NAN, r] for n, r in zip(names, rating, strict=True)]
    metric = [1, 1, 4, 4, 1, 2, 3, 4, 4, 3, 2, 1]
    task = prepared({"chrf": metric}, targets, datasets=names)
    train, test = np.arange(0, 4), np.arange(4, 12)
    ours = np.array([[t[0], 0.0] for t in targets[4:8]] + [[0.0, 1 - t[1]] for t in targets[8:]])
    out = dataset_scores(task, train, test, ours)
    assert sorted(out) == ["cf", "expert"]
    assert out["expert"]["n_test"] == 4 and out["cf"]["n_test"] == 4
    assert list(out["expert"]["ours"]) == [0] and list(out["cf"]["ours"]) == [1]
    assert out["expert"]["ours"][0]["kendall"] == pytest.approx(1.0)
    assert out["cf"]["ours"][1]["kendall"] == pytest.approx(-1.0)
    # oriented by the whole train part (rising: +1), not flipped by the CF test records
    assert out["expert"]["baselines"] == {"chrf": {0: pytest.approx(1.0)}}
    assert out["cf"]["baselines"] == {"chrf": {1: pytest.approx(-1.0)}}


def test_datasets_average_over_the_seeds_and_criteria_they_have() -> None:
    """A dataset missing from one seed's test part is averaged over the seeds that have it; a
    criterion rated in only some seeds is left out of its mean."""
    task = prepared({"bleu": [0.0] * 4, "chrf": [0.0] * 4}, [[0.0, 0.0]] * 4)

    def seen(n: int, ours: dict[int, float], bleu: dict[int, float], chrf: dict[int, float]):
        return {
            "n_test": n,
            "ours": {
                c: {"kendall": t, "spearman": t, "rmse": 0.0, "n": n} for c, t in ours.items()
            },
            "baselines": {"bleu": bleu, "chrf": chrf},
        }

    runs = [
        run([0.2, 0.4], {"bleu": [0.1, 0.5], "chrf": [0.3, 0.2]}, 0.1),
        run([0.4, 0.6], {"bleu": [0.3, 0.5], "chrf": [0.3, 0.4]}, 0.3),
        run([0.4, 0.6], {"bleu": [0.3, 0.5], "chrf": [0.3, 0.4]}, 0.3),
    ]
    runs[0]["datasets"] = {
        "a": seen(6, {0: 0.2, 1: 0.9}, {0: 0.1, 1: 0.0}, {0: 0.3, 1: 0.0}),
        "b": seen(4, {1: 0.5}, {1: 0.6}, {1: 0.2}),
    }
    runs[1]["datasets"] = {"a": seen(10, {0: 0.4}, {0: 0.3}, {0: 0.2})}
    runs[2]["datasets"] = {"b": seen(2, {1: 0.7}, {1: 0.4}, {1: 0.2})}
    out = summarise(task, runs, [0, 1, 2])["datasets"]
    a, b = out["a"], out["b"]
    assert a["criteria"] == ["relevance"]  # yes_fraction only in seed 0: left out
    assert a["seeds"] == 2 and a["n_test_mean"] == 8
    assert a["ours_kendall"] == pytest.approx(0.3) and a["ours_kendall_std"] == pytest.approx(0.1)
    assert a["best_baseline"] == "chrf" and a["best_baseline_kendall"] == pytest.approx(0.25)
    assert a["named_baselines"] == {"bleu": pytest.approx(0.2), "chrf": pytest.approx(0.25)}
    assert b["criteria"] == ["yes_fraction"] and b["seeds"] == 2
    assert b["ours_kendall"] == pytest.approx(0.6)
    assert b["best_baseline"] == "bleu" and b["best_baseline_kendall"] == pytest.approx(0.5)
    assert b["per_criterion"]["yes_fraction"]["ours"] == pytest.approx(0.6)
    table = results_markdown([summarise(task, runs, [0, 1, 2])], "mismatch evaluate")
    assert "| captioning | a | relevance | 8 | 0.300 ± 0.100 | chrf 0.250 | +0.050 |" in table
    assert "| captioning | b | yes_fraction | 3 | 0.600 ± 0.100 | bleu 0.500 | +0.100 |" in table


def test_bounded_ratings_keep_the_order_the_model_gives_beyond_the_scale() -> None:
    """Outputs above the top (or below the bottom) of the scale stay ordered inside it, and
    the middle of the scale is untouched: clipping tied them."""
    raw = np.array([-300.0, -0.2, -0.01, 0.0, 0.05, 0.3, 0.95, 1.0, 1.07, 1.14, 4.0, 300.0])
    bounded = bounded_ratings(raw)
    assert ((bounded > 0) & (bounded < 1)).all()
    assert (np.diff(bounded) > 0).all()
    middle = (raw >= SATURATION) & (raw <= 1 - SATURATION)
    assert np.array_equal(bounded[middle], raw[middle])
    assert bounded_ratings(np.array([0.5 + 1e-9, 1 - SATURATION + 1e-9]))[1] == pytest.approx(
        1 - SATURATION, abs=1e-8
    )  # continuous where the saturation starts
    # a copy and a near-copy above the scale differ in the digits predict reports
    assert round(bounded_ratings(np.array([1.07]))[0], 4) < round(
        bounded_ratings(np.array([1.14]))[0], 4
    )


def test_a_failed_report_leaves_both_result_files_of_the_last_run(tmp_path, monkeypatch) -> None:
    """results.json and results.md are made before either is written: a report that cannot
    be made must not leave new figures beside an old report."""
    from evaluator.finetune import evaluate

    for name in ("results.json", "results.md"):
        (tmp_path / name).write_text(f"last run's {name}")

    def broken(results, command):
        raise RuntimeError("no report")

    monkeypatch.setattr(evaluate, "results_markdown", broken)
    with pytest.raises(RuntimeError, match="no report"):
        evaluate.write_results(tmp_path, [{"task": "summarization"}], "mismatch evaluate")
    for name in ("results.json", "results.md"):
        assert (tmp_path / name).read_text() == f"last run's {name}"
