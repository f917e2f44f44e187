"""Fine-tuning and evaluation on human ratings, end to end on a tiny task with a tiny encoder.

The encoder is a random 2-layer BERT saved to a temporary folder (named by path, as a user's
local encoder would be); features are cheap lexical ones, so nothing heavy is loaded.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from jsonl_files import write_jsonl_gz
from safetensors.torch import load_file
from tiny_bert import tiny_bert
from transformers import AutoTokenizer

from evaluator import Evaluator
from evaluator.cli import main
from evaluator.cli import main as cli_main
from evaluator.cli.fit_inputs import config_file
from evaluator.features import FeatureScaler, compute_features
from evaluator.features.lexical import negations
from evaluator.finetune.config import FitSettings
from evaluator.finetune.contrast import (
    ANCHOR,
    PARAPHRASE_TRIPLE,
    contrast_records,
    paraphrase_triples,
    reference_triples,
)
from evaluator.finetune.datamodule import RatingDataModule, prepare_task, split_rows
from evaluator.finetune.evaluate import evaluate_task, model_scores, run_seed, seed_split
from evaluator.finetune.module import RatingModule, rating_model, ridge_fit, single_metric_fit
from evaluator.finetune.outputs import task_outputs
from evaluator.finetune.rating_mix import (
    Parts,
    best_mixes,
    contrast_parts,
    output_parts,
    rating_parts,
)
from evaluator.finetune.train import export, fit
from evaluator.finetune.transfer import TRANSFERS
from evaluator.hub import load, save_pretrained
from evaluator.human_data import HumanRecord, load_records, split_by_group
from evaluator.inference import predict_outputs
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.model.mismatch_model import MISMATCH_LOG_FLOOR, NO_CONTRADICTION
from evaluator.signature import signature
from evaluator.tasks import TASKS, get_task, read_ratings
from evaluator.training.continued import with_head_only_features
from mismatch_core.checkpoint_files import checkpoint_sha256
from mismatch_core.resources import encoder_path
from mismatch_core.taxonomy import ERROR_CODES

FEATURES = ["bleu", "chrf", "rougeL_f"]
SETTINGS = FitSettings(
    max_steps=12, val_check_interval=4, patience=2, batch_size=16, val_fraction=0.3
)
WORDS = "the a dog cat ran sat on mat big small red blue house park tree man woman child".split()


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("tiny-encoder")
    tokenizer = AutoTokenizer.from_pretrained(encoder_path())
    tiny_bert(tokenizer.vocab_size, hidden_size=16, num_layers=1).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def base_checkpoint(tmp_path_factory, encoder_dir: Path) -> Path:
    torch.manual_seed(0)
    config = MismatchConfig(
        feature_names=FEATURES, encoder=str(encoder_dir), embedding_dim=16, text_dim=8, set_dim=8,
        num_heads=2, num_blocks=1,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    scaler = FeatureScaler.fit(pd.DataFrame(rng.random((40, len(FEATURES))), columns=FEATURES))
    return save_pretrained(
        MismatchModel(config), tmp_path_factory.mktemp("base") / "ckpt", scaler=scaler
    )


def sentence(rng: np.random.Generator, n: int = 6) -> str:
    return " ".join(rng.choice(WORDS, size=n))


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    """Tiny SummEval-shaped (4 criteria, 1-5, one or two references) and MNLI-shaped files."""
    root = tmp_path_factory.mktemp("human")
    rng = np.random.default_rng(1)
    summaries, nli = [], []
    for group in range(30):
        refs = [sentence(rng), sentence(rng)] if group % 2 else [sentence(rng)]
        for system in range(3):
            gen = refs[0] if system == 0 else sentence(rng)
            score = 5.0 if system == 0 else float(rng.integers(1, 4))
            criteria = ("coherence", "consistency", "fluency", "relevance")
            summaries.append({
                "id": f"s:{group}:{system}", "ref": refs, "gen": gen, "src": " ".join([*refs, gen]),
                "group": f"s:{group}", "scores": dict.fromkeys(criteria, score),
            })  # fmt: skip
            label = ("entailment", "neutral", "contradiction")[system]
            nli.append({
                "id": f"n:{group}:{system}", "ref": refs[0], "gen": gen, "src": None,
                "group": f"n:{group}", "scores": {k: float(k == label) for k in ("entailment", "neutral", "contradiction")},
            })  # fmt: skip
    write_jsonl_gz(root / "summarization" / "summeval.jsonl.gz", summaries)
    write_jsonl_gz(root / "nli" / "mnli_dev_matched.jsonl.gz", nli)
    return root


def test_splits_keep_every_group_on_one_side(data_root: Path) -> None:
    records = load_records(data_root / "summarization" / "summeval.jsonl.gz")
    for seed in range(3):
        train, test = split_by_group(records, seed=seed)
        assert train and test
        assert not {r.group for r in train} & {r.group for r in test}
        fit_rows, val_rows = split_rows(records, np.arange(len(records)), seed + 7, 0.3)
        assert len(fit_rows) + len(val_rows) == len(records)
        assert not {records[i].group for i in fit_rows} & {records[i].group for i in val_rows}


def test_ratings_can_read_every_references_metrics(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    """With ratings_read_all_references the metric map reads each metric at its closest over a
    pair's references (as the metric baselines do: rougeL_f's max), in predict and in the
    evaluation path alike; without it, the closest reference's scores. The rating is set to one metric (rougeL_f,
    within the tiny scaler's 0-1 range) to see which scores it read."""
    prepared = prepare_task("summarization", str(base_checkpoint), tmp_path / "cache", data_root)
    rows = np.array([i for i, r in enumerate(prepared.records) if len(r.refs) == 2][:8])
    records = [prepared.records[i] for i in rows]
    refs, gens = [list(r.refs) for r in records], [r.gen for r in records]
    column = FEATURES.index("rougeL_f")
    per_reference = [
        [compute_features([ref], [gen], names=FEATURES).iloc[0] for ref in pair]
        for pair, gen in zip(refs, gens, strict=True)
    ]
    rated = {}
    for all_references in (True, False):
        settings = replace(SETTINGS, ratings_read_all_references=all_references)
        module, data, _ = fit(
            prepared, np.arange(len(prepared.records)), settings, 0, checkpoint=str(base_checkpoint)
        )
        trained = module.model
        with torch.no_grad():  # rating := scaled rougeL_f
            for layer in (trained.rating_head[-1], trained.mismatch_rating, trained.metric_rating):
                layer.weight.zero_()
                layer.bias.zero_()
            trained.metric_rating.weight[:, column] = 1.0
            batch = next(iter(data.train_dataloader()))  # what training reads
            read = batch["all_reference_features" if all_references else "features"]
            np.testing.assert_allclose(module(batch)[:, 0], read[:, column], atol=1e-6)
        checkpoint = load(export(module, data, tmp_path / f"task-{all_references}"))
        model = checkpoint.model
        assert model.config.ratings_read_all_references is all_references
        assert model.config.reference_aggregate == "best"
        outputs = predict_outputs(checkpoint, refs, gens)
        _, _, evaluated = task_outputs(
            model,
            prepared.features[prepared.inputs.pair_rows(rows)],
            prepared.inputs.subset(rows),
        )
        np.testing.assert_allclose(evaluated, outputs.ratings, atol=1e-5)
        scaled = [
            checkpoint.scaler.transform(pd.DataFrame(pair))[:, column] for pair in per_reference
        ]
        expected = [
            values.max() if all_references else values[index]
            for values, index in zip(scaled, outputs.ref_index, strict=True)
        ]
        np.testing.assert_allclose(outputs.ratings[:, 0], expected, atol=1e-5)
        rated[all_references] = outputs.ratings[:, 0]
    assert (rated[True] > rated[False] + 1e-6).any()  # the closest is not always the best


def test_a_metric_baseline_reads_each_record_at_its_closest_reference() -> None:
    """A baseline takes a similarity's max over a record's references, a distance's min and
    any other column at the reference that reads closest on the scaled closeness columns
    (here the second: its edit distance, scaled, outweighs the first's chrF): with the max of
    every metric, edit distance and novelty read the farthest reference."""
    from evaluator.finetune.data import TaskInputs

    features = pd.DataFrame(  # rows: (record, reference); record a has two references
        {
            "chrf": [90.0, 80.0, 50.0],
            "edit_distance": [0.9, 0.1, 0.4],
            "changed_place": [0.0, 1.0, 0.5],
        }
    )
    inputs = TaskInputs(
        ids=["a", "b"], groups=["a", "b"], features=features, texts=np.zeros((4, 2)),
        ref_rows=[np.array([0, 1]), np.array([2])], gen_rows=np.array([3, 3]),
        targets=np.zeros((2, 1)),
    )  # fmt: skip
    scaler = FeatureScaler(list(features), low=[0.0, 0.0, 0.0], high=[100.0, 1.0, 1.0])
    expected = pd.DataFrame(
        {"chrf": [90.0, 50.0], "edit_distance": [0.1, 0.4], "changed_place": [1.0, 0.5]}
    )
    scaled = scaler.transform(features)  # as PreparedTask.features holds them
    pd.testing.assert_frame_equal(inputs.record_features(scaled), expected)


@pytest.fixture(scope="module")
def fitted_summarization(tmp_path_factory, base_checkpoint: Path, data_root: Path):
    """(prepared task, exported task checkpoint) fitted on every record."""
    tmp_path = tmp_path_factory.mktemp("fitted")
    prepared = prepare_task("summarization", str(base_checkpoint), tmp_path / "cache", data_root)
    module, data, _ = fit(
        prepared, np.arange(len(prepared.records)), SETTINGS, 0, checkpoint=str(base_checkpoint)
    )
    return prepared, load(export(module, data, tmp_path / "task"))


@pytest.mark.parametrize("references", [1, 2])
def test_task_outputs_match_predict(fitted_summarization, references: int) -> None:
    prepared, checkpoint = fitted_summarization
    assert checkpoint.tasks["summarization"]["criteria"][0] == {
        "key": "coherence",
        "low": 1,
        "high": 5,
    }
    rows = np.array([i for i, r in enumerate(prepared.records) if len(r.refs) == references][:9])
    records = [prepared.records[i] for i in rows]
    expected = predict_outputs(
        checkpoint, [list(r.refs) for r in records], [r.gen for r in records]
    )
    _, probabilities, ratings = task_outputs(
        checkpoint.model,
        prepared.features[prepared.inputs.pair_rows(rows)],
        prepared.inputs.subset(rows),
    )
    np.testing.assert_allclose(probabilities, expected.probabilities, atol=1e-5)
    np.testing.assert_allclose(ratings, expected.ratings, atol=1e-5)


def test_task_outputs_pick_the_reference_predict_picks_under_each_rule(
    fitted_summarization, monkeypatch
) -> None:
    """Fine-tuning's training references (the likeliest, whose reading gives the ratings) and
    test predictions follow the checkpoint's deciding_reference rule exactly as predict does:
    the rules name the errors against other references here, and train on the same."""
    prepared, checkpoint = fitted_summarization
    rows = np.array([i for i, r in enumerate(prepared.records) if len(r.refs) == 2][:9])
    records = [prepared.records[i] for i in rows]
    inputs = prepared.inputs.subset(rows)
    chosen = {}
    trained = {}
    for rule in ("likeliest", "likeliest_errors_closest"):
        monkeypatch.setattr(checkpoint.model.config, "deciding_reference", rule)
        expected = predict_outputs(
            checkpoint, [list(r.refs) for r in records], [r.gen for r in records]
        )
        best, probabilities, ratings = task_outputs(
            checkpoint.model, prepared.features[prepared.inputs.pair_rows(rows)], inputs
        )
        np.testing.assert_allclose(probabilities, expected.probabilities, atol=1e-5)
        np.testing.assert_allclose(ratings, expected.ratings, atol=1e-5)
        chosen[rule], trained[rule] = expected, best - inputs.pair_starts()
    np.testing.assert_array_equal(trained["likeliest"], chosen["likeliest"].ref_index)
    np.testing.assert_array_equal(trained["likeliest"], trained["likeliest_errors_closest"])
    likeliest, split = chosen["likeliest"], chosen["likeliest_errors_closest"]
    assert (likeliest.ref_index != split.ref_index).any()
    np.testing.assert_allclose(likeliest.probabilities[:, 0], split.probabilities[:, 0], atol=1e-7)
    np.testing.assert_allclose(likeliest.ratings, split.ratings, atol=1e-7)
    # the metric features reported are the naming reference's, as its ref_index says
    named = [r.refs[k] for r, k in zip(records, split.ref_index.tolist(), strict=True)]
    alone = predict_outputs(checkpoint, named, [r.gen for r in records])
    assert split.features is not None and alone.features is not None
    np.testing.assert_allclose(split.features.to_numpy(), alone.features.to_numpy(), atol=1e-6)


def test_a_task_model_takes_its_bases_deciding_rule_where_it_reads_metrics() -> None:
    """A task model names errors by its base's rule, as the base does; without metrics only
    "likeliest" can be read."""
    config = MismatchConfig(
        feature_names=["chrf", "bleu"],
        embedding_dim=8,
        deciding_reference="likeliest_errors_closest",
    )
    base = MismatchModel(config)
    fitted = rating_model(base, 2, pretrained=False, use_metrics=True)
    assert fitted.config.deciding_reference == "likeliest_errors_closest"
    text_only = rating_model(base, 2, pretrained=False, use_metrics=False)
    assert text_only.config.deciding_reference == "likeliest"


