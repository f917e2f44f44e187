"""A checkpoint's files and its config.json, found and read without torch.

A checkpoint spec (``PATH_OR_HUB_ID[@REVISION]``) is resolved in two steps: ``resolve_checkpoint``
checks it without downloading anything (offline, a Hub id must be cached), and
``checkpoint_directory`` then gives its local folder, downloading a Hub repo's files if needed.
``mismatch predict`` reads what a checkpoint needs of its input (a source per pair, for
instance) while it checks the input, before the model code loads; ``evaluator.hub`` loads
the model from the same directory and config.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path

from mismatch_core.atomic import folder_problem, is_within, same_path
from mismatch_core.errors import CheckpointError
from mismatch_core.resources import (
    DEFAULT_CHECKPOINT,
    REPO_ROOT,
    hub_reachable,
    local_path,
    outside_checkout_hint,
)
from mismatch_core.taxonomy import CODES

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
CARD_FILE = "README.md"
FORMAT = "mismatch-eval"
FORMAT_VERSION = 1
CHECKPOINT_FILES = (CONFIG_FILE, WEIGHTS_FILE, CARD_FILE)
CHECKPOINT_PATH_HINT = ", or give a checkpoint folder's path"
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def export_problem(path: Path) -> str | None:
    """Why a checkpoint cannot be written at ``path``, or None: only a new or empty folder or
    an earlier checkpoint holding nothing but its files may be replaced (whole). Commands
    check it before a long run, so that the run does not fail at its last step. ``~`` is
    expanded, as save_pretrained writes it."""
    path = Path(path).expanduser()
    if path.is_dir() and not (path / CONFIG_FILE).is_file() and any(path.iterdir()):
        return f"{path} exists and is not a checkpoint directory; refusing to replace it"
    if in_downloaded_repo(path):
        return (
            f"{path} is inside a download in the Hugging Face cache, which keeps each revision "
            "as the Hub has it; save to another folder"
        )
    return folder_problem(path, CHECKPOINT_FILES)


def in_downloaded_repo(path: Path) -> bool:
    """Whether ``path`` lies in a repository's folder of the Hugging Face cache (models--*,
    datasets--*, spaces--*), links followed: saving there replaced a snapshot's links."""
    from huggingface_hub import constants

    cache = Path(constants.HF_HUB_CACHE).expanduser()
    if not is_within(path, cache):
        return False
    inside = path.expanduser().resolve().relative_to(cache.resolve()).parts
    return bool(inside) and inside[0].startswith(("models--", "datasets--", "spaces--"))


def replaces_base_problem(out: str | Path, checkpoint: str) -> str | None:
    """Why writing a checkpoint to ``out`` would replace the base ``checkpoint`` the run reads
    (a local folder; ``~`` expanded as both are written and read), or None."""
    base = local_path(checkpoint)
    if base is not None and same_path(Path(out).expanduser(), base):
        return f"{out} is the base checkpoint this run reads; name another"
    return None


def checkpoint_sha256(directory: Path) -> str:
    """sha256 over the checkpoint's config and weights files (name and bytes of each)."""
    digest = hashlib.sha256()
    for name in (CONFIG_FILE, WEIGHTS_FILE):
        digest.update(name.encode() + b"\0")
        with (Path(directory) / name).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def require_hub_id(name: str) -> None:
    """A name that is no local path must be a Hub repo id; otherwise it was meant as a path,
    and CheckpointError says that it does not exist."""
    if not HUB_ID.match(name):
        raise CheckpointError(f"checkpoint directory {Path(name).expanduser()} does not exist")


def checkpoint_directory(name: str, revision: str | None, local_files_only: bool) -> Path:
    """The local directory of a checkpoint: ``name`` itself (looked up as ``resolve_checkpoint``
    looks, so ``checkpoints/mismatch-base`` loads from any folder, in Python as on the command
    line), or the cached download of a Hub repo id (config, weights and card only).
    CheckpointError says why not."""
    _require_name(name)
    path = local_path(name)
    if path is not None:
        if revision is not None:
            raise CheckpointError(
                f"{path} is a local directory; revision {revision!r} applies to Hub ids"
            )
        if not path.is_dir():
            raise CheckpointError(
                f"{path} is a file; a checkpoint is a directory holding {CONFIG_FILE}"
            )
        return path
    require_hub_id(name)
    _require_cached_when_offline(name, revision)  # not the Hub library's local_files_only hint
    from huggingface_hub import snapshot_download

    try:
        downloaded = snapshot_download(
            repo_id=name,
            revision=revision,
            allow_patterns=list(CHECKPOINT_FILES),
            local_files_only=local_files_only or not hub_reachable(),
        )
    except Exception as error:  # huggingface_hub raises many types (offline, 404, auth, network)
        raise CheckpointError(
            f"{name!r} is neither a local checkpoint directory nor a downloadable Hub repo "
            f"({type(error).__name__}: {error})" + _shipped_hint(name)
        ) from None
    return Path(downloaded)


