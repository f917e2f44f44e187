"""Predict: the Evaluator API, the `mismatch predict` CLI, its inputs/outputs and errors.

Checkpoints here are tiny random models over cheap lexical features (no encoder) unless a
test is marked slow; only the structure of the outputs is checked, never model quality.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import evaluator.evaluator as evaluator_module
from evaluator import Evaluator, Prediction
from evaluator.cli import main
from evaluator.evaluator import ShortReferenceWarning, TruncationWarning
from evaluator.features import FeatureScaler
from evaluator.hub import CheckpointError, save_pretrained
from evaluator.inference import predict_outputs
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.predict_io import Pairs
from evaluator.tasks import bounded_ratings
from mismatch_core.pairs import word_count
from mismatch_core.taxonomy import CODES

FEATURES = ["bleu", "chrf", "rougeL_f"]
REFS = [
    "Two dogs ran across the park.",
    "A man rides a horse on the beach at sunset.",
    "The company reported a profit of 16 million dollars last year.",
    "She did not go to school today.",
    "Kids play football outside.",
]
GENS = [
    "Three dogs ran across the park.",
    "A man rides a horse.",
    "The company reported a loss of 16 million dollars last year.",
    "She went to school today.",
    "",
]
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "predict.py"
REGRESSION_TASK = {
    "summarization": {
        "kind": "regression",
        "criteria": [
            {"key": "coherence", "low": 1.0, "high": 5.0},
            {"key": "fluency", "low": 1.0, "high": 5.0},
        ],
    }
}
NLI_TASK = {
    "nli": {
        "kind": "classification",
        "criteria": [
            {"key": key, "low": 0.0, "high": 1.0}
            for key in ("entailment", "neutral", "contradiction")
        ],
    }
}


def make_checkpoint(directory: Path, tasks: dict | None = None, **overrides) -> Path:
    torch.manual_seed(0)
    num_ratings = len(next(iter(tasks.values()))["criteria"]) if tasks else 0
    settings = {"feature_names": FEATURES, "use_text": False, "num_ratings": num_ratings}
    model = MismatchModel(MismatchConfig(**{**settings, **overrides})).eval()
    rng = np.random.default_rng(0)
    scaler = FeatureScaler.fit(pd.DataFrame(rng.random((40, len(FEATURES))), columns=FEATURES))
    return save_pretrained(model, directory, scaler=scaler, tasks=tasks)


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("ckpt") / "base")


@pytest.fixture(scope="module")
def base(base_dir: Path) -> Evaluator:
    return Evaluator.from_pretrained(base_dir)


def test_the_model_card_gives_the_rating_scales_and_usage_that_runs(tmp_path: Path) -> None:
    """A user reads a checkpoint's card for what its ratings mean and how to call it: the
    scales are the checkpoint's own and the usage example runs as written."""
    directory = make_checkpoint(tmp_path / "task", REGRESSION_TASK)
    card = (directory / "README.md").read_text()
    scales = "ratings on the human scale, higher is better: coherence 1 to 5, fluency 1 to 5"
    assert f"- summarization: {scales}" in card
    usage = card.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(usage.replace("path/or/hub-id", str(directory)), namespace)
    result = namespace["result"]
    assert set(result.ratings) == {"coherence", "fluency"} and 0.0 <= result.score <= 1.0
    classes = (make_checkpoint(tmp_path / "nli", NLI_TASK) / "README.md").read_text()
    keys = ", ".join(c["key"] for c in NLI_TASK["nli"]["criteria"])
    assert f"- nli: the probability of each class: {keys}\n" in classes  # no "higher is better"


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def assert_same(one: Prediction, other: Prediction) -> None:
    """Equal up to float rounding (matrix products round differently in other batch shapes)."""
    assert (one.id, list(one.mismatch)) == (other.id, list(other.mismatch))
    assert np.allclose(list(one.mismatch.values()), list(other.mismatch.values()), atol=1e-5)
    assert one.score == pytest.approx(other.score, abs=1e-5)


def predict_cli(*args: str) -> int:
    return main(["predict", "--quiet", *args])


# --- Python API -------------------------------------------------------------------------


def test_predictions_name_score_classes_and_labels(base: Evaluator) -> None:
    predictions = base.predict(REFS, GENS)
    assert [p.id for p in predictions] == ["0", "1", "2", "3", "4"]
    raw = predict_outputs(base.checkpoint, REFS, GENS).probabilities
    for prediction, row in zip(predictions, raw, strict=True):
        assert isinstance(prediction, Prediction)
        assert list(prediction.mismatch) == list(CODES)
        assert prediction.score == prediction.mismatch["NoContr"]
        assert np.allclose(list(prediction.mismatch.values()), row, atol=1e-6)
        assert prediction.ratings == {}
        over = [code for code, p in zip(CODES, row, strict=True) if p >= base.threshold]
        assert sorted(prediction.labels) == sorted(over)
    assert predictions[4].to_dict()["id"] == "4"  # the empty gen is scored, not rejected


def test_labels_are_every_class_over_the_threshold_most_likely_first(base_dir: Path) -> None:
    low = Evaluator.from_pretrained(base_dir, threshold=0.01).predict(REFS, GENS)
    for prediction in low:
        probabilities = [prediction.mismatch[code] for code in prediction.labels]
        assert probabilities == sorted(probabilities, reverse=True)
        expected = {code for code, p in prediction.mismatch.items() if p >= 0.01}
        assert set(prediction.labels) == expected and len(expected) > 1
    with pytest.raises(ValueError, match="threshold"):
        Evaluator.from_pretrained(base_dir, threshold=0.0)


def test_output_order_is_input_order_with_length_sorted_chunks(
    base: Evaluator, monkeypatch
) -> None:
    expected = {p.id: p for p in base.predict(REFS, GENS)}
    monkeypatch.setattr(evaluator_module, "CHUNK_PAIRS", 2)
    order = [3, 0, 4, 2, 1]
    shuffled = base.predict(
        [REFS[i] for i in order],
        [GENS[i] for i in order],
        ids=[str(i) for i in order],
        batch_size=1,
    )
    assert [p.id for p in shuffled] == [str(i) for i in order]
    for prediction in shuffled:
        assert_same(prediction, expected[prediction.id])


def test_predictions_are_deterministic(base_dir: Path) -> None:
    first = Evaluator.from_pretrained(base_dir).predict(REFS, GENS, batch_size=2)
    assert Evaluator.from_pretrained(base_dir).predict(REFS, GENS, batch_size=2) == first
    other_batches = Evaluator.from_pretrained(base_dir).predict(REFS, GENS, batch_size=64)
    for one, other in zip(first, other_batches, strict=True):
        assert_same(one, other)  # batch shapes change float rounding only


def test_multi_reference_takes_the_closest_reference(base: Evaluator) -> None:
    gen = GENS[1]
    references = ["An unrelated sentence about cooking pasta.", gen, REFS[0]]
    single = [base.predict([ref], [gen])[0] for ref in references]
    multi = base.predict([references], [gen])[0]
    # the copy of gen is the closest reference on every feature, so it alone decides
    assert multi.mismatch == single[1].mismatch
    assert single[0].mismatch != single[1].mismatch  # the references really differ
    assert [p.ref_index for p in single] == [0, 0, 0]
    for order in itertools.permutations(references):  # the output says which one was read
        assert base.predict([list(order)], [gen])[0].ref_index == order.index(gen)


