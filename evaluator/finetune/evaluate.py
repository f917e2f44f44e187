"""Seeded 80/20 group splits: fine-tuned model vs single metrics vs ablations, per criterion.

For every seed, ``split_by_group`` holds out about 20 % of the groups (more in a small file,
where a criterion would have nothing to rank: ``seed_split``); the model (and each ablation)
is fine-tuned on the rest and predicts the held-out records the way ``mismatch predict`` does.
Scores are compared with the human criteria on the normalised scale: Kendall tau-b, Spearman
rho, RMSE (and accuracy for classification tasks). Each metric feature is a baseline on the
same test records, oriented by the sign of its tau on the train part (so distances such as
edit_distance count as metrics without peeking at the test part).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evaluator.finetune.agreement import kendall, spearman
from evaluator.finetune.config import FitSettings
from evaluator.finetune.datamodule import PreparedTask, split_rows, training_rows
from evaluator.finetune.outputs import task_outputs
from evaluator.finetune.train import export, fit, recorded_settings
from evaluator.signature import folder_signature
from evaluator.tasks import normalised_outputs
from mismatch_core.atomic import write_text_atomic
from mismatch_core.errors import DataError
from mismatch_core.groups import group_position
from mismatch_core.jsonl import report_json

TEST_FRACTION = 0.2  # of a task's items (groups) each evaluate seed holds out to test on
ABLATIONS = {
    "no_pretraining": {"pretrained": False, "use_metrics": True, "freeze_mismatch": False},
    "no_metrics": {"pretrained": True, "use_metrics": False, "freeze_mismatch": False},
    # every layer fitted to the ratings (the checkpoints before the mismatch head was kept)
    "all_layers": {"pretrained": True, "use_metrics": True, "freeze_mismatch": False},
}
# Paper Table 2 (Murugesan et al. 2023), Kendall tau averaged over criteria.
PAPER_KENDALL = {
    "summarization": 0.30,
    "captioning": 0.49,
    "question_generation": 0.52,
    "translation": 0.35,
    "dialogue": 0.31,
    "data2text": 0.39,
    "nli": 0.89,
}
NAMED_BASELINES = ("bleu", "rougeL_f", "chrf", "meteor", "bertscore_f")


def model_scores(module, prepared: PreparedTask, rows: np.ndarray) -> np.ndarray:
    """(rows, criteria) outputs on the normalised scale: bounded ratings or class probabilities."""
    inputs = prepared.inputs.subset(rows)
    features = prepared.features[prepared.inputs.pair_rows(rows)]
    _, _, ratings = task_outputs(module.model, features, inputs)
    if ratings is None:
        raise ValueError(f"the model rates nothing: it has no rating head for {prepared.task.name}")
    return normalised_outputs(ratings, prepared.task.kind)


def criterion_scores(scores: np.ndarray, targets: np.ndarray) -> dict[int, dict[str, float]]:
    """Per criterion column: kendall, spearman, rmse over the records that have it."""
    out: dict[int, dict[str, float]] = {}
    for column in range(targets.shape[1]):
        present = ~np.isnan(targets[:, column])
        x, y = scores[present, column], targets[present, column]
        out[column] = {
            "kendall": kendall(x, y),
            "spearman": spearman(x, y),
            "rmse": float(np.sqrt(np.mean((x - y) ** 2))),
            "n": int(present.sum()),
        }
    return out


def baseline_kendall(
    prepared: PreparedTask,
    train: np.ndarray,
    test: np.ndarray,
    columns: list[int] | None = None,
) -> dict[str, dict[int, float]]:
    """metric -> criterion column -> test tau, the metric oriented by its train tau's sign;
    ``columns``: only these criterion columns (default: all)."""
    targets = prepared.inputs.targets
    features = prepared.inputs.record_features(prepared.features)
    out: dict[str, dict[int, float]] = {}
    for name in features.columns:
        values = features[name].to_numpy()
        out[name] = {}
        for column in range(targets.shape[1]) if columns is None else columns:
            fit_rows = train[~np.isnan(targets[train, column])]
            test_rows = test[~np.isnan(targets[test, column])]
            sign = 1.0 if kendall(values[fit_rows], targets[fit_rows, column]) >= 0 else -1.0
            out[name][column] = sign * kendall(values[test_rows], targets[test_rows, column])
    return out


def rated_columns(targets: np.ndarray, rows: np.ndarray) -> list[int]:
    """Criterion columns with two or more different ratings among ``rows`` (τ defined)."""
    return [column for column in range(targets.shape[1]) if rankable(targets[rows, column])]


def dataset_scores(
    prepared: PreparedTask, train: np.ndarray, test: np.ndarray, scores: np.ndarray
) -> dict[str, dict]:
    """Per dataset that test records name (those naming none have the task's row alone): ours
    (``scores``, one row per test record) and the baselines on that dataset's records alone,
    for the criteria it rates (two or more different ratings). Baselines keep the orientation of
    the task-level table (the sign of their τ on the whole train part)."""
    names = np.array([record.dataset for record in prepared.records])
    targets = prepared.inputs.targets
    out: dict[str, dict] = {}
    for name in sorted(set(names[test].tolist()) - {""}):
        mine = names[test] == name
        rows = test[mine]
        columns = rated_columns(targets, rows)
        ours = criterion_scores(scores[mine][:, columns], targets[rows][:, columns])
        out[name] = {
            "n_test": len(rows),
            "ours": {column: ours[k] for k, column in enumerate(columns)},
            "baselines": baseline_kendall(prepared, train, rows, columns),
        }
    return out


def seed_split(prepared: PreparedTask, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) record positions of evaluate's split for ``seed``: TEST_FRACTION of the
    items held out, by group (the transfer rows train within the same train part). Where that
    leaves a criterion no two different test ratings (a user's small file: its τ would read
    0), the next items by the split's hash that bring a rating the test part lacks are held
    out too, each only if the train part can still rank every criterion it could."""
    records, targets = prepared.records, prepared.inputs.targets
    train, test = split_rows(records, np.arange(len(records)), seed, TEST_FRACTION)
    short = [c for c in range(targets.shape[1]) if not rankable(targets[test, c])]
    if not short:  # the fast path: every shipped task, every seed measured
        return train, test
    by_group: dict[str, list[int]] = {}
    for row in train:
        by_group.setdefault(records[row].group, []).append(int(row))
    kept = sorted(by_group, key=lambda group: group_position(seed, group))
    columns = range(targets.shape[1])

    def rows_of(groups: list[str]) -> list[int]:
        return [row for group in groups for row in by_group[group]]

    trainable = [c for c in columns if rankable(targets[rows_of(kept), c])]
    for column in short:
        for group in list(kept):
            held = rated_values(targets[test, column])
            if held.size >= 2:
                break
            if not np.setdiff1d(rated_values(targets[by_group[group], column]), held).size:
                continue  # it brings no rating the test part lacks
            rest = rows_of([other for other in kept if other != group])
            if all(rankable(targets[rest, c]) for c in trainable):
                test = np.sort(np.concatenate([test, by_group[group]]))
                kept.remove(group)
    return np.sort(np.array(rows_of(kept), dtype=np.int64)), test


def rated_values(ratings: np.ndarray) -> np.ndarray:
    """The different ratings among ``ratings`` (NaN: unrated)."""
    return np.unique(ratings[~np.isnan(ratings)])


def rankable(ratings: np.ndarray) -> bool:
    """Two or more different ratings, so that τ is defined."""
    return rated_values(ratings).size >= 2


def check_test_parts(prepared: PreparedTask, seeds: list[int]) -> None:
    """DataError, before any fit, for a seed whose test or train part holds no two different
    ratings of a criterion even after ``seed_split`` held out more (its τ would read 0, the
    fit would learn a constant): the file rates too few items, or gives a criterion one value
    on nearly all of them."""
    targets = prepared.inputs.targets
    for seed in seeds:
        train, test = seed_split(prepared, seed)
        for part, rows in (("test", test), ("train", train)):
            for column, criterion in enumerate(prepared.task.criteria):
                if not rankable(targets[rows, column]):
                    rated = int(np.count_nonzero(~np.isnan(targets[rows, column])))
                    why = "its τ is not defined" if part == "test" else "the fit learns nothing"
                    raise DataError(
                        f"task {prepared.task.name!r}: the {part} part of seed {seed} holds "
                        f"{rated} rating(s) of {criterion.key!r} and no two that differ, so "
                        f"{why}; rate more items, with different ratings"
                    )


def run_seed(
    prepared: PreparedTask,
    seed: int,
    settings: FitSettings,
    checkpoint: str,
    log,
    ablations: bool = True,
) -> dict:
    """One split: ours, the ablations (unless ``ablations`` is false: a fit each) and the
    baselines on the same test records."""
    train, test = seed_split(prepared, seed)
    targets = prepared.inputs.targets[test]
    trained = len(training_rows(prepared.records, train, prepared.train_datasets))
    result: dict = {"n_train": trained, "n_test": len(test), "variants": {}}
    for variant, options in {"ours": {}, **(ABLATIONS if ablations else {})}.items():
        module, _, val_loss = fit(prepared, train, settings, seed, checkpoint=checkpoint, **options)
        scores = model_scores(module, prepared, test)
        result["variants"][variant] = criterion_scores(scores, targets)
        if variant == "ours":
            result["datasets"] = dataset_scores(prepared, train, test, scores)
            if prepared.task.kind == "classification":
                predicted = scores.argmax(axis=1)
                result["accuracy"] = float((predicted == np.nanargmax(targets, axis=1)).mean())
        taus = [v["kendall"] for v in result["variants"][variant].values()]
        log(
            f"{prepared.task.name} seed {seed} {variant}: val_loss {val_loss:.4f}, mean tau {np.mean(taus):.4f}"
        )
    result["baselines"] = baseline_kendall(prepared, train, test)
    return result


def summarise(prepared: PreparedTask, runs: list[dict], seeds: list[int]) -> dict:
    """Means over seeds in the results.json shape, plus task-level (criterion-averaged) numbers."""
    criteria = [c.key for c in prepared.task.criteria]
    metrics = list(runs[0]["baselines"])  # every metric baseline_kendall scored
    ablations = [name for name in ABLATIONS if name in runs[0]["variants"]]  # those that ran
    out: dict = {
        "task": prepared.task.name,
        "kind": prepared.task.kind,
        "seeds": seeds,
        "criteria": {},
    }
    for column, key in enumerate(criteria):
        ours = [run["variants"]["ours"][column] for run in runs]
        taus = [o["kendall"] for o in ours]
        out["criteria"][key] = {
            "ours": {
                "kendall": float(np.mean(taus)),
                "kendall_std": float(np.std(taus)),
                "spearman": float(np.mean([o["spearman"] for o in ours])),
                "rmse": float(np.mean([o["rmse"] for o in ours])),
                "n_test": float(np.mean([o["n"] for o in ours])),
            },
            "baselines": {
                metric: {
                    "kendall": float(np.mean([run["baselines"][metric][column] for run in runs]))
                }
                for metric in metrics
            },
            "ablations": {
                name: {
                    "kendall": float(
                        np.mean([run["variants"][name][column]["kendall"] for run in runs])
                    )
                }
                for name in ablations
            },
        }
    per_seed = [
        np.mean([run["variants"]["ours"][c]["kendall"] for c in range(len(criteria))])
        for run in runs
    ]
    baseline_means = {
        metric: float(
            np.mean([out["criteria"][k]["baselines"][metric]["kendall"] for k in criteria])
        )
        for metric in metrics
    }
    out["summary"] = {
        **kendall_summary(per_seed, baseline_means),
        "ablations": {
            name: float(
                np.mean([out["criteria"][k]["ablations"][name]["kendall"] for k in criteria])
            )
            for name in ablations
        },
        "paper_kendall": PAPER_KENDALL.get(prepared.task.name),
        "records": len(prepared.records),
        "n_test_mean": float(np.mean([run["n_test"] for run in runs])),
    }
    if prepared.task.kind == "classification":
        out["summary"]["accuracy"] = float(np.mean([run["accuracy"] for run in runs]))
        out["summary"]["accuracy_std"] = float(np.std([run["accuracy"] for run in runs]))
    out["datasets"] = summarise_datasets(prepared, runs)
    return out


def kendall_summary(per_seed: list, baseline_means: dict[str, float]) -> dict:
    """Ours (mean and std over seeds) beside the best single metric and the named ones."""
    best = max(baseline_means, key=baseline_means.__getitem__)
    return {
        "ours_kendall": float(np.mean(per_seed)),
        "ours_kendall_std": float(np.std(per_seed)),
        "best_baseline": best,
        "best_baseline_kendall": baseline_means[best],
        "named_baselines": {m: baseline_means[m] for m in NAMED_BASELINES if m in baseline_means},
    }


def summarise_datasets(prepared: PreparedTask, runs: list[dict]) -> dict[str, dict]:
    """Per dataset, over the seeds whose test part holds it and the criteria it rates in all of
    them: ours (mean ± std over seeds of the criterion-averaged τ), the named baselines and the
    best metric (criterion-averaged, chosen after the fact as in the task table)."""
    criteria = [c.key for c in prepared.task.criteria]
    metrics = list(runs[0]["baselines"])  # every metric baseline_kendall scored
    names = sorted({name for run in runs for name in run["datasets"]})
    out: dict[str, dict] = {}
    for name in names:
        seen = [run["datasets"][name] for run in runs if name in run["datasets"]]
        columns = sorted(set.intersection(*(set(one["ours"]) for one in seen)))
        if not columns:
            continue
        per_seed = [np.mean([one["ours"][c]["kendall"] for c in columns]) for one in seen]
        baseline_means = {
            metric: float(np.mean([one["baselines"][metric][c] for one in seen for c in columns]))
            for metric in metrics
        }
        out[name] = {
            "criteria": [criteria[c] for c in columns],
            "seeds": len(seen),
            "n_test_mean": float(np.mean([one["n_test"] for one in seen])),
            **kendall_summary(per_seed, baseline_means),
            "per_criterion": {
                criteria[c]: {
                    "ours": float(np.mean([one["ours"][c]["kendall"] for one in seen])),
                    "baselines": {
                        metric: float(np.mean([one["baselines"][metric][c] for one in seen]))
                        for metric in metrics
                    },
                }
                for c in columns
            },
        }
    return out


def evaluate_task(
    prepared: PreparedTask,
    seeds: list[int],
    settings: FitSettings,
    checkpoint: str,
    export_dir: Path | None = None,
    log=print,
    ablations: bool = True,
) -> dict:
    """All seeds of one task (with the ablations unless ``ablations`` is false); with
    ``export_dir`` also fit on every record and ship the checkpoint."""
    check_test_parts(prepared, seeds)
    runs = [run_seed(prepared, seed, settings, checkpoint, log, ablations) for seed in seeds]
    result = summarise(prepared, runs, seeds)
    if export_dir is not None:
        module, data, val_loss = fit(
            prepared,
            np.arange(len(prepared.records)),
            settings,
            settings.seed,
            checkpoint=checkpoint,
        )
        summary = result["summary"]
        target = export(
            module,
            data,
            export_dir / f"mismatch-{prepared.task.name}",
            training={"fit settings": json.dumps(recorded_settings(settings, checkpoint))},
            metrics={
                "val_loss": val_loss,
                "test_kendall_mean_over_seeds": summary["ours_kendall"],
                "test_kendall_std_over_seeds": summary["ours_kendall_std"],
            },
        )
        written = folder_signature(target)
        result["checkpoint"] = str(target)
        result["checkpoint_signature"] = written.to_dict()
        log(f"{prepared.task.name}: exported {target}, signature {written}")
    return result


def tau_or_dash(value: float | None) -> str:
    """A τ to three places, or "—" for one not measured (an ablation not run)."""
    return "—" if value is None else f"{value:.3f}"


def mean_and_spread(mean: float, std: float, seeds: int) -> str:
    """A τ over ``seeds`` seeds: the mean, and its standard deviation when there was more than
    one (one seed printed "± 0.000", a spread that was never measured)."""
    return f"{mean:.3f} ± {std:.3f}" if seeds > 1 else f"{mean:.3f}"


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table: header, separator, one line per row of cells."""
    lines = ["| " + " | ".join(cells) + " |" for cells in [header, *rows]]
    return [lines[0], "|" + "---|" * len(header), *lines[1:]]


def task_table(result: dict) -> str:
    """Markdown of one task: per criterion ours, named baselines, best baseline, ablations."""
    named = [
        m for m in NAMED_BASELINES if m in next(iter(result["criteria"].values()))["baselines"]
    ]
    header = [
        "criterion",
        "ours τ (± std)",
        "ours ρ",
        "ours RMSE",
        *named,
        "best metric",
        *ABLATIONS,
    ]
    rows = []
    for key, row in result["criteria"].items():
        best = max(row["baselines"], key=lambda m: row["baselines"][m]["kendall"])
        cells = [
            key,
            mean_and_spread(
                row["ours"]["kendall"], row["ours"]["kendall_std"], len(result["seeds"])
            ),
            f"{row['ours']['spearman']:.3f}",
            f"{row['ours']['rmse']:.3f}",
            *[f"{row['baselines'][m]['kendall']:.3f}" for m in named],
            f"{best} {row['baselines'][best]['kendall']:.3f}",
            *[tau_or_dash(row["ablations"].get(a, {}).get("kendall")) for a in ABLATIONS],
        ]
        rows.append(cells)
    lines = [f"### {result['task']}", "", *markdown_table(header, rows)]
    if "accuracy" in result["summary"]:
        s = result["summary"]
        accuracy = mean_and_spread(s["accuracy"], s["accuracy_std"], len(result["seeds"]))
        lines += ["", f"Accuracy (ours): {accuracy}"]
    return "\n".join(lines) + "\n"


def summary_table(results: list[dict]) -> str:
    """Markdown of all tasks: criterion-averaged τ of ours, best metric, ablations, the paper."""
    header = [
        "task",
        "ours τ (mean ± std over seeds)",
        "best metric τ",
        "no_pretraining",
        "no_metrics",
        "paper τ",
        "test records/seed",
    ]
    rows = []
    for result in results:
        s = result["summary"]
        paper = "—" if s["paper_kendall"] is None else f"{s['paper_kendall']:.2f}"
        rows.append(
            [
                result["task"],
                mean_and_spread(s["ours_kendall"], s["ours_kendall_std"], len(result["seeds"])),
                f"{s['best_baseline']} {s['best_baseline_kendall']:.3f}",
                tau_or_dash(s["ablations"].get("no_pretraining")),
                tau_or_dash(s["ablations"].get("no_metrics")),
                paper,
                f"{s['n_test_mean']:.0f}",
            ]
        )
    return "\n".join(markdown_table(header, rows)) + "\n"


def dataset_table(results: list[dict]) -> str:
    """Markdown of every task's datasets: criterion-averaged τ of ours, the best metric and the
    named baselines on each dataset's test records alone; empty when no record names one."""
    header = [
        "task",
        "dataset",
        "criteria",
        "test records/seed",
        "ours τ (mean ± std over seeds)",
        "best metric τ",
        "ours − best",
        *NAMED_BASELINES,
    ]
    rows = []
    for result in results:
        for name, row in result.get("datasets", {}).items():
            named = [row["named_baselines"].get(m) for m in NAMED_BASELINES]
            rows.append(
                [
                    result["task"],
                    name,
                    ", ".join(row["criteria"]),
                    f"{row['n_test_mean']:.0f}",
                    mean_and_spread(row["ours_kendall"], row["ours_kendall_std"], row["seeds"]),
                    f"{row['best_baseline']} {row['best_baseline_kendall']:.3f}",
                    f"{row['ours_kendall'] - row['best_baseline_kendall']:+.3f}",
                    *[tau_or_dash(v) for v in named],
                ]
            )
    return "\n".join(markdown_table(header, rows)) + "\n" if rows else ""


def transfer_table(results: list[dict]) -> str:
    """Markdown of every task's transfer rows (``evaluator.finetune.transfer``); empty when
    no task has one."""
    header = [
        "task",
        "fitted on",
        "tested on",
        "criteria",
        "train / test records per seed",
        "ours τ (mean ± std over seeds)",
        "metric chosen on the training records: τ on test",
        "ours − metric",
    ]
    rows = [
        [
            result["task"],
            row["train"],
            row["test"],
            ", ".join(row["criteria"]),
            f"{row['n_train_mean']:.0f} / {row['n_test_mean']:.0f}",
            mean_and_spread(row["ours_kendall"], row["ours_kendall_std"], len(row["seeds"])),
            f"{', '.join(dict.fromkeys(row['metrics_chosen']))} {row['metric_kendall']:.3f}",
            f"{row['ours_kendall'] - row['metric_kendall']:+.3f}",
        ]
        for result in results
        for row in result.get("transfer", [])
    ]
    return "\n".join(markdown_table(header, rows)) + "\n" if rows else ""


def results_markdown(results: list[dict], command: str) -> str:
    seeds = results[0]["seeds"] if results else []
    parts = [
        "# Fine-tuned evaluator vs single metrics (Kendall τ-b on held-out groups)",
        "",
        f"Command: `{command}`. Seeds {seeds}: 80/20 split by group per seed; means over seeds.",
        "Metric baselines are oriented by the sign of their τ on the train part. τ on the",
        "normalised scale; classification tasks (NLI) use the class probability vs the one-hot label.",
        "",
        *base_lines(results),
        summary_table(results),
    ]
    datasets = dataset_table(results)
    if datasets:
        parts += [
            "## Per dataset",
            "",
            "The same runs, each dataset's test records alone (criteria it rates; metric baselines",
            "oriented as in the task tables, the best one chosen after the fact per dataset).",
            "",
            datasets,
        ]
    transfers = transfer_table(results)
    if transfers:
        parts += [
            "## Transfer",
            "",
            "Fitted on one dataset (its records in each seed's train part), tested on another",
            "(its records whose groups were not trained on); the baseline is the single metric",
            "with the best τ on the same training records, oriented there, applied to the test.",
            "",
            transfers,
        ]
    parts += [task_table(result) for result in results]
    return "\n".join(parts)


def base_lines(results: list[dict]) -> list[str]:
    """The signature of the base the tasks were fitted on (one line per base when they differ)."""
    bases: dict[str, list[str]] = {}
    for result in results:
        if "base_signature" in result:
            bases.setdefault(result["base_signature"]["signature"], []).append(result["task"])
    if not bases:
        return []
    if len(bases) == 1:
        return [f"Base: `{next(iter(bases))}`.", ""]
    return [f"- base of {', '.join(tasks)}: `{base}`" for base, tasks in bases.items()] + [""]


def write_results(directory: Path, results: list[dict], command: str) -> None:
    """results.json (one task: its dict; several: {"tasks": {name: dict}}) and results.md,
    both made before either is written: a report that cannot be made leaves the last run's
    two files (only the second write failing could still part them)."""
    payload = results[0] if len(results) == 1 else {"tasks": {r["task"]: r for r in results}}
    figures = report_json(payload)
    report = results_markdown(results, command)
    write_text_atomic(directory / "results.json", figures)
    write_text_atomic(directory / "results.md", report)
