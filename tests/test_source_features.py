"""Ratings that read the source: a task model also scores gen against each record's source
(a summary against its document) with lexical metrics, in training, evaluation and predict
alike. Tiny task and encoder as in test_finetune."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from jsonl_files import write_jsonl_gz
from test_finetune import (  # noqa: F401  (fixtures)
    SETTINGS,
    base_checkpoint,
    encoder_dir,
    sentence,
)

from evaluator.evaluator import Evaluator
from evaluator.features import FeatureScaler, compute_features
from evaluator.finetune.datamodule import prepare_task
from evaluator.finetune.outputs import task_outputs
from evaluator.finetune.rating_mix import choose_mix
from evaluator.finetune.train import export, fit
from evaluator.hub import load
from evaluator.inference import predict_outputs

SOURCE = ["rouge1_p", "novel_2gram"]


@pytest.fixture(scope="module")
def source_root(tmp_path_factory) -> Path:
    """SummEval-shaped records whose scores follow how much of gen its document holds."""
    root = tmp_path_factory.mktemp("human-src")
    rng = np.random.default_rng(3)
    rows = []
    for group in range(24):
        document = " ".join(sentence(rng, 8) for _ in range(4))
        refs = [sentence(rng), sentence(rng)] if group % 2 else [sentence(rng)]
        for system in range(3):
            words = document.split()
            start = int(rng.integers(0, len(words) - 6))
            gen = " ".join(words[start : start + 6]) if system < 2 else sentence(rng)
            score = 4.0 if system < 2 else 2.0
            rows.append({
                "id": f"s:{group}:{system}", "ref": refs, "gen": gen, "src": document,
                "group": f"s:{group}",
                "scores": dict.fromkeys(("coherence", "consistency", "fluency", "relevance"), score),
            })  # fmt: skip
    write_jsonl_gz(root / "summarization" / "summeval.jsonl.gz", rows)
    return root


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, base_checkpoint: Path, source_root: Path):  # noqa: F811
    """(prepared task, data module, exported checkpoint) fitted with source features."""
    tmp_path = tmp_path_factory.mktemp("source-fit")
    prepared = prepare_task(
        "summarization",
        str(base_checkpoint),
        tmp_path / "cache",
        source_root,
        source_features=tuple(SOURCE),
    )
    settings = replace(SETTINGS, source_features=tuple(SOURCE))
    rows = np.arange(len(prepared.records))
    module, data, _ = fit(prepared, rows, settings, 0, checkpoint=str(base_checkpoint))
    return prepared, data, load(export(module, data, tmp_path / "task"))


def test_source_scores_are_scaled_at_the_training_records_bounds(fitted) -> None:
    prepared, data, checkpoint = fitted
    records = prepared.records
    expected = compute_features([r.src for r in records], [r.gen for r in records], names=SOURCE)
    np.testing.assert_allclose(prepared.inputs.source.to_numpy(), expected[SOURCE].to_numpy())
    # the metric baselines see the source columns too
    assert list(prepared.inputs.record_features(prepared.features).columns[-2:]) == [f"source_{n}" for n in SOURCE]
    train = data.split["train"]
    bounds = FeatureScaler.fit(expected.iloc[train][SOURCE])
    scaling = checkpoint.model.source_scaling
    assert checkpoint.model.config.source_features == SOURCE
    np.testing.assert_allclose(scaling.low.numpy(), bounds.low, atol=1e-6)
    np.testing.assert_allclose(scaling.high.numpy(), bounds.high, atol=1e-6)


def test_predict_reads_the_source_as_evaluation_does(fitted) -> None:
    """predict gives the evaluation path's ratings (records with one and two references); with
    the rating set to the scaled source column, it is exactly that column, and another source
    changes it."""
    prepared, _, checkpoint = fitted
    checkpoint = copy.deepcopy(checkpoint)  # its weights are set below
    rows = np.arange(12)
    records = [prepared.records[i] for i in rows]
    assert {len(r.refs) for r in records} == {1, 2}
    refs, gens, srcs = (
        [list(r.refs) for r in records],
        [r.gen for r in records],
        [r.src for r in records],
    )
    outputs = predict_outputs(checkpoint, refs, gens, srcs=srcs)
    _, _, evaluated = task_outputs(
        checkpoint.model,
        prepared.features[prepared.inputs.pair_rows(rows)],
        prepared.inputs.subset(rows),
    )
    np.testing.assert_allclose(evaluated, outputs.ratings, atol=1e-5)
    model = checkpoint.model
    with torch.no_grad():  # rating := the scaled rouge1_p against the source
        for layer in (model.rating_head[-1], model.mismatch_rating, model.metric_rating):
            layer.weight.zero_()
            layer.bias.zero_()
        model.metric_rating.weight[:, len(model.config.set_columns())] = 1.0
    raw = compute_features(srcs, gens, names=["rouge1_p"])["rouge1_p"].to_numpy()
    scaling = model.source_scaling
    scaled = np.clip(
        (raw - scaling.low[0].item()) / (scaling.high[0] - scaling.low[0]).item(), -3, 4
    )
    rated = predict_outputs(checkpoint, refs, gens, srcs=srcs).ratings[:, 0]
    np.testing.assert_allclose(rated, scaled, atol=1e-5)
    elsewhere = predict_outputs(checkpoint, refs, gens, srcs=["an unrelated text"] * len(gens))
    assert (elsewhere.ratings[:, 0] < rated - 1e-3).any()


def test_a_pair_without_a_source_is_refused_by_name(fitted, source_root: Path, tmp_path) -> None:
    prepared, _, checkpoint = fitted
    records = prepared.records[:3]
    refs, gens = [list(r.refs) for r in records], [r.gen for r in records]
    with pytest.raises(ValueError, match="pair 1 has no src"):
        predict_outputs(checkpoint, refs, gens, srcs=[records[0].src, None, records[2].src])
    with pytest.raises(ValueError, match="1 srcs but 3 generated texts"):
        predict_outputs(checkpoint, refs, gens, srcs=[records[0].src])
    evaluator = Evaluator(checkpoint)
    with pytest.raises(ValueError, match="pair 'b' has no src"):
        evaluator.predict(refs, gens, srcs=["doc", " ", "doc"], ids=["a", "b", "c"])
    with pytest.raises(ValueError, match="pair 'a' has no src"):
        evaluator.predict(refs, gens, ids=["a", "b", "c"])
    no_source = [{"id": "x:0", "ref": ["a b"], "gen": "a", "src": None, "group": "x",
                  "scores": {"coherence": 3.0}}]  # fmt: skip
    write_jsonl_gz(tmp_path / "human" / "summarization" / "summeval.jsonl.gz", no_source)
    with pytest.raises(ValueError, match="record 'x:0' has no src"):
        prepare_task(
            "summarization",
            str(checkpoint.path),
            tmp_path / "cache",
            tmp_path / "human",
            source_features=tuple(SOURCE),
        )


def test_each_criterion_mixes_with_the_ridge_fit_or_its_best_metric_line(
    tmp_path: Path,
    base_checkpoint: Path,  # noqa: F811
    source_root: Path,
) -> None:
    """With single_metric_anchor, the frozen fit a criterion's rating mixes with is its ridge
    fit or the line of its best single metric column (here the source's rouge1_p, which
    follows the scores), whichever the validation records choose; either way it travels with
    the checkpoint."""
    prepared = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", source_root,
        source_features=tuple(SOURCE),
    )  # fmt: skip
    settings = replace(
        SETTINGS, source_features=tuple(SOURCE), rating_mix=True, single_metric_anchor=True
    )
    rows = np.arange(len(prepared.records))
    module, data, _ = fit(prepared, rows, settings, 0, checkpoint=str(base_checkpoint))
    assert module.metric_start is not None and module.single_start is not None
    single_weight = module.single_start[0]
    assert ((single_weight != 0).sum(dim=1) == 1).all()  # one column per criterion
    model, ridge = module.model, module.model.ridge_rating
    # a ridge fit and a learned rating that rank nothing (constants): the validation records
    # choose the single lines, with the largest share that leaves their ranking whole
    fits = (
        (torch.zeros_like(ridge.weight), torch.full_like(ridge.bias, 0.5)),
        module.single_start,
    )
    with torch.no_grad():
        ridge.weight.copy_(fits[0][0])
        ridge.bias.copy_(fits[0][1])
        for layer in (model.rating_head[-1], model.metric_rating, model.mismatch_rating):
            layer.weight.zero_()
    anchors = choose_mix(model, prepared, data.split["val"], module.single_start)
    assert anchors.tolist() == [1, 1, 1, 1]
    assert model.learned_share.tolist() == [0.75] * 4
    for k, anchor in enumerate(anchors.tolist()):
        torch.testing.assert_close(ridge.weight[k], fits[anchor][0][k])
        torch.testing.assert_close(ridge.bias[k], fits[anchor][1][k])
    checkpoint = load(export(module, data, tmp_path / "task"))
    torch.testing.assert_close(checkpoint.model.ridge_rating.weight, ridge.weight)
    torch.testing.assert_close(checkpoint.model.ridge_rating.bias, ridge.bias)
    torch.testing.assert_close(checkpoint.model.learned_share, model.learned_share)


def test_the_realtext_bench_reads_the_reference_as_the_missing_source(fitted) -> None:
    """Its pairs have no source: for a checkpoint that reads one, the reference stands in,
    and the rating column says so."""
    from evaluator.bench.realtext import Scorer

    _, _, checkpoint = fitted
    refs = ["the dog sat on the mat", "a big red house"]
    gens = ["the dog sat", "a small blue tree in the park"]
    scorer = Scorer(checkpoint)
    column = "rating (summarization, reference as source)"
    assert column in scorer.metrics
    rated = scorer.score(refs, gens)[column]
    raw = predict_outputs(checkpoint, refs, gens, srcs=refs).ratings
    np.testing.assert_allclose(rated, scorer._mean_rating(raw), atol=1e-6)


def test_ratings_that_read_the_source_train_on_copies_of_it(
    tmp_path: Path,
    base_checkpoint: Path,  # noqa: F811
    source_root: Path,
) -> None:
    """Every record's source, given as its output, is a contrast copy that must rate below
    the record's own output; without source features there are none."""
    prepared = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", source_root,
        contrast_size=30, source_features=tuple(SOURCE),
    )  # fmt: skip
    contrast = prepared.contrast
    repeats = [k for k, copy in enumerate(contrast.inputs.ids) if copy.endswith("~copy-source")]
    assert len(repeats) == len(prepared.records)
    for k in repeats:
        owner = prepared.records[contrast.owners[k]]
        assert contrast.inputs.ids[k] == f"{owner.id}~copy-source"
        assert contrast.parents[k] == -1
        texts = contrast.inputs.texts[contrast.inputs.gen_rows[k]]
        own = prepared.inputs.texts[prepared.inputs.gen_rows[contrast.owners[k]]]
        assert not np.allclose(texts, own)  # the source's embedding, not the output's
    plain = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", source_root, contrast_size=30
    )
    assert not any(copy.endswith("~copy-source") for copy in plain.contrast.inputs.ids)
    # the model card counts them apart from the copies with synthetic errors
    settings = replace(
        SETTINGS, source_features=tuple(SOURCE), contrast_size=30, contrast_weight=1.0
    )
    module, data, _ = fit(
        prepared, np.arange(len(prepared.records)), settings, 0, checkpoint=str(base_checkpoint)
    )
    facts = data.describe()
    train = len(data.split["train"])
    assert facts["source copies"] == f"{train} train outputs replaced by their source"
    trained = np.isin(contrast.owners, data.split["train"]).sum()
    assert facts["contrast copies"].startswith(f"{trained - train} train outputs")
    directory = export(module, data, tmp_path / "task")
    card = (directory / "README.md").read_text()
    assert "read the generated text against its source (`src`, needed on every pair): " in card
    assert "rouge1_p, novel_2gram" in card
    # its usage example passes a source, and runs as written
    assert "--srcs srcs.txt`" in card
    usage = card.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(usage.replace("path/or/hub-id", str(directory)), namespace)
    assert set(namespace["result"].ratings) == set(namespace["evaluator"].rating_keys)