def test_best_shares_keep_the_learned_rating_only_where_it_ranks_better() -> None:
    targets = np.array([[0.1, 0.1, 0.1, np.nan], [0.4, 0.4, 0.4, 0.2], [0.2, 0.2, 0.2, np.nan],
                        [0.9, 0.9, 0.9, np.nan], [0.6, 0.6, 0.6, np.nan]])  # fmt: skip
    truth = np.nan_to_num(targets)
    wild = np.array([10.0, -10.0, 10.0, -10.0, 0.0])  # ranks wrong, even mixed in a little
    learned = np.c_[truth[:, 0], wild, truth[:, 2], truth[:, 3]]
    ridge = np.c_[wild, truth[:, 1], truth[:, 2], -truth[:, 3]]
    # learned ranks right; ridge ranks right; both alike (a tie keeps the learned rating);
    # one rated record (nothing to rank: learned)
    assert best_mixes([Parts(learned, ridge)], targets)[1].tolist() == [1.0, 0.0, 1.0, 1.0]
    # each side wrong on one pair, the other's error in the other direction: a mix is right
    y = np.array([[0.0], [1.0], [2.0], [3.0]])
    _, half = best_mixes(
        [Parts(np.array([[0.0], [2.0], [1.0], [3.0]]), np.array([[1.0], [0.0], [2.0], [3.0]]))], y
    )
    assert half.tolist() == [0.5]


def test_best_mixes_choose_the_anchor_that_ranks_better_and_keeps_copies_below() -> None:
    """Two anchors share the learned rating: the second ranks the records right, the first
    wrong, so it is chosen with no learned share; a tie keeps the first; and an anchor that
    lets a contrast copy rise above its parent is passed over."""
    targets = np.array([[0.1], [0.4], [0.2], [0.9], [0.6]])
    wild = np.array([[10.0], [-10.0], [10.0], [-10.0], [0.0]])
    ridge, single = Parts(wild, wild), Parts(wild, targets)
    anchors, shares = best_mixes([ridge, single], targets)
    assert (anchors.tolist(), shares.tolist()) == ([1], [0.0])
    assert best_mixes([single, single], targets)[0].tolist() == [0]
    # the second anchor rates the copy far above its parent: only its share 1 is left, which
    # ranks as the first anchor does (a tie: the first, wholly learned)
    copies = [
        Parts(np.zeros((1, 1)), np.zeros((1, 1))),
        Parts(np.zeros((1, 1)), np.full((1, 1), 100.0)),
    ]
    parents = [Parts(np.ones((1, 1)), np.ones((1, 1)))] * 2
    anchors, shares = best_mixes([ridge, single], targets, copies, parents)
    assert (anchors.tolist(), shares.tolist()) == ([0], [1.0])


def test_best_shares_keep_contrast_copies_below_their_parents() -> None:
    """The ridge fit ranks the records right and the learned rating wrong, but only the
    learned rating puts the two contrast copies below the texts they were made from: a copy
    stays below its parent for shares above 0.5, so the best of those ranks is chosen."""
    targets = np.array([[0.1], [0.4], [0.2], [0.9], [0.6]])
    wild = np.array([[10.0], [-10.0], [10.0], [-10.0], [0.0]])
    records = Parts(wild, targets)
    assert best_mixes([records], targets)[1].tolist() == [0.0]
    copies = Parts(learned=np.zeros((2, 1)), ridge=np.ones((2, 1)))
    parents = Parts(learned=np.ones((2, 1)), ridge=np.zeros((2, 1)))
    assert best_mixes([records], targets, [copies], [parents])[1].tolist() == [0.75]


def test_rating_mix_keeps_the_ridge_start_and_chooses_shares_on_validation(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    prepared = prepare_task("summarization", str(base_checkpoint), tmp_path / "cache", data_root)
    settings = replace(SETTINGS, rating_mix=True, lr=0.05)  # lr: move far from the start
    with_copies = replace(settings, contrast_size=60, contrast_weight=1.0)
    contrasted = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", data_root, contrast_size=60
    )
    module, data, _ = fit(
        contrasted,
        np.arange(len(contrasted.records)),
        with_copies,
        0,
        checkpoint=str(base_checkpoint),
    )
    val = data.split["val"]
    records = rating_parts(module.model, contrasted, val)
    copies, parents = contrast_parts(module.model, contrasted, val, records)
    owners = set(contrasted.contrast.owners[contrasted.contrast.parents != ANCHOR].tolist())
    assert len(copies.learned) == sum(  # every copy of a validation record, none other
        owner in set(val.tolist()) for owner in contrasted.contrast.owners.tolist()
    ) and owners & set(val.tolist())
    np.testing.assert_array_equal(  # the shares respect the copies made from val records
        module.model.learned_share.numpy(),
        best_mixes([records], contrasted.inputs.targets[val], [copies], [parents])[1],
    )
    module, data, _ = fit(
        prepared, np.arange(len(prepared.records)), settings, 0, checkpoint=str(base_checkpoint)
    )
    model = module.model
    assert model.ridge_rating is not None and not model.ridge_rating.weight.requires_grad
    train, val = data.split["train"], data.split["val"]
    features = torch.from_numpy(prepared.features[prepared.train_pairs[train]]).float()
    targets = torch.from_numpy(prepared.inputs.targets[train]).float()
    for k in range(targets.shape[1]):  # the ridge map is the metric map's start, untrained
        weight, bias = ridge_fit(features, targets[:, k], module.hparams["ridge_alpha"])
        torch.testing.assert_close(model.ridge_rating.weight[k], weight)
        torch.testing.assert_close(model.ridge_rating.bias[k], bias)
    assert not torch.allclose(model.metric_rating.weight, model.ridge_rating.weight)
    parts = rating_parts(model, prepared, val)
    learned, ridge = parts.learned, parts.ridge
    shares = model.learned_share.numpy()
    assert (shares < 1).any()  # on this data the learned rating does not earn it everywhere
    np.testing.assert_array_equal(shares, best_mixes([parts], prepared.inputs.targets[val])[1])
    _, _, mixed = task_outputs(
        model, prepared.features[prepared.inputs.pair_rows(val)], prepared.inputs.subset(val)
    )
    np.testing.assert_allclose(mixed, shares * learned + (1 - shares) * ridge, atol=1e-5)
    checkpoint = load(export(module, data, tmp_path / "task"))  # the shares travel with it
    np.testing.assert_array_equal(checkpoint.model.learned_share.numpy(), shares)
    records = [prepared.records[i] for i in val]
    outputs = predict_outputs(checkpoint, [list(r.refs) for r in records], [r.gen for r in records])
    np.testing.assert_allclose(outputs.ratings, mixed, atol=1e-5)
    with torch.no_grad():  # the mismatch map is outside the mix: with no learned share left,
        # a rating is the ridge fit less what the named errors take off, not a share of it
        model.learned_share.zero_()
        batch = next(iter(data.train_dataloader()))
        log_probs = model.head(module.model.represent(
            features=batch["features"], ref=batch["ref"], gen=batch["gen"]
        )).log_softmax(-1).clamp(min=MISMATCH_LOG_FLOOR)  # fmt: skip
        mismatch = model.mismatch_rating(log_probs)
        assert mismatch.abs().max() > 1e-3
        ridge_only = model.ridge_rating(batch["features"]) + mismatch
        torch.testing.assert_close(module(batch), ridge_only)
    nli = prepare_task("nli", str(base_checkpoint), tmp_path / "cache", data_root)
    classifier, _, _ = fit(
        nli, np.arange(len(nli.records)), settings, 0, checkpoint=str(base_checkpoint)
    )
    assert classifier.model.ridge_rating is None  # class logits are not mixed with a ridge fit


@pytest.mark.parametrize("task", ["summarization", "nli"])
def test_evaluate_end_to_end(
    tmp_path: Path, base_checkpoint: Path, data_root: Path, task: str
) -> None:
    prepared = prepare_task(task, str(base_checkpoint), tmp_path / "cache", data_root)
    result = evaluate_task(
        prepared, [0, 1], SETTINGS, str(base_checkpoint), tmp_path / "ckpts", log=lambda _: None
    )
    criteria = [c.key for c in get_task(task).criteria]
    assert list(result["criteria"]) == criteria
    for row in result["criteria"].values():
        assert {"kendall", "kendall_std", "spearman", "rmse"} <= set(row["ours"])
        assert -1 <= row["ours"]["kendall"] <= 1 and row["ours"]["rmse"] >= 0
        assert {"bleu", "chrf", "rougeL_f"} == set(row["baselines"])
        assert set(row["ablations"]) == {"no_pretraining", "no_metrics", "all_layers"}
    if task == "nli":
        assert 0 <= result["summary"]["accuracy"] <= 1
    checkpoint = load(tmp_path / "ckpts" / f"mismatch-{task}")
    assert checkpoint.model.config.num_ratings == len(criteria)
    assert checkpoint.tasks[task]["kind"] == get_task(task).kind


