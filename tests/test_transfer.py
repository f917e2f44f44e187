"""Transfer rows: which records a transfer trains and tests on, and the τ it reports."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from evaluator.finetune.transfer import transfer_scores, transfer_split
from evaluator.tasks import get_task

NAN = float("nan")


def prepared(records: list, features: dict[str, list[float]], targets: list[list[float]]):
    """The parts of a PreparedTask the transfer functions read (captioning: relevance,
    yes_fraction; one reference per record)."""
    frame = pd.DataFrame(features)
    return SimpleNamespace(
        task=get_task("captioning"),
        records=records,
        inputs=SimpleNamespace(record_features=lambda scaled: frame, targets=np.array(targets)),
        features=None,
    )


def record(dataset: str, group: str, k: int) -> SimpleNamespace:
    return SimpleNamespace(id=f"{dataset}:{group}:{k}", dataset=dataset, group=group)


def test_a_transfer_tests_only_on_groups_it_did_not_train_on() -> None:
    """Like Flickr8k: the two sets share images (groups); the second also has its own."""
    shared = [record(d, f"img{g}", k) for d in ("expert", "cf") for g in range(40) for k in (0, 1)]
    own = [record("cf", f"only{g}", 0) for g in range(5)]
    records = shared + own
    task = prepared(records, {"m": [0.0] * len(records)}, [[0.0, 0.0]] * len(records))
    train, test = transfer_split(task, "expert", "cf", seed=0)
    trained_groups = {records[i].group for i in train}
    assert all(records[i].dataset == "expert" for i in train)
    assert all(records[i].dataset == "cf" for i in test)
    # the seed's train part only: some expert images are left out
    assert 0 < len(trained_groups) < 40
    expected = {i for i, r in enumerate(records) if r.dataset == "cf"} - {
        i for i, r in enumerate(records) if r.group in trained_groups
    }
    assert set(test.tolist()) == expected
    assert {records[i].group for i in test} >= {f"only{g}" for g in range(5)}
    with pytest.raises(ValueError, match="transfer expert -> missing"):
        transfer_split(task, "expert", "missing", seed=0)


def test_transfer_scores_use_the_trained_ratings_and_the_metric_chosen_on_train() -> None:
    """Trained on relevance, tested on yes_fraction (not trained): ours is the mean of the
    trained ratings, i.e. the relevance column. The metric chosen on train is the one with
    the largest |τ| there ("distance", τ -1), so it is applied with its sign flipped."""
    records = [record("expert", f"e{i}", 0) for i in range(4)]
    records += [record("cf", f"c{i}", 0) for i in range(4)]
    targets = [[r, NAN] for r in (0.1, 0.2, 0.3, 0.4)] + [[NAN, r] for r in (0.1, 0.2, 0.3, 0.4)]
    task = prepared(
        records,
        {
            "distance": [4, 3, 2, 1] + [4, 3, 1, 2],  # test: raw τ -2/3 -> oriented +2/3
            "weak": [1, 2, 1, 2] + [1, 2, 3, 4],  # perfect on test, weak on train: not chosen
        },
        targets,
    )
    train, test = np.arange(4), np.arange(4, 8)
    scores = np.array([[0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.4, 0.6]])  # column 1 backwards
    out = transfer_scores(task, train, test, scores)
    assert out["columns"] == [1]
    assert out["ours"] == {1: pytest.approx(1.0)}
    assert out["metric"] == "distance" and out["metric_train_kendall"] == pytest.approx(1.0)
    assert out["metric_test"] == {1: pytest.approx(2 / 3)}
    assert out["n_train"] == 4 and out["n_test"] == 4
