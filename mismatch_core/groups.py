"""Where a group falls in a seeded split: one hash for every split in the project (synthetic
train/val, the human-rating seeds, the continued training's real val part, the span tagger's
dev part), so a group's side never depends on the other groups or on their order."""

from __future__ import annotations

import hashlib


def group_position(seed: int | str, group: str) -> float:
    """Where ``group`` falls in [0, 1) for ``seed``: the first 8 bytes of sha256("seed:group")."""
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
