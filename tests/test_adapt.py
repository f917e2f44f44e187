"""`mismatch adapt`: real-base pairs never come from a group any evaluate seed tests on, and
continued training starts from the checkpoint, keeps what it must, and picks its best epoch by
the stated rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from jsonl_files import write_jsonl_gz
from safetensors.numpy import load_file

from evaluator.cli import main
from evaluator.features import pair_key, text_key
from evaluator.features.embeddings import EmbeddingStore, encoder_reading, encoder_source
from evaluator.features.scaling import FeatureScaler
from evaluator.features.token_store import TokenStore, TokenTable
from evaluator.hub import load, save_pretrained
from evaluator.human_data import HumanRecord, split_by_group
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.realtext_data import BASE_SOURCES
from evaluator.signature import signature
from evaluator.training.continued import (
    load_graded_links,
    load_split_inputs,
    val_figures,
    with_token_branch,
)
from evaluator.training.real_bases import (
    EVALUATE_SEEDS,
    contradiction_class,
    real_base_pairs,
    sick_rows,
    untested_records,
)
from mismatch_core.errors import DataError
from mismatch_core.pairs import read_pairs
from mismatch_core.taxonomy import CODES
from synth.rules import parse

# --- pairs ---------------------------------------------------------------------------------


def groups_by_testing_seeds() -> tuple[list[str], str]:
    """Groups no evaluate seed tests on, and one that seed 1 tests but seed 0 (the bench's
    held-out partition) does not."""
    candidates = [HumanRecord(str(i), ("r",), "g", None, f"g{i}", {}) for i in range(300)]
    tested = {
        seed: {r.group for r in split_by_group(candidates, seed, 0.2)[1]} for seed in EVALUATE_SEEDS
    }
    never = [r.group for r in candidates if not any(r.group in t for t in tested.values())]
    only_seed_1 = next(g for g in sorted(tested[1]) if g not in tested[0] | tested[2])
    return never, only_seed_1


REF = "Two dogs ran across the park in the morning."
BASE = "Two dogs ran through the park in the morning."  # a correct rewording


@pytest.fixture
def data(tmp_path: Path) -> Path:
    never, only_seed_1 = groups_by_testing_seeds()
    wmt16 = [
        (never[0], REF, BASE, 0.9),
        (never[1], "A low one.", "A low output.", 0.1),  # rated too low
        (only_seed_1, "The minister met 40 farmers.", "The minister met 40 farmers today.", 0.9),
        # an untested group sharing its reference with the tested one (stripped)
        (never[2], " The minister met 40 farmers. ", "40 farmers met the minister.", 0.9),
    ]
    for source in BASE_SOURCES:
        rows = wmt16 if source.name == "wmt16" else []
        write_jsonl_gz(
            tmp_path / "human" / source.file,
            [{"id": f"{source.name}:{i}", "ref": ref, "gen": gen, "group": group,
              "scores": {source.criterion: rating}}
             for i, (group, ref, gen, rating) in enumerate(rows)],
        )  # fmt: skip
    write_jsonl_gz(
        tmp_path / "sick_train.jsonl.gz",
        [{"id": "s1", "a": "A man is playing a guitar.", "b": "A guitar is being played by a man.",
          "paraphrase": True, "contradiction": False},
         {"id": "s2", "a": "A dog is running.", "b": "No dog is running.", "paraphrase": False,
          "contradiction": True},
         {"id": "s3", "a": "A man is sitting.", "b": "A man is standing.", "paraphrase": False,
          "contradiction": True}],
    )  # fmt: skip
    return tmp_path


def test_untested_records_keep_every_rating_of_untested_groups_and_no_tested_text(
    data: Path,
) -> None:
    never, _ = groups_by_testing_seeds()
    records = untested_records(data / "human")
    assert set(records) == {source.name for source in BASE_SOURCES}
    # the low-rated output stays (no rating threshold); the group seed 1 tests and the
    # untested record sharing its reference go
    assert [r.group for r in records["wmt16"]] == [never[0], never[1]]
    assert not any(records[name] for name in records if name != "wmt16")


def test_real_base_pairs_skip_every_group_an_evaluate_seed_tests_and_its_texts(
    data: Path,
) -> None:
    never, _ = groups_by_testing_seeds()
    splits = real_base_pairs(data / "human", data / "sick_train.jsonl.gz", seed=13)
    pairs = pd.concat(splits.values(), ignore_index=True)
    correct = pairs[pairs["label"] == "NoContr"]
    assert set(correct["group"]) == {f"wmt16:{never[0]}", "sick:s1"}
    assert sorted(correct["gen"]) == sorted(
        [BASE, "A guitar is being played by a man.", "A man is playing a guitar."]
    )  # SICK paraphrases both ways
    negated = pairs[pairs["rule"] == "sick_contradiction"]
    assert set(negated["label"]) == {"NegErr"} and len(negated) == 2  # s2 both ways, not s3
    errors = pairs[(pairs["label"] != "NoContr") & (pairs["source"] == "wmt16")]
    assert len(errors) and set(errors["ref"]) == {REF}
    assert all(json.loads(d)["base_text"] == BASE for d in errors["detail"])
    assert (pairs["label_id"] == [CODES.index(label) for label in pairs["label"]]).all()
    assert not set(splits["train"]["group"]) & set(splits["val"]["group"])


def test_sick_substitutions_add_contradictions_labelled_by_the_changed_word(data: Path) -> None:
    splits = real_base_pairs(data / "human", data / "sick_train.jsonl.gz", sick_substitutions=True)
    pairs = pd.concat(splits.values(), ignore_index=True)
    contradictions = pairs[pairs["rule"].isin(["sick_contradiction", "sick_substitution"])]
    labels = {(r.ref, r.gen): r.label for r in contradictions.itertuples()}
    assert labels == {
        ("A dog is running.", "No dog is running."): "NegErr",
        ("No dog is running.", "A dog is running."): "NegErr",
        ("A man is sitting.", "A man is standing."): "PredErr",  # s3, both ways
        ("A man is standing.", "A man is sitting."): "PredErr",
    }


@pytest.mark.parametrize(
    ("ref", "gen", "code"),
    [
        (
            "The kangaroo is picking up the woman.",
            "The woman is picking up the kangaroo.",
            "EntErr",
        ),
        ("A woman is playing the trumpet.", "A man is playing the trumpet.", "EntErr"),
        ("The big dog is black.", "The black dog is big.", "AttrErr"),
        ("A man is jumping into an empty pool.", "A man is jumping into a full pool.", "AttrErr"),
        ("They are driving ATVs in a field.", "They are driving ATVs in a street.", "STErr"),
        ("Two men are playing with three balls.", "Two men are playing with four balls.", "NumErr"),
        # more than one change, or a word of no one class: left out
        ("A dog with a ball is being chased.", "A dog is chasing a ball.", None),
        ("A man without a shirt is posing.", "A man with a shirt is posing.", None),
        ("A man is playing a guitar.", "A man is playing a guitar.", None),
    ],
)
def test_a_contradiction_is_classed_by_the_one_word_it_swaps_or_substitutes(
    ref: str, gen: str, code: str | None
) -> None:
    assert contradiction_class(*parse([ref, gen])) == code


def test_error_pairs_are_capped_per_class(data: Path) -> None:
    def counts(cap: int) -> pd.Series:
        splits = real_base_pairs(data / "human", data / "sick_train.jsonl.gz", cap_per_class=cap)
        pairs = pd.concat(splits.values())
        return pairs[pairs["rule"] != "sick_contradiction"]["label"].value_counts()

    assert counts(1500).drop("NoContr").max() > 1  # the cap below has something to cut
    capped = counts(1)
    assert capped.drop("NoContr").max() == 1 and capped["NoContr"] == 3


def test_an_empty_sick_file_or_a_bad_seed_is_named(data: Path, capsys) -> None:
    """It made pairs without SICK, exit 0; with no human bases either, a KeyError. A seed
    outside 0..2**32-1 was taken, as chains and train refuse it."""
    empty = data / "empty.jsonl"
    empty.write_text("")
    out = data / "real"
    assert main(["adapt", "pairs", "--human", str(data / "human"), "--sick", str(empty),
                 "--out", str(out)]) == 2  # fmt: skip
    assert f"{empty}: no records" in capsys.readouterr().err
    assert main(["adapt", "pairs", "--seed", "-5", "--out", str(out)]) == 2
    assert "--seed must be in 0..4294967295, got -5" in capsys.readouterr().err
    assert not out.exists()


def test_a_sick_row_without_a_key_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "sick.jsonl.gz"
    write_jsonl_gz(path, [{"id": "1", "a": "x", "b": "y", "paraphrase": True, "contradiction": False},
                    {"id": "2", "a": "x", "paraphrase": True, "contradiction": False}])  # fmt: skip
    with pytest.raises(ValueError, match=rf"{path}:2: missing key 'b'"):
        sick_rows(path)
    for key, value, message in (
        ("a", 5, "must be a string"),
        ("b", "  ", "is an empty text"),  # the bench's SICK reader refused it, these took it
        ("paraphrase", "no", "must be true or false"),
    ):
        row = {"id": "1", "a": "x", "b": "y", "paraphrase": True, "contradiction": False}
        write_jsonl_gz(path, [{**row, key: value}])
        with pytest.raises(ValueError, match=rf"{path}:1: key '{key}' {message}"):
            sick_rows(path)


def test_pairs_command_writes_labelled_splits(data: Path, capsys) -> None:
    out = data / "real"
    code = main(["adapt", "pairs", "--human", str(data / "human"), "--sick",
                 str(data / "sick_train.jsonl.gz"), "--out", str(out)])  # fmt: skip
    assert code == 0
    written = [read_pairs(out / f"{split}.parquet", labelled=True) for split in ("train", "val")]
    assert sum(len(frame) for frame in written) > 5
    counts = written[0]["label"].value_counts()  # most first, as a reader would list them
    listed = ", ".join(f"{label} {count}" for label, count in counts.items())
    path = out / "train.parquet"
    assert f"train: {len(written[0])} pairs ({listed}) -> {path}" in capsys.readouterr().out
    (data / "file").write_text("x")
    assert main(["adapt", "pairs", "--out", str(data / "file")]) == 2
    (out / "notes.txt").write_text("mine")  # a folder holding anything else is refused
    assert main(["adapt", "pairs", "--out", str(out)]) == 2
    assert "holds notes.txt, not only train.parquet, val.parquet" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"


def test_pairs_command_checks_its_folder_again_before_the_swap(
    data: Path, monkeypatch, capsys
) -> None:
    import evaluator.training.real_bases as real_bases

    out = data / "late"
    build = real_bases.real_base_pairs

    def slow_build(*args, **kwargs):
        splits = build(*args, **kwargs)
        out.mkdir()
        (out / "notes.txt").write_text("mine")  # saved there while the pairs were built
        return splits

    monkeypatch.setattr(real_bases, "real_base_pairs", slow_build)
    code = main(["adapt", "pairs", "--human", str(data / "human"), "--sick",
                 str(data / "sick_train.jsonl.gz"), "--out", str(out)])  # fmt: skip
    assert code == 2
    assert "holds notes.txt" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


# --- continued training --------------------------------------------------------------------

FEATURES = ["chrf", "bleu"]
DIM = 8
# what filled the stores, as mismatch features records it: the checkpoint's encoder (the
# config's default) and, for vectors read at a layer, its last layer
MEAN_SOURCE = encoder_reading("all-MiniLM-L6-v2")
LAYER_SOURCE = encoder_source("all-MiniLM-L6-v2", None)


def write_pair_set(root: Path, name: str, rng: np.random.Generator) -> tuple[Path, Path]:
    """A pairs folder and its features folder, as mismatch features leaves them: the label
    follows chrf (high: NoContr, low: an error), which the random checkpoint does not know."""
    pairs_dir, features_dir = root / name, root / f"{name}_features"
    pairs_dir.mkdir()
    features_dir.mkdir()
    embeddings, alignments = EmbeddingStore(), EmbeddingStore()
    embeddings.claim(MEAN_SOURCE)
    alignments.claim(LAYER_SOURCE)
    for split, size in (("train", 240), ("val", 80)):
        chrf = rng.random(size) * 100
        labels = np.where(chrf > 50, "NoContr", "NumErr")
        refs = [f"{name} {split} ref {i}" for i in range(size)]
        gens = [f"{name} {split} gen {i}" for i in range(size)]
        ids = [f"{name}-{split}-{i}" for i in range(size)]
        pd.DataFrame({"id": ids, "ref": refs, "gen": gens, "label": labels,
                      "label_id": [CODES.index(label) for label in labels]}).to_parquet(
            pairs_dir / f"{split}.parquet")  # fmt: skip
        pd.DataFrame({"id": ids, "chrf": chrf, "bleu": rng.random(size) * 100}).to_parquet(
            features_dir / f"{split}.parquet"
        )
        texts = refs + gens
        embeddings.add(texts, rng.standard_normal((len(texts), DIM)).astype(np.float32))
        alignments.add_keyed(
            {pair_key(r, g): rng.standard_normal(2 * DIM).astype(np.float32)
             for r, g in zip(refs, gens, strict=True)}
        )  # fmt: skip
    embeddings.save(features_dir / "embeddings.parquet")
    alignments.save(features_dir / "alignments.parquet")
    return pairs_dir, features_dir


@pytest.fixture
def adapt_inputs(tmp_path: Path) -> dict[str, Path]:
    torch.manual_seed(0)
    config = MismatchConfig(
        feature_names=FEATURES, embedding_dim=DIM, use_alignment=True, text_dim=8, set_dim=8,
        num_heads=2, head_hidden=16, span_dim=4,
    )  # fmt: skip
    scaler = FeatureScaler.fit(pd.DataFrame({"chrf": [0.0, 100.0], "bleu": [0.0, 100.0]}))
    checkpoint = save_pretrained(  # its metrics are of its own (synthetic) val split
        MismatchModel(config).eval(),
        tmp_path / "base",
        scaler=scaler,
        metrics={"val_accuracy": 0.98},
    )
    rng = np.random.default_rng(0)
    real, real_features = write_pair_set(tmp_path, "real", rng)
    synth, synth_features = write_pair_set(tmp_path, "synth", rng)
    return {"checkpoint": checkpoint, "real": real, "real_features": real_features,
            "synth": synth, "synth_features": synth_features, "root": tmp_path}  # fmt: skip


def adapt_args(inputs: dict[str, Path], out: Path, *extra: str) -> list[str]:
    return [
        "adapt", "train", "--checkpoint", str(inputs["checkpoint"]),
        "--real", str(inputs["real"]), "--real-features", str(inputs["real_features"]),
        "--synth", str(inputs["synth"]), "--synth-features", str(inputs["synth_features"]),
        "--out", str(out), "--epochs", "4", "--learning-rate", "0.01", "--batch-size", "32",
        *extra,
    ]  # fmt: skip


def test_train_learns_from_the_checkpoint_and_keeps_the_best_epoch_by_the_rule(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    out = adapt_inputs["root"] / "adapted"
    assert main(adapt_args(adapt_inputs, out, "--nocontr-weights", "1,2")) == 0
    before, after = load(adapt_inputs["checkpoint"]), load(out)
    record = after.config["training"]["continued"]
    printed = json.loads(capsys.readouterr().out)  # the chosen epoch, where and what it wrote
    assert printed == {
        "chosen": record["chosen"],
        "out": str(out),
        "signature": str(signature(after)),
    }
    runs = record["runs"]
    assert [len(history) for history in runs] == [5, 5]  # epoch 0 (as loaded) + 4
    start = runs[0][0]
    figures = ("real_val_acc", "real_val_nocontr", "synth_val_acc", "synth_val_nocontr")
    # every run starts from the checkpoint itself
    assert [runs[1][0][k] for k in figures] == [start[k] for k in figures]
    best = max((epoch for history in runs for epoch in history), key=lambda e: e["score"])
    assert record["chosen"] == best
    rule = (best["real_val_acc"] + best["synth_val_acc"] + best["real_val_nocontr"]) / 3
    assert best["score"] == pytest.approx(rule, abs=1e-4)
    assert best["real_val_acc"] > start["real_val_acc"] + 0.2  # it learned the chrf rule
    # the written weights are the chosen epoch's
    sets = load_split_inputs(after, adapt_inputs["real"], adapt_inputs["real_features"])
    accuracy, recall = val_figures(after.model, sets["val"])
    assert (round(accuracy, 4), round(recall, 4)) == (
        best["real_val_acc"],
        best["real_val_nocontr"],
    )
    weights, start_weights = (
        load_file(d / "model.safetensors") for d in (out, adapt_inputs["checkpoint"])
    )
    tagger = [k for k in weights if k.startswith("span_tagger.")]
    assert tagger and all(np.array_equal(weights[k], start_weights[k]) for k in tagger)
    assert after.scaler.to_dict() == before.scaler.to_dict()
    assert after.config["metrics"]["continued real_val_acc"] == best["real_val_acc"]
    # the card's metrics are this model's; the start's figures stay in the record, and its
    # signature names it (adapt train copied them unlabelled, beside the new ones)
    assert all(key.startswith("continued ") for key in after.config["metrics"])
    assert record["start_metrics"] == before.config["metrics"] == {"val_accuracy": 0.98}
    assert record["from_signature"] == str(signature(before))
    again = adapt_inputs["root"] / "again"
    assert main(adapt_args(adapt_inputs, again, "--nocontr-weights", "1,2")) == 0
    first, second = (load_file(d / "model.safetensors") for d in (out, again))
    assert all(np.array_equal(first[k], second[k]) for k in first)  # seeded: the same run


def test_train_refuses_missing_inputs_and_a_folder_it_would_clobber(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    root = adapt_inputs["root"]
    (adapt_inputs["real_features"] / "alignments.parquet").unlink()
    assert main(adapt_args(adapt_inputs, root / "out")) == 2
    assert "real_features/alignments.parquet does not exist" in capsys.readouterr().err
    (root / "notes").mkdir()
    (root / "notes" / "keep.txt").write_text("mine")
    assert main(adapt_args(adapt_inputs, root / "notes")) == 2
    assert "not a checkpoint directory" in capsys.readouterr().err
    assert (root / "notes" / "keep.txt").read_text() == "mine"
    assert main(adapt_args(adapt_inputs, root / "out", "--nocontr-weights", "1,x")) == 2
    assert "--nocontr-weights" in capsys.readouterr().err
    assert main(adapt_args(adapt_inputs, root / "out", "--nocontr-weights", "1,nan")) == 2
    assert "nocontr_weights must be positive numbers, got (1.0, nan)" in capsys.readouterr().err
    assert main(adapt_args(adapt_inputs, root / "out", "--learning-rate", "nan")) == 2
    assert "learning_rate must be a positive number, got nan" in capsys.readouterr().err
    assert main(adapt_args(adapt_inputs, root / "out", "--epochs", "0")) == 2
    assert "--epochs: epochs must be at least 1, got 0" in capsys.readouterr().err  # the option


def test_a_val_split_without_a_correct_pair_or_a_task_checkpoint_is_refused(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    val = adapt_inputs["real"] / "val.parquet"
    frame = pd.read_parquet(val)
    frame[frame["label"] != "NoContr"].to_parquet(val)
    assert main(adapt_args(adapt_inputs, adapt_inputs["root"] / "out")) == 2
    assert "val.parquet holds no NoContr pair" in capsys.readouterr().err
    frame.to_parquet(val)
    task = load(adapt_inputs["checkpoint"])
    config = MismatchConfig.from_dict({**task.model.config.to_dict(), "num_ratings": 2})
    criteria = [{"key": key, "low": 1.0, "high": 5.0} for key in ("a", "b")]
    save_pretrained(
        MismatchModel(config),
        adapt_inputs["checkpoint"],
        scaler=task.scaler,
        tasks={"mine": {"kind": "regression", "criteria": criteria}},
    )
    assert main(adapt_args(adapt_inputs, adapt_inputs["root"] / "out")) == 2
    assert "is a task checkpoint" in capsys.readouterr().err
    grafted = [*adapt_args(adapt_inputs, adapt_inputs["root"] / "out"), "--add-features", "ter"]
    assert main(grafted) == 2  # it said 'metric columns are added to a base with a metric branch'
    assert "is a task checkpoint; metric columns are added to its base" in capsys.readouterr().err


def test_a_damaged_feature_cache_or_store_is_named(adapt_inputs: dict[str, Path], capsys) -> None:
    """Each gave pyarrow's traceback, exit 1."""
    for name in ("train.parquet", "embeddings.parquet"):
        damaged = adapt_inputs["real_features"] / name
        kept = damaged.read_bytes()
        damaged.write_bytes(b"not parquet")
        assert main(adapt_args(adapt_inputs, adapt_inputs["root"] / "out")) == 2
        assert f"{damaged} is not a readable" in capsys.readouterr().err
        damaged.write_bytes(kept)