def test_each_reference_is_read_alone_and_the_closest_gives_every_output(tmp_path: Path) -> None:
    """Each reference is closest on some feature (the short one on chrF, the long one on BLEU
    and ROUGE-L), so their per-feature maximum reads like neither; the reference whose own
    reading scores higher must give the pair's probabilities, ratings and features, in either
    order, and a second pair in the same call is read on its own."""
    torch.manual_seed(0)
    model = MismatchModel(MismatchConfig(feature_names=FEATURES, use_text=False, num_ratings=2))
    realistic = np.random.default_rng(0).random((40, 3)) * [100, 100, 1]  # BLEU, chrF on 0-100
    scaler = FeatureScaler.fit(pd.DataFrame(realistic, columns=FEATURES))
    directory = save_pretrained(model.eval(), tmp_path / "t", scaler=scaler, tasks=REGRESSION_TASK)
    evaluator = Evaluator.from_pretrained(directory)
    gen = "The company reported a profit of 16 million dollars last year."
    references = [
        "The company reported a profit",
        "A company reported that its profit of 16 million dollars came last year.",
    ]
    single = [predict_outputs(evaluator.checkpoint, [ref], [gen]) for ref in references]
    (near, far) = sorted(single, key=lambda o: -o.probabilities[0, 0])
    assert not np.allclose(near.probabilities, far.probabilities, atol=1e-3)
    assert not np.allclose(near.ratings, far.ratings, atol=1e-3)
    features = pd.concat([o.features for o in single], ignore_index=True)
    assert list(features.columns) == FEATURES and list(features.idxmax()) == [1, 0, 1]
    for refs in (references, references[::-1]):
        multi = predict_outputs(evaluator.checkpoint, [refs, references[0]], [gen, gen])
        np.testing.assert_allclose(multi.probabilities[0], near.probabilities[0], atol=1e-6)
        np.testing.assert_allclose(multi.ratings[0], near.ratings[0], atol=1e-6)
        pd.testing.assert_frame_equal(multi.features.iloc[:1], near.features)
        np.testing.assert_allclose(multi.probabilities[1], single[0].probabilities[0], atol=1e-6)


