"""One block of real-text figures per run: NAME.rt.json (`--parts sick,bases`), NAME.darr.json
(`--parts darr`) and NAME.demo (`mismatch demo`) in a folder, as `exp.sh` writes them.

    python summary.py /work/data/s41/runs [NAME ...]
"""

import json
import re
import sys
from pathlib import Path

PAIRS = ("gu-en", "kk-en", "lt-en", "mean")
DEMO_ROWS = r"^(entity|multi-ref|wmt17-good|negation|number|place)"


def realtext_line(report: dict) -> str:
    sick, bases = report["sick"], report["bases"]
    per_class = {k: v["top_error_is_class"] for k, v in bases["per_class"].items()}
    lowest = min(per_class, key=per_class.get)
    return (
        f"SICK {sick['paraphrase_nocontr_recall']:.3f}/{sick['contradiction_read_as_nocontr']:.3f}"
        f"/{sick['auroc']['P(NoContr)']:.3f} drop {bases['drop']['P(NoContr)']:.3f} "
        f"mean {bases['top_error_is_class_mean_over_classes']:.3f} "
        f"({lowest} {per_class[lowest]:.3f}) unperturbed {bases['base_nocontr_recall']:.3f} "
        f"meaning {bases['drop_meaning']['P(NoContr)']:.3f}"
    )


def darr_line(tau: dict) -> str:
    def pairs(metric: str) -> str:
        return " / ".join(f"{tau[metric][pair]:.3f}" for pair in PAIRS)

    return f"DARR {pairs('P(NoContr)')}   (chrF {pairs('chrF')})"


folder = Path(sys.argv[1])
names = sys.argv[2:] or sorted({p.name.split(".")[0] for p in folder.glob("*.rt.json")})
for name in names:
    lines = [name]
    if (folder / f"{name}.rt.json").exists():
        lines.append(realtext_line(json.loads((folder / f"{name}.rt.json").read_text())))
    if (folder / f"{name}.darr.json").exists():
        darr = json.loads((folder / f"{name}.darr.json").read_text())["darr"]
        lines.append(darr_line(darr["tau"]))
    if (folder / f"{name}.demo").exists():
        demo = (folder / f"{name}.demo").read_text().splitlines()
        lines += ["  " + row[:90] for row in demo if re.match(DEMO_ROWS, row)]
    print("\n  ".join(lines))
