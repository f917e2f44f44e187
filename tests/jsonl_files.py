"""Test fixtures' files: the gzip JSONL the data readers take."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def write_jsonl_gz(path: Path, rows: list[dict]) -> None:
    """One JSON object per line, gzip-compressed, parent folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
