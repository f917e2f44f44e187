"""A grammar-slip detector over the encoder's middle-layer token states of one text.

The metric features compare gen with the reference; a one-word slip ('A man is ride a
horse') moves them less than a harmless rewording does, and the base read most such slips on
real outputs as correct. A text's own token states at a middle layer of MiniLM carry its
syntax: a small convolution over them, trained to tell a clean text from the same text with a
synth GramErr rule applied (``scripts/train_disfluency.py``), scores how broken a text reads.
The ``disfluency`` feature (``encoder_pass.Disfluency``) is gen's score minus the reference's,
so a reference's own oddities cancel out.

The detector reads the states the shared encoder pass already computes, so it adds no encoder
pass. Its weights ship as ``checkpoints/disfluency-detector`` (config.json, naming the encoder
it reads, + safetensors); a digest of the two files keys the feature's cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import torch
from torch import Tensor, nn

from mismatch_core.atomic import atomic_directory
from mismatch_core.errors import ResourceMissingError
from mismatch_core.resources import DEFAULT_ENCODER, local_path, outside_checkout_hint

DETECTOR_PATH = "checkpoints/disfluency-detector"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"


class DisfluencyDetector(nn.Module):
    """(batch, length, dim) token states and their mask -> one logit per text (> 0: broken).

    Padding positions are zeroed after the norm, the same as the convolutions' own zero
    padding, so a text's score does not depend on how long the others in its batch are."""

    def __init__(
        self,
        layer: int,
        dim: int = 384,
        hidden: int = 128,
        kernel: int = 3,
        encoder: str = DEFAULT_ENCODER,
    ) -> None:
        super().__init__()
        self.encoder = encoder  # whose token states it was trained on
        self.layer = layer
        self.norm = nn.LayerNorm(dim)
        self.conv1 = nn.Conv1d(dim, hidden, kernel, padding=kernel // 2)
        self.conv2 = nn.Conv1d(hidden, hidden, kernel, padding=kernel // 2)
        self.out = nn.Linear(hidden, 1)

    def config(self) -> dict:
        return {
            "encoder": self.encoder,
            "layer": self.layer,
            "dim": self.norm.normalized_shape[0],
            "hidden": self.conv1.out_channels,
            "kernel": self.conv1.kernel_size[0],
        }

    def forward(self, states: Tensor, mask: Tensor) -> Tensor:
        keep = mask.unsqueeze(-1).to(states.dtype)
        x = (self.norm(states) * keep).transpose(1, 2)
        x = torch.relu(self.conv1(x)) * keep.transpose(1, 2)
        x = torch.relu(self.conv2(x)).transpose(1, 2)
        x = x.masked_fill(keep == 0, float("-inf")).max(dim=1).values
        return self.out(x).squeeze(-1)


def save_detector(detector: DisfluencyDetector, folder: Path, record: dict) -> None:
    """config.json (shape, encoder, layer and ``record``: how it was trained) + model.safetensors,
    replacing ``folder`` as a whole; DataError if ``folder`` is a file or holds anything else."""
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous() for k, v in detector.state_dict().items()}
    config = {**detector.config(), "training": record}
    with atomic_directory(Path(folder), (CONFIG_FILE, WEIGHTS_FILE)) as staging:
        save_file(state, str(staging / WEIGHTS_FILE))
        (staging / WEIGHTS_FILE).chmod(0o644)  # safetensors writes it 0600; others read it
        (staging / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def detector_folder(path: str = DETECTOR_PATH) -> Path:
    """The detector's folder; ResourceMissingError says how to make a missing one."""
    folder = local_path(path)
    if folder is None or not (folder / WEIGHTS_FILE).is_file():
        hint = outside_checkout_hint() or (
            "; train it with python scripts/train_disfluency.py (see its docstring)"
        )
        raise ResourceMissingError(
            f"the disfluency detector {path}/{WEIGHTS_FILE} is missing{hint}"
        )
    return folder


@functools.lru_cache(maxsize=2)
def detector_digest(path: str = DETECTOR_PATH) -> str:
    """The first 12 hex digits of the SHA-256 of the detector's weights and config: part of the
    feature's cache key and signature, so a retrained detector never reads stale scores."""
    folder = detector_folder(path)
    digest = hashlib.sha256()
    for name in (WEIGHTS_FILE, CONFIG_FILE):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:12]


@functools.lru_cache(maxsize=2)
def load_detector(path: str = DETECTOR_PATH) -> DisfluencyDetector:
    """The shipped detector in eval mode; ResourceMissingError says how to make it. Building
    it leaves torch's random state as it was: the first call can come after a fit's seed
    (scripts/finetune.py) or before it (mismatch finetune), and the fit must not tell."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    folder = detector_folder(path)
    try:
        config = json.loads((folder / CONFIG_FILE).read_text())
        with torch.random.fork_rng(devices=[]):  # its random start is replaced by the weights
            detector = DisfluencyDetector(
                config["layer"],
                config["dim"],
                config["hidden"],
                config["kernel"],
                config["encoder"],
            )
        detector.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
    except KeyError as error:
        raise ResourceMissingError(
            f"{folder / CONFIG_FILE}: unreadable disfluency detector, no key {error}"
        ) from None
    except (OSError, TypeError, ValueError, RuntimeError, SafetensorError) as error:
        raise ResourceMissingError(f"{folder}: unreadable disfluency detector ({error})") from None
    return detector.eval()
