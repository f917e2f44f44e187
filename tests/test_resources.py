"""The resource module: every offline resource loads, and a missing one fails fast and clearly."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import torch

from mismatch_core import resources
from mismatch_core.errors import CheckpointError
from mismatch_core.resources import REPO_ROOT, local_path


def test_packaged_encoder_gives_a_384_d_embedding():
    tokenizer, model = resources.load_encoder("all-MiniLM-L6-v2")
    batch = tokenizer(["A dog runs in the park."], return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    assert hidden.shape[-1] == 384
    assert torch.isfinite(hidden).all()


def test_one_encoder_copy_per_device_whatever_it_is_called():
    """predict's encoder pass and its truncation count ask for the encoder in other words;
    they must share one copy (two had cost a second MiniLM in memory)."""
    default = resources.load_encoder("all-MiniLM-L6-v2")[1]
    assert resources.load_encoder("all-MiniLM-L6-v2", "cpu")[1] is default
    assert resources.load_encoder("all-MiniLM-L6-v2", "cpu:0")[1] is default


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("tpu", "unknown device 'tpu'; use cpu or cuda"),
        ("meta", "unknown device 'meta'; use cpu or cuda"),
        ("cuda:99", "device cuda:99 requested but"),
    ],
)
def test_a_device_this_machine_cannot_use_is_refused_by_name(name, problem):
    assert str(resources.torch_device("cpu:0")) == "cpu"
    with pytest.raises(ValueError, match=problem):
        resources.torch_device(name)


def test_loading_the_encoder_draws_no_bar_and_keeps_the_callers_settings(monkeypatch, capfd):
    """A library caller sees no transformers "Loading weights" bar (the commands hide it with
    quiet_hub_libraries); transformers' bars stay enabled afterwards, and huggingface_hub's
    per-group settings are left alone."""
    from huggingface_hub import constants
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars
    from transformers.utils import logging as transformers_logging

    hub_bars = sys.modules["huggingface_hub.utils.tqdm"]
    # the variable unset, in constants and in the copy hub_bars took when first imported (a
    # command run earlier in this process may have set it: quiet_hub_libraries)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(hub_bars, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(transformers_logging, "_tqdm_active", True)
    monkeypatch.setattr(hub_bars, "progress_bar_states", {})
    disable_progress_bars("caller-group")  # a caller's own choice for one group of hub bars
    resources._load_encoder.__wrapped__(resources.DEFAULT_ENCODER, "cpu")  # not the cache
    assert "Loading weights" not in capfd.readouterr().err
    assert transformers_logging.is_progress_bar_enabled()
    assert are_progress_bars_disabled("caller-group") and not are_progress_bars_disabled()

    def fails(*args, **kwargs):
        raise OSError("no weights")

    import transformers

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", fails)
    with pytest.raises(OSError, match="no weights"):  # a failed load gives the bars back too
        resources._load_encoder.__wrapped__(resources.DEFAULT_ENCODER, "cpu")
    assert transformers_logging.is_progress_bar_enabled()


def test_spacy_pipeline_parses(nlp):
    doc = nlp("Two dogs chased a cat in Chicago.")
    assert [t.pos_ for t in doc][:3] == ["NUM", "NOUN", "VERB"]
    assert doc[2].dep_ == "ROOT"
    assert [e.label_ for e in doc.ents] == ["CARDINAL", "GPE"]


def test_wordnet_has_all_synsets():
    wordnet = resources.wordnet()
    assert sum(1 for _ in wordnet.all_synsets()) == 117_659
    assert wordnet.synsets("dog")[0].name() == "dog.n.01"


def test_unreachable_hub_id_fails_fast_with_clear_message(monkeypatch):
    monkeypatch.setattr(resources, "hub_reachable", lambda: False)
    started = time.perf_counter()
    with pytest.raises(resources.ResourceMissingError, match="not in the local Hugging Face cache"):
        resources.encoder_path("no-such-org/no-such-model")
    assert time.perf_counter() - started < 2.0


def test_missing_data_dir_names_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("MISMATCH_DATA_DIR", str(tmp_path / "absent"))
    with pytest.raises(resources.ResourceMissingError, match="MISMATCH_DATA_DIR"):
        resources.data_dir()


def test_the_readme_explains_every_class_in_the_taxonomys_order():
    """README's table is what users read the labels by (it pointed at a file outside the
    repository); it must follow the taxonomy that checkpoints store."""
    from mismatch_core.taxonomy import TAXONOMY

    readme = (resources.REPO_ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| ") and " | " in line]
    codes = {c.code for c in TAXONOMY}
    table = [row[2:-2].split(" | ") for row in rows if row[2:].split(" | ")[0] in codes]
    assert table == [[c.code, c.meaning, c.example or "-"] for c in TAXONOMY]


def test_local_directory_is_used_as_is(tmp_path):
    assert resources.encoder_path(str(tmp_path)) == str(tmp_path)


def test_a_folder_named_like_the_packaged_encoder_does_not_stand_in_for_it(tmp_path, monkeypatch):
    """Caches and checkpoints record the name: a folder of that name in the working directory
    took its place, and its vectors were read as the packaged model's."""
    packaged = resources.encoder_path(resources.DEFAULT_ENCODER)
    monkeypatch.chdir(tmp_path)
    (tmp_path / resources.DEFAULT_ENCODER).mkdir()
    assert resources.encoder_path(resources.DEFAULT_ENCODER) == packaged != resources.DEFAULT_ENCODER
    local = f"./{resources.DEFAULT_ENCODER}"
    assert resources.encoder_path(local) == str(tmp_path / resources.DEFAULT_ENCODER)


