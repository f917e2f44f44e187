"""Two results.json of `mismatch evaluate --task all` side by side: task means, best metric, the
criteria at or below their best metric, transfers. Usage: compare.py BEFORE.json AFTER.json"""

import json
import sys
from pathlib import Path


def below(task: dict) -> list[str]:
    """The criteria whose 3-seed τ is at or below their best single metric's."""
    rows = []
    for key, criterion in task["criteria"].items():
        ours = criterion["ours"]["kendall"]
        baselines = criterion["baselines"].items()
        name, best = max(((m, v["kendall"]) for m, v in baselines), key=lambda item: item[1])
        if ours <= best:
            rows.append(f"{key} {ours:.3f} vs {name} {best:.3f}")
    return rows


def main(before_path: str, after_path: str) -> None:
    old = json.loads(Path(before_path).read_text())["tasks"]
    new = json.loads(Path(after_path).read_text())["tasks"]
    counts = [0, 0]
    for name in new:
        o, n = old[name]["summary"], new[name]["summary"]
        was, now = below(old[name]), below(new[name])
        counts[0] += len(was)
        counts[1] += len(now)
        print(
            f"{name:20s} ours {o['ours_kendall']:.3f} -> {n['ours_kendall']:.3f} "
            f"± {n['ours_kendall_std']:.3f}; best {o['best_baseline']} "
            f"{o['best_baseline_kendall']:.3f} -> {n['best_baseline']} "
            f"{n['best_baseline_kendall']:.3f}"
        )
        print(f"    below before: {was}\n    below now:    {now}")
        transfers = zip(
            old[name].get("transfer") or [], new[name].get("transfer") or [], strict=True
        )
        for t_old, t_new in transfers:
            print(
                f"    transfer {t_new['train']} -> {t_new['test']} ours "
                f"{t_old['ours_kendall']:.3f}->{t_new['ours_kendall']:.3f} metric "
                f"{t_old['metric_kendall']:.3f}->{t_new['metric_kendall']:.3f}"
            )
    print("criteria below the best metric: before", counts[0], "now", counts[1])


if __name__ == "__main__":
    main(*sys.argv[1:3])