def test_a_text_missing_from_the_embedding_store_is_named(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    store_path = adapt_inputs["synth_features"] / "embeddings.parquet"
    store = EmbeddingStore.open(store_path)
    del store.vectors[text_key("synth val gen 3")]
    store.save(store_path)
    assert main(adapt_args(adapt_inputs, adapt_inputs["root"] / "out")) == 2
    err = capsys.readouterr().err
    assert "val.parquet: no embedding stored for text 'synth val gen 3'" in err
    assert "synth_features" in err


# --- the token-level branch, grafted ---------------------------------------------------------


def write_token_states(inputs: dict[str, Path], rng: np.random.Generator) -> None:
    """What mismatch features --tokens leaves in each features folder: unit-length states of a
    few tokens for every ref and gen text."""
    for name in ("real", "synth"):
        texts = {
            text
            for split in ("train", "val")
            for side in ("ref", "gen")
            for text in pd.read_parquet(inputs[name] / f"{split}.parquet")[side]
        }
        states = {}
        for text in sorted(texts):
            rows = rng.standard_normal((int(rng.integers(1, 5)), DIM)).astype(np.float32)
            states[text_key(text)] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        tokens = TokenStore(inputs[f"{name}_features"] / "tokens")
        tokens.claim(LAYER_SOURCE)
        tokens.add(states)


def test_joined_token_tables_keep_every_texts_states() -> None:
    rng = np.random.default_rng(1)
    first = [rng.standard_normal((n, 3)).astype(np.float16) for n in (2, 1)]
    second = [rng.standard_normal((n, 3)).astype(np.float16) for n in (3,)]
    joined = TokenTable.joined([TokenTable(first, 3), TokenTable(second, 3)])
    states, mask = joined.batch(torch.tensor([2, 0, 1]))
    assert mask.sum(1).tolist() == [3, 2, 1]
    for position, expected in enumerate([second[0], first[0], first[1]]):
        assert np.array_equal(
            states[position, : len(expected)].numpy(), expected.astype(np.float32)
        )
    assert not states[2, 1:].any()  # padding stays zero


def test_a_grafted_token_branch_starts_from_the_checkpoints_predictions(
    adapt_inputs: dict[str, Path],
) -> None:
    write_token_states(adapt_inputs, np.random.default_rng(2))
    checkpoint = load(adapt_inputs["checkpoint"])
    grafted = with_token_branch(checkpoint.model).eval()
    assert grafted.config.use_tokens and not checkpoint.model.config.use_tokens
    plain = load_split_inputs(checkpoint, adapt_inputs["real"], adapt_inputs["real_features"])
    with_tokens = load_split_inputs(
        checkpoint, adapt_inputs["real"], adapt_inputs["real_features"], add_token_branch=True
    )
    rows = slice(0, 40)
    batch = with_tokens["val"].rows(rows)
    assert batch["tokens"]["ref"].shape[-1] == DIM
    with torch.no_grad():
        before = checkpoint.model(**plain["val"].rows(rows))
        after = grafted(**batch)
    assert torch.allclose(before, after, atol=1e-6)
    with pytest.raises(ValueError, match="already has the token-level branch"):
        with_token_branch(grafted)


def test_train_with_a_grafted_token_branch_writes_a_checkpoint_that_reads_tokens(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    root = adapt_inputs["root"]
    out = root / "tokens"
    assert main(adapt_args(adapt_inputs, out, "--add-token-branch")) == 2  # no states yet
    assert "real_features/tokens does not exist" in capsys.readouterr().err
    write_token_states(adapt_inputs, np.random.default_rng(3))
    assert main(adapt_args(adapt_inputs, out, "--add-token-branch", "--nocontr-weights", "1")) == 0
    after = load(out)
    assert after.model.config.use_tokens
    record = after.config["training"]["continued"]
    assert record["settings"]["add_token_branch"] is True
    assert record["chosen"]["real_val_acc"] > record["runs"][0][0]["real_val_acc"] + 0.2
    weights = load_file(out / "model.safetensors")
    assert np.abs(weights["head.0.weight"][:, 32:64]).sum() > 0  # the branch is read now
    sets = load_split_inputs(after, adapt_inputs["real"], adapt_inputs["real_features"])
    accuracy, _ = val_figures(after.model, sets["val"])
    assert round(accuracy, 4) == record["chosen"]["real_val_acc"]
    # a checkpoint that already has the branch is not grafted twice
    assert main(adapt_args(adapt_inputs, root / "twice", "--checkpoint", str(out),
                           "--add-token-branch")) == 2  # fmt: skip
    assert "has no token-level branch yet" in capsys.readouterr().err


def test_train_adds_a_metric_column_the_checkpoint_did_not_read(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    root = adapt_inputs["root"]
    out = root / "more"
    assert main(adapt_args(adapt_inputs, out, "--add-features", "no_such")) == 2
    assert "unknown feature(s) 'no_such'" in capsys.readouterr().err
    assert main(adapt_args(adapt_inputs, out, "--add-features", "chrf")) == 2
    assert "already reads chrf" in capsys.readouterr().err
    assert main(adapt_args(adapt_inputs, out, "--add-features", "repeat_word")) == 2
    assert "repeat_word" in capsys.readouterr().err  # not in the feature caches yet
    rng = np.random.default_rng(5)
    for name in ("real", "synth"):
        for split in ("train", "val"):
            path = adapt_inputs[f"{name}_features"] / f"{split}.parquet"
            frame = pd.read_parquet(path)
            frame["repeat_word"] = rng.integers(0, 4, len(frame)).astype(float)
            frame.to_parquet(path)
    args = adapt_args(adapt_inputs, out, "--add-features", "repeat_word", "--nocontr-weights", "1")
    assert main(args) == 0
    before, after = load(adapt_inputs["checkpoint"]), load(out)
    assert after.feature_names == [*before.feature_names, "repeat_word"]
    assert after.scaler.names == after.feature_names
    assert after.scaler.to_dict()["low"][:2] == before.scaler.to_dict()["low"]
    assert after.config["training"]["continued"]["settings"]["add_features"] == ["repeat_word"]
    sets = load_split_inputs(after, adapt_inputs["real"], adapt_inputs["real_features"])
    accuracy, _ = val_figures(after.model, sets["val"])
    assert round(accuracy, 4) == after.config["training"]["continued"]["chosen"]["real_val_acc"]


def test_train_head_only_learns_a_new_column_and_leaves_the_base_as_it_was(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    root = adapt_inputs["root"]
    out = root / "head-only"
    assert main(adapt_args(adapt_inputs, out, "--head-only")) == 2
    assert "--head-only needs --add-features" in capsys.readouterr().err
    missing = adapt_args(adapt_inputs, out, "--real", str(root / "none"))  # the later one counts
    assert main(missing) == 2
    assert f"--real {root / 'none'}: no such folder of pairs" in capsys.readouterr().err
    rng = np.random.default_rng(6)
    for name in ("real", "synth"):
        for split in ("train", "val"):
            labels = pd.read_parquet(adapt_inputs[name] / f"{split}.parquet")["label"]
            path = adapt_inputs[f"{name}_features"] / f"{split}.parquet"
            frame = pd.read_parquet(path)  # the column tells the error apart, with noise
            frame["repeat_word"] = (labels != "NoContr") * 3.0 + rng.random(len(frame))
            frame.to_parquet(path)
    args = [*adapt_args(adapt_inputs, out, "--add-features", "repeat_word", "--head-only"),
            "--nocontr-weights", "1", "--learning-rate", "0.1"]  # fmt: skip
    assert main(args) == 0
    before, after = load(adapt_inputs["checkpoint"]), load(out)
    assert after.feature_names == [*before.feature_names, "repeat_word"]
    assert after.model.config.head_only_features == ["repeat_word"]
    kept = before.model.state_dict()
    for name, tensor in after.model.state_dict().items():
        if not name.startswith("feature_logits."):
            assert torch.equal(tensor, kept[name]), name
    chosen = after.config["training"]["continued"]["chosen"]
    assert chosen["epoch"] > 0  # the column earned its place
    assert after.config["training"]["continued"]["before"] is None  # the start was not continued
    assert after.config["training"]["continued"]["settings"]["head_only"] is True
    sets = load_split_inputs(after, adapt_inputs["real"], adapt_inputs["real_features"])
    accuracy, _ = val_figures(after.model, sets["val"])
    assert round(accuracy, 4) == chosen["real_val_acc"]
    # continued once more, the card keeps the record of the run that made its start
    again = [*adapt_args(adapt_inputs, root / "again", "--checkpoint", str(out)),
             "--nocontr-weights", "1", "--epochs", "1"]  # fmt: skip
    assert main(again) == 0
    record = load(root / "again").config["training"]["continued"]
    assert record["before"] == after.config["training"]["continued"]


# --- graded chains -------------------------------------------------------------------------


def test_graded_chains_grow_one_error_at_a_time_on_each_real_base(data: Path, capsys) -> None:
    real = data / "real"
    assert main(["adapt", "pairs", "--out", str(real), "--human", str(data / "human"),
                 "--sick", str(data / "sick_train.jsonl.gz")]) == 0  # fmt: skip
    out = data / "graded"
    assert main(["adapt", "chains", "--real", str(real), "--out", str(out), "--depth", "0"]) == 2
    assert "--depth must be at least 1, got 0" in capsys.readouterr().err
    assert main(["adapt", "chains", "--real", str(real), "--out", str(out), "--seed", "-1"]) == 2
    assert "--seed must be in 0..4294967295, got -1" in capsys.readouterr().err
    before = (real / "train.parquet").read_bytes()
    assert main(["adapt", "chains", "--real", str(real), "--out", str(real)]) == 2
    assert "is the --real folder this run reads" in capsys.readouterr().err
    assert (real / "train.parquet").read_bytes() == before
    for name, change, message in (
        ("no_rule", lambda f: f.drop(columns="rule"), "lacks column(s) rule"),
        ("synth", lambda f: f.assign(rule="synth"), "holds no real bases (rule 'real_base')"),
    ):  # not a `mismatch adapt pairs` folder: named, nothing written
        other = data / name
        other.mkdir()
        for split in ("train", "val"):
            frame = change(pd.read_parquet(real / f"{split}.parquet"))
            frame.to_parquet(other / f"{split}.parquet")
        assert main(["adapt", "chains", "--real", str(other), "--out", str(out)]) == 2
        assert message in capsys.readouterr().err and not out.exists()
    assert main(["adapt", "chains", "--real", str(real), "--out", str(out)]) == 0
    train = pd.read_parquet(out / "train.parquet")
    copied = int((train["parent"] != "").sum())
    printed = capsys.readouterr().out
    assert f"train: {len(train) - copied} bases, {copied} copies (" in printed
    assert "{" not in printed  # class counts as words, not a Python dict
    chains = pd.concat([read_pairs(out / f"{s}.parquet", labelled=True) for s in ("train", "val")])
    pairs = pd.concat([read_pairs(real / f"{s}.parquet", labelled=True) for s in ("train", "val")])
    bases = chains[chains["parent"] == ""]
    assert set(bases["id"]) == set(pairs["id"][pairs["rule"] == "real_base"])
    assert (bases["label"] == "NoContr").all()
    copies = chains[chains["parent"] != ""]
    by_id = chains.set_index("id")
    assert len(copies) > len(bases)  # chains longer than one copy
    for copy in copies.itertuples():
        parent = by_id.loc[copy.parent]
        assert copy.ref == parent.ref and copy.gen != parent.gen
        depth = json.loads(copy.detail)["depth"]
        if parent.parent == "":  # the first error, on the base itself
            assert depth == 1
        else:  # one more error of the same class
            assert (copy.label, depth) == (parent.label, json.loads(parent.detail)["depth"] + 1)
        assert copy.rule == f"graded/{copy.label}" and copy.label != "NoContr"
    assert max(json.loads(d)["depth"] for d in copies["detail"]) == 3
    again = data / "again"
    assert main(["adapt", "chains", "--real", str(real), "--out", str(again)]) == 0
    assert pd.read_parquet(again / "train.parquet").equals(pd.read_parquet(out / "train.parquet"))


def test_graded_links_against_the_base_skip_every_copy_with_an_error(
    adapt_inputs: dict[str, Path],
) -> None:
    """Ranked against its chain's base, a copy with two errors must sit two margins below
    the correct base, and no copy that carries an error is ever the one pushed up."""
    write_graded_set(adapt_inputs, np.random.default_rng(8))
    checkpoint = load(adapt_inputs["checkpoint"])
    folders = (adapt_inputs["graded"], adapt_inputs["graded_features"])
    frame = pd.read_parquet(adapt_inputs["graded"] / "val.parquet")
    for against, depth_two_above, depth_two_steps in (("parent", 1, 1.0), ("base", 0, 2.0)):
        links = load_graded_links(checkpoint, *folders, against=against)["val"]
        ids = frame["id"]
        pairs = {ids[c]: (ids[a], s) for c, a, s in
                 zip(links.child.tolist(), links.above.tolist(), links.steps.tolist(), strict=True)}  # fmt: skip
        assert pairs["val-4-1"] == ("val-4-0", 1.0)
        assert pairs["val-4-2"] == (f"val-4-{depth_two_above}", depth_two_steps)
    looped = frame.copy()
    looped.loc[0, "parent"] = "val-0-1"  # the base's parent is its own copy
    looped.to_parquet(adapt_inputs["graded"] / "val.parquet")
    with pytest.raises(DataError, match="the parents of 'val-0-0' form a loop"):
        load_graded_links(checkpoint, *folders, against="base")
    with pytest.raises(ValueError, match="against must be one of parent, base, got 'bases'"):
        load_graded_links(checkpoint, *folders, against="bases")  # a typo is not the default


def test_a_copy_that_meets_another_chain_ends_its_own(monkeypatch) -> None:
    """Two bases on one reference can give the same copy: it is one pair, in the chain that
    made it first; the other chain ends there, so no depth or link is ever mixed up."""
    import evaluator.training.real_bases as real_bases

    split = pd.DataFrame([
        {"id": f"b{i}", "ref": "R.", "gen": gen, "label": "NoContr", "label_id": 0,
         "source": "wmt16", "group": "g", "rule": "real_base", "detail": "{}"}
        for i, gen in enumerate(["A cat sat.", "The cat sat."])
    ])  # fmt: skip

    def chains(records, size, seed, depth):  # b0 -> X -> Y; b1 -> X (met) -> Z
        copies = [HumanRecord(f"{records[o].id}~NumErr~{t}", ("R.",), t, None, "g", {})
                  for o, t in ((0, "X"), (1, "X"), (0, "Y"), (1, "Z"))]  # fmt: skip
        return copies, [0, 1, 0, 1], [-1, -1, 0, 1]

    monkeypatch.setattr(real_bases, "contrast_records", chains)
    frame = real_bases.graded_chains(split)
    by_gen = frame.set_index("gen")
    assert list(frame["gen"]) == ["A cat sat.", "The cat sat.", "X", "Y"]
    assert by_gen.loc["X", "parent"] == "b0" and by_gen.loc["Y", "parent"] == by_gen.loc["X", "id"]
    assert [json.loads(d).get("depth") for d in frame["detail"][2:]] == [1, 2]


def write_graded_set(inputs: dict[str, Path], rng: np.random.Generator) -> None:
    """Chains of a base and two copies whose chrf, which the class labels follow, stays the
    base's: only bleu, falling along each chain, tells a copy from its parent. The class loss
    alone gives no reason to read it; the chains' hinge does."""
    root = inputs["root"]
    pairs_dir, features_dir = root / "graded", root / "graded_features"
    pairs_dir.mkdir()
    features_dir.mkdir()
    embeddings, alignments = EmbeddingStore(), EmbeddingStore()
    embeddings.claim(MEAN_SOURCE)
    alignments.claim(LAYER_SOURCE)
    for split, chains in (("train", 60), ("val", 30)):
        rows, features = [], []
        for c in range(chains):
            chrf, bleu = 50 + rng.random() * 50, 60 + rng.random() * 40
            for depth in range(3):
                rows.append({
                    "id": f"{split}-{c}-{depth}", "ref": f"graded {split} ref {c}",
                    "gen": f"graded {split} gen {c} {depth}",
                    "label": "NumErr" if depth else "NoContr", "label_id": CODES.index(
                        "NumErr" if depth else "NoContr"),
                    "parent": f"{split}-{c}-{depth - 1}" if depth else "",
                })  # fmt: skip
                features.append({"id": rows[-1]["id"], "chrf": chrf, "bleu": bleu - 25 * depth})
        frame = pd.DataFrame(rows)
        frame.to_parquet(pairs_dir / f"{split}.parquet")
        pd.DataFrame(features).to_parquet(features_dir / f"{split}.parquet")
        texts = sorted(set(frame["ref"]) | set(frame["gen"]))
        embeddings.add(texts, rng.standard_normal((len(texts), DIM)).astype(np.float32))
        alignments.add_keyed(
            {pair_key(r, g): rng.standard_normal(2 * DIM).astype(np.float32)
             for r, g in zip(frame["ref"], frame["gen"], strict=True)}
        )  # fmt: skip
    embeddings.save(features_dir / "embeddings.parquet")
    alignments.save(features_dir / "alignments.parquet")
    inputs["graded"], inputs["graded_features"] = pairs_dir, features_dir


def test_train_with_graded_chains_ranks_each_added_error_below_its_parent(
    adapt_inputs: dict[str, Path], capsys
) -> None:
    root = adapt_inputs["root"]
    assert main(adapt_args(adapt_inputs, root / "out", "--graded", str(root))) == 2
    assert "--graded and --graded-features go together" in capsys.readouterr().err
    assert main(adapt_args(adapt_inputs, root / "out", "--graded-weight", "2")) == 2
    assert "--graded-weight, --graded-margin and --graded-against need --graded" in (
        capsys.readouterr().err
    )
    write_graded_set(adapt_inputs, np.random.default_rng(8))
    graded = ["--graded", str(adapt_inputs["graded"]),
              "--graded-features", str(adapt_inputs["graded_features"]), "--nocontr-weights", "1"]  # fmt: skip
    assert main(adapt_args(adapt_inputs, root / "out", *graded, "--graded-margin", "nan")) == 2
    assert "graded_margin must be a number, got nan" in capsys.readouterr().err
    figures = {}
    for weight in ("0", "30"):  # a tiny model on random inputs: the hinge must outweigh the rest
        out = root / f"graded-{weight}"
        assert main(adapt_args(adapt_inputs, out, *graded, "--graded-weight", weight)) == 0
        record = load(out).config["training"]["continued"]
        assert record["graded_links"] == {"train": 120, "val": 60}
        assert record["settings"]["graded_weight"] == float(weight)
        figures[weight] = [epoch["graded_val_below"] for epoch in record["runs"][0]]
    assert figures["0"][0] == figures["30"][0]  # the same start
    assert max(figures["0"]) < 0.8  # the labels alone do not order the chains
    assert max(figures["30"]) >= 0.95
    against = root / "graded-base"
    assert main(adapt_args(adapt_inputs, against, *graded, "--graded-against", "base")) == 0
    record = load(against).config["training"]["continued"]
    assert record["settings"]["graded_against"] == "base"
    assert record["graded_links"] == {"train": 120, "val": 60}
    frame = pd.read_parquet(adapt_inputs["graded"] / "val.parquet")
    frame.loc[1, "parent"] = "nowhere"
    frame.to_parquet(adapt_inputs["graded"] / "val.parquet")
    assert main(adapt_args(adapt_inputs, root / "bad", *graded)) == 2
    assert "val.parquet: parent 'nowhere' is no pair of the file" in capsys.readouterr().err