def test_shipped_checkpoints_are_found_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert local_path("checkpoints/mismatch-base") == REPO_ROOT / "checkpoints" / "mismatch-base"
    (tmp_path / "checkpoints" / "mismatch-base").mkdir(parents=True)  # the working directory wins
    assert local_path("checkpoints/mismatch-base") == Path("checkpoints/mismatch-base")
    assert local_path("user/some-hub-model") is None


def test_a_checkpoint_records_its_base_the_same_from_any_working_directory(tmp_path, monkeypatch):
    """A fit from another folder recorded the shipped base as an absolute path, so one fit
    gave another checkpoint (and signature) on each machine."""
    monkeypatch.chdir(tmp_path)
    found = local_path("checkpoints/mismatch-base")
    assert found is not None and found.is_absolute()
    assert resources.portable_path(found) == "checkpoints/mismatch-base"
    assert resources.portable_path("checkpoints/mismatch-base") == "checkpoints/mismatch-base"
    (tmp_path / "mine").mkdir()  # outside the checkout: absolute, however it was typed
    assert resources.portable_path("mine") == str((tmp_path / "mine").resolve())
    assert resources.portable_path(f"../{tmp_path.name}/mine") == str((tmp_path / "mine").resolve())
    assert resources.portable_path("someone/hub-model") == "someone/hub-model"


def test_the_python_api_loads_a_shipped_checkpoint_from_any_working_directory(
    tmp_path, monkeypatch
) -> None:
    """README's `Evaluator.from_pretrained("checkpoints/mismatch-base")` resolves the name as
    the command line does; it was taken for a Hub id outside the repository root."""
    from evaluator.hub import load

    monkeypatch.chdir(tmp_path)
    checkpoint = load("checkpoints/mismatch-base", local_files_only=True)
    assert checkpoint.path == REPO_ROOT / "checkpoints" / "mismatch-base"


def test_a_missing_path_is_named_as_such_online_and_offline(monkeypatch) -> None:
    """A name that is neither a local path nor a Hub id fails the same way whether or not the
    Hub can be reached, before anything is downloaded."""
    import mismatch_core.checkpoint_files as checkpoint_files

    for reachable in (True, False):
        monkeypatch.setattr(checkpoint_files, "hub_reachable", lambda r=reachable: r)
        with pytest.raises(CheckpointError, match="checkpoint directory no such/dir/here does"):
            checkpoint_files.resolve_checkpoint("no such/dir/here")


