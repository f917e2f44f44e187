"""A reproducibility signature, as sacrebleu prints one: what decides a score, on one line.

``checkpoint:mismatch-base|sha256:…|encoder:all-MiniLM-L6-v2|features:37.…|version:0.1.0|threshold:0.5``:
the checkpoint's name and the sha256 of its files (config and weights), the encoder, the
feature set with each feature's version (count and digest here; every version in ``to_dict``),
the package version and the label threshold. Two runs with equal signatures score alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from evaluator.features.compute import feature_versions
from evaluator.hub import Checkpoint, load
from mismatch_core.checkpoint_files import checkpoint_sha256
from mismatch_core.version import package_version

SHORT_HASH = 12


@dataclass(frozen=True)
class Signature:
    checkpoint: str
    sha256: str  # of the checkpoint's config and weights files
    encoder: str
    features: dict[str, str]  # feature -> version
    version: str  # of the package
    threshold: float | None = None  # None where no labels are read off (fine-tuning)

    def __str__(self) -> str:
        features = hashlib.sha256(json.dumps(self.features, sort_keys=True).encode()).hexdigest()
        parts = [
            f"checkpoint:{self.checkpoint}",
            f"sha256:{self.sha256[:SHORT_HASH]}",
            f"encoder:{self.encoder}",
            f"features:{len(self.features)}.{features[:8]}",
            f"version:{self.version}",
        ]
        if self.threshold is not None:
            # every digit (two runs told apart); a float's repr whatever number type it came as
            parts.append(f"threshold:{float(self.threshold)!r}")
        return "|".join(parts)

    def to_dict(self) -> dict:
        return {
            "signature": str(self),
            "checkpoint": self.checkpoint,
            "sha256": self.sha256,
            "encoder": self.encoder,
            "features": dict(self.features),
            "version": self.version,
            "threshold": self.threshold,
        }


def checkpoint_name(directory: Path) -> str:
    """The folder's name; for a Hub download (…/models--org--name/snapshots/REV), org/name@REV."""
    directory = Path(directory)
    if directory.parent.name == "snapshots" and directory.parent.parent.name.startswith("models--"):
        repo_id = directory.parent.parent.name.removeprefix("models--").replace("--", "/")
        return f"{repo_id}@{directory.name}"
    return directory.name


def signature(checkpoint: Checkpoint, threshold: float | None = None) -> Signature:
    encoder = checkpoint.model.config.encoder
    return Signature(
        checkpoint=checkpoint_name(checkpoint.path),
        sha256=checkpoint.sha256 or checkpoint_sha256(checkpoint.path),
        encoder=encoder,
        features=feature_versions(checkpoint.feature_names, encoder, checkpoint.num_layers),
        version=package_version(),
        threshold=threshold,
    )


def folder_signature(directory: str | Path) -> Signature:
    """The signature of a checkpoint folder a command has just written, printed by the
    commands that train or export one, so their output names the model they made."""
    return signature(load(directory))
