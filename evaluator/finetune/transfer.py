"""Transfer rows: fit a task on one of its datasets, test on another.

A rating that agrees with people only on the dataset it was fitted on helps little someone
scoring a new one. Per seed, the task model is fitted on the first dataset's records in the
seed's train part (the groups ``mismatch evaluate`` trains on, about 80 %) and predicts every
record of the second dataset whose group it did not train on (Flickr8k's two sets share their
images: CF is tested on the images Expert's training part left out). The baseline is what a
user without our model would do: the single metric with the best criterion-averaged τ on the
same training records, oriented by its sign there, applied to the test records. A test
criterion the training dataset does not rate (Flickr8k CF's yes_fraction after Expert's
relevance) is predicted by the mean of the ratings it does train.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from evaluator.finetune.agreement import kendall
from evaluator.finetune.config import FitSettings
from evaluator.finetune.datamodule import PreparedTask
from evaluator.finetune.evaluate import model_scores, rated_columns, seed_split
from evaluator.finetune.train import fit
from evaluator.tasks import MIN_GROUPS

# task -> (train dataset, test dataset), by HumanRecord.dataset; WMT -> WMT19 DARR is
# `mismatch bench realtext --parts darr` (a relative-ranking protocol of its own)
TRANSFERS: dict[str, tuple[tuple[str, str], ...]] = {
    "data2text": (("webnlg2017", "webnlg2020"), ("webnlg2020", "webnlg2017")),
    "captioning": (("flickr8k-expert", "flickr8k-cf"),),
    "question_generation": (
        ("nema2018-squad", "nema2018-vqa"),
        ("nema2018-squad", "nema2018-wikimovies"),
    ),
    "dialogue": (("usr-topicalchat", "usr-personachat"), ("usr-personachat", "usr-topicalchat")),
}


def transfer_split(
    prepared: PreparedTask, train_dataset: str, test_dataset: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) record positions: ``train_dataset``'s records in the seed's train part,
    and every ``test_dataset`` record whose group is not among the training records' groups."""
    records = prepared.records
    everything = np.arange(len(records))
    train_part, _ = seed_split(prepared, seed)
    train = np.array([i for i in train_part if records[i].dataset == train_dataset], np.int64)
    seen = {records[i].group for i in train}
    test = np.array(
        [
            i
            for i in everything
            if records[i].dataset == test_dataset and records[i].group not in seen
        ],
        np.int64,
    )
    if len(train) == 0 or len(test) == 0:
        raise ValueError(
            f"task {prepared.task.name!r}: transfer {train_dataset} -> {test_dataset} (seed "
            f"{seed}) has {len(train)} train and {len(test)} test records"
        )
    return train, test


def transfer_scores(
    prepared: PreparedTask, train: np.ndarray, test: np.ndarray, scores: np.ndarray
) -> dict:
    """τ per test criterion of ours (``scores``: one row per test record) and of the metric
    chosen on the training records."""
    targets = prepared.inputs.targets
    trained, tested = rated_columns(targets, train), rated_columns(targets, test)
    if not trained:
        raise ValueError(
            f"task {prepared.task.name!r}: no criterion with two different ratings among the "
            "training records"
        )

    def tau(values: np.ndarray, rows: np.ndarray, column: int) -> float:
        present = ~np.isnan(targets[rows, column])
        return kendall(values[present], targets[rows, column][present])

    ours = {}
    for column in tested:
        own = scores[:, column] if column in trained else scores[:, trained].mean(axis=1)
        ours[column] = tau(own, test, column)
    features = prepared.inputs.record_features(prepared.features)
    train_means = {
        name: float(np.mean([tau(features[name].to_numpy()[train], train, c) for c in trained]))
        for name in features.columns
    }
    metric = max(train_means, key=lambda name: abs(train_means[name]))
    sign = 1.0 if train_means[metric] >= 0 else -1.0
    values = features[metric].to_numpy()[test]
    return {
        "n_train": len(train),
        "n_test": len(test),
        "columns": tested,
        "ours": ours,
        "metric": metric,
        "metric_train_kendall": abs(train_means[metric]),
        "metric_test": {column: sign * tau(values, test, column) for column in tested},
    }


