"""Write a stress run as report.json, report.md and one PNG of curves per metric (atomic)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

from evaluator.stress.runner import StressResult
from mismatch_core.atomic import atomic_path, write_text_atomic
from mismatch_core.jsonl import report_json

PLOT_COLUMNS = 5
REPORT_FILES = ("report.json", "report.md")  # under --out, beside plots/


def plot_names(metrics: Iterable[str]) -> dict[str, str]:
    """Metric -> the file name of its plot, such as ``mismatch_checkpoints_x.png`` for
    ``mismatch=checkpoints/x``; distinct, so that two metrics whose names read alike as file
    names (``x/y`` and ``x_y``) do not draw over one plot: the later ones get a number."""
    names: dict[str, str] = {}
    for metric in metrics:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", metric).strip("_")
        name, number = f"{stem}.png", 2
        while name in names.values():
            name, number = f"{stem}-{number}.png", number + 1
        names[metric] = name
    return names


def plot_metric(result: StressResult, metric: str, path: Path) -> None:
    """Score vs noise ratio per test, one standard deviation (over seeds) shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = result.curves[metric]
    rows = math.ceil(len(curves) / PLOT_COLUMNS)
    figure, axes = plt.subplots(
        rows, PLOT_COLUMNS, figsize=(3.2 * PLOT_COLUMNS, 2.6 * rows), squeeze=False
    )
    for ax, (test, curve) in zip(axes.flat, curves.items(), strict=False):
        low = [s - d for s, d in zip(curve.scores, curve.std, strict=True)]
        high = [s + d for s, d in zip(curve.scores, curve.std, strict=True)]
        color = "tab:green" if curve.passed else "tab:red"
        ax.plot(curve.levels, curve.scores, marker="o", color=color)
        ax.fill_between(curve.levels, low, high, color=color, alpha=0.25)
        ax.set_title(f"{test} ({'pass' if curve.passed else 'FAIL'})", fontsize=9, color=color)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("noise ratio", fontsize=7)
    for ax in list(axes.flat)[len(curves) :]:
        ax.axis("off")
    figure.suptitle(f"{metric}: mean score vs noise ratio (gold at 0)", fontsize=11)
    figure.tight_layout()
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=80)
    plt.close(figure)


def markdown(
    result: StressResult,
    title: str,
    command: str,
    plots: dict[str, str],
    signatures: dict | None = None,
) -> str:
    """The report: pass/fail per test and metric (gold -> highest-noise mean), coverage, plots;
    ``signatures``: metric -> signature dict, one line each under the command."""
    metrics = list(result.curves)
    lines = [f"# {title}", "", f"Command: `{command}`", ""]
    if signatures:
        lines += [f"- signature of {m}: `{s['signature']}`" for m, s in signatures.items()]
        lines.append("")
    lines += [
        f"{result.items} items, {result.seeds} seeds. A test passes when the mean score falls "
        "strictly with each noise level and most noised texts score below their gold at every "
        "level. Cells: verdict, mean score of the gold -> the highest level.",
        "",
    ]
    lines += ["| test | kind | items | noise ratio per level | " + " | ".join(metrics) + " |"]
    lines += ["|---|---|---|---|" + "---|" * len(metrics)]
    for test, info in result.tests.items():
        levels = next(iter(result.curves.values()))[test].levels[1:] if metrics else []
        cells = []
        for metric in metrics:
            curve = result.curves[metric][test]
            mark = "pass" if curve.passed else "**FAIL**"
            cells.append(f"{mark} {curve.scores[0]:.3f}->{curve.scores[-1]:.3f}")
        noise = ", ".join(f"{r:.2f}" for r in levels)
        lines.append(
            f"| {test} | {info.kind} | {info.items} | {noise} | " + " | ".join(cells) + " |"
        )
    passed = [str(sum(c.passed for c in result.curves[m].values())) for m in metrics]
    lines.append(f"| **passed** (of {len(result.tests)}) | | | | " + " | ".join(passed) + " |")
    lines.append("")
    if result.skipped_tests:
        lines += ["Tests without a verdict:", ""]
        lines += [f"- {test}: {why}" for test, why in result.skipped_tests.items()]
        lines.append("")
    lines += ["Scoring time: " + ", ".join(f"{m} {s:.0f}s" for m, s in result.seconds.items()), ""]
    for metric in metrics:
        lines += [f"## {metric}", "", f"![{metric}]({plots[metric]})", ""]
    return "\n".join(lines)


def write_report(
    result: StressResult, out: Path, title: str, command: str, signatures: dict | None = None
) -> list[Path]:
    """Write report.json, report.md and plots/<metric>.png under ``out``; return the paths.
    ``signatures``: metric -> reproducibility signature (the mismatch checkpoints), in both.
    The plots an earlier report in ``out`` drew that this one does not redraw are removed: no
    report links them any more. Other files there are the user's and stay."""
    out = Path(out)
    earlier = earlier_plots(out)
    plots = {metric: f"plots/{name}" for metric, name in plot_names(result.curves).items()}
    payload = {"title": title, "command": command, **result.to_json()}
    if signatures:
        payload["signatures"] = signatures
    written = []
    for metric, relative in plots.items():  # first: report.md links them
        plot_metric(result, metric, out / relative)
        written.append(out / relative)
    figures, report = (out / name for name in REPORT_FILES)
    write_text_atomic(figures, report_json(payload, indent=1))
    write_text_atomic(report, markdown(result, title, command, plots, signatures))
    written = [figures, report, *written]
    for stale in sorted(earlier - set(written)):
        stale.unlink(missing_ok=True)
    return written


def earlier_plots(out: Path) -> set[Path]:
    """The plots the report already in ``out`` drew (one per metric of its report.json);
    none without a readable report."""
    try:
        metrics = json.loads((out / "report.json").read_text(encoding="utf-8"))["metrics"]
        return {out / "plots" / name for name in plot_names(metrics).values()}
    except (OSError, ValueError, KeyError, TypeError):
        return set()