def test_predict_names_the_line_without_a_source(fitted, tmp_path: Path, capsys) -> None:
    from evaluator.cli import main

    _, _, checkpoint = fitted
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        '{"ref": "the dog sat", "gen": "the dog", "src": "the dog sat on the mat"}\n'
        '{"ref": "a red house", "gen": "a house"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "scores.jsonl"
    argv = ["predict", "--checkpoint", str(checkpoint.path), "--output", str(out), "--quiet"]
    assert main([*argv, "--input", str(pairs)]) == 2
    assert f"{pairs}:2: key 'src' is missing, null or blank" in capsys.readouterr().err
    refs, gens, srcs = (tmp_path / f"{name}.txt" for name in ("refs", "gens", "srcs"))
    refs.write_text("the dog sat\na red house\n", encoding="utf-8")
    gens.write_text("the dog\na house\n", encoding="utf-8")
    srcs.write_text("the dog sat on the mat\n \n", encoding="utf-8")
    assert main([*argv, "--refs", str(refs), "--gens", str(gens)]) == 2
    assert "give --srcs FILE" in capsys.readouterr().err
    assert main([*argv, "--refs", str(refs), "--gens", str(gens), "--srcs", str(srcs)]) == 2
    assert f"{srcs}:2: empty source" in capsys.readouterr().err
    assert not out.exists()
    srcs.write_text("the dog sat on the mat\na red house stood there\n", encoding="utf-8")
    assert main([*argv, "--refs", str(refs), "--gens", str(gens), "--srcs", str(srcs)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_a_missing_source_fails_before_the_model_code_loads(fitted, tmp_path: Path) -> None:
    """The input check reads from config.json that the checkpoint needs a source, so a pair
    without one is refused in a fresh process before torch is imported."""
    _, _, checkpoint = fitted
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"ref": "a red house", "gen": "a house"}\n', encoding="utf-8")
    code = (
        "import sys\nfrom evaluator.cli import main\nstatus = main(sys.argv[1:])\n"
        "print('TORCH', 'torch' in sys.modules, file=sys.stderr)\nsys.exit(status)"
    )
    argv = ["predict", "--checkpoint", str(checkpoint.path), "--input", str(pairs), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    result = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env
    )
    assert result.returncode == 2 and result.stdout == ""
    assert f"{pairs}:1: key 'src' is missing, null or blank" in result.stderr
    assert "TORCH False" in result.stderr


def test_a_missing_source_is_found_whatever_form_it_takes() -> None:
    from mismatch_core.pairs import first_without_source

    assert first_without_source(["a", "b"], 2) is None
    assert first_without_source(["a", " "], 2) == 1
    assert first_without_source(["a", "\u200b\u00ad"], 2) == 1  # nothing visible
    assert first_without_source(["a", "\u0301\ufe0f\ufffd\ue000"], 2) == 1  # the same
    assert first_without_source(["a", "\U0001f600"], 2) is None  # an emoji is seen
    assert first_without_source(["a", None, "c"], 3) == 1
    assert first_without_source(["a"], 2) == 1  # fewer sources than pairs
    assert first_without_source(None, 2) == 0


def test_a_model_reads_a_source_with_lexical_metrics_only() -> None:
    """Also a config built by hand or read from a checkpoint: an encoder metric would read a
    truncated article."""
    from evaluator.model import MismatchConfig

    settings = {"feature_names": ["bleu"], "num_ratings": 1, "rating_from_metrics": True}
    with pytest.raises(ValueError, match="source_features: bertscore read the encoder"):
        MismatchConfig(**settings, source_features=["bertscore_p"])
    with pytest.raises(ValueError, match="unknown feature"):
        MismatchConfig(**settings, source_features=["nope"])
    assert MismatchConfig(**settings, source_features=["rouge1_p"]).source_features == ["rouge1_p"]
