"""Experiment patch (on PYTHONPATH): ``source_copies_out`` and ``map_choice`` together (only
one sitecustomize.py is imported, so this one runs both)."""

import importlib.util
from pathlib import Path

RECORD = Path(__file__).resolve().parent.parent
for name in ("source_copies_out", "map_choice"):
    spec = importlib.util.spec_from_file_location(
        f"{name}_patch", RECORD / name / "sitecustomize.py"
    )
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
