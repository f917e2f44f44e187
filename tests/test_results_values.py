"""The numbers behind docs/results.md: τ-b, Spearman, RMSE, the baselines' orientation and the
per-task averages, on small examples whose answers are worked out by hand (and by scipy)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from evaluator.finetune.evaluate import ABLATIONS, baseline_kendall, criterion_scores, summarise
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
    features: dict[str, list[float]], targets: list[list[float]], task: str = "captioning"
):
    """The parts of a PreparedTask that the result functions read (one reference per record,
    so a record's features are its one pair's)."""
    frame = pd.DataFrame(features)
    return SimpleNamespace(
        task=get_task(task),
        records=[None] * len(targets),
        inputs=SimpleNamespace(
            features=frame, record_features=lambda: frame, targets=np.array(targets)
        ),
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