def test_progress_bar_only_when_asked_and_long(base: Evaluator, monkeypatch, capsys) -> None:
    monkeypatch.setattr(evaluator_module, "CHUNK_PAIRS", 2)
    base.predict(REFS, GENS, progress=True)
    assert "5/5" in capsys.readouterr().err
    base.predict(REFS, GENS, progress=False)
    base.predict(REFS[:2], GENS[:2], progress=True)  # one chunk: no bar
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda ev: ev.predict(REFS[:2], GENS), "2 refs but 5 generated texts"),
        (lambda ev: ev.predict(REFS, GENS, srcs=["x"]), "1 srcs but 5 generated texts"),
        (lambda ev: ev.predict(REFS, GENS, ids=["a"]), "1 ids but 5 generated texts"),
        (lambda ev: ev.predict([[]], ["x"]), "non-empty list"),
        (lambda ev: ev.predict(["x"], [3]), "gen must be a string, got int"),
        (
            lambda ev: ev.predict(["x", ["y", "\t"]], ["a", "b"]),
            r"pair '1' has an empty reference \(reference 2 of 2\)",
        ),
        (  # a zero-width space and a byte-order mark show nothing, and the encoder drops them
            lambda ev: ev.predict(["x", "\u200b\ufeff "], ["a", "b"]),
            r"pair '1' has an empty reference$",
        ),
        (  # by position before, where the other checks name the id
            lambda ev: ev.predict(["x", "y"], ["a", b"b"], ids=["p", "q"]),
            "pair 'q': gen must be a string",
        ),
        (lambda ev: ev.predict(["x", "y"], ["a", "b"], ids=["p", "p"]), "id 'p' is given to more"),
        (
            lambda ev: ev.predict(["x", "y"], ["a", "b"], srcs=[None, 3], ids=["p", "q"]),
            "pair 'q': src must be a string or None, got int",
        ),
        (lambda ev: ev.predict(REFS, GENS, batch_size=0), "batch_size must be a positive integer"),
        (lambda ev: ev.predict(REFS, GENS, batch_size=1.5), "positive integer, got 1.5"),
    ],
)
def test_api_rejects_malformed_input(base: Evaluator, call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(base)


def test_a_missing_gen_is_an_empty_output_as_in_jsonl(base: Evaluator) -> None:
    """JSONL's "gen": null scored as an empty output, while the API refused None, and NaN,
    which pandas reads from an empty CSV cell."""
    empty, none, nan = base.predict([REFS[0]] * 3, pd.Series(["", None, np.nan]), progress=False)
    assert none.to_dict() | {"id": "0"} == empty.to_dict() == nan.to_dict() | {"id": "0"}


def test_a_string_for_the_texts_is_not_read_letter_by_letter(base: Evaluator) -> None:
    with pytest.raises(TypeError, match="refs must be a sequence with one item per pair"):
        base.predict("abc", "abd")
    with pytest.raises(TypeError, match="gens must be a sequence"):
        base.predict(["abc"], "a")
    with pytest.raises(TypeError, match="refs must be a sequence, got NoneType"):
        base.predict(None, ["a"])  # type: ignore[arg-type]
    # iterated, a DataFrame or a dict gives its keys: a one-column frame was scored as the
    # text "ref"
    frame = pd.DataFrame({"ref": REFS[:1], "gen": GENS[:1]})
    with pytest.raises(TypeError, match=r"refs is a DataFrame: .* frame\['ref'\]"):
        base.predict(frame[["ref"]], frame["gen"])
    with pytest.raises(TypeError, match="gens is a dict"):
        base.predict(REFS[:1], {GENS[0]: 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ids\[0\] must be a string or an integer, got None"):
        base.predict(REFS[:1], GENS[:1], ids=[None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"ids\[1\] is empty"):
        base.predict(REFS[:2], GENS[:2], ids=["a", ""])


def test_an_empty_pandas_cell_is_no_source(base: Evaluator) -> None:
    """pandas reads an empty src cell as NaN: it was refused, even where src is not read."""
    expected = [p.to_dict() for p in base.predict(REFS[:2], GENS[:2])]
    got = base.predict(pd.Series(REFS[:2]), pd.Series(GENS[:2]), srcs=pd.Series([np.nan, None]))
    assert [p.to_dict() for p in got] == expected
    got = base.predict(REFS[:2], GENS[:2], srcs=np.full(2, np.nan, dtype=np.float32))
    assert [p.to_dict() for p in got] == expected


def test_numpy_numbers_serve_as_batch_size_and_threshold(base: Evaluator, base_dir: Path) -> None:
    expected = [p.to_dict() for p in base.predict(REFS[:2], GENS[:2], batch_size=2)]
    assert [p.to_dict() for p in base.predict(REFS[:2], GENS[:2], batch_size=np.int64(2))] == (
        expected
    )
    at = Evaluator.from_pretrained(base_dir, threshold=np.float32(0.5))
    assert at.threshold == 0.5 and type(at.threshold) is float  # the signature is JSON
    json.dumps(at.signature.to_dict())


def test_pandas_columns_pair_by_position_whatever_their_index(base: Evaluator) -> None:
    frame = pd.DataFrame({"ref": REFS[:4], "gen": GENS[:4], "name": list("abcd")})
    shuffled = frame.sample(frac=1.0, random_state=1).iloc[1:]  # index 3, 0, 1 or so
    assert list(shuffled.index) != list(range(3))
    expected = base.predict(list(shuffled.ref), list(shuffled.gen), ids=list(shuffled.name))
    got = base.predict(shuffled.ref, shuffled.gen, ids=shuffled.name)
    assert [p.to_dict() for p in got] == [p.to_dict() for p in expected]


def test_regression_ratings_are_on_the_human_scale(tmp_path: Path) -> None:
    evaluator = Evaluator.from_pretrained(make_checkpoint(tmp_path / "t", REGRESSION_TASK))
    assert evaluator.rating_keys == ["coherence", "fluency"]
    predictions = evaluator.predict(REFS, GENS)
    raw = predict_outputs(evaluator.checkpoint, REFS, GENS).ratings
    for prediction, row in zip(predictions, raw, strict=True):
        expected = [1.0 + v * 4.0 for v in bounded_ratings(row)]
        assert list(prediction.ratings) == ["coherence", "fluency"]
        assert np.allclose(list(prediction.ratings.values()), expected, atol=1e-5)
        assert all(1.0 < value < 5.0 for value in prediction.ratings.values())


def test_classification_ratings_are_probabilities(tmp_path: Path) -> None:
    evaluator = Evaluator.from_pretrained(make_checkpoint(tmp_path / "t", NLI_TASK))
    for prediction in evaluator.predict(REFS, GENS):
        assert list(prediction.ratings) == ["entailment", "neutral", "contradiction"]
        assert sum(prediction.ratings.values()) == pytest.approx(1.0, abs=1e-5)


def test_rating_outputs_without_a_task_entry_are_rejected(tmp_path: Path) -> None:
    directory = make_checkpoint(tmp_path / "t", REGRESSION_TASK)
    config = json.loads((directory / "config.json").read_text())
    config["tasks"] = {}
    (directory / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="needs exactly one task entry"):
        Evaluator.from_pretrained(directory)
    checkpoint = Evaluator.from_pretrained(make_checkpoint(tmp_path / "u", REGRESSION_TASK))
    with pytest.raises(CheckpointError, match="needs exactly one task entry, found 0"):
        save_pretrained(  # it wrote a checkpoint that did not load
            checkpoint.checkpoint.model, tmp_path / "v", scaler=checkpoint.checkpoint.scaler
        )
    assert not (tmp_path / "v").exists()


def test_import_is_cheap_and_exports_the_api() -> None:
    code = "import sys, evaluator; assert 'torch' not in sys.modules; print(evaluator.__all__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Evaluator" in result.stdout and "TruncationWarning" in result.stdout  # to filter it


# --- Hub loading ------------------------------------------------------------------------


def populate_hub_cache(cache: Path, repo_id: str, checkpoint: Path, revision: str) -> None:
    """The huggingface_hub cache layout: models--org--name/{snapshots/<rev>/, refs/main}."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    shutil.copytree(checkpoint, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)


def test_loads_from_a_populated_hub_cache_without_network(
    base_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    revision = "0123456789abcdef0123456789abcdef01234567"
    populate_hub_cache(cache, "someone/mismatch-tiny", base_dir, revision)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # restored afterwards; --offline sets it too
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HUGGINGFACE_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    expected = Evaluator.from_pretrained(base_dir).predict(REFS, GENS)
    for revision_asked in (None, revision):
        loaded = Evaluator.from_pretrained(
            "someone/mismatch-tiny", revision=revision_asked, local_files_only=True
        )
        assert (
            loaded.checkpoint.path
            == cache / "models--someone--mismatch-tiny" / "snapshots" / revision
        )
        assert loaded.predict(REFS, GENS) == expected
    out = tmp_path / "out.jsonl"
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    status = predict_cli(
        "--checkpoint", f"someone/mismatch-tiny@{revision}", "--offline",
        "--input", str(input_file), "--output", str(out),
    )  # fmt: skip
    assert status == 0
    assert json.loads(out.read_text())["score"] == expected[0].score
    from evaluator.stress.metrics import parse_metrics, signatures

    name = f"mismatch=someone/mismatch-tiny@{revision}"  # a stress metric takes @REVISION too
    scores = parse_metrics(name)[name]([[ref] for ref in REFS], GENS, [None] * len(GENS))
    assert scores.tolist() == [p.score for p in expected]
    assert signatures([name])[name]["checkpoint"] == f"someone/mismatch-tiny@{revision}"


# Runs `mismatch predict` in a fresh process (nothing of the hub libraries or torch imported
# yet) and times the command itself, from after interpreter start-up and our import.
TIMED_COMMAND = """
import json, sys, time
from evaluator.cli import main
start = time.perf_counter()
status = main(sys.argv[1:])
report = {"status": status, "seconds": time.perf_counter() - start, "torch": "torch" in sys.modules}
print("REPORT " + json.dumps(report), file=sys.stderr)
"""


@pytest.mark.parametrize("name", ["nobody-here/no-such-model", "no/such/dir"])
def test_unknown_checkpoint_offline_fails_fast_end_to_end(name: str, tmp_path: Path) -> None:
    """--offline alone (no HF_HUB_OFFLINE in the environment) must settle an unknown Hub id
    from the cache, before torch loads: not after the ~23 s of retries a hub miss costs."""
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": "a", "gen": "b"}])
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    env["PYTHONPATH"] = str(SCRIPT.parent.parent)  # this checkout's code
    env["HF_HUB_CACHE"] = str(tmp_path / "empty-cache")
    command = [sys.executable, "-c", TIMED_COMMAND, "predict", "--offline", "--checkpoint", name]
    result = subprocess.run(
        [*command, "--input", str(input_file)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    report = json.loads(result.stderr.rsplit("REPORT ", 1)[1])
    assert report["status"] == 2 and result.stdout == ""
    assert name in result.stderr
    assert not report["torch"]  # decided from the cache, before the model code loads
    assert report["seconds"] < 2.0, report


# Runs `mismatch predict` in a fresh process whose sockets are stubbed: the Hub host resolves
# or not (argv[1]), every lookup and connection attempt is recorded and no connection is made;
# afterwards a Hub download is tried, as any library the command loads might do.
NETWORK_COMMAND = """
import json, socket, sys
lookups, connects = [], []
def getaddrinfo(host, port, *args, **kwargs):
    lookups.append(host)
    if sys.argv[1] != "reachable":
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", 443))]
def connect(self, address):
    connects.append(str(address))
    raise OSError("no connection in this test")
socket.getaddrinfo, socket.socket.connect = getaddrinfo, connect
from evaluator.cli import main
status = main(sys.argv[2:])
import huggingface_hub
try:
    huggingface_hub.hf_hub_download("nobody-here/no-such-model", "config.json")
except Exception:
    pass
report = {"status": status, "lookups": lookups, "connects": connects,
          "hub_offline": huggingface_hub.constants.HF_HUB_OFFLINE}
print("REPORT " + json.dumps(report), file=sys.stderr)
"""


def run_with_stubbed_network(hub: str, args: list[str], tmp_path: Path) -> tuple[dict, str]:
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": "a", "gen": "b"}])
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    env["PYTHONPATH"] = str(SCRIPT.parent.parent)  # this checkout's code
    env["HF_HUB_CACHE"] = str(tmp_path / "empty-cache")
    command = [
        sys.executable,
        "-c",
        NETWORK_COMMAND,
        hub,
        "predict",
        *args,
        "--input",
        str(input_file),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    return json.loads(result.stderr.rsplit("REPORT ", 1)[1]), result.stderr


@pytest.mark.parametrize("flag", ["--offline", "--of"])  # argparse takes a prefix too
def test_offline_flag_is_kept_when_the_hub_resolves(tmp_path: Path, flag: str) -> None:
    """--offline must hold even on a machine that can reach the Hub: no connection at all,
    not even the probe of whether the Hub answers."""
    report, stderr = run_with_stubbed_network(
        "reachable", [flag, "--checkpoint", "nobody-here/no-such-model"], tmp_path
    )
    assert report["status"] == 2 and "and the Hub is offline" in stderr
    assert report["connects"] == [] and report["hub_offline"] is True


def test_an_unresolvable_hub_puts_every_command_offline(tmp_path: Path) -> None:
    """Without --offline or HF_HUB_OFFLINE, a Hub host that does not resolve is looked up once
    and the hub libraries are then offline: no later lookup stalls (~23 s each)."""
    report, stderr = run_with_stubbed_network(
        "unreachable", ["--checkpoint", "nobody-here/no-such-model"], tmp_path
    )
    assert report["status"] == 2 and "and the Hub is offline" in stderr
    assert report["lookups"] == ["huggingface.co"] and report["connects"] == []
    assert report["hub_offline"] is True


def test_missing_checkpoint_directory_is_a_clear_error(tmp_path: Path, capsys) -> None:
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": "a", "gen": "b"}])
    status = predict_cli("--checkpoint", str(tmp_path / "nowhere"), "--input", str(input_file))
    assert status == 2
    assert "does not exist" in capsys.readouterr().err


# --- CLI inputs and outputs ---------------------------------------------------------------


@pytest.mark.parametrize("output_format", ["jsonl", "csv", "tsv"])
def test_cli_output_round_trips(tmp_path: Path, output_format: str, monkeypatch) -> None:
    directory = make_checkpoint(tmp_path / "t", REGRESSION_TASK)
    rows = [
        {"id": f"item-{i}", "ref": r, "gen": g}
        for i, (r, g) in enumerate(zip(REFS, GENS, strict=True))
    ]
    out, summary = tmp_path / f"out.{output_format}", tmp_path / "summary.json"
    status = predict_cli(
        "--checkpoint", str(directory), "--input", str(write_jsonl(tmp_path / "in.jsonl", rows)),
        "--output", str(out), "--threshold", "0.05", "--summary", str(summary),
    )  # fmt: skip
    assert status == 0
    evaluator = Evaluator.from_pretrained(directory, threshold=0.05)
    expected = [p.to_dict() for p in evaluator.predict(REFS, GENS, ids=[row["id"] for row in rows])]
    figures = json.loads(summary.read_text())
    mean = lambda values: round(sum(values) / len(expected), 6)  # noqa: E731
    assert figures["pairs"] == len(expected)
    assert figures["mean_score"] == mean([p["score"] for p in expected])
    assert figures["mean_ratings"] == {
        key: mean([p["ratings"][key] for p in expected]) for key in ("coherence", "fluency")
    }
    assert figures["label_counts"] == {
        code: sum(code in p["labels"] for p in expected) for code in CODES
    }
    assert figures["flagged"] == sum(p["labels"] not in ([], ["NoContr"]) for p in expected)
    assert figures["unsure"] == sum(p["labels"] == [] for p in expected)
    assert figures["signature"] == str(evaluator.signature)
    if output_format == "jsonl":
        assert [json.loads(line) for line in out.read_text().splitlines()] == expected
        return
    delimiter = "," if output_format == "csv" else "\t"
    with out.open(newline="") as handle:
        records = list(csv.DictReader(handle, delimiter=delimiter))
    header = list(records[0])
    assert header == ["id", "score", "rating.coherence", "rating.fluency"] + [
        f"p.{code}" for code in CODES
    ] + ["labels", "ref_index"]
    for record, want in zip(records, expected, strict=True):
        assert record["id"] == want["id"]
        assert float(record["score"]) == want["score"]
        assert {k: float(record[f"rating.{k}"]) for k in want["ratings"]} == want["ratings"]
        assert {c: float(record[f"p.{c}"]) for c in CODES} == want["mismatch"]
        assert record["labels"].split("|") == want["labels"] or record["labels"] == ""
        assert int(record["ref_index"]) == want["ref_index"]


def test_cli_line_aligned_files_with_two_reference_sets(tmp_path: Path, base_dir: Path) -> None:
    refs_a = write_lines(tmp_path / "refs_a.txt", REFS)
    second = [gen or "Nothing." for gen in GENS]  # second reference = the gen (or a word)
    refs_b = write_lines(tmp_path / "refs_b.txt", second)
    gens = write_lines(tmp_path / "gens.txt", GENS)
    srcs = write_lines(tmp_path / "srcs.txt", ["source"] * len(GENS))
    out = tmp_path / "out.jsonl"
    status = predict_cli(
        "--checkpoint", str(base_dir), "--refs", str(refs_a), str(refs_b), "--gens", str(gens),
        "--srcs", str(srcs), "--output", str(out),
    )  # fmt: skip
    assert status == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["1", "2", "3", "4", "5"]  # line numbers
    expected = Evaluator.from_pretrained(base_dir).predict(
        [[r, g] for r, g in zip(REFS, second, strict=True)], GENS
    )
    assert [r["score"] for r in records] == [p.score for p in expected]
    assert [r["ref_index"] for r in records] == [p.ref_index for p in expected]
    assert {r["ref_index"] for r in records} == {0, 1}  # each file decides some pair


def test_cli_reads_jsonl_from_stdin_and_writes_stdout(base_dir: Path, monkeypatch, capsys) -> None:
    rows = [{"ref": REFS[0], "gen": GENS[0]}, {"ref": [REFS[1], REFS[2]], "gen": "   ", "id": 7}]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert predict_cli("--checkpoint", str(base_dir)) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in records] == ["1", "7"]
    assert all(0.0 <= r["score"] <= 1.0 for r in records)  # whitespace-only gen is scored


SHORT_WARNING = (
    "{} of {} pair(s) have a reference of fewer than 4 words; the model learned from sentences "
    "and may name errors in such pairs less reliably (a short answer, an emoji: docs/scoring.md, "
    "'Short texts')"
)


def test_pairs_with_a_short_reference_are_counted_in_one_warning(
    base: Evaluator, base_dir: Path, tmp_path: Path, capsys
) -> None:
    """The base learned from sentences: against a reference of three words or fewer (a short
    answer, an emoji) it misreads more often ("No." against "Yes." reads NoContr), so predict
    says how many pairs have one, a pair with several references when any of them is short."""
    texts = ("Yes.", "1969", "👍", "...", "No, it isn't.", "New  York")
    assert [word_count(text) for text in texts] == [1, 1, 0, 0, 3, 2]
    refs = ["Yes, it is.", [REFS[0], "👍"], REFS[1], "No, it is not."]
    gens = ["No.", GENS[0], GENS[1], "No."]
    with pytest.warns(ShortReferenceWarning) as caught:
        base.predict(refs, gens, progress=False)
    assert [str(w.message) for w in caught] == [SHORT_WARNING.format(2, 4)]
    assert caught[0].filename == __file__  # the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base.predict(REFS[:4], GENS[:4], progress=False)  # sentences, short gens: nothing to say
    chunks = [
        Pairs(["a", "b"], refs[:2], gens[:2], [None, None]),
        Pairs(["c"], ["OK"], ["OK"], [None]),
    ]
    with pytest.warns(ShortReferenceWarning) as caught:
        list(base.predict_stream(chunks, total=3, progress=False))
    assert [str(w.message) for w in caught] == [SHORT_WARNING.format(3, 3)]
    rows = [{"ref": ref, "gen": gen} for ref, gen in zip(refs, gens, strict=True)]
    input_file = write_jsonl(tmp_path / "in.jsonl", rows)
    assert predict_cli("--checkpoint", str(base_dir), "--input", str(input_file)) == 0
    err = capsys.readouterr().err
    assert f"mismatch predict: warning: {SHORT_WARNING.format(2, 4)}\n" in err


def test_task_flag_picks_the_task_checkpoint(tmp_path: Path, monkeypatch, capsys) -> None:
    import mismatch_core.resources

    monkeypatch.setattr(mismatch_core.resources, "REPO_ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "checkpoints").mkdir()  # a checkout whose summarization checkpoint is gone
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    assert predict_cli("--task", "summarization", "--input", str(input_file)) == 2
    assert "mismatch finetune --task summarization" in capsys.readouterr().err
    assert predict_cli("--task", "poetry", "--input", str(input_file)) == 2
    assert "unknown task 'poetry'" in capsys.readouterr().err
    make_checkpoint(tmp_path / "checkpoints" / "mismatch-summarization", REGRESSION_TASK)
    assert predict_cli("--task", "summarization", "--input", str(input_file)) == 0
    assert set(json.loads(capsys.readouterr().out)["ratings"]) == {"coherence", "fluency"}
    make_checkpoint(tmp_path / "checkpoints" / "mismatch-nli", REGRESSION_TASK)
    assert predict_cli("--task", "nli", "--input", str(input_file)) == 2
    assert "not fine-tuned for task 'nli'" in capsys.readouterr().err


# --- CLI bad input ------------------------------------------------------------------------


def bad_input_cases(tmp: Path) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (CLI input arguments, fragments the error message must contain)."""
    refs = write_lines(tmp / "refs.txt", REFS)
    short = write_lines(tmp / "short.txt", GENS[:3])
    broken = tmp / "broken.txt"
    broken.write_bytes(b"fine line\nbad \xff byte\n")
    jsonl_broken = tmp / "broken.jsonl"
    jsonl_broken.write_bytes(b'{"ref": "a", "gen": "b"}\n{"ref": "a", "gen": "\xc3("}\n')
    no_gen = write_jsonl(tmp / "no_gen.jsonl", [{"ref": "a", "gen": "b"}, {}, {"ref": "a"}])
    no_gen.write_text('{"ref": "a", "gen": "b"}\n\n{"ref": "a"}\n')
    not_object = write_jsonl(tmp / "list.jsonl", [["a", "b"]])
    bad_ref = write_jsonl(tmp / "bad_ref.jsonl", [{"ref": [], "gen": "b"}])
    nested_ref = write_jsonl(tmp / "nested.jsonl", [{"ref": [["a", "b"]], "gen": "b"}])
    not_gzip = write_jsonl(tmp / "plain.jsonl.gz", [{"ref": "a", "gen": "b"}])
    packed = tmp / "packed.txt"
    packed.write_bytes(gzip.compress(b"a reference\n"))
    (tmp / "loop_a.jsonl").symlink_to(tmp / "loop_b.jsonl")
    (tmp / "loop_b.jsonl").symlink_to(tmp / "loop_a.jsonl")
    blank_ref = write_jsonl(
        tmp / "blank_ref.jsonl", [{"ref": "a", "gen": "b"}, {"ref": ["a", " "], "gen": "b"}]
    )
    twice = write_jsonl(
        tmp / "twice.jsonl",
        [
            {"ref": "a", "gen": "b", "id": 7},
            {"ref": "a", "gen": "c"},
            {"ref": "a", "gen": "d", "id": "7"},
        ],
    )
    named = write_jsonl(
        tmp / "named.jsonl",
        [{"ref": "a", "gen": "b", "id": 1}, {"ref": "a", "gen": "c", "id": "1"}],
    )
    numbered = write_jsonl(
        tmp / "numbered.jsonl", [{"ref": "a", "gen": "b"}, {"ref": "a", "gen": "c", "id": 1}]
    )
    gaps = write_lines(tmp / "gaps.txt", [*REFS[:3], "", *REFS[4:]])
    empty_id = write_jsonl(tmp / "empty_id.jsonl", [{"ref": "a", "gen": "b", "id": ""}])
    table = write_lines(tmp / "pairs.tsv", ["ref\tgen", "A dog ran.\tA cat ran."])
    return {
        "line counts": (
            ["--refs", str(refs), "--gens", str(short)],
            ["refs.txt has 5 line(s)", "short.txt has 3"],
        ),
        "utf-8 aligned": (
            ["--refs", str(broken), "--gens", str(broken)],
            ["broken.txt:2", "UTF-8"],
        ),
        "utf-8 jsonl": (["--input", str(jsonl_broken)], ["broken.jsonl:2", "UTF-8"]),
        "a table as jsonl": (  # a user's TSV file: the hint says what --input reads
            ["--input", str(table)],
            ["pairs.tsv:1: invalid JSON", "not a table row: write each row as one object"],
        ),
        "missing key": (["--input", str(no_gen)], ["no_gen.jsonl:3", "missing key 'gen'"]),
        "not an object": (["--input", str(not_object)], ["list.jsonl:1", "expected a JSON object"]),
        "bad ref": (["--input", str(bad_ref)], ["bad_ref.jsonl:1", "'ref'"]),
        "nested ref": (["--input", str(nested_ref)], ["nested.jsonl:1", "list of strings"]),
        "blank ref": (["--input", str(blank_ref)], ["blank_ref.jsonl:2", "'ref'", "empty"]),
        "blank reference line": (
            ["--refs", str(refs), str(gaps), "--gens", str(refs)],
            ["gaps.txt:4: empty reference"],
        ),
        "repeated id": (
            ["--input", str(twice)],
            ["twice.jsonl:3", "'7' was already used at ", "twice.jsonl:1; ids must be unique"],
        ),
        "named ids like line numbers": (  # both lines name the id: no hint
            ["--input", str(named)],
            ["named.jsonl:2: key 'id' '1' was already used at ", "named.jsonl:1; ids must be"],
        ),
        "id like a line number": (
            ["--input", str(numbered)],
            [
                "numbered.jsonl:2: key 'id' '1' was already used at ",
                "numbered.jsonl:1 (a line without 'id' takes its line number)",
            ],
        ),
        "not gzip": (["--input", str(not_gzip)], ["plain.jsonl.gz: not a readable gzip file"]),
        "gzip named as text": (
            ["--refs", str(packed), "--gens", str(packed)],
            [f"{packed}:1: gzip-compressed; name it .gz"],
        ),
        "missing file": (["--input", str(tmp / "none.jsonl")], ["none.jsonl: no such file"]),
        "input is a folder": (["--input", str(tmp)], [f"{tmp} is a directory; give a .jsonl"]),
        "gens without refs": (["--gens", str(refs)], ["needs both --refs and --gens"]),
        "two inputs": (["--input", str(no_gen), "--gens", str(refs)], ["either --input"]),
        "sources beside --input": (
            ["--input", str(no_gen), "--srcs", str(refs)],
            ["either --input or --refs/--gens (and --srcs), not --srcs too"],
        ),
        "threshold": (["--input", str(no_gen), "--threshold", "2"], ["--threshold"]),
        "output is a folder": (["--input", str(no_gen), "--output", str(tmp)], ["is a directory"]),
        "output is a loop of links": (  # was a RuntimeError traceback
            ["--input", str(no_gen), "--output", str(tmp / "loop_a.jsonl")],
            [f"--output cannot write {tmp / 'loop_a.jsonl'}: Too many levels of symbolic links"],
        ),
        "summary is a loop of links": (
            ["--input", str(no_gen), "--summary", str(tmp / "loop_b.jsonl")],
            [f"--summary cannot write {tmp / 'loop_b.jsonl'}: Too many levels of symbolic links"],
        ),
        "output under a file": (
            ["--input", str(no_gen), "--output", str(refs / "result.jsonl")],
            [f"--output cannot create {refs / 'result.jsonl'}: {refs} is a file, not a directory"],
        ),
        "summary is a folder": (
            ["--input", str(no_gen), "--summary", str(tmp)],
            [f"--summary {tmp} is a directory"],
        ),
        "summary is the output": (
            ["--input", str(no_gen), "--summary", str(tmp / "out" / "result.jsonl")],
            ["--summary and --output name the same file"],
        ),
        "summary is an input": (
            ["--refs", str(refs), "--gens", str(short), "--summary", str(short)],
            [f"--summary {short} is an input of this run"],
        ),
        "output is an input": (
            ["--refs", str(refs), "--gens", str(short), "--output", str(refs)],
            [f"--output {refs} is an input of this run"],
        ),
        "summary is gzip": (
            ["--input", str(no_gen), "--summary", str(tmp / "s.json.gz")],
            ["the summary is plain JSON; drop the .gz"],
        ),
        "output format from its name": (  # wrote JSONL into scores.parquet
            ["--input", str(no_gen), "--output", str(tmp / "out" / "scores.parquet")],
            ["--output", "scores.parquet: predict writes JSON Lines, CSV or TSV, not '.parquet'"],
        ),
        "json asked for": (  # JSON Lines or --summary is what such a user wants
            ["--input", str(no_gen), "--format", "json"],
            ["--format json: predict writes jsonl, csv, tsv; each record is one JSON object in",
             "--summary FILE writes the system-level figures as one JSON object"],
        ),  # fmt: skip
        "output named .json": (
            ["--input", str(no_gen), "--output", str(tmp / "out" / "scores.json")],
            ["not '.json'; name the file .jsonl", "--summary FILE writes the system-level"],
        ),
        "empty id": (
            ["--input", str(empty_id)],
            ["empty_id.jsonl:1: key 'id' is empty"],
        ),
        "device": (
            [
                "--input",
                str(write_jsonl(tmp / "ok.jsonl", [{"ref": "a", "gen": "b"}])),
                "--device",
                "quantum",
            ],
            ["device"],
        ),  # fmt: skip
    }


@pytest.mark.parametrize(
    "case",
    ["line counts", "utf-8 aligned", "utf-8 jsonl", "a table as jsonl", "missing key", "not an object", "bad ref",
     "blank ref", "blank reference line", "repeated id", "named ids like line numbers",
     "id like a line number", "not gzip", "gzip named as text", "missing file", "input is a folder",
     "gens without refs", "two inputs", "sources beside --input", "threshold", "output is a folder",
     "output is a loop of links", "summary is a loop of links", "output under a file", "summary is a folder", "summary is the output", "summary is an input",
     "output is an input", "summary is gzip", "output format from its name", "json asked for",
     "output named .json", "empty id", "device"],
)  # fmt: skip
def test_bad_input_fails_clearly_and_leaves_the_output_alone(
    case: str, base_dir: Path, tmp_path: Path, capsys
) -> None:
    arguments, fragments = bad_input_cases(tmp_path)[case]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "result.jsonl"
    out.write_text("earlier result\n")
    status = predict_cli("--checkpoint", str(base_dir), "--output", str(out), *arguments)
    error = capsys.readouterr().err
    assert status == 2
    assert error.startswith("mismatch predict: error: ")
    for fragment in fragments:
        assert fragment in error
    assert out.read_text() == "earlier result\n"
    assert [p.name for p in out_dir.iterdir()] == ["result.jsonl"]  # no temp file left


def test_an_output_may_not_replace_the_checkpoint_it_reads(
    base_dir: Path, tmp_path: Path, capsys
) -> None:
    pairs = write_jsonl(tmp_path / "in.jsonl", [{"ref": "A man rides.", "gen": "A man rides."}])
    kept = {path.name: path.read_bytes() for path in base_dir.iterdir()}
    for option, name in (("--summary", "config.json"), ("--output", "model.safetensors")):
        target = base_dir / name
        status = predict_cli("--checkpoint", str(base_dir), "--input", str(pairs), option, str(target))
        assert status == 2
        assert f"{option} {target} is an input of this run" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in base_dir.iterdir()} == kept


def test_a_dash_for_an_output_is_refused_not_a_file_named_dash(
    base_dir: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """`--input -` reads stdin; `--output -` wrote a file named "-" in the working folder."""
    pairs = write_jsonl(tmp_path / "in.jsonl", [{"ref": "A man rides.", "gen": "A man rides."}])
    monkeypatch.chdir(tmp_path)
    for option, told in (("--output", "leave --output out"), ("--summary", "name a file; -")):
        assert predict_cli("--checkpoint", str(base_dir), "--input", str(pairs), option, "-") == 2
        assert f"{option} -: {told}" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.jsonl"]


def test_a_byte_order_mark_starting_a_file_is_not_read_as_text(
    base_dir: Path, tmp_path: Path, capsys
) -> None:
    """Editors such as Windows Notepad start a UTF-8 file with one: it was read into the first
    reference of a --refs file (its score changed) and made a JSONL input's first line invalid
    JSON."""
    lines = "\n".join(REFS) + "\n"
    (tmp_path / "refs.txt").write_text(lines, encoding="utf-8")
    (tmp_path / "marked.txt").write_text(lines, encoding="utf-8-sig")
    (tmp_path / "gens.txt").write_text("\n".join(GENS) + "\n", encoding="utf-8")
    pairs = "".join(json.dumps({"ref": r, "gen": g}) + "\n" for r, g in zip(REFS, GENS, strict=True))
    (tmp_path / "pairs.jsonl").write_text(pairs, encoding="utf-8")
    (tmp_path / "marked.jsonl").write_text(pairs, encoding="utf-8-sig")
    outputs = {}
    for name, given in {
        "refs.txt": ["--refs", "refs.txt", "--gens", "gens.txt"],
        "marked.txt": ["--refs", "marked.txt", "--gens", "gens.txt"],
        "pairs.jsonl": ["--input", "pairs.jsonl"],
        "marked.jsonl": ["--input", "marked.jsonl"],
    }.items():
        paths = [str(tmp_path / a) if a.endswith((".txt", ".jsonl")) else a for a in given]
        assert predict_cli("--checkpoint", str(base_dir), *paths) == 0, capsys.readouterr().err
        outputs[name] = capsys.readouterr().out
    assert outputs["marked.txt"] == outputs["refs.txt"]
    assert outputs["marked.jsonl"] == outputs["pairs.jsonl"]
    assert json.loads(outputs["marked.jsonl"].splitlines()[0])["id"] == "1"


def test_line_endings_of_other_systems_are_read_or_named(
    base_dir: Path, tmp_path: Path, capsys
) -> None:
    """CRLF (Windows) reads as LF. A file with CR alone (old Mac) read as one pair of every
    text joined, with no word; UTF-16 (Windows PowerShell's >) was only "invalid UTF-8"."""
    (tmp_path / "gens.txt").write_text("\n".join(GENS) + "\n", encoding="utf-8")
    outputs = []
    for name, ending in (("lf.txt", "\n"), ("crlf.txt", "\r\n")):
        (tmp_path / name).write_bytes((ending.join(REFS) + ending).encode("utf-8"))
        given = ["--refs", str(tmp_path / name), "--gens", str(tmp_path / "gens.txt")]
        assert predict_cli("--checkpoint", str(base_dir), *given) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == len(REFS)
    (tmp_path / "cr.txt").write_bytes(("\r".join(REFS) + "\r").encode("utf-8"))
    (tmp_path / "utf16.txt").write_text("\n".join(REFS) + "\n", encoding="utf-16")
    (tmp_path / "utf32.txt").write_text("\n".join(REFS) + "\n", encoding="utf-32")
    for name, problem in (
        ("cr.txt", ":1: a carriage return inside the line, which would be read as part of"),
        ("utf16.txt", ":1: UTF-16 text; save it as UTF-8"),
        ("utf32.txt", ":1: UTF-32 text; save it as UTF-8"),
    ):
        given = ["--refs", str(tmp_path / name), "--gens", str(tmp_path / "gens.txt")]
        assert predict_cli("--checkpoint", str(base_dir), *given) == 2
        captured = capsys.readouterr()
        assert f"{tmp_path / name}{problem}" in captured.err and captured.out == ""


def test_gzip_text_inputs_are_read_as_the_plain_ones(base_dir: Path, tmp_path: Path, capsys):
    plain, packed = [], []
    for name, texts in (("refs", REFS), ("gens", GENS)):
        data = ("\n".join(texts) + "\n").encode("utf-8")
        (tmp_path / f"{name}.txt").write_bytes(data)
        (tmp_path / f"{name}.txt.gz").write_bytes(gzip.compress(data))
        plain += [f"--{name}", str(tmp_path / f"{name}.txt")]
        packed += [f"--{name}", str(tmp_path / f"{name}.txt.gz")]
    outputs = []
    for arguments in (plain, packed):
        assert predict_cli("--checkpoint", str(base_dir), *arguments) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == len(REFS)


def test_a_gzip_stream_on_stdin_is_told_to_go_through_zcat(
    base_dir: Path, monkeypatch, capsys
) -> None:
    data = gzip.compress(json.dumps({"ref": REFS[0], "gen": GENS[0]}).encode() + b"\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert predict_cli("--checkpoint", str(base_dir), "--input", "-") == 2
    assert capsys.readouterr().err == (
        "mismatch predict: error: <stdin>:1: gzip-compressed; pipe it through zcat\n"
    )


def test_a_failed_write_keeps_the_old_file_and_no_temp(
    base_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    import mismatch_core.atomic

    def refuse(source, target):
        raise OSError(28, "No space left on device")

    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "result.jsonl"
    out.write_text("earlier result\n")
    monkeypatch.setattr(mismatch_core.atomic.os, "replace", refuse)
    status = predict_cli(
        "--checkpoint", str(base_dir), "--input", str(input_file), "--output", str(out)
    )
    assert status == 2
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text() == "earlier result\n"
    assert [p.name for p in out_dir.iterdir()] == ["result.jsonl"]


def test_a_failed_summary_write_says_the_scores_were_written(
    base_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    import evaluator.cli.predict

    def refuse(path, text):
        raise OSError(28, "No space left on device")

    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    out, summary = tmp_path / "scores.jsonl", tmp_path / "summary.json"
    monkeypatch.setattr(evaluator.cli.predict, "write_text_atomic", refuse)
    status = predict_cli(
        "--checkpoint", str(base_dir), "--input", str(input_file), "--output", str(out),
        "--summary", str(summary),
    )  # fmt: skip
    assert status == 2
    error = capsys.readouterr().err
    assert f"cannot write the summary {summary}: No space left on device" in error
    assert f"(the scores were written to {out})" in error
    assert len(out.read_text().splitlines()) == 1 and not summary.exists()


def test_the_summary_line_gives_the_mean_score_and_counts(
    base_dir: Path, tmp_path: Path, capsys
) -> None:
    rows = [{"ref": ref, "gen": gen} for ref, gen in zip(REFS, GENS, strict=True)]
    input_file = write_jsonl(tmp_path / "in.jsonl", rows)
    summary = tmp_path / "summary.json"
    assert main(["predict", "--checkpoint", str(base_dir), "--input", str(input_file),
                 "--summary", str(summary)]) == 0  # fmt: skip
    printed = capsys.readouterr()
    assert len(printed.out.splitlines()) == len(REFS)  # the records on stdout
    figures = json.loads(summary.read_text())
    assert (
        f"mismatch predict: mean score {figures['mean_score']:.4f}; {figures['flagged']} pair(s) "
        f"labelled with an error, {figures['unsure']} with no label\n" in printed.err
    )


def test_empty_input_gives_an_empty_table(base_dir: Path, tmp_path: Path) -> None:
    empty = write_lines(tmp_path / "empty.txt", [])
    out = tmp_path / "out.csv"
    status = predict_cli(
        "--checkpoint", str(base_dir), "--refs", str(empty), "--gens", str(empty),
        "--output", str(out),
    )  # fmt: skip
    assert status == 0
    assert out.read_text().splitlines() == [out.read_text().splitlines()[0]]  # header only


def test_format_follows_the_output_suffix(base_dir: Path, tmp_path: Path) -> None:
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    run = functools.partial(predict_cli, "--checkpoint", str(base_dir), "--input", str(input_file))
    table, lines = tmp_path / "scores.tsv", tmp_path / "scores.ndjson"
    assert run("--output", str(table)) == 0 and run("--output", str(lines)) == 0
    assert table.read_text().splitlines()[0].startswith("id\tscore\tp.NoContr")
    assert json.loads(lines.read_text())["id"] == "1"  # newline-delimited JSON: JSON Lines
    for asked in ("CSV", "ndjson"):  # --format reads as the suffixes do: any case, ndjson
        named = tmp_path / f"as_{asked}"
        assert run("--output", str(named), "--format", asked) == 0
        assert named.read_text().startswith("id,score" if asked == "CSV" else '{"id": "1"')


def test_a_gz_output_is_compressed_and_keeps_its_format(base_dir: Path, tmp_path: Path) -> None:
    """--output scores.jsonl.gz is the plain output gzip-compressed (as --input reads
    .jsonl.gz), byte for byte the same on a rerun; the suffix before .gz picks the format."""
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    run = functools.partial(predict_cli, "--checkpoint", str(base_dir), "--input", str(input_file))
    plain, packed, table = (tmp_path / name for name in ("s.jsonl", "s.jsonl.gz", "s.tsv.GZ"))
    assert run("--output", str(plain)) == 0 and run("--output", str(packed)) == 0
    assert gzip.decompress(packed.read_bytes()).decode("utf-8") == plain.read_text()
    first = packed.read_bytes()
    assert first[3] & 0x08 == 0  # FNAME flag: no (temporary) file name in the header
    assert run("--output", str(packed)) == 0 and packed.read_bytes() == first  # no time either
    assert run("--output", str(table)) == 0
    assert gzip.decompress(table.read_bytes()).decode("utf-8").startswith("id\tscore\t")


def test_script_entry_point_runs_the_same_command() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "mismatch predict" in result.stdout and "--checkpoint" in result.stdout


def test_demo_prints_one_row_per_example_pair(tmp_path: Path, capsys, monkeypatch) -> None:
    from evaluator.cli.demo import EXAMPLES

    opened = []
    real_open = Path.open

    def spy(path: Path, *args, **kwargs):
        opened.extend([path] if path == EXAMPLES else [])
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    assert main(["demo", "--checkpoint", str(make_checkpoint(tmp_path / "tiny"))]) == 0
    assert opened == [EXAMPLES]  # the examples are read once
    monkeypatch.undo()
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    assert len(rows) >= 12
    for row in rows:
        assert any(line.startswith(row["id"] + " ") for line in out.splitlines()), row["id"]
        assert "    gen: " + row["gen"][:40] in out
    assert "score = P(NoContr)" in out and "('-': none reaches it, the model is unsure)" in out
    signature = Evaluator.from_pretrained(tmp_path / "tiny").signature
    assert f"\nsignature {signature}\n" in out  # what decides these scores, as predict says
    assert main(["demo", "--checkpoint", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["demo", "--top", "0"]) == 2
    assert "--top must be at least 1, got 0" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["demo", "--examples", str(empty)]) == 2  # it raised max()'s ValueError
    assert f"{empty}: no pairs to show" in capsys.readouterr().err
    # --task: the task checkpoint's ratings under each pair
    task = make_checkpoint(tmp_path / "task", REGRESSION_TASK)
    assert main(["demo", "--checkpoint", str(task), "--task", "summarization"]) == 0
    assert capsys.readouterr().out.count("\n    ratings: coherence ") == len(rows)
    assert main(["demo", "--checkpoint", str(tmp_path / "tiny"), "--task", "summarization"]) == 2
    assert "not fine-tuned for task 'summarization'" in capsys.readouterr().err
    assert main(["demo", "--task", "poetry"]) == 2
    assert "unknown task 'poetry'" in capsys.readouterr().err


def test_demo_wraps_marked_text_where_the_plain_text_wraps() -> None:
    """On a terminal, textwrap counted the escape codes of the red marks as text, so a line
    with marked words wrapped early; with [[...]] the marks take room on screen as well."""
    import textwrap

    from evaluator.cli.demo import PLAIN_MARKS, TERMINAL_MARKS, TEXT_WIDTH, _wrapped

    prefix = "    gen: "
    long_line = " ".join(["abcde"] * 15 + ["abcdef"] + ["xyz"] * 5)  # "abcdef" ends at column 96
    sentences = " ".join(["The company hired 21 new staff in Manchester last year."] * 3)
    unspaced = "东京的公司去年在曼彻斯特雇用了二十一名新员工。" * 12  # a line has no room for it
    for gen, spans in (
        (long_line, [{"start": 90, "end": 96}]),
        (
            sentences,
            [{"start": start, "end": start + 2} for start in range(18, len(sentences), 57)],
        ),
    ):
        plain = textwrap.fill(
            gen, TEXT_WIDTH + len(prefix), initial_indent=prefix, subsequent_indent=" " * 9
        )
        coloured = _wrapped(prefix, gen, spans, TERMINAL_MARKS)
        assert coloured.count(TERMINAL_MARKS[0]) == len(spans)
        for mark in TERMINAL_MARKS:
            coloured = coloured.replace(mark, "")
        assert coloured == plain  # the same lines on screen as the unmarked text
        bracketed = _wrapped(prefix, gen, spans, PLAIN_MARKS)
        assert bracketed.count("[[") == len(spans)
        assert max(map(len, bracketed.splitlines())) <= len(prefix) + TEXT_WIDTH
    coloured = _wrapped(prefix, unspaced, [{"start": 90, "end": 100}], TERMINAL_MARKS)
    for mark in TERMINAL_MARKS:
        coloured = coloured.replace(mark, "")
    assert coloured.replace("\n" + " " * len(prefix), "") == prefix + unspaced
    assert max(map(len, coloured.splitlines())) == len(prefix) + TEXT_WIDTH


# --- with the real encoder ------------------------------------------------------------------


@pytest.mark.slow
def test_over_long_texts_are_truncated_and_counted_once(tmp_path: Path) -> None:
    directory = make_checkpoint(tmp_path / "t", use_text=True, embedding_dim=384)
    evaluator = Evaluator.from_pretrained(directory)
    long_text = " ".join(["word"] * 600)
    refs = [long_text, "A short reference.", long_text]
    gens = ["A short text.", long_text + " more", "Another short text."]
    with pytest.warns(TruncationWarning) as caught:
        predictions = evaluator.predict(refs, gens)
    assert len(predictions) == 3
    about_truncation = [w for w in caught if "truncated" in str(w.message)]
    assert [w.category for w in about_truncation] == [TruncationWarning]  # one message only
    assert about_truncation[0].filename == __file__  # the caller's line, not "sys:1"
    assert str(about_truncation[0].message).startswith(
        "3 of 3 pair(s) have a text longer than the encoder's 512 tokens"
    )


def test_ratings_read_each_metric_at_its_closest_over_the_references() -> None:
    """Ratings that read every reference read a similarity's max, a distance's or novelty's min,
    and every other column (the kind of difference, a ratio) at the reference that reads
    closest on those. Each metric's max put a far reference's novelty and distance into an
    exact copy's ratings: captioning rated a copy of a caption 0.97 alone and 0.745 beside two
    other captions of the image (an audit, 2026-12-02). Each column's own best instead let an
    unrelated reference, which shares no place with gen, hide a changed place (a review)."""
    from evaluator.features.registry import CLOSER, available_features
    from evaluator.inference import over_references

    assert set(CLOSER) == set(available_features())  # a new column must say how it reads
    names = ["chrf", "edit_distance", "length_ratio", "changed_place"]
    copy, far = [1.0, 0.0, 0.5, 0.0], [0.2, 0.9, 0.9, 0.0]
    wrong_place, unrelated = [0.9, 0.1, 0.5, 1.0], [0.1, 0.9, 0.8, 0.0]
    near, other, alone = [0.7, 0.2, 0.3, 0.4], [0.8, 0.4, 0.6, 0.1], [0.6, 0.3, 0.4, 0.2]
    features = np.array([copy, far, wrong_place, unrelated, near, other, alone])
    owner = np.array([0, 0, 1, 1, 2, 2, 3])
    best = over_references(features, owner, names, "best")
    np.testing.assert_array_equal(best[:2], [copy, copy])
    np.testing.assert_array_equal(best[2:4], [wrong_place, wrong_place])  # the place stays
    # chrF's max, the distance's min, the others of the closer reading (0.7 - 0.2 against
    # 0.8 - 0.4)
    np.testing.assert_array_equal(best[4:6], [[0.8, 0.2, 0.3, 0.4]] * 2)
    np.testing.assert_array_equal(best[6], alone)
    # the closest reading chosen on other values (a baseline's raw scores, by their scaled ones)
    scaled = features.copy()
    scaled[5, 0] = 1.0  # 1.0 - 0.4 against 0.7 - 0.2
    chosen = over_references(features, owner, names, "best", scaled=scaled)
    np.testing.assert_array_equal(chosen[4], [0.8, 0.2, 0.6, 0.1])
    maximum = over_references(features, owner, names, "max")  # checkpoints fitted before
    np.testing.assert_array_equal(maximum[:2], [[1.0, 0.9, 0.9, 0.0]] * 2)
    with pytest.raises(ValueError, match="reference aggregate"):
        over_references(features, owner, names, "mean")
    with pytest.raises(ValueError, match="reference_aggregate"):
        MismatchConfig(feature_names=names, reference_aggregate="mean")


def test_an_output_wrong_against_every_reference_has_its_errors_named_by_the_nearest() -> None:
    """deciding_reference "likeliest_errors_closest": the score from the likeliest reading (by
    the head alone); the errors from it unless its score and the score against the reference
    closest on the metrics both read as errors, then from that closest one. By likeliness
    alone a negated copy beside an unrelated reference was read against the unrelated one
    (likelier by 0.001) and labelled MissInfo instead of NegErr (shipped base, 2026-12-02)."""
    from evaluator.inference import pair_probabilities, reading_rows

    names = ["chrf", "edit_distance", "changed_place"]
    # two references a pair, the first closer on the metrics:
    # pair 0: a paraphrase, NoContr against its second reference;
    # pair 1: an error copy of its first reference beside an unrelated one, likelier by a hair;
    # pair 2: the head alone reads its likeliest (second) reading as NoContr, its reported
    #   score (with the head-only terms) as an error, as the first reading's;
    # pair 3: both scores of its likeliest (second) reading are errors; the first reading's
    #   score is NoContr (the head-only terms lifted it)
    near, far = [0.9, 0.1, 0.0], [0.1, 0.9, 0.0]
    scaled = np.array([near, far] * 4, dtype=np.float32)
    likeliness = np.array([0.2, 0.8, 0.001, 0.002, 0.3, 0.6, 0.3, 0.4])
    owner = np.repeat(np.arange(4), 2)
    # readings (NoContr, NegErr, MissInfo), their column 0 the reported scores
    flat = np.array(
        [[0.3, 0.3, 0.4], [0.8, 0.1, 0.1], [0.01, 0.9, 0.09], [0.02, 0.08, 0.9],
         [0.2, 0.2, 0.6], [0.4, 0.5, 0.1], [0.6, 0.3, 0.1], [0.3, 0.6, 0.1]],
        dtype=np.float32,
    )  # fmt: skip
    read = functools.partial(reading_rows, likeliness=likeliness, scores=flat[:, 0],
                             scaled=scaled, names=names, owner=owner, n=4)  # fmt: skip
    likeliest = read("likeliest")
    assert likeliest.scoring.tolist() == likeliest.naming.tolist() == [1, 3, 5, 7]
    split = read("likeliest_errors_closest")
    assert split.scoring.tolist() == [1, 3, 5, 7]
    assert split.naming.tolist() == [1, 2, 4, 7]
    np.testing.assert_allclose(pair_probabilities(flat, likeliest), flat[[1, 3, 5, 7]])
    # a moved pair's score stays the likeliest reading's; its errors share the rest as the
    # near reference has them
    np.testing.assert_allclose(
        pair_probabilities(flat, split),
        [[0.8, 0.1, 0.1], [0.02, 0.98 * 0.9 / 0.99, 0.98 * 0.09 / 0.99],
         [0.4, 0.6 * 0.2 / 0.8, 0.6 * 0.6 / 0.8], [0.3, 0.6, 0.1]],
        rtol=1e-6,
    )  # fmt: skip
    with pytest.raises(ValueError, match="must be one of"):
        read("closest")
    with pytest.raises(ValueError, match="reads the metric features"):
        reading_rows("likeliest_errors_closest", likeliness, flat[:, 0], None, names, owner, 4)
    with pytest.raises(ValueError, match="deciding_reference must be one of"):
        MismatchConfig(feature_names=names, deciding_reference="nearest")
    with pytest.raises(ValueError, match="needs use_metrics"):
        MismatchConfig(deciding_reference="likeliest_errors_closest", use_metrics=False)


@pytest.mark.slow
def test_the_closest_reference_decides_on_a_checkpoint_that_reads_the_text(tmp_path: Path) -> None:
    """Text branch only (no metric features to aggregate): the reference with the higher
    single-reference P(NoContr) gives the whole answer, in either order."""
    directory = make_checkpoint(
        tmp_path / "t", use_text=True, use_metrics=False, use_alignment=True, embedding_dim=384
    )
    evaluator = Evaluator.from_pretrained(directory)
    gen = "A man rides a horse on the beach at sunset."
    references = ["A man rides a horse on the beach at dawn.", "Kids play football in the rain."]
    single = [evaluator.predict([ref], [gen], progress=False)[0] for ref in references]
    closest, farthest = sorted(single, key=lambda p: p.score, reverse=True)
    assert not np.allclose(
        list(closest.mismatch.values()), list(farthest.mismatch.values()), atol=1e-3
    )
    for refs in (references, references[::-1]):
        multi = evaluator.predict([refs], [gen], progress=False)[0]
        assert_same(multi, closest)


def test_a_reader_that_stops_early_ends_predict_quietly(
    base_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """`mismatch predict ... | head -1`: when writing to stdout fails because its reader has
    gone, exit 141 (as after SIGPIPE) with no traceback and no error line."""
    import evaluator.cli.predict as predict_command

    def reader_gone(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(predict_command, "_score_and_write", reader_gone)
    input_file = write_jsonl(tmp_path / "in.jsonl", [{"ref": REFS[0], "gen": GENS[0]}])
    assert predict_cli("--checkpoint", str(base_dir), "--input", str(input_file)) == 141
    assert capsys.readouterr().err == ""


def test_the_encoder_pass_is_told_the_model_device(base_dir: Path, monkeypatch) -> None:
    """`Evaluator(..., device=...)` moves the features' encoder pass as well as the model, so a
    GPU does the costly part: predict hands the model's device to the feature computation
    ("cpu:0" here, a name no default gives, standing in for a GPU's)."""
    import evaluator.inference as inference_module

    seen = []
    real = inference_module.compute_features

    def spy(*args, device: str, **kwargs):
        seen.append(device)
        return real(*args, device=device, **kwargs)

    monkeypatch.setattr(inference_module, "compute_features", spy)
    monkeypatch.setattr(inference_module, "model_device", lambda model: "cpu:0")
    Evaluator.from_pretrained(base_dir).predict(REFS, GENS, progress=False)
    assert seen == ["cpu:0"]


@pytest.mark.slow  # the packaged encoder; runs where a CUDA GPU is (not in CI)
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", ["mismatch-base", "mismatch-summarization"])
def test_a_gpu_gives_the_outputs_of_the_cpu(name: str) -> None:
    """The shipped checkpoints on a GPU (encoder pass, model, span tagger) give what they give
    on the CPU, up to float rounding: the same labels and spans, probabilities within 1e-4."""
    from mismatch_core.resources import REPO_ROOT

    directory = REPO_ROOT / "checkpoints" / name
    srcs = [f"{ref} It was reported on Monday." for ref in REFS]  # summarization reads a source
    on_cpu = Evaluator.from_pretrained(directory).predict(REFS, GENS, srcs, progress=False)
    on_gpu = Evaluator.from_pretrained(directory, device="cuda").predict(
        REFS, GENS, srcs, progress=False
    )
    for cpu, gpu in zip(on_cpu, on_gpu, strict=True):
        assert (gpu.id, gpu.labels) == (cpu.id, cpu.labels)
        assert gpu.score == pytest.approx(cpu.score, abs=1e-4)
        assert np.allclose(list(gpu.mismatch.values()), list(cpu.mismatch.values()), atol=1e-4)
        assert gpu.ratings.keys() == cpu.ratings.keys()
        assert np.allclose(list(gpu.ratings.values()), list(cpu.ratings.values()), atol=1e-3)
        where = [(s["start"], s["end"], s["label"]) for s in cpu.spans or []]
        assert [(s["start"], s["end"], s["label"]) for s in gpu.spans or []] == where