def resolve_checkpoint(spec: str | None, task: str | None = None) -> tuple[str, str | None]:
    """(local directory or Hub id, revision) for a checkpoint spec ``PATH_OR_HUB_ID[@REVISION]``;
    None means the shipped checkpoint (of ``task``, when given). CheckpointError says why not.

    A relative path is looked up in the working directory, then in the repository root, so
    the shipped checkpoints work from anywhere; anything else is taken as a Hub id, which
    offline must already be in the cache. Checked without importing torch.
    """
    if spec is None:
        spec = DEFAULT_CHECKPOINT if task is None else f"checkpoints/mismatch-{task}"
        found = local_path(spec)
        if found is not None and found.is_dir():
            return str(found), None
        hint = outside_checkout_hint(CHECKPOINT_PATH_HINT) or (
            ""
            if task is None
            else f"; make it with: mismatch finetune --task {task} --out checkpoints/mismatch-{task}"
        )
        raise CheckpointError(f"checkpoint {spec} not found (looked in . and {REPO_ROOT}){hint}")
    _require_name(spec)
    name, revision = spec, None
    if "@" in spec and not Path(spec).expanduser().exists():
        name, _, revision = spec.rpartition("@")
        if not name or not revision:
            raise CheckpointError(f"checkpoint {spec!r}: expected PATH_OR_HUB_ID[@REVISION]")
    found = local_path(name)
    if found is not None:
        if revision is not None:
            raise CheckpointError(f"{found} is a local directory; @{revision} applies to Hub ids")
        return str(found), None
    require_hub_id(name)
    _require_cached_when_offline(name, revision)
    return name, revision


def _require_name(name: str) -> None:
    """CheckpointError for an empty or blank name, which would load the working directory."""
    if not name.strip():
        raise CheckpointError("the checkpoint path or Hub repo id is empty")


def _require_cached_when_offline(name: str, revision: str | None) -> None:
    """Offline, a Hub id must already be in the cache."""
    if hub_reachable():
        return
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(name, CONFIG_FILE, revision=revision)
    except ValueError as error:  # a name HUB_ID lets through that the Hub refuses
        raise CheckpointError(f"{name!r} is not a valid Hub repo id ({error})") from None
    if not isinstance(cached, str):
        at = f" at revision {revision!r}" if revision is not None else ""  # another may be
        raise CheckpointError(
            f"{name!r} is neither a local checkpoint directory nor in the Hugging Face cache "
            f"({constants.HF_HUB_CACHE}){at}, and the Hub is offline" + _shipped_hint(name)
        )


def _shipped_hint(name: str) -> str:
    """``outside_checkout_hint`` for a name of a shipped checkpoint (checkpoints/...)."""
    return outside_checkout_hint(CHECKPOINT_PATH_HINT) if name.startswith("checkpoints/") else ""


def reads_sources(config: Mapping) -> bool:
    """Whether a checkpoint's ratings read each output against its source (``read_config``'s
    result), so that every pair needs one."""
    return bool(config["architecture"].get("source_features"))


def read_config(directory: Path) -> dict:
    """config.json of a checkpoint directory, checked for format, version and taxonomy."""
    config_file = directory / CONFIG_FILE
    if not config_file.is_file():
        raise CheckpointError(
            f"{config_file} is missing; {directory} is not a mismatch-eval checkpoint"
        )
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{config_file} is not valid JSON: {error}") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise CheckpointError(f'{config_file} is not a {FORMAT} config (no "format": "{FORMAT}")')
    if config.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{config_file} has format_version {config.get('format_version')!r}, "
            f"this code reads {FORMAT_VERSION}"
        )
    missing = [key for key in ("architecture", "features", "taxonomy") if key not in config]
    if missing:
        raise CheckpointError(f"{config_file} lacks {', '.join(missing)}")
    for key in ("architecture", "features"):
        if not isinstance(config[key], dict):
            raise CheckpointError(f'{config_file}: "{key}" must be an object')
    if config["taxonomy"] != list(CODES):
        raise CheckpointError(
            f"{config_file} was trained for classes {config['taxonomy']}, not {list(CODES)}"
        )
    return config