def test_an_uncached_revision_is_named_offline(tmp_path, monkeypatch) -> None:
    """Offline, `acme/mm@v2` with only main cached was reported as not in the cache at all."""
    import mismatch_core.checkpoint_files as checkpoint_files

    monkeypatch.setattr(checkpoint_files, "hub_reachable", lambda: False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(CheckpointError, match=r"cache \(.*\) at revision 'v2', and the Hub"):
        checkpoint_files.resolve_checkpoint("acme/mm@v2")


def test_an_install_that_is_no_checkout_says_where_the_checkpoints_are(
    tmp_path, monkeypatch
) -> None:
    """A plain `pip install .` copies no checkpoints: the shipped names then miss, and the
    message says to install from a checkout (it said to fine-tune a shipped task)."""
    import mismatch_core.checkpoint_files as checkpoint_files
    from evaluator.features.disfluency import detector_folder
    from mismatch_core.errors import ResourceMissingError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(resources, "REPO_ROOT", tmp_path / "site-packages")
    monkeypatch.setattr(checkpoint_files, "hub_reachable", lambda: False)
    hint = "come with a checkout of the repository: install from one with make setup"
    for task in (None, "translation"):
        with pytest.raises(CheckpointError, match=hint) as error:
            checkpoint_files.resolve_checkpoint(None, task)
        assert "mismatch finetune" not in str(error.value)
        assert str(error.value).endswith(", or give a checkpoint folder's path")
    with pytest.raises(CheckpointError, match=hint):
        checkpoint_files.checkpoint_directory("checkpoints/mismatch-base", None, True)
    with pytest.raises(CheckpointError, match=hint):
        checkpoint_files.resolve_checkpoint("checkpoints/mismatch-base")
    with pytest.raises(ResourceMissingError, match=hint) as error:
        detector_folder()
    assert "train it" not in str(error.value)  # it ships with a checkout
    import nltk

    monkeypatch.setattr(nltk.data, "path", [])  # no WordNet an earlier test put on the path
    monkeypatch.setenv("MISMATCH_NLTK_DATA", str(tmp_path / "site-packages" / ".nltk_data"))
    with pytest.raises(ResourceMissingError, match="point MISMATCH_NLTK_DATA at a checkout's"):
        resources.use_nltk_data()  # setup_nltk_data.py, which it named, is not there
    monkeypatch.setattr(resources, "REPO_ROOT", REPO_ROOT)  # in a checkout: the script makes it
    with pytest.raises(ResourceMissingError, match=r"run: python scripts/setup_nltk_data.py --dest"):
        resources.use_nltk_data()


def test_the_demo_outside_a_checkout_says_where_its_examples_are(
    tmp_path, monkeypatch, capsys
) -> None:
    from evaluator.cli import demo, main

    monkeypatch.setattr(resources, "REPO_ROOT", tmp_path / "site-packages")
    monkeypatch.setattr(demo, "EXAMPLES", tmp_path / "site-packages" / "examples" / "pairs.jsonl")
    assert main(["demo"]) == 2
    assert "pairs.jsonl: no such file; the examples come with a checkout" in (
        capsys.readouterr().err
    )


def test_checkpoint_outputs_are_checked_where_they_will_be_written(tmp_path, monkeypatch) -> None:
    """save_pretrained expands ``~``: the checks before a fit must look at the same folder (a
    config's `export_dir: ~/busy` passed them and failed after the fit)."""
    from mismatch_core.checkpoint_files import export_problem, replaces_base_problem

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine\n")
    assert "busy exists and is not a checkpoint directory" in export_problem(Path("~/busy"))
    (tmp_path / "base").mkdir()
    for out, base in (("~/base", str(tmp_path / "base")), (str(tmp_path / "base"), "~/base")):
        assert replaces_base_problem(out, base) == f"{out} is the base checkpoint this run reads; name another"
    assert replaces_base_problem("~/other", "~/base") is None
    assert replaces_base_problem("~/base", "someone/hub-model") is None


@pytest.fixture
def fresh_hub_check(monkeypatch):
    """`hub_reachable` decides once per process: each case asks afresh, online by the rules."""
    for name in ("HF_HUB_OFFLINE", "HF_ENDPOINT", *resources.PROXY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    resources.hub_reachable.cache_clear()
    yield
    resources.hub_reachable.cache_clear()


def test_a_hub_that_does_not_answer_is_offline_within_the_timeout(fresh_hub_check, monkeypatch):
    """A firewall that takes connections and never answers, or a name server that never
    answers, stalled each command (the Hub library waits without limit); they now count as
    offline after the timeout."""
    import socket

    silent = socket.create_server(("127.0.0.1", 0))  # accepts (backlog), never answers TLS
    monkeypatch.setenv("HF_ENDPOINT", f"https://127.0.0.1:{silent.getsockname()[1]}")
    started = time.perf_counter()
    assert resources.hub_reachable(0.3) is False
    assert time.perf_counter() - started < 1.0
    silent.close()
    resources.hub_reachable.cache_clear()

    def no_answer(*args, **kwargs):
        time.sleep(5)
        raise socket.gaierror("the name server did not answer")

    monkeypatch.setattr(socket, "getaddrinfo", no_answer)
    started = time.perf_counter()
    assert resources.hub_reachable(0.3) is False
    assert time.perf_counter() - started < 1.0


def test_hf_hub_offline_is_read_as_the_hub_library_reads_it(fresh_hub_check, monkeypatch):
    """Values such as "off", "no" and "FALSE" leave the Hub library online: they made the
    project refuse a download the library would make."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # reachable through it
    values = {"1": False, "yes": False, "ON": False, "off": True, "no": True, "FALSE": True}
    for value, online in {**values, "": True}.items():
        monkeypatch.setenv("HF_HUB_OFFLINE", value)
        resources.hub_reachable.cache_clear()
        assert resources.hub_reachable() is online, value


def test_the_hub_checked_is_hf_endpoints_host_and_no_proxy_is_read(
    fresh_hub_check, monkeypatch
) -> None:
    """A mirror named without a scheme (HF_ENDPOINT=hf-mirror.com) was taken for huggingface.co:
    no probe, the Hub library names the address it refuses. A proxy that NO_PROXY bypasses for
    the Hub was taken as the way to it."""
    import socket

    listening = socket.create_server(("127.0.0.1", 0))  # takes the connection: http answers
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listening.getsockname()[1]}")
    assert resources.hub_reachable(1.0) is True
    resources.hub_reachable.cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(socket, "create_connection", None)  # no connection is tried
        for endpoint in (f"127.0.0.1:{listening.getsockname()[1]}", ""):  # no scheme
            patch.setenv("HF_ENDPOINT", endpoint)
            resources.hub_reachable.cache_clear()
            assert resources.hub_reachable(1.0) is True
    resources.hub_reachable.cache_clear()
    monkeypatch.setenv("HF_ENDPOINT", "https://127.0.0.1:1")  # closed
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert resources.hub_reachable(1.0) is False
    listening.close()