def test_a_seeds_tau_is_the_fitted_models_on_its_test_records(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    """A seed's "ours" τ is Kendall's τ-b between what the model fitted on the seed's train
    part rates and the human ratings of its test part, record by record (the end-to-end
    tests check only its range)."""
    from scipy.stats import kendalltau

    prepared = prepare_task("summarization", str(base_checkpoint), tmp_path / "cache", data_root)
    result = run_seed(
        prepared, 0, SETTINGS, str(base_checkpoint), log=lambda _: None, ablations=False
    )
    train, test = seed_split(prepared, 0)
    module, _, _ = fit(prepared, train, SETTINGS, 0, checkpoint=str(base_checkpoint))
    scores, targets = model_scores(module, prepared, test), prepared.inputs.targets[test]
    for column, row in result["variants"]["ours"].items():
        present = ~np.isnan(targets[:, column])
        tau = kendalltau(scores[present, column], targets[present, column]).statistic
        assert np.ptp(scores[present, column]) > 0 and row["kendall"] == pytest.approx(tau)


def test_cli_writes_results_and_a_checkpoint_only_when_asked(
    tmp_path: Path, base_checkpoint: Path, data_root: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative default such as checkpoints/ would land here
    config = tmp_path / "configs"
    config.mkdir()
    (config / "summarization.yaml").write_text(
        "data: {batch_size: 16, val_fraction: 0.3}\ntrainer: {max_steps: 8, val_check_interval: 4}\nearly_stopping: {patience: 1}\n"
    )
    common = [
        "evaluate", "--task", "summarization", "--checkpoint", str(base_checkpoint), "--seeds", "1",
        "--config-dir", str(config), "--cache-dir", str(tmp_path / "cache"), "--data-root", str(data_root),
    ]  # fmt: skip
    before = {p for p in tmp_path.rglob("*") if "cache" not in p.parts}
    out = tmp_path / "results"
    assert main([*common, "--out", str(out)]) == 0
    result = json.loads((out / "results.json").read_text())
    assert result["task"] == "summarization" and "checkpoint" not in result
    assert set(result["criteria"]["coherence"]) == {"ours", "baselines", "ablations"}
    assert "| summarization |" in (out / "results.md").read_text()
    base = result["base_signature"]
    assert base["sha256"] == checkpoint_sha256(base_checkpoint)
    assert f"Base: `{base['signature']}`." in (out / "results.md").read_text()
    written = {p for p in tmp_path.rglob("*") if "cache" not in p.parts} - before
    assert written == {out, out / "results.json", out / "results.md"}  # no checkpoint anywhere
    assert (
        main([*common, "--out", str(tmp_path / "again"), "--export-dir", str(tmp_path / "ckpts")])
        == 0
    )
    exported = load(tmp_path / "ckpts" / "mismatch-summarization")
    assert exported.tasks["summarization"]["kind"] == "regression"
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["checkpoint"] == str(tmp_path / "ckpts" / "mismatch-summarization")
    assert again["checkpoint_signature"] == signature(exported).to_dict()


def test_finetune_prints_its_result_without_lightning_chatter(
    tmp_path: Path, base_checkpoint: Path, data_root: Path, capfd
) -> None:
    config = tmp_path / "summarization.yaml"
    config.write_text("data: {batch_size: 16}\ntrainer: {max_steps: 2, val_check_interval: 1}\n")
    out = tmp_path / "out"
    assert main([
        "finetune", "--task", "summarization", "--checkpoint", str(base_checkpoint),
        "--cache-dir", str(tmp_path / "cache"), "--data-root", str(data_root),
        "--config", str(config), "--out", str(out),
    ]) == 0  # fmt: skip
    printed = capfd.readouterr()
    assert f"exported to {out}" in printed.out + printed.err
    assert f"signature {signature(load(out))}" in printed.out  # what was written, reproducibly
    for chatter in ("GPU available", "TPU available", "Tip:", "LeafSpec"):
        assert chatter not in printed.out + printed.err
    before = (base_checkpoint / "model.safetensors").read_bytes()
    assert main([
        "finetune", "--task", "summarization", "--checkpoint", str(base_checkpoint),
        "--cache-dir", str(tmp_path / "cache"), "--data-root", str(data_root),
        "--config", str(config), "--out", str(base_checkpoint),
    ]) == 2  # fmt: skip
    assert "is the base checkpoint this run reads" in capfd.readouterr().err
    assert (base_checkpoint / "model.safetensors").read_bytes() == before


def test_finetune_refits_the_checkpoint_evaluate_exports(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    """One task's shipped checkpoint can be refitted alone: both commands fit with the
    config's seed_everything and record it with the other fit settings, so ``mismatch
    finetune`` gives the weights ``mismatch evaluate --export-dir`` ships; ``--seed`` is
    another fit, and recorded as such."""
    config = tmp_path / "configs" / "summarization.yaml"
    config.parent.mkdir()
    config.write_text(
        "seed_everything: 3\ndata: {batch_size: 16, val_fraction: 0.3}\n"
        "trainer: {max_steps: 4, val_check_interval: 2}\n"
    )
    common = [
        "--task", "summarization", "--checkpoint", str(base_checkpoint),
        "--cache-dir", str(tmp_path / "cache"), "--data-root", str(data_root),
    ]  # fmt: skip
    for out, seed in (("one", []), ("other", ["--seed", "5"])):
        args = ["finetune", *common, "--config", str(config), "--out", str(tmp_path / out), *seed]
        assert main(args) == 0
    assert (
        main([
            "evaluate", *common, "--seeds", "1", "--config-dir", str(config.parent),
            "--out", str(tmp_path / "results"), "--export-dir", str(tmp_path / "ckpts"),
        ])
        == 0
    )  # fmt: skip
    alone, other, exported = (
        load(folder)
        for folder in (tmp_path / "one", tmp_path / "other", tmp_path / "ckpts" / "mismatch-summarization")
    )  # fmt: skip
    recorded = [json.loads(c.config["training"]["fit settings"]) for c in (alone, other, exported)]
    assert recorded[0] == recorded[2]
    base = str(signature(load(base_checkpoint)))  # the base by its files, not only its folder
    assert all(c.config["training"]["base signature"] == base for c in (alone, other, exported))
    assert "trained on" not in alone.config["training"]  # every dataset
    assert (recorded[0]["max_steps"], recorded[0]["batch_size"], recorded[0]["seed"]) == (4, 16, 3)
    assert recorded[1] == {**recorded[0], "seed": 5}
    weights = [c.model.state_dict() for c in (alone, other, exported)]
    assert all(torch.equal(weights[0][name], weights[2][name]) for name in weights[2])
    assert not all(torch.equal(weights[0][name], weights[1][name]) for name in weights[1])


def every_task_root(root: Path) -> Path:
    """A few rated records in every file of every task; seed 0 holds out groups 7 and 14."""
    rng = np.random.default_rng(2)
    for task in TASKS.values():
        for spec in task.datasets:
            rows = []
            for group in range(20):
                refs = [sentence(rng), sentence(rng)]
                for system in range(2):
                    gen = refs[0] if system == 0 else sentence(rng)
                    if task.kind == "classification":
                        other = ("contradiction", "neutral")[group % 2]  # every class in a part
                        label = ("entailment", other)[system]
                        scores = {c.source: float(c.source == label) for c in spec.criteria}
                    else:
                        scores = {
                            c.source: float(rng.uniform(c.low, c.high)) for c in spec.criteria
                        }
                    rows.append({
                        "id": f"{spec.file}:{group}:{system}", "ref": refs, "gen": gen, "src": None,
                        "group": f"g:{group}", "scores": scores, "meta": {"n_ratings": 3},
                        "dataset": Path(spec.file).name.split(".")[0].replace("_", "-"),
                    })  # fmt: skip
            write_jsonl_gz(root / spec.file, rows)
    return root


def test_evaluate_all_tasks_writes_every_task_and_exports_nothing(
    tmp_path: Path, base_checkpoint: Path, monkeypatch
) -> None:
    """`--task all`: each task's results as it finishes, then one table of every task; no
    checkpoint without --export-dir (a relative default would land in this folder)."""
    monkeypatch.chdir(tmp_path)
    data_root = every_task_root(tmp_path / "human")
    config = tmp_path / "configs"
    config.mkdir()
    for task in TASKS:
        (config / f"{task}.yaml").write_text(
            "data: {batch_size: 8, val_fraction: 0.3}\ntrainer: {max_steps: 2, val_check_interval: 2}\n"
        )
    before = set(tmp_path.rglob("*"))
    out = tmp_path / "results"
    assert main([
        "evaluate", "--task", "all", "--checkpoint", str(base_checkpoint), "--seeds", "1",
        "--config-dir", str(config), "--cache-dir", str(tmp_path / "cache"),
        "--data-root", str(data_root), "--out", str(out),
    ]) == 0  # fmt: skip
    combined = json.loads((out / "results.json").read_text())["tasks"]
    assert list(combined) == list(TASKS)
    summary_rows = (out / "results.md").read_text().split("\n### ")[0]
    for name, task in TASKS.items():
        result = combined[name]
        assert result["task"] == name and result["seeds"] == [0] and "checkpoint" not in result
        assert list(result["criteria"]) == [c.key for c in task.criteria]
        assert json.loads((out / name / "results.json").read_text()) == result
        assert f"| {name} |" in summary_rows
        assert f"### {name}" in (out / "results.md").read_text()
        # one row per dataset, one per transfer (fitted on one dataset, tested on another)
        assert len(result["datasets"]) == len(task.datasets)
        transfers = [(row["train"], row["test"]) for row in result["transfer"]]
        assert transfers == list(TRANSFERS.get(name, ()))
    assert "## Transfer" in (out / "results.md").read_text()
    written = {
        p for p in set(tmp_path.rglob("*")) - before if "cache" not in p.relative_to(tmp_path).parts
    }
    expected = {out, out / "results.json", out / "results.md"}
    for name in TASKS:
        expected |= {out / name, out / name / "results.json", out / name / "results.md"}
    assert written == expected  # no checkpoint anywhere


def own_ratings(path: Path, items: int = 36, datasets: tuple[str, ...] = ()) -> Path:
    """A user's rated outputs: no ids or groups, two criteria on their own scales, one of them
    missing from some records; with ``datasets``, the items dealt out among them."""
    rng = np.random.default_rng(3)
    rows = []
    for item in range(items):
        ref = sentence(rng)
        for system in range(3):
            gen = ref if system == 0 else sentence(rng)
            scores = {"overall": 5.0 if system == 0 else float(rng.integers(1, 5))}
            if item % 3:
                scores["adequacy"] = 100.0 if system == 0 else float(rng.integers(0, 90))
            named = {"dataset": datasets[item % len(datasets)]} if datasets else {}
            rows.append({"ref": ref, "gen": gen, "scores": scores, **named})
    write_jsonl_gz(path, rows)
    return path


SMALL_FIT = (
    "data: {batch_size: 16, val_fraction: 0.3}\ntrainer: {max_steps: 8, val_check_interval: 4}\n"
)


def test_your_own_ratings_fit_a_checkpoint_that_rates_on_their_scales(
    tmp_path: Path, base_checkpoint: Path, capfd
) -> None:
    ratings = own_ratings(tmp_path / "my_ratings.jsonl.gz")
    config = tmp_path / "fit.yaml"
    config.write_text(SMALL_FIT)
    out = tmp_path / "mismatch-mine"
    assert main([
        "finetune", "--ratings", str(ratings), "--scale", "overall=1:5", "--checkpoint",
        str(base_checkpoint), "--cache-dir", str(tmp_path / "cache"), "--config", str(config),
        "--out", str(out),
    ]) == 0  # fmt: skip
    printed = capfd.readouterr().out
    assert f"my_ratings: {ratings}, 108 records of 36 items, criteria overall 1-5, adequacy 0-100" in printed
    assert "my_ratings: val loss" in printed and f"signature {signature(load(out))}" in printed
    checkpoint = load(out)
    assert checkpoint.tasks == {
        "my_ratings": {
            "kind": "regression",
            "criteria": [
                {"key": "overall", "low": 1.0, "high": 5.0},
                {"key": "adequacy", "low": 0.0, "high": 100.0},
            ],
        }
    }
    card = (out / "README.md").read_text()
    assert "overall 1 to 5, adequacy 0 to 100" in card
    # the file by its name and hash, not a path on this machine
    digest = hashlib.sha256(ratings.read_bytes()).hexdigest()[:12]
    assert (
        f"- datasets: my_ratings.jsonl.gz (sha256 {digest})" in card and str(tmp_path) not in card
    )
    evaluator = Evaluator.from_pretrained(out)
    (result,) = evaluator.predict(["the dog sat on the mat"], ["a cat sat on the mat"])
    assert set(result.ratings) == {"overall", "adequacy"}
    assert 1 <= result.ratings["overall"] <= 5 and 0 <= result.ratings["adequacy"] <= 100


def test_your_own_ratings_are_evaluated_against_single_metrics(
    tmp_path: Path, base_checkpoint: Path, capfd
) -> None:
    ratings = own_ratings(tmp_path / "mine.jsonl.gz")
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_FIT)
    out = tmp_path / "results"
    assert main([
        "evaluate", "--ratings", str(ratings), "--name", "my_task", "--checkpoint",
        str(base_checkpoint), "--seeds", "1", "--config", str(config), "--cache-dir",
        str(tmp_path / "cache"), "--out", str(out), "--export-dir", str(tmp_path / "ckpts"),
    ]) == 0  # fmt: skip
    assert "my_task: " in capfd.readouterr().out  # its criteria and scales, before the fits
    result = json.loads((out / "results.json").read_text())
    assert result["task"] == "my_task" and result["transfer"] == []
    assert result["datasets"] == {}  # no record names one: the task's row is the file's
    assert list(result["criteria"]) == ["overall", "adequacy"]
    assert set(result["criteria"]["overall"]["baselines"]) == set(FEATURES)
    report = (out / "results.md").read_text()
    assert "| my_task |" in report and "## Per dataset" not in report
    assert "± 0.000" not in report  # one seed: no spread to print
    assert load(tmp_path / "ckpts" / "mismatch-my_task").tasks["my_task"]["criteria"][1] == {
        "key": "adequacy",
        "low": 0.0,
        "high": 100.0,
    }


def test_your_own_ratings_of_several_datasets_are_measured_per_dataset_and_across(
    tmp_path: Path, base_checkpoint: Path, capfd
) -> None:
    """Records that name their dataset get a row each and transfer rows (fitted on one
    dataset, tested on another), as the shipped tasks with two datasets do; a dataset of fewer
    than 20 items gets its row but no transfer (its fit or test part would be nearly empty).
    --no-ablations fits ours alone per seed (their columns read —)."""
    ratings = own_ratings(tmp_path / "mine.jsonl.gz", items=60, datasets=("news", "blogs", "news", "blogs", "forum"))
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_FIT)
    out = tmp_path / "results"
    assert main([
        "evaluate", "--ratings", str(ratings), "--checkpoint", str(base_checkpoint), "--seeds",
        "1", "--config", str(config), "--cache-dir", str(tmp_path / "cache"), "--out", str(out),
        "--no-ablations",
    ]) == 0  # fmt: skip
    result = json.loads((out / "results.json").read_text())
    assert set(result["datasets"]) == {"news", "blogs", "forum"}  # forum: 12 items
    assert [(row["train"], row["test"]) for row in result["transfer"]] == [
        ("blogs", "news"),
        ("news", "blogs"),
    ]
    report = (out / "results.md").read_text()
    assert "## Transfer" in report
    assert result["summary"]["ablations"] == {} and result["criteria"]["overall"]["ablations"] == {}
    assert "| mine | " in report and "| — | — |" in report  # no_pretraining, no_metrics
    printed = capfd.readouterr().out
    assert "mine seed 0 ours:" in printed and "no_pretraining" not in printed


def test_a_small_file_holds_out_two_different_ratings_of_each_criterion(monkeypatch) -> None:
    """A fifth of a user's 20 items can round to none or one (about 7 seeds in 100; τ read 0,
    RMSE NaN), and a criterion rated on some items only can miss the test part: the split
    holds out the next items by its hash that bring a rating the test part lacks, while the
    train part can still rank every criterion, and a file that cannot give both is named
    before any fit."""
    import evaluator.finetune.evaluate as evaluate
    from mismatch_core.errors import DataError
    from mismatch_core.groups import group_position

    records = [SimpleNamespace(id=f"r{i}", group=f"g{i}") for i in range(20)]
    targets = np.tile(np.linspace(0.0, 1.0, 20, dtype=np.float32)[:, None], (1, 2))
    criteria = (SimpleNamespace(key="fluency"), SimpleNamespace(key="semantics"))
    prepared = SimpleNamespace(
        records=records,
        task=SimpleNamespace(name="mine", criteria=criteria),
        inputs=SimpleNamespace(targets=targets),
    )
    rows = np.arange(20)
    monkeypatch.setattr(evaluate, "split_rows", lambda r, rows, seed, f: (rows, rows[:0]))
    train, test = evaluate.seed_split(prepared, 2)  # none held out by the fraction
    lowest = sorted((group_position(2, f"g{i}"), i) for i in range(20))[:2]
    assert test.tolist() == sorted(i for _, i in lowest)
    assert sorted([*train, *test]) == rows.tolist() and not set(train) & set(test)
    # semantics rated on the first 15 items only, the last 5 held out: two more items
    monkeypatch.setattr(evaluate, "split_rows", lambda r, rows, seed, f: (rows[:15], rows[15:]))
    targets[15:, 1] = np.nan
    train, test = evaluate.seed_split(prepared, 0)
    added = sorted((group_position(0, f"g{i}"), i) for i in range(15))[:2]
    assert test.tolist() == sorted([*range(15, 20), *(i for _, i in added)])
    assert len(train) == 13 and not set(train) & set(test)
    evaluate.check_test_parts(prepared, [0, 1, 2])  # two test ratings each: no refusal
    targets[15:, 1] = [0.1, 0.2, 0.3, 0.4, 0.5]  # rankable already: the split is the hash's
    assert evaluate.seed_split(prepared, 0)[1].tolist() == list(range(15, 20))
    targets[15:, 1] = 0.5  # five equal ratings: τ read 0 as well
    by_hash = [i for _, i in sorted((group_position(0, f"g{i}"), i) for i in range(15))]
    targets[by_hash[0], 1] = 0.5  # the first item by hash brings no new rating: it stays
    assert evaluate.seed_split(prepared, 0)[1].tolist() == sorted([*range(15, 20), by_hash[1]])
    targets[:15, 1] = 0.5
    targets[by_hash[0], 1] = 0.9  # the train part's only other rating: moving it would leave
    assert evaluate.seed_split(prepared, 0)[1].tolist() == list(range(15, 20))  # train constant
    monkeypatch.setattr(evaluate, "run_seed", lambda *args: pytest.fail("fitted before the check"))
    refused = "the test part of seed 0 holds 5 rating(s) of 'semantics' and no two that differ"
    with pytest.raises(DataError, match=re.escape(refused)):
        evaluate.evaluate_task(prepared, [0, 1, 2], SETTINGS, "unused", log=print)
    targets[15:, 1] = [0.1, 0.2, 0.3, 0.4, 0.5]
    targets[:15, 1] = 0.5  # the fit would learn a constant
    refused = "the train part of seed 0 holds 15 rating(s) of 'semantics' and no two that differ"
    with pytest.raises(DataError, match=re.escape(refused)):
        evaluate.evaluate_task(prepared, [0, 1, 2], SETTINGS, "unused", log=print)


def test_a_transfer_seed_with_nothing_to_fit_or_test_is_skipped_not_raised(monkeypatch) -> None:
    """A user's datasets may share items: a seed can leave a transfer no test record, and the
    ValueError lost every fit of the run before it."""
    import evaluator.finetune.transfer as transfer

    records = [SimpleNamespace(dataset=d, group=f"g{i}") for d in "ab" for i in range(20)]
    task = SimpleNamespace(name="mine", criteria=(), datasets=(SimpleNamespace(sha256="f00"),))
    prepared = SimpleNamespace(records=records, task=task, train_datasets=())

    def no_records(prepared, train, test, seed):
        raise ValueError(f"transfer {train} -> {test} (seed {seed}) has 0 test records")

    monkeypatch.setattr(transfer, "transfer_split", no_records)
    monkeypatch.setattr(transfer, "fit", lambda *args, **kwargs: pytest.fail("fitted"))
    said: list[str] = []
    assert transfer.evaluate_transfers(prepared, [0, 1], SETTINGS, "unused", log=said.append) == []
    assert said[0] == "mine seed 0 skipped: transfer a -> b (seed 0) has 0 test records"
    assert len(said) == 4  # two transfers, two seeds each
    # every train record rated alike: transfer_scores raised after the fit, a traceback
    targets = np.array([[1.0] if r.dataset == "a" else [i / 20] for i, r in enumerate(records)])
    prepared.inputs = SimpleNamespace(targets=targets)
    halves = (np.arange(20), np.arange(20, 40))
    monkeypatch.setattr(transfer, "transfer_split", lambda *args: halves)
    said.clear()
    assert transfer.evaluate_transfers(prepared, [0], SETTINGS, "unused", log=said.append) == []
    assert said[0] == (
        "mine transfer a -> b seed 0 skipped: no criterion with two different ratings on both sides"
    )
    targets[:20, 0], targets[20:, 0] = np.linspace(0, 1, 20), 0.5  # now the test side alike
    said.clear()
    assert transfer.evaluate_transfers(prepared, [0], SETTINGS, "unused", log=said.append) == []
    assert said[0].startswith("mine transfer a -> b seed 0 skipped: no criterion")


def test_an_edited_ratings_file_computes_only_the_pairs_it_changed(
    tmp_path: Path, base_checkpoint: Path, monkeypatch
) -> None:
    """The feature cache is keyed by each pair's texts: a corrected rating computes nothing
    again, an appended output only its own pair, and a pair rated twice is computed once."""
    from evaluator.features import cache

    computed: list[tuple[str, str]] = []
    compute = cache.compute_features

    def counted(refs, gens, names, **kwargs):
        if names:  # not the alignment pass, which fills no feature column
            firsts = [ref[0] if isinstance(ref, list) else ref for ref in refs]
            computed.extend(zip(firsts, gens, strict=True))
        return compute(refs, gens, names, **kwargs)

    monkeypatch.setattr(cache, "compute_features", counted)
    path = own_ratings(tmp_path / "mine.jsonl.gz")
    rows = [json.loads(line) for line in gzip.open(path)]
    before = prepare_task(read_ratings(path).task, str(base_checkpoint), tmp_path / "cache")
    assert len(computed) == len(set(computed)) == len(rows)

    computed.clear()
    rows[1]["scores"]["overall"] = 1.0  # a corrected rating
    second_rater = {**rows[2], "scores": {"overall": 2.0}}  # the same pair rated again
    new_output = {"ref": rows[0]["ref"], "gen": "A new system's output.", "scores": {"overall": 3.0}}
    write_jsonl_gz(path, [*rows, second_rater, new_output])
    after = prepare_task(read_ratings(path).task, str(base_checkpoint), tmp_path / "cache")
    assert computed == [(rows[0]["ref"], "A new system's output.")]
    kept = len(rows)
    pd.testing.assert_frame_equal(after.inputs.features.iloc[:kept], before.inputs.features)
    pd.testing.assert_frame_equal(
        after.inputs.features.iloc[[kept]].reset_index(drop=True),
        before.inputs.features.iloc[[2]].reset_index(drop=True),
    )
    overall = [c.key for c in after.task.criteria].index("overall")
    assert after.inputs.targets[1, overall] == 0.0  # read from the edited file, on 1-5


def test_early_stopping_holds_out_an_item_where_a_tenth_of_few_rounds_to_none(
    tmp_path: Path, base_checkpoint: Path
) -> None:
    from evaluator.finetune.datamodule import VAL_SEED_OFFSET

    ratings = read_ratings(own_ratings(tmp_path / "mine.jsonl.gz")).task
    prepared = prepare_task(ratings, str(base_checkpoint), tmp_path / "cache")
    groups = sorted({r.group for r in prepared.records})[:16]
    rows = np.array([i for i, r in enumerate(prepared.records) if r.group in groups])
    subset = [prepared.records[i] for i in rows]
    seed = next(s for s in range(100) if not split_by_group(subset, VAL_SEED_OFFSET + s, 0.1)[1])
    data = RatingDataModule.for_rows(prepared, rows, seed, 0.1, 8)
    data.setup()  # "more groups are needed" before
    held = {prepared.records[i].group for i in data.split["val"]}
    assert len(held) == 1 and not held & {prepared.records[i].group for i in data.split["train"]}


def test_your_own_ratings_with_bad_options_are_refused_before_a_fit(
    tmp_path: Path, base_checkpoint: Path, capsys
) -> None:
    ratings = own_ratings(tmp_path / "mine.jsonl.gz")
    common = ["--checkpoint", str(base_checkpoint), "--out", str(tmp_path / "out")]
    refused = {
        ("--ratings", str(ratings), "--scale", "overall=5:1"): "--scale 'overall=5:1': LOW must be below HIGH",
        ("--ratings", str(ratings), "--scale", "overall"): "give CRITERION=LOW:HIGH",
        ("--ratings", str(ratings), "--scale", "overall=1:inf"): "with two finite numbers",
        ("--ratings", str(ratings), "--scale", "overall=1:5", "--scale", "overall=0:5"): "gives 'overall' a second time",
        ("--ratings", str(ratings), "--scale", "fluency=1:5"): "no record scores 'fluency' (criteria: overall, adequacy)",
        ("--ratings", str(ratings), "--data-root", str(tmp_path)): "--data-root names the shipped tasks' data",
        ("--ratings", str(tmp_path / "absent.jsonl")): "absent.jsonl: no such file",
        ("--task", "summarization", "--scale", "overall=1:5"): "--scale and --name describe --ratings",
        # found when the features of every record had been computed
        ("--ratings", str(ratings), "--config", "configs/finetune/ratings_source.yaml"): "has no src; ratings that read the source (data.source_features)",
    }  # fmt: skip
    for options, message in refused.items():
        assert main(["finetune", *options, *common]) == 2, options
        assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    source = ["--ratings", str(ratings), "--config", "configs/finetune/ratings_source.yaml"]
    assert main(["evaluate", *source, *common]) == 2
    assert "has no src; ratings that read the source (data.source_features)" in (
        capsys.readouterr().err
    )
    alike = tmp_path / "alike.jsonl"  # found when the features of every record had been computed
    alike.write_text("".join(
        json.dumps({"ref": f"Item {i}.", "gen": f"Output {i}.", "scores": {"overall": 3}}) + "\n"
        for i in range(24)
    ))  # fmt: skip
    scale = ["--ratings", str(alike), "--scale", "overall=1:5", "--cache-dir", str(tmp_path / "c")]
    assert main(["evaluate", *scale, *common]) == 2
    named = "alike.jsonl: criterion 'overall': all its 24 ratings are 3, so agreement with it"
    assert named in capsys.readouterr().err
    assert main(["evaluate", *scale[:2], *scale[4:], *common]) == 2  # it said: give its scale
    assert named in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    assert main(["finetune", "--ratings", str(ratings), "--name", "base", *common]) == 2
    assert "task name 'base' is a shipped checkpoint's" in capsys.readouterr().err
    results = ["--out", str(tmp_path / "results"), "--checkpoint", str(base_checkpoint)]
    assert main(["evaluate", "--task", "nli", "--config", "my.yaml", *results]) == 2
    assert "--config names the recipe of --ratings; --config-dir the tasks'" in (
        capsys.readouterr().err
    )
    both = ["--ratings", str(ratings), "--config", "my.yaml", "--config-dir", "/nonexistent"]
    assert main(["evaluate", *both, *results]) == 2  # --config-dir was read by nothing
    assert "--config names the recipe itself; leave out --config-dir" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # one of the two, not both
        main(["finetune", "--task", "summarization", "--ratings", str(ratings), *common])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_shipped_recipes_are_found_from_any_folder(tmp_path: Path, monkeypatch) -> None:
    """As checkpoints/mismatch-base is: finetune and evaluate read configs/finetune/ outside
    the repository too."""
    monkeypatch.chdir(tmp_path)
    ratings = read_ratings(own_ratings(tmp_path / "mine.jsonl.gz")).task
    for task, name in (("summarization", "summarization.yaml"), (ratings, "ratings.yaml")):
        found = Path(config_file(task, None))
        assert found.is_file() and found.name == name and found.parent.name == "finetune"
    assert config_file("nli", "my.yaml") == "my.yaml"  # none there or in the repository: as given
    given = Path(config_file(ratings, "configs/finetune/ratings_source.yaml"))
    assert given.is_file() and given.is_absolute()  # the repository's, from this folder
    mine = tmp_path / "configs" / "finetune" / "ratings_source.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text(SMALL_FIT)  # a file of that name in the working folder is the one read
    assert config_file(ratings, "configs/finetune/ratings_source.yaml") == str(mine.relative_to(tmp_path))


def test_bad_input_gives_clear_errors(tmp_path: Path, base_checkpoint: Path, capsys) -> None:
    def main(argv: list[str]) -> int:
        if argv[0] == "finetune":  # never the shipped checkpoints/mismatch-<task>
            argv = [*argv, "--out", str(tmp_path / "finetuned")]
        return cli_main(argv)

    assert main(["evaluate", "--task", "poetry", "--checkpoint", str(base_checkpoint),
                 "--out", str(tmp_path / "results")]) == 2  # fmt: skip
    assert "unknown task(s) poetry" in capsys.readouterr().err
    assert main(["finetune", "--task", "summarization", "--checkpoint", str(tmp_path / "nope"),
                 "--config", "configs/finetune/summarization.yaml"]) == 2  # fmt: skip
    error = capsys.readouterr().err
    assert "does not exist" in error
    assert "summarization.yaml" not in error  # --checkpoint, not the config, named it
    assert (
        main(["finetune", "--task", "summarization", "--config", str(tmp_path / "none.yaml")]) == 2
    )
    assert "none.yaml does not exist" in capsys.readouterr().err
    assert main(["finetune", "--task", "summarization", "--config", str(tmp_path)]) == 2
    assert f"{tmp_path} is a directory; name a YAML file" in capsys.readouterr().err
    for option in ("--checkpoint", "--cache-dir", "--data-root", "--config"):
        # an empty value is a mistake, not a request for the config's value
        assert main(["finetune", "--task", "summarization", option, ""]) == 2
        assert f"{option} is empty; give a path" in capsys.readouterr().err
    assert main(["evaluate", "--task", "dialogue", "--out", " "]) == 2
    assert "--out is empty; give a path" in capsys.readouterr().err
    # without --checkpoint the config's data.checkpoint is the base
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(yaml.safe_dump({"data": {"checkpoint": str(tmp_path / "old-base")}}))
    assert main(["finetune", "--task", "summarization", "--config", str(elsewhere)]) == 2
    assert f"elsewhere.yaml: data.checkpoint: checkpoint directory {tmp_path / 'old-base'}" in (
        capsys.readouterr().err
    )
    half = tmp_path / "half.yaml"
    half.write_text(yaml.safe_dump({"data": {"contrast_size": 100}}))
    assert main(["finetune", "--task", "summarization", "--config", str(half)]) == 2
    assert "half.yaml: contrast copies need model.contrast_weight" in capsys.readouterr().err
    for data, message in (
        (
            {"contrast_class_weights": {"Typo": 2}},
            "unknown error class 'Typo' in contrast class weights",
        ),
        (
            {"contrast_class_weights": {"GramErr": 0}},
            "contrast class weight of GramErr must be above 0",
        ),
        ({"contrast_class_weights": ["GramErr"]}, 'Parser key "data.contrast_class_weights"'),
        ({"batch": 16}, "Group 'data' does not accept option 'batch'"),
        ({"contrast_depth": 0}, "data.contrast_depth must be at least 1"),
        ({"batch_size": 0}, "data.batch_size must be a finite number above 0"),
        ({"val_fraction": 2.0}, "data.val_fraction must be between 0 and 1"),
        ({"checkpoint": " "}, "data.checkpoint must name a base checkpoint"),
        (
            {"source_features": ["rouge1_p", "nope"]},
            "data.source_features: unknown feature(s) 'nope'",
        ),
        ({"source_features": ["bertscore_p"]}, "data.source_features: bertscore read the encoder"),
        ({"train_datasets": ["nope"]}, "data.train_datasets names 'nope', not a dataset of"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(yaml.safe_dump({"data": data}))
        assert main(["finetune", "--task", "summarization", "--config", str(bad)]) == 2
        assert f"bad.yaml: {message}" in capsys.readouterr().err
    for config, message in (
        ({"trainer": 7}, "key 'trainer' must be a mapping of its settings, got 7"),
        ({"data": 5}, "key 'data' must be a mapping of its settings, got 5 (leave the key out"),
        ({"data": None}, "key 'data' must be a mapping of its settings, got nothing"),
        (["data"], "the file must be a YAML mapping of keys to values, got ['data']"),
        ({"trainer": {"max_steps": None}}, "trainer.max_steps must be a whole number of steps"),
        ({"data": {"task": "nli"}}, "data.task is 'nli', not 'summarization'"),
        ({"seed_everything": True}, "seed_everything must be a whole number, got True"),
        ({"model": {"lr": float("inf")}}, "model.lr must be a finite number above 0, got inf"),
        (
            {"trainer": {"max_steps": 2, "val_check_interval": 50}},
            "trainer.val_check_interval 50 is above trainer.max_steps 2",
        ),
        (
            {"model": {"single_metric_anchor": True, "rating_mix": False}},
            "model.single_metric_anchor chooses an anchor of the rating mix",
        ),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(yaml.safe_dump(config))
        assert main(["finetune", "--task", "summarization", "--config", str(bad)]) == 2
        assert f"bad.yaml: {message}" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("data: {batch_size: 16\n")
    assert main(["finetune", "--task", "summarization", "--config", str(broken)]) == 2
    assert "broken.yaml: Problems parsing config" in capsys.readouterr().err
    assert main(["finetune", "--task", "poetry"]) == 2
    assert "unknown task 'poetry'; known: summarization" in capsys.readouterr().err
    assert not (tmp_path / "finetuned").exists()
    # outputs that cannot be written are refused before the fit, not after it
    notes = tmp_path / "exports" / "mismatch-summarization"  # not a checkpoint: another file
    notes.mkdir(parents=True)
    (notes / "mine.txt").write_text("mine")
    (tmp_path / "file").write_text("x")
    fit_args = ["--task", "summarization", "--checkpoint", str(base_checkpoint)]
    new_out = ["--out", str(tmp_path / "new")]
    half = tmp_path / "half"  # dialogue's files (empty), none of summarization's
    for spec in TASKS["dialogue"].datasets:
        (half / spec.file).parent.mkdir(parents=True, exist_ok=True)
        (half / spec.file).touch()
    two_tasks = ["--task", "dialogue", *fit_args, "--data-root", str(half)]
    exports = tmp_path / "exported"  # a fit exported before, read as a base now
    shutil.copytree(base_checkpoint, exports / "mismatch-summarization")
    for argv, message in (
        (
            ["evaluate", *two_tasks, *new_out],  # found before dialogue's fits, not after
            f"{half / 'summarization'}/summeval.jsonl.gz: no such file (task summarization)",
        ),
        (["finetune", *fit_args, "--out", str(notes)], "is not a checkpoint directory"),
        (["finetune", *fit_args, *new_out, "--cache-dir", str(tmp_path / "file")],
         f"--cache-dir: {tmp_path / 'file'} exists and is not a dir"),
        (["finetune", *fit_args, "--out", str(tmp_path / "file")], "--out: "),
        (["evaluate", *fit_args, "--out", str(tmp_path / "file")],
         f"--out: {tmp_path / 'file'} exists and is not a directory"),
        (["evaluate", *fit_args, *new_out, "--cache-dir", str(tmp_path / "file")],
         f"--cache-dir of summarization: {tmp_path / 'file'} exists and is not a directory"),
        (["finetune", *fit_args, *new_out, "--seed", "-5"], "--seed: seed_everything must be in"),
        (
            ["evaluate", *fit_args, *new_out, "--export-dir", str(tmp_path / "exports")],
            "mismatch-summarization exists and is not a checkpoint directory",
        ),
        (
            ["evaluate", *fit_args, "--out", str(base_checkpoint)],
            f"--out {base_checkpoint} is a checkpoint folder; write the results elsewhere",
        ),
        (  # replaced the base it read with the fit, exit 0
            ["evaluate", "--task", "summarization", "--checkpoint", str(exports / "mismatch-summarization")]
            + [*new_out, "--export-dir", str(exports)],
            "mismatch-summarization is the base checkpoint this run reads; name another",
        ),
        (  # the results went into the exported checkpoint, which the next export refused
            ["evaluate", *fit_args, "--out", str(exports / "mismatch-summarization" / "results")]
            + ["--export-dir", str(exports)],
            "/results is inside " + str(exports / "mismatch-summarization"),
        ),
        (  # the export, after every fit, refused the folder its cache had made
            ["evaluate", *fit_args, *new_out, "--export-dir", str(exports)]
            + ["--cache-dir", str(exports / "mismatch-summarization" / "cache")],
            "--cache-dir " + str(exports / "mismatch-summarization" / "cache") + " is inside",
        ),
        (
            ["finetune", *fit_args, *new_out, "--cache-dir", str(tmp_path / "new" / "cache")],
            f"--cache-dir: {tmp_path / 'new' / 'cache'} is inside --out {tmp_path / 'new'}",
        ),
    ):
        assert cli_main(argv) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "new").exists() and (notes / "mine.txt").read_text() == "mine"


def test_finetune_needs_an_output_folder(tmp_path: Path, capsys) -> None:
    """Writing a checkpoint is an explicit choice: no default that replaces the shipped one.
    (The missing config makes a regression fail at once instead of fitting and exporting.)"""
    with pytest.raises(SystemExit) as exit_:
        cli_main(["finetune", "--task", "summarization", "--config", str(tmp_path / "none.yaml")])
    assert exit_.value.code == 2
    assert "the following arguments are required: --out" in capsys.readouterr().err


@pytest.fixture
def cache_devices(monkeypatch) -> list[str]:
    """The device of every cache fill prepare_task makes (each then runs on the CPU)."""
    import evaluator.finetune.data as data_module

    seen: list[str] = []
    real = data_module.update_feature_cache

    def spy(*args, device: str, **kwargs):
        seen.append(device)
        return real(*args, **kwargs)

    monkeypatch.setattr(data_module, "update_feature_cache", spy)
    return seen


def test_finetune_and_evaluate_encode_what_the_cache_lacks_on_the_device_given(
    tmp_path: Path, base_checkpoint: Path, monkeypatch, capsys, cache_devices: list[str]
) -> None:
    """--device reaches the encoder pass of every cache prepare_task fills; a device this
    machine lacks is refused before any model is read or feature computed."""
    import evaluator.finetune.evaluate as evaluate_module

    ratings = own_ratings(tmp_path / "mine.jsonl.gz")
    common = ["--ratings", str(ratings), "--checkpoint", str(base_checkpoint)]
    if not torch.cuda.is_available():
        for command, out in (("finetune", "ckpt"), ("evaluate", "results")):
            assert main([command, *common, "--device", "cuda", "--out", str(tmp_path / out)]) == 2
            assert "--device: device cuda requested but no CUDA GPU is available" in (
                capsys.readouterr().err
            )
    assert main(["evaluate", *common, "--device", "tpu", "--out", str(tmp_path / "results")]) == 2
    assert "--device: unknown device 'tpu'; use cpu or cuda" in capsys.readouterr().err
    assert not (tmp_path / "ckpt").exists() and not (tmp_path / "results").exists()
    assert cache_devices == []
    # a GPU for the command's check; the spy runs the cache on the CPU
    monkeypatch.setattr("evaluator.cli.torch_device", torch.device)
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_FIT)
    assert main([
        "finetune", *common, "--device", "cuda:0", "--config", str(config), "--cache-dir",
        str(tmp_path / "cache"), "--out", str(tmp_path / "ckpt"),
    ]) == 0  # fmt: skip
    assert cache_devices and set(cache_devices) == {"cuda:0"}

    class Prepared(Exception):
        pass

    def stop(*args, **kwargs):
        raise Prepared

    cache_devices.clear()
    monkeypatch.setattr(evaluate_module, "evaluate_task", stop)
    with pytest.raises(Prepared):
        main([
            "evaluate", *common, "--device", "cuda:0", "--config", str(config), "--cache-dir",
            str(tmp_path / "cache"), "--out", str(tmp_path / "results"),
        ])  # fmt: skip
    assert cache_devices and set(cache_devices) == {"cuda:0"}


def test_the_caches_are_filled_on_the_trainers_gpu(
    base_checkpoint: Path, data_root: Path, tmp_path: Path, cache_devices: list[str]
) -> None:
    """scripts/finetune.py on a GPU: what the task's caches lack is encoded on the trainer's
    device, through prepare_task to every cache it fills ("cuda:0" reaches a CPU-only
    cache function here: the spy runs it on the CPU)."""
    data = RatingDataModule(
        "summarization", str(base_checkpoint), cache_dir=str(tmp_path), data_root=str(data_root)
    )
    data.trainer = SimpleNamespace(strategy=SimpleNamespace(root_device=torch.device("cuda", 0)))
    data.setup("fit")
    assert cache_devices and set(cache_devices) == {"cuda:0"}


def test_one_process_fills_the_caches_and_the_others_read_them(
    base_checkpoint: Path, data_root: Path, tmp_path: Path, monkeypatch
) -> None:
    """Multi-device fine-tuning: Lightning runs prepare_data on the first process of a node
    only. It fills the task's caches and keeps what it prepared; another process's setup reads
    those caches and encodes or scores nothing again."""
    import evaluator.features.cache as cache

    settings = {"cache_dir": str(tmp_path), "data_root": str(data_root)}
    first = RatingDataModule("summarization", str(base_checkpoint), **settings)
    first.prepare_data()
    prepared = first.prepared
    first.setup("fit")
    assert first.prepared is prepared

    def refuse(*args, **kwargs):
        raise AssertionError("a cache was filled a second time")

    for name in ("compute_features", "encode_distinct", "encode_texts"):
        monkeypatch.setattr(cache, name, refuse)
    other = RatingDataModule("summarization", str(base_checkpoint), **settings)
    other.setup("fit")
    assert other.split["train"].tolist() == first.split["train"].tolist()
    np.testing.assert_array_equal(other.ready().features, prepared.features)


def test_preparing_a_task_leaves_torchs_random_state_alone(
    base_checkpoint: Path, data_root: Path, tmp_path: Path
) -> None:
    """scripts/finetune.py trains from the same random state with a cold or a warm cache, and
    on every process of a multi-device run: preparing the task loads models, which would draw
    from it."""
    for cache in ("cold", "warm"):  # the first preparation fills the cache, the second reads it
        torch.manual_seed(0)
        before = torch.get_rng_state()
        RatingDataModule(
            "summarization", str(base_checkpoint), cache_dir=str(tmp_path), data_root=str(data_root)
        ).prepare_data()
        assert torch.equal(torch.get_rng_state(), before), cache


def test_lightning_cli_names_a_config_without_settings(tmp_path: Path, capsys) -> None:
    """scripts/finetune.py reads its config as mismatch finetune does: `data: 5` is named, not
    reported as a key missing from the data section."""
    from evaluator.finetune.lightning_cli import main as lightning_main

    config = tmp_path / "bad.yaml"
    for text, problem in (
        ("data: 5\n", "key 'data' must be a mapping of its settings, got 5"),
        ("", "no settings in the file"),
        ("model:\n  lr: 0.1\n  lr: 0.5\n", "key 'lr' is given twice in one mapping (lines 2 and 3)"),
    ):
        config.write_text(text)
        with pytest.raises(SystemExit) as exit_:
            lightning_main(["fit", "--config", str(config)])
        assert exit_.value.code == 2
        assert f"{config}: {problem}" in capsys.readouterr().err
    # inline YAML too, also longer than a file name may be
    for inline in ("{trainer: 7}", "{trainer: 7, data: {task: summarization" + " " * 300 + "}}"):
        with pytest.raises(SystemExit) as exit_:
            lightning_main(["fit", "--config", inline])
        assert exit_.value.code == 2
        assert "--config: key 'trainer' must be a mapping of its settings, got 7" in (
            capsys.readouterr().err
        )
    # a config without a task is named, not "Got value: None"; the ratings recipes say why
    for recipe in ("configs/finetune/ratings.yaml", "configs/finetune/ratings_source.yaml"):
        with pytest.raises(SystemExit) as exit_:
            lightning_main(["fit", "--config", recipe])
        assert exit_.value.code == 2
        assert (
            f"no data.task or data.ratings in {recipe} or on the command line: add --data.task "
            f"TASK or --data.ratings FILE; {recipe} is a recipe for your own ratings file"
        ) in capsys.readouterr().err
    from evaluator.finetune.lightning_cli import task_problem

    mine = tmp_path / "mine.yaml"
    mine.write_text("trainer: {max_steps: 4}\ndata: {batch_size: 8}\n")
    assert task_problem(["fit", "--config", str(mine)]) == (
        f"no data.task or data.ratings in {mine} or on the command line: add --data.task TASK or "
        "--data.ratings FILE"
    )
    task_file = tmp_path / "task.yaml"
    task_file.write_text("data: {task: summarization}\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("data: [unclosed\n")
    for given in (  # what gives a task, or what this cannot read for sure: left to the parser
        ["fit", "--config", recipe, "--data.task", "summarization"],
        ["fit", "--config", recipe, f"--config={task_file}"],
        ["fit", "--config", recipe, "--config", "{data: {task: summarization}}"],
        ["fit", "--config", recipe, "--data", str(task_file)],
        ["--config", str(mine), "fit"],
        ["fit", "--config", recipe, "--print_config"],
        ["fit", "--config", recipe, "--help"],
        ["fit", "--config", str(broken)],
        ["fit", "--config", "{data: {task: summarization" + " " * 300 + "}}"],
    ):
        assert task_problem(given) is None, given
    export = tmp_path / "export"  # the export after the fit refused the folder the cache made
    with pytest.raises(SystemExit) as exit_:
        lightning_main([
            "fit", "--config", "configs/finetune/summarization.yaml", f"--export_dir={export}",
            f"--data.cache_dir={export / 'cache'}",
        ])  # fmt: skip
    assert exit_.value.code == 2
    assert f"data.cache_dir: {export / 'cache'} is inside --export_dir {export}, the checkpoint" in (
        capsys.readouterr().err
    )
    assert not export.exists()


def test_lightning_cli_fits_and_exports(
    tmp_path: Path, base_checkpoint: Path, data_root: Path, capsys
) -> None:
    from evaluator.finetune.lightning_cli import main as lightning_main

    config = yaml.safe_load(Path("configs/finetune/summarization.yaml").read_text())
    config["export_dir"] = str(tmp_path / "export")
    config["data"].update(
        checkpoint=str(base_checkpoint), data_root=str(data_root), cache_dir=str(tmp_path / "cache"),
        batch_size=16, val_fraction=0.3,
    )  # fmt: skip
    config["trainer"].update(
        max_steps=8, val_check_interval=4, default_root_dir=str(tmp_path / "runs")
    )
    path = tmp_path / "summarization.yaml"
    path.write_text(yaml.safe_dump(config))
    lightning_main(["fit", "--config", str(path)])
    checkpoint = load(tmp_path / "export")
    assert f"signature {signature(checkpoint)}" in capsys.readouterr().out
    assert checkpoint.model.config.num_ratings == 4
    assert checkpoint.model.config.source_features == config["data"]["source_features"]
    assert checkpoint.tasks["summarization"]["kind"] == "regression"
    assert (
        "1 to 3 synthetic errors" in checkpoint.config["training"]["contrast copies"]
    )  # from the config


def test_ctrl_c_during_a_fit_ends_as_interrupted_and_leaves_ctrl_c_working(
    tmp_path: Path, base_checkpoint: Path, data_root: Path, monkeypatch, capsys, default_ctrl_c
) -> None:
    """Lightning catches Ctrl-C in a fit and calls sys.exit(1) with SIGINT ignored: the
    command ended with status 1, no message, and Ctrl-C no longer worked in the session."""
    import signal

    from evaluator.cli import run_reporting_errors
    from evaluator.finetune.lightning_cli import main as lightning_main

    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(RatingModule, "training_step", pressed)
    config = tmp_path / "summarization.yaml"
    config.write_text("data: {batch_size: 16}\ntrainer: {max_steps: 2, val_check_interval: 1}\n")
    common = [
        "--checkpoint", str(base_checkpoint), "--cache-dir", str(tmp_path / "cache"),
        "--data-root", str(data_root), "--config", str(config),
    ]  # fmt: skip
    assert main(["finetune", "--task", "summarization", *common, "--out", str(tmp_path / "a")]) == 130
    assert capsys.readouterr().err.endswith("mismatch finetune: interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    options = [
        "fit", "--config", "configs/finetune/summarization.yaml",
        f"--data.checkpoint={base_checkpoint}", f"--data.data_root={data_root}",
        f"--data.cache_dir={tmp_path / 'cache'}", f"--export_dir={tmp_path / 'b'}",
        f"--trainer.default_root_dir={tmp_path / 'runs'}",
    ]  # fmt: skip
    assert run_reporting_errors("finetune.py", lambda: lightning_main(options)) == 130
    assert capsys.readouterr().err.endswith("finetune.py: interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_lightning_cli_fits_your_own_ratings_as_mismatch_finetune_does(
    tmp_path: Path, base_checkpoint: Path, capsys
) -> None:
    """scripts/finetune.py takes a user's ratings file (data.ratings, data.scales as --scale)
    with the ratings recipe, so a fit can run on several devices by configuration; it exports
    the same weights as mismatch finetune --ratings. Scales without a file, or a file's
    settings given to mismatch finetune, are named."""
    from evaluator.finetune.lightning_cli import main as lightning_main

    ratings = own_ratings(tmp_path / "mine.jsonl.gz")
    recipe = yaml.safe_load(Path("configs/finetune/ratings.yaml").read_text())  # made small
    recipe["data"].update(batch_size=16, val_fraction=0.3, contrast_size=40, reference_triples_size=20)
    recipe["trainer"].update(max_steps=8, val_check_interval=4)
    # no data.seed: the script splits by seed_everything, as the command does (it split by 13)
    recipe["seed_everything"] = 5
    del recipe["data"]["seed"]
    config = tmp_path / "small_ratings.yaml"
    config.write_text(yaml.safe_dump(recipe))
    common = ["--data.checkpoint", str(base_checkpoint), "--data.cache_dir", str(tmp_path / "cache")]
    script = [
        "fit", "--config", str(config), "--data.ratings", str(ratings), "--data.task", "my_task",
        "--data.scales", "{overall: [0, 10]}", *common, "--trainer.default_root_dir",
        str(tmp_path / "runs"),
    ]  # fmt: skip
    lightning_main([*script, "--export_dir", str(tmp_path / "lightning")])
    exported = load(tmp_path / "lightning")
    assert exported.tasks == {  # overall on the scale given, adequacy on the file's range
        "my_task": {
            "kind": "regression",
            "criteria": [
                {"key": "overall", "low": 0.0, "high": 10.0},
                {"key": "adequacy", "low": 0.0, "high": 100.0},
            ],
        }
    }
    assert main([
        "finetune", "--ratings", str(ratings), "--name", "my_task", "--scale", "overall=0:10",
        "--checkpoint", str(base_checkpoint), "--cache-dir", str(tmp_path / "cache"),
        "--config", str(config), "--out", str(tmp_path / "command"),
    ]) == 0  # fmt: skip
    command, lightning = (
        load_file(tmp_path / name / "model.safetensors") for name in ("command", "lightning")
    )
    assert command.keys() == lightning.keys()
    for name, weights in command.items():
        torch.testing.assert_close(weights, lightning[name], rtol=0, atol=0)
    # and the same record: the fit settings and the best val_loss (it held neither)
    records = [load(tmp_path / name).config for name in ("command", "lightning")]
    command_record, lightning_record = (record["training"] for record in records)
    assert json.loads(lightning_record["fit settings"]) == json.loads(command_record["fit settings"])
    assert list(records[0]["metrics"]) == ["val_loss"]
    assert records[1]["metrics"] == records[0]["metrics"]
    assert json.loads(command_record["fit settings"])["seed"] == 5
    assert "validation split seed" not in lightning_record  # data.seed split alike
    # a data.seed of its own splits the groups there, and the record says so
    lightning_main([*script, "--data.seed", "7", "--export_dir", str(tmp_path / "split7")])
    assert load(tmp_path / "split7").config["training"]["validation split seed"] == 7
    capsys.readouterr()
    refused = {  # usage errors, before any fit
        ("--data.task", "dialogue", "--data.scales", "{overall: [1, 5]}"):
            "data.scales describes a user's ratings file: give data.ratings FILE too",
        ("--data.task", "dialog"): "data.task: unknown task 'dialog'; known: summarization",
        ("--data.ratings", str(ratings), "--data.data_root", str(tmp_path)):
            "data.data_root names the shipped tasks' data; data.ratings is the data",
        ("--data.ratings", str(ratings), "--data.task", "dialogue"):
            "task name 'dialogue' is a shipped checkpoint's; choose another name",
        ("--data.ratings", str(ratings), "--data.task", "mine", "--export_dir", str(base_checkpoint)):
            "is the base checkpoint this run reads",
        ("--data.ratings", str(ratings), "--data.task", "mine", "--export_dir", str(ratings)):
            f"--export_dir: {ratings} exists and is not a directory",
    }  # fmt: skip
    for options, message in refused.items():
        with pytest.raises(SystemExit) as exit_:
            lightning_main(["fit", "--config", "configs/finetune/ratings.yaml", *options, *common])
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err, options
    recipe["data"]["ratings"] = str(ratings)
    config.write_text(yaml.safe_dump(recipe))
    assert main([
        "finetune", "--ratings", str(ratings), "--checkpoint", str(base_checkpoint),
        "--config", str(config), "--out", str(tmp_path / "refused"),
    ]) == 2  # fmt: skip
    assert "data.ratings: read by scripts/finetune.py; here give --ratings FILE" in (
        capsys.readouterr().err
    )


def test_a_ratings_file_edited_between_the_models_read_and_the_datas_stops_the_fit(
    tmp_path: Path, base_checkpoint: Path
) -> None:
    """The LightningCLI's model and data each read the file (on every process of a
    multi-device run); a file edited in between would give the model heads and scales that do
    not match the targets, so the fit stops before its first step."""
    import lightning as L

    from mismatch_core.errors import DataError

    ratings = own_ratings(tmp_path / "mine.jsonl.gz")
    module = RatingModule(None, checkpoint=str(base_checkpoint), ratings=str(ratings))
    rows = [json.loads(line) for line in gzip.open(ratings)]
    write_jsonl_gz(ratings, [*rows, {**rows[0], "gen": "one more output"}])
    data = RatingDataModule(
        checkpoint=str(base_checkpoint), cache_dir=str(tmp_path / "cache"), ratings=str(ratings)
    )
    trainer = L.Trainer(max_steps=1, logger=False, enable_checkpointing=False, accelerator="cpu")
    with pytest.raises(DataError, match="task 'mine': the ratings file changed between"):
        trainer.fit(module, data)


def test_ratings_start_at_the_ridge_fit_of_the_metrics(base_checkpoint: Path) -> None:
    torch.manual_seed(0)
    module = RatingModule("summarization", checkpoint=str(base_checkpoint), ridge_alpha=1e-6)
    features = torch.randn(200, len(FEATURES))
    targets = features @ torch.arange(1.0, len(FEATURES) + 1).unsqueeze(1).repeat(1, 4) / 10 + 0.5
    targets[::7, 2] = float("nan")  # a criterion some records lack
    module.start_from_metric_fit(features, targets)
    model = module.model.eval()
    with torch.no_grad():
        representation = model.represent(
            features=features, ref=torch.randn(200, 16), gen=torch.randn(200, 16)
        )
        ratings = model.rate(representation, features)
    present = ~torch.isnan(targets)
    torch.testing.assert_close(ratings[present], targets[present], atol=1e-3, rtol=0)
    with pytest.raises(ValueError, match="pass features="):
        model.rate(representation)
    text_only = RatingModule(
        "summarization", checkpoint=str(base_checkpoint), use_metrics=False, freeze_mismatch=False
    )
    assert text_only.model.metric_rating is None
    with pytest.raises(ValueError, match="freeze_mismatch"):
        RatingModule("summarization", checkpoint=str(base_checkpoint), pretrained=False)


@pytest.mark.parametrize("freeze", [True, False])
def test_a_task_checkpoint_names_errors_as_its_base_does(
    tmp_path: Path, base_checkpoint: Path, data_root: Path, freeze: bool
) -> None:
    """Kept frozen, the mismatch judgement survives fine-tuning exactly; trained, it moves."""
    prepared = prepare_task("summarization", str(base_checkpoint), tmp_path / "cache", data_root)
    settings = FitSettings(**{**SETTINGS.to_dict(), "lr": 0.05, "freeze_mismatch": freeze})
    module, data, _ = fit(
        prepared, np.arange(len(prepared.records)), settings, 0, checkpoint=str(base_checkpoint)
    )
    task = load(export(module, data, tmp_path / "task"))
    refs = [list(r.refs) for r in prepared.records[:12]]
    gens = [r.gen for r in prepared.records[:12]]
    ours = predict_outputs(task, refs, gens).probabilities
    base = predict_outputs(load(base_checkpoint), refs, gens).probabilities
    assert np.allclose(ours, base, atol=1e-6) == freeze
    assert task.model.mismatch_rating is not None
    weight = task.model.mismatch_rating.weight
    assert weight.abs().sum() > 0  # the ratings learned to read them
    # more belief in NoContr never lowers a rating; more belief in an error never raises one
    assert (weight[:, NO_CONTRADICTION] >= 0).all()
    assert (np.delete(weight.detach().numpy(), NO_CONTRADICTION, axis=1) <= 0).all()


def test_a_head_only_column_changes_the_named_errors_and_leaves_the_ratings_as_they_were(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    """A task fitted on a base with a head-only column: the term stays frozen, so it names
    errors as that base does, and its ratings are those of the same fit on the base without
    the column (the term does not choose the closest reference either)."""
    base = load(base_checkpoint)
    model = with_head_only_features(base.model, ("ter",))
    assert model.feature_logits is not None
    with torch.no_grad():
        model.feature_logits.weight[:, 0] = torch.linspace(-2.0, 2.0, model.config.num_classes)
    old = base.scaler
    scaler = FeatureScaler(
        [*old.names, "ter"], [*old.low, 0.0], [*old.high, 100.0], old.quantiles, old.margin
    )
    head_only = save_pretrained(model.eval(), tmp_path / "base", scaler=scaler)
    records = load_records(data_root / "summarization" / "summeval.jsonl.gz")[:12]
    assert {len(r.refs) for r in records} == {1, 2}
    refs, gens = [list(r.refs) for r in records], [r.gen for r in records]
    tasks = {}
    for name, start in (("plain", base_checkpoint), ("head_only", head_only)):
        prepared = prepare_task("summarization", str(start), tmp_path / name / "cache", data_root)
        module, data, _ = fit(
            prepared, np.arange(len(prepared.records)), SETTINGS, 0, checkpoint=str(start)
        )
        task = load(export(module, data, tmp_path / name / "task"))
        tasks[name] = predict_outputs(task, refs, gens)
    with_column = predict_outputs(load(head_only), refs, gens).probabilities
    assert np.allclose(tasks["head_only"].probabilities, with_column, atol=1e-6)
    assert not np.allclose(tasks["head_only"].probabilities, tasks["plain"].probabilities)
    assert tasks["plain"].ratings is not None and tasks["head_only"].ratings is not None
    # equal up to float rounding (a sliced feature table can take another summation path)
    assert np.allclose(tasks["head_only"].ratings, tasks["plain"].ratings, atol=1e-5, rtol=0)


def test_a_ridge_anchor_keeps_the_metric_map_near_its_ridge_start(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    """Pulled toward its start, the metric map stays near the ridge fit of the metrics;
    without the pull a large step size moves it far. NLI has no ridge start: no pull."""
    prepared = prepare_task("summarization", str(base_checkpoint), tmp_path / "cache", data_root)
    drift = {}
    for pull in (0.0, 100.0):
        settings = replace(SETTINGS, lr=0.05, ridge_anchor=pull)
        module, _, _ = fit(
            prepared, np.arange(len(prepared.records)), settings, 0, checkpoint=str(base_checkpoint)
        )
        assert module.metric_start is not None
        with torch.no_grad():
            drift[pull] = float(module.ridge_drift())
    assert drift[100.0] < 0.1 * drift[0.0]
    nli = prepare_task("nli", str(base_checkpoint), tmp_path / "cache", data_root)
    module, _, _ = fit(
        nli,
        np.arange(len(nli.records)),
        replace(SETTINGS, ridge_anchor=100.0),
        0,
        checkpoint=str(base_checkpoint),
    )
    assert module.metric_start is None


def test_ridge_fit_matches_least_squares_without_penalty() -> None:
    x = torch.randn(50, 3, dtype=torch.float64)
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 3.0
    weight, bias = ridge_fit(x, y, alpha=0.0)
    torch.testing.assert_close(weight, torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))
    assert abs(float(bias) - 3.0) < 1e-9
    shrunk, _ = ridge_fit(x, y, alpha=1e4)
    assert shrunk.norm() < weight.norm()


CONTRAST_SENTENCES = [
    "The man walked two dogs to the park on Sunday.",
    "A woman is reading a book in the garden.",
    "Three children played football after school.",
    "The old bus stopped near the station at noon.",
    "She opened the window and the cat jumped out.",
    "Two men are sitting on a red bench.",
]


@pytest.fixture(scope="module")
def contrast_root(tmp_path_factory) -> Path:
    """SummEval-shaped records whose outputs are real sentences, so synth rules apply."""
    root = tmp_path_factory.mktemp("human-contrast")
    rows = []
    for group in range(12):
        ref = CONTRAST_SENTENCES[group % len(CONTRAST_SENTENCES)]
        other = CONTRAST_SENTENCES[(group + 1) % len(CONTRAST_SENTENCES)]
        for system, gen in enumerate([ref, other]):
            score = 5.0 if system == 0 else 2.0
            rows.append({
                "id": f"c:{group}:{system}", "ref": [ref, other], "gen": gen, "src": None,
                "group": f"c:{group}", "scores": dict.fromkeys(("coherence", "consistency", "fluency", "relevance"), score),
            })  # fmt: skip
    write_jsonl_gz(root / "summarization" / "summeval.jsonl.gz", rows)
    return root


def test_contrast_copies_carry_one_synthetic_error_each(contrast_root: Path) -> None:
    records = load_records(contrast_root / "summarization" / "summeval.jsonl.gz")
    copies, owners, parents = contrast_records(records, 10, seed=3)
    assert 0 < len(copies) <= 10 and len(owners) == len(copies) == len(set(owners))
    assert parents == [-1] * len(copies)  # depth 1: every copy is made from its original
    for copy, owner in zip(copies, owners, strict=True):
        original = records[owner]
        record_id, code, digest = copy.id.split("~")
        assert record_id == original.id and code in ERROR_CODES and len(digest) == 10
        assert copy.gen != original.gen and copy.refs == original.refs
        assert copy.group == original.group and copy.scores == {}
    assert contrast_records(records, 10, seed=3) == (copies, owners, parents)
    more, owners, _ = contrast_records(records, 2 * len(records), seed=3)
    assert len(records) < len(more) <= 2 * len(records)
    assert max(owners.count(owner) for owner in owners) == 2
    assert len({copy.id for copy in more}) == len(more)  # a record's copies differ in class


def test_graded_contrast_copies_add_one_error_of_their_class_per_step(contrast_root: Path) -> None:
    records = load_records(contrast_root / "summarization" / "summeval.jsonl.gz")
    copies, owners, parents = contrast_records(records, 3 * len(records), seed=3, depth=3)
    assert contrast_records(records, 3 * len(records), seed=3, depth=3) == (copies, owners, parents)
    assert parents.count(-1) == len(records)  # one chain per record
    steps = {}
    for position, (copy, parent) in enumerate(zip(copies, parents, strict=True)):
        steps[position] = 1 if parent == -1 else steps[parent] + 1
        if parent != -1:
            made_from = copies[parent]
            assert owners[parent] == owners[position] and parent < position
            assert copy.id.split("~")[1] == made_from.id.split("~")[1]  # same class
            assert copy.gen not in (made_from.gen, records[owners[position]].gen)
    assert max(steps.values()) == 3 and 1 < sum(step > 1 for step in steps.values())
    with pytest.raises(ValueError, match="depth must be at least 1"):
        contrast_records(records, 10, seed=3, depth=0)


def test_class_weights_favour_their_class(contrast_root: Path) -> None:
    records = load_records(contrast_root / "summarization" / "summeval.jsonl.gz")
    classes = lambda copies: Counter(copy.id.split("~")[1] for copy in copies)  # noqa: E731
    uniform = classes(contrast_records(records, len(records), seed=3)[0])
    weighted = classes(
        contrast_records(records, len(records), seed=3, class_weights={"GramErr": 100})[0]
    )
    assert uniform["GramErr"] < len(records) / 2 < weighted["GramErr"]
    with pytest.raises(ValueError, match="unknown error class 'Typo'"):
        contrast_records(records, 10, seed=3, class_weights={"Typo": 1})


def test_contrast_loss_ranks_each_copy_below_the_text_it_was_made_from(
    base_checkpoint: Path,
) -> None:
    """The hinge compares a chain's copy with the copy before it, a first copy with its
    original: zero when each is a margin lower, positive when a later copy rates higher."""
    module = RatingModule(
        "summarization", checkpoint=str(base_checkpoint), contrast_weight=1.0, contrast_margin=0.1
    )
    outputs = torch.tensor([[0.9, 0.9]])  # one original
    contrast = {"owner": torch.tensor([0, 0, 0]), "parent": torch.tensor([-1, 0, 1])}
    for copies, expected in (([0.8, 0.7, 0.6], 0.0), ([0.8, 0.7, 0.75], 0.15 / 3)):
        module.forward = lambda batch, copies=copies: torch.tensor(copies)[:, None].repeat(1, 2)
        assert module.contrast_loss(outputs, contrast).item() == pytest.approx(expected, abs=1e-6)


def test_contrast_loss_rates_the_copies_below_their_originals(
    tmp_path: Path, base_checkpoint: Path, contrast_root: Path
) -> None:
    """With the ranking loss, a copy with an error ends up rated below its training original;
    the copies are served with the reference their original trains on."""
    prepared = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", contrast_root, contrast_size=24
    )
    contrast = prepared.contrast
    copy_refs = contrast.inputs.texts[np.concatenate(contrast.inputs.ref_rows)[contrast.pairs]]
    trained = prepared.train_pairs[contrast.owners]
    original_refs = prepared.inputs.texts[np.concatenate(prepared.inputs.ref_rows)[trained]]
    assert len(set(trained - prepared.inputs.pair_starts()[contrast.owners])) == 2  # both refs used
    np.testing.assert_array_equal(copy_refs, original_refs)  # each copy trains on its original's
    settings = FitSettings(
        max_steps=400, val_check_interval=400, patience=5, batch_size=8, val_fraction=0.3,
        lr=3e-3, contrast_size=24, contrast_weight=10.0, contrast_margin=0.2,
    )  # fmt: skip
    everything = np.arange(len(prepared.records))
    module, data, _ = fit(prepared, everything, settings, 0, checkpoint=str(base_checkpoint))
    assert data.describe()["contrast copies"].startswith(
        f"{np.isin(contrast.owners, data.split['train']).sum()} train"
    )
    train = set(data.split["train"].tolist())
    mine = np.array([i for i, owner in enumerate(contrast.owners) if owner in train])
    copies = task_outputs(
        module.model,
        contrast.features[contrast.inputs.pair_rows(mine)],
        contrast.inputs.subset(mine),
    )[2]
    owners = contrast.owners[mine]
    originals = task_outputs(
        module.model,
        prepared.features[prepared.inputs.pair_rows(owners)],
        prepared.inputs.subset(owners),
    )[2]
    assert (originals.mean(axis=1) > copies.mean(axis=1)).mean() >= 0.9


def test_rating_mix_checks_reference_triples_against_their_anchors(
    tmp_path: Path, base_checkpoint: Path, contrast_root: Path
) -> None:
    """With reference triples, an error copy of a reference must rate below its anchor (the
    reference copy or its paraphrase) for a share to count; the anchors rank below nothing."""
    prepared = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", contrast_root,
        contrast_size=12, reference_triples_size=96,
    )  # fmt: skip
    contrast = prepared.contrast
    settings = FitSettings(
        max_steps=20, val_check_interval=20, batch_size=8, val_fraction=0.3, lr=3e-3,
        contrast_size=12, reference_triples_size=96, contrast_weight=1.0, rating_mix=True,
    )  # fmt: skip
    everything = np.arange(len(prepared.records))
    module, data, _ = fit(prepared, everything, settings, 0, checkpoint=str(base_checkpoint))
    val = data.split["val"]
    records = rating_parts(module.model, prepared, val)
    copies, parents = contrast_parts(module.model, prepared, val, records)
    mine = [c for c, owner in enumerate(contrast.owners.tolist()) if owner in set(val.tolist())]
    compared = [c for c in mine if contrast.parents[c] != ANCHOR]
    triples = [k for k, c in enumerate(compared) if contrast.parents[c] >= 0]
    assert len(copies.learned) == len(compared) and triples  # anchors are parents, not copies
    for k in triples:
        anchor = np.array([contrast.parents[compared[k]]])
        alone = output_parts(
            module.model, contrast.inputs.subset(anchor), contrast.features[contrast.inputs.pair_rows(anchor)]
        )  # fmt: skip
        np.testing.assert_allclose(parents.learned[k], alone.learned[0], atol=1e-5)
        np.testing.assert_allclose(parents.ridge[k], alone.ridge[0], atol=1e-5)


def test_train_datasets_limit_training_and_copies_not_testing(
    tmp_path: Path, base_checkpoint: Path, contrast_root: Path
) -> None:
    """With data.train_datasets a task trains, validates and makes contrast copies (rule
    copies and reference triples) on the named datasets only; its model still rates the
    others, and an unknown name is refused before any feature is computed."""
    records = load_records(contrast_root / "summarization" / "summeval.jsonl.gz")
    root = tmp_path / "human"
    rows = []
    for record in records:
        row = {
            "id": record.id, "ref": list(record.refs), "gen": record.gen, "src": None,
            "group": record.group, "scores": record.scores,
            "dataset": "even" if int(record.group.split(":")[1]) % 2 == 0 else "odd",
        }  # fmt: skip
        rows.append(row)
    write_jsonl_gz(root / "summarization" / "summeval.jsonl.gz", rows)
    prepared = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", root,
        contrast_size=12, reference_triples_size=24, train_datasets=("even",),
    )  # fmt: skip
    datasets = [record.dataset for record in prepared.records]
    contrast = prepared.contrast
    assert {datasets[i] for i in contrast.owners} == {"even"}
    assert (contrast.parents >= 0).any()  # reference triples among the copies
    for copy_id, owner in zip(contrast.inputs.ids, contrast.owners, strict=True):
        assert copy_id.startswith(prepared.records[owner].id + "~")  # made from its owner
    settings = FitSettings(
        max_steps=8, val_check_interval=4, batch_size=8, val_fraction=0.5, lr=3e-3,
        contrast_size=12, reference_triples_size=24, contrast_weight=1.0,
        train_datasets=("even",),
    )  # fmt: skip
    everything = np.arange(len(prepared.records))
    module, data, _ = fit(prepared, everything, settings, 0, checkpoint=str(base_checkpoint))
    assert {datasets[i] for i in data.split["train"]} == {"even"}
    assert len(data.split["train"]) + len(data.split["val"]) == datasets.count("even")
    assert {datasets[i] for i in data.split["val"]} == {"even"}
    assert data.describe()["trained on"].startswith("even (")  # the card: odd is test only
    odd = np.array([i for i, name in enumerate(datasets) if name == "odd"])
    assert np.isfinite(model_scores(module, prepared, odd)).all()  # tested on every dataset
    with pytest.raises(ValueError, match=r"prepared to train on \['even'\]"):
        fit(prepared, everything, replace(settings, train_datasets=()), 0, checkpoint="x")
    with pytest.raises(ValueError, match=r"data.train_datasets names 'evn'.*known: even, odd"):
        prepare_task(  # no copies asked: still refused, before the features are built
            "summarization", str(base_checkpoint), tmp_path / "no-cache", root,
            train_datasets=("evn",),
        )  # fmt: skip
    assert not (tmp_path / "no-cache").exists()


def test_contrast_copies_need_a_rated_task(
    tmp_path: Path, base_checkpoint: Path, data_root: Path
) -> None:
    with pytest.raises(ValueError, match="contrast copies need ratings"):
        prepare_task("nli", str(base_checkpoint), tmp_path / "cache", data_root, contrast_size=5)


def test_contrast_loss_ranks_against_anchors_but_never_ranks_them(base_checkpoint: Path) -> None:
    """A reference triple's anchors (parent ANCHOR) only serve as parents: a high or low
    anchor rating adds nothing by itself; an error copy rated above its anchor does."""
    module = RatingModule(
        "summarization",
        checkpoint=str(base_checkpoint),
        contrast_weight=1.0,
        contrast_margin=0.01,  # the margin of rule copies: not the one below an anchor
        reference_margin=0.1,
    )
    outputs = torch.tensor([[0.2, 0.2]])  # the original: far below the anchors
    contrast = {"owner": torch.tensor([0, 0, 0, 0]), "parent": torch.tensor([ANCHOR, 0, ANCHOR, 2])}
    for copies, expected in (
        ([0.9, 0.8, 0.7, 0.5], 0.0),
        ([0.9, 0.85, 0.7, 0.75], (0.05 + 0.15) / 2),
    ):
        module.forward = lambda batch, copies=copies: torch.tensor(copies)[:, None].repeat(1, 2)
        assert module.contrast_loss(outputs, contrast).item() == pytest.approx(expected, abs=1e-6)


def test_reference_triples_rank_an_error_in_the_reference_below_its_paraphrase(
    contrast_root: Path,
) -> None:
    records = load_records(contrast_root / "summarization" / "summeval.jsonl.gz")
    positions = [i % 2 for i in range(len(records))]  # the reference each record trains on
    copies, owners, parents = reference_triples(records, positions, 40, seed=3)
    assert 0 < len(copies) <= 40 and len(owners) == len(parents) == len(copies)
    kinds = Counter()
    for i, (copy, owner, parent) in enumerate(zip(copies, owners, parents, strict=True)):
        record = records[owner]
        ref = record.refs[positions[owner]]
        record_id, kind, digest = copy.id.split("~")
        assert record_id == record.id and len(digest) == 10
        assert copy.refs == record.refs and copy.group == record.group and copy.scores == {}
        if parent == ANCHOR:
            kind = kind.removeprefix("ref-")
            kinds[kind] += 1
            # the copy, or another of the record's references (these records have two)
            assert (
                copy.gen == ref if kind == "copy" else copy.gen in record.refs and copy.gen != ref
            )
        else:
            assert 0 <= parent < i and parents[parent] == ANCHOR and owners[parent] == owner
            anchor_kind, code = kind.removeprefix("ref-").split("-")
            assert copies[parent].id.split("~")[1] == f"ref-{anchor_kind}"
            assert code in ERROR_CODES and copy.gen != ref
    assert kinds["copy"] == kinds["paraphrase"] > 0
    assert len({copy.id for copy in copies}) == len(copies)
    assert reference_triples(records, positions, 40, seed=3) == (copies, owners, parents)


def test_the_model_card_counts_error_copies_and_reference_triples_apart(
    tmp_path: Path, base_checkpoint: Path, contrast_root: Path
) -> None:
    """The cards counted a reference triple's copies as "train outputs with one synthetic
    error" (the shipped dialogue card: 2729 for 1000 asked)."""
    for contrast_size in (0, 12):
        prepared = prepare_task(
            "summarization", str(base_checkpoint), tmp_path / "cache", contrast_root,
            contrast_size=contrast_size, reference_triples_size=40,
        )  # fmt: skip
        data = RatingDataModule.for_rows(prepared, np.arange(len(prepared.records)), 0, 0.3, 8)
        data.setup()
        facts = data.describe()
        kinds = prepared.contrast.kinds
        trained = np.isin(prepared.contrast.owners, data.split["train"])
        errors, references = (int((trained & (kinds == k)).sum()) for k in ("error", "reference"))
        assert references > 0
        assert facts["reference triples"].startswith(f"{references} copies of train references")
        if contrast_size:
            assert facts["contrast copies"] == f"{errors} train outputs with one synthetic error each"
        else:
            assert "contrast copies" not in facts


SICK_PARAPHRASES = [  # (a, b): sentences people judged to say the same
    ("Two men are playing guitar.", "Guitar is being played by two men."),
    ("A woman is slicing three onions.", "Three onions are being sliced by a woman."),
    ("The boy is not riding a horse.", "No boy is riding a horse."),
    ("A dog is running on the beach in London.", "On the beach in London a dog is running."),
    ("Two men are playing guitar.", "Two men are playing guitars."),  # a reference again
]


def test_paraphrase_triples_rank_a_meaning_error_below_a_persons_paraphrase(
    contrast_root: Path,
) -> None:
    """Per pair drawn: the paraphrase as an anchor and the reference with one meaning error
    below it, both reading that reference alone (and it as their source), owned by a record."""
    records = load_records(contrast_root / "summarization" / "summeval.jsonl.gz")
    group = {a: "g0" if a.startswith("Two men") else a for a, _ in SICK_PARAPHRASES}
    pairs = [
        (group[a], *pair) for a, b in SICK_PARAPHRASES for pair in ((a, b), (b, a))
    ]  # one group for the sentences joined by a shared one
    of_group = {text: g for g, ref, paraphrase in pairs for text in (ref, paraphrase)}
    copies, owners, parents = paraphrase_triples(records[:1], pairs, 100, seed=3)
    assert len(copies) == 2 * len(pairs)  # every pair drawn, one owner: ids must still differ
    assert len({copy.id for copy in copies}) == len(copies)
    for i, (copy, owner, parent) in enumerate(zip(copies, owners, parents, strict=True)):
        assert copy.id.startswith(records[owner].id + PARAPHRASE_TRIPLE)
        assert len(copy.refs) == 1 and copy.src == copy.refs[0] and copy.scores == {}
        kind = copy.id.split(PARAPHRASE_TRIPLE)[1].split("~")[0]
        if parent == ANCHOR:
            assert kind == "paraphrase" and (of_group[copy.gen], copy.refs[0], copy.gen) in pairs
        else:
            assert parent == i - 1 and parents[parent] == ANCHOR and owners[parent] == owner
            assert copies[parent].refs == copy.refs
            assert copy.gen not in (copy.refs[0], copies[parent].gen)
            assert kind in ERROR_CODES and kind not in ("GramErr", "RepErr")
            if kind == "OutofRef":  # the added sentence comes from another group
                added = copy.gen.removeprefix(copy.refs[0].rstrip(".")).lower()
                same = [t for t, g in of_group.items() if g == of_group[copy.refs[0]]]
                assert not any(t.rstrip(".").lower() in added for t in same), copy.gen
    copies, owners, parents = paraphrase_triples(records, pairs, 12, seed=3)
    assert len(copies) == 12 and len(owners) == len(parents) == 12
    assert paraphrase_triples(records, pairs, 12, seed=3) == (copies, owners, parents)


def test_paraphrase_triples_read_sick_train_and_their_own_reference(
    tmp_path: Path, base_checkpoint: Path, contrast_root: Path, monkeypatch
) -> None:
    """prepare_task reads SICK TRAIN of the shared data (two-way entailments only, both ways
    round), and a triple's pair is its own reference, whatever reference its owner trains on;
    the model card counts the triples apart."""
    root = tmp_path / "data"
    monkeypatch.setenv("MISMATCH_DATA_DIR", str(root))
    (root / "human" / "summarization").mkdir(parents=True)
    source = contrast_root / "summarization" / "summeval.jsonl.gz"
    (root / "human" / "summarization" / source.name).write_bytes(source.read_bytes())
    pairs = [*SICK_PARAPHRASES[:4], ("A cat sleeps.", "A cat runs.")]  # the last contradicts
    rows = [
        {"id": f"t{i}", "a": a, "b": b, "paraphrase": i < 4, "contradiction": i == 4}
        | {"split": "train"}
        for i, (a, b) in enumerate(pairs)
    ]
    write_jsonl_gz(root / "sick" / "sick_train.jsonl.gz", rows)
    prepared = prepare_task(
        "summarization", str(base_checkpoint), tmp_path / "cache", root / "human",
        contrast_size=12, paraphrase_triples_size=16,
    )  # fmt: skip
    contrast = prepared.contrast
    sick = [c for c, copy_id in enumerate(contrast.inputs.ids) if PARAPHRASE_TRIPLE in copy_id]
    # 8 pairs (the first 4 both ways round), an anchor and an error copy each
    assert len(sick) == 16
    starts = contrast.inputs.pair_starts()
    owners = contrast.owners[sick]
    assert (prepared.train_pairs[owners] > prepared.inputs.pair_starts()[owners]).any()
    for c in sick:
        assert len(contrast.inputs.ref_rows[c]) == 1 and contrast.pairs[c] == starts[c]
    assert sum(contrast.parents[c] == ANCHOR for c in sick) == 8
    data = RatingDataModule.for_rows(prepared, np.arange(len(prepared.records)), 0, 0.3, 8)
    data.setup()
    facts = data.describe()
    trained = np.isin(contrast.owners[sick], data.split["train"]).sum()
    assert facts["paraphrase triples"].startswith(f"{trained} copies from SICK TRAIN")
    with pytest.raises(ValueError, match="contrast copies need model.contrast_weight"):
        FitSettings(paraphrase_triples_size=10)
    with pytest.raises(ValueError, match="paraphrase_triples_size must be 0 or at least 2"):
        FitSettings(paraphrase_triples_size=1, contrast_weight=1.0)
    rows[0]["split"] = "trial"  # SICK TRIAL is measurement data: never read for training
    write_jsonl_gz(root / "sick" / "sick_train.jsonl.gz", rows)
    with pytest.raises(ValueError, match=r"sick_train.jsonl.gz:1: split 'trial'"):
        prepare_task(
            "summarization", str(base_checkpoint), tmp_path / "cache", root / "human",
            contrast_size=12, paraphrase_triples_size=16,
        )  # fmt: skip


def test_a_single_reference_is_paraphrased_by_meaning_preserving_rules() -> None:
    ref = "The company reported a 12 percent rise in profits and plans to hire 300 new staff."
    records = [
        HumanRecord(
            id=f"r{i}", refs=(ref,), gen="Profits rose.", src=None, group=f"g{i}", scores={}
        )
        for i in range(2)
    ]
    copies, _, parents = reference_triples(records, [0, 0], 8, seed=1)
    paraphrases = [
        c.gen
        for c, p in zip(copies, parents, strict=True)
        if p == ANCHOR and "ref-paraphrase" in c.id
    ]
    assert paraphrases and all(text != ref for text in paraphrases)
    # what a paraphrase rewrites keeps the meaning: no number in digits that the reference
    # lacks (300 may become "three hundred", not 350) and the same negation
    for text in paraphrases:
        assert set(re.findall(r"\d+", text)) <= {"12", "300"}, text
        assert negations(text) == negations(ref), text


def test_single_metric_fit_is_the_line_of_the_best_ranking_column() -> None:
    rng = np.random.default_rng(0)
    y = torch.from_numpy(rng.random(40))
    noise = torch.from_numpy(rng.random((40, 2)))
    ranked = 3.0 - 2.0 * y**2  # ranks y perfectly (downward), but not on a line
    x = torch.stack([noise[:, 0], ranked, noise[:, 1]], dim=1)
    weight, bias = single_metric_fit(x, y)
    slope, intercept = np.polyfit(ranked.numpy(), y.numpy(), 1)
    assert weight[0] == 0 and weight[2] == 0
    assert weight[1].item() == pytest.approx(slope) and bias.item() == pytest.approx(intercept)
