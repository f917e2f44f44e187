"""Two `mismatch evaluate` results.json files side by side: task means, the criteria below
their best single metric, datasets and transfer rows (what docs/results.md reports).

    python compare.py BEFORE/results.json AFTER/results.json
"""

import json
import sys

before, after = (json.load(open(path))["tasks"] for path in sys.argv[1:3])


def best(baselines: dict) -> tuple[str, float]:
    name = max(baselines, key=lambda n: baselines[n]["kendall"])
    return name, baselines[name]["kendall"]


print("| task | before | after | best metric |")
print("|---|---|---|---|")
for task, result in after.items():
    s, b = result["summary"], before[task]["summary"]
    print(
        f"| {task} | {b['ours_kendall']:.3f} | {s['ours_kendall']:.3f} ± {s['ours_kendall_std']:.3f} "
        f"| {s['best_baseline']} {s['best_baseline_kendall']:.3f} |"
    )
print("\ncriteria below their best single metric (after; before in brackets):")
below = 0
for task, result in after.items():
    for criterion, figures in result["criteria"].items():
        name, tau = best(figures["baselines"])
        ours = figures["ours"]["kendall"]
        was = before[task]["criteria"][criterion]["ours"]["kendall"]
        if ours <= tau:
            below += 1
        flag = "BELOW" if ours <= tau else ""
        print(f"  {task} {criterion}: {ours:.3f} ({was:.3f}) vs {name} {tau:.3f} {flag}")
print(f"below: {below}")
print("\ndatasets:")
for task, result in after.items():
    for dataset, figures in result.get("datasets", {}).items():
        was = before[task]["datasets"][dataset]["ours_kendall"]
        print(
            f"  {task} {dataset}: {figures['ours_kendall']:.3f} ± {figures['ours_kendall_std']:.3f} "
            f"({was:.3f}) vs {figures['best_baseline']} {figures['best_baseline_kendall']:.3f}"
        )
print("\ntransfers:")
for task, result in after.items():
    for k, row in enumerate(result.get("transfer", [])):
        was = before[task]["transfer"][k]["ours_kendall"]
        print(
            f"  {row['train']} -> {row['test']}: {row['ours_kendall']:.3f} ± {row['ours_kendall_std']:.3f} "
            f"({was:.3f}) vs {row['metrics_chosen']} {row['metric_kendall']:.3f} "
            f"{row['ours_kendall'] - row['metric_kendall']:+.3f}"
        )