def transfers_of(prepared: PreparedTask) -> tuple[tuple[str, str], ...]:
    """A shipped task's ``TRANSFERS``; for a user's ratings file, every ordered pair of the
    datasets its records name that hold MIN_GROUPS items or more (a smaller one leaves a fit or
    its test part nearly empty)."""
    if not any(spec.sha256 for spec in prepared.task.datasets):
        return TRANSFERS.get(prepared.task.name, ())
    items: dict[str, set[str]] = {}
    for record in prepared.records:
        if record.dataset:
            items.setdefault(record.dataset, set()).add(record.group)
    named = sorted(name for name, groups in items.items() if len(groups) >= MIN_GROUPS)
    return tuple(permutations(named, 2))


def evaluate_transfers(
    prepared: PreparedTask, seeds: list[int], settings: FitSettings, checkpoint: str, log=print
) -> list[dict]:
    """Every transfer of the task (``transfers_of``; none for a task with one dataset), each
    over ``seeds``: criterion-averaged τ of ours and of the chosen metric, mean ± std. A
    transfer from a dataset the task does not train on (``data.train_datasets``) is skipped,
    and so is a seed that leaves it no train or test record (a user's datasets can share
    items) or no criterion with two different ratings on both sides; a row's ``seeds`` are
    those it ran."""
    out = []
    criteria = [c.key for c in prepared.task.criteria]
    for train_dataset, test_dataset in transfers_of(prepared):
        if prepared.train_datasets and train_dataset not in prepared.train_datasets:
            log(
                f"{prepared.task.name} transfer {train_dataset} -> {test_dataset}: skipped, "
                "not among data.train_datasets"
            )
            continue
        runs, ran = [], []
        for seed in seeds:
            try:
                train, test = transfer_split(prepared, train_dataset, test_dataset, seed)
            except ValueError as error:  # a user's datasets that share items: none left
                log(f"{prepared.task.name} seed {seed} skipped: {error}")
                continue
            targets = prepared.inputs.targets
            if not rated_columns(targets, train) or not rated_columns(targets, test):
                # e.g. a user's dataset of reference outputs, every one rated 1.0: a traceback
                log(
                    f"{prepared.task.name} transfer {train_dataset} -> {test_dataset} seed "
                    f"{seed} skipped: no criterion with two different ratings on both sides"
                )
                continue
            module, _, _ = fit(prepared, train, settings, seed, checkpoint=checkpoint)
            run = transfer_scores(prepared, train, test, model_scores(module, prepared, test))
            runs.append(run)
            ran.append(seed)
            log(
                f"{prepared.task.name} transfer {train_dataset} -> {test_dataset} seed {seed}: "
                f"ours {np.mean(list(run['ours'].values())):.4f}, {run['metric']} "
                f"{np.mean(list(run['metric_test'].values())):.4f}"
            )
        if not runs:
            continue
        columns = sorted(set.intersection(*(set(run["columns"]) for run in runs)))
        ours = [np.mean([run["ours"][c] for c in columns]) for run in runs]
        metric = [np.mean([run["metric_test"][c] for c in columns]) for run in runs]
        out.append(
            {
                "train": train_dataset,
                "test": test_dataset,
                "criteria": [criteria[c] for c in columns],
                "seeds": ran,
                "n_train_mean": float(np.mean([run["n_train"] for run in runs])),
                "n_test_mean": float(np.mean([run["n_test"] for run in runs])),
                "ours_kendall": float(np.mean(ours)),
                "ours_kendall_std": float(np.std(ours)),
                "metrics_chosen": [run["metric"] for run in runs],
                "metric_kendall": float(np.mean(metric)),
                "metric_kendall_std": float(np.std(metric)),
            }
        )
    return out
