"""The disfluency feature: its detector, the encoder pass that feeds it, and adding it to a base."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from evaluator.features import encoder_pass
from evaluator.features.compute import feature_versions
from evaluator.features.disfluency import (
    DisfluencyDetector,
    detector_digest,
    load_detector,
    save_detector,
)
from evaluator.features.encoder_pass import Disfluency, EncodedText
from evaluator.features.scaling import FeatureScaler
from evaluator.hub import Checkpoint
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.training.continued import with_features, with_metric_columns
from mismatch_core.errors import DataError, ResourceMissingError


def test_a_texts_score_does_not_depend_on_the_padding_of_its_batch() -> None:
    torch.manual_seed(0)
    detector = DisfluencyDetector(layer=1, dim=8, hidden=4).eval()
    short, long = torch.randn(1, 3, 8), torch.randn(1, 7, 8)
    batch = torch.randn(2, 7, 8)  # padding that is not zero must not count either
    batch[0, :3], batch[1] = short[0], long[0]
    mask = torch.tensor([[True] * 3 + [False] * 4, [True] * 7])
    with torch.no_grad():
        alone = detector(short, torch.ones(1, 3, dtype=torch.bool))
        together = detector(batch, mask)
    assert torch.allclose(alone[0], together[0], atol=1e-6)


def test_the_detector_round_trips_and_a_missing_one_says_how_to_make_it(tmp_path: Path) -> None:
    torch.manual_seed(0)
    detector = DisfluencyDetector(layer=2, dim=8, hidden=4).eval()
    save_detector(detector, tmp_path / "det", {"seed": 1})
    loaded = load_detector(str(tmp_path / "det"))
    states, mask = torch.randn(2, 5, 8), torch.ones(2, 5, dtype=torch.bool)
    assert (loaded.layer, loaded.encoder) == (2, "all-MiniLM-L6-v2")
    assert torch.equal(loaded(states, mask), detector(states, mask))
    with pytest.raises(ResourceMissingError, match="train_disfluency.py"):
        load_detector(str(tmp_path / "absent"))
    config = json.loads((tmp_path / "det" / "config.json").read_text())
    del config["encoder"]  # a detector saved before the config named its encoder
    (tmp_path / "det" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ResourceMissingError, match="config.json: .* no key 'encoder'"):
        load_detector.__wrapped__(str(tmp_path / "det"))


def test_loading_the_detector_leaves_the_random_state_as_it_was(tmp_path: Path) -> None:
    """A fit seeded before the detector's first load (scripts/finetune.py) drew other start
    weights than one seeded after it (mismatch finetune), for the same config."""
    save_detector(DisfluencyDetector(layer=2, dim=8, hidden=4), tmp_path / "det", {})
    torch.manual_seed(0)
    load_detector.__wrapped__(str(tmp_path / "det"))
    drawn = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(drawn, torch.rand(3))


def test_saving_a_detector_never_replaces_a_folder_of_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    with pytest.raises(DataError, match="holds notes.txt, not only config.json"):
        save_detector(DisfluencyDetector(layer=1, dim=8, hidden=4), tmp_path, {})
    with pytest.raises(DataError, match="notes.txt"):
        save_detector(DisfluencyDetector(layer=1, dim=8, hidden=4), tmp_path / "notes.txt", {})
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_the_cache_key_changes_with_the_detectors_files(tmp_path: Path) -> None:
    torch.manual_seed(0)
    save_detector(DisfluencyDetector(layer=1, dim=8, hidden=4), tmp_path / "a", {})
    save_detector(DisfluencyDetector(layer=1, dim=8, hidden=4), tmp_path / "b", {})
    assert detector_digest(str(tmp_path / "a")) != detector_digest(str(tmp_path / "b"))
    assert feature_versions(["disfluency"])["disfluency"].endswith(f"|detector={detector_digest()}")
    assert "detector=" not in feature_versions(["bertscore_f"])["bertscore_f"]


def test_a_detector_trained_on_another_encoder_is_refused(monkeypatch) -> None:
    other = DisfluencyDetector(layer=1, dim=8, hidden=4, encoder="bert-base-uncased")
    monkeypatch.setattr(encoder_pass, "load_detector", lambda: other)
    with pytest.raises(ValueError, match="trained on 'bert-base-uncased' token states"):
        encoder_pass.encode_distinct(["A text."], keep_disfluency=True)


def encoded(score: float | None) -> EncodedText:
    return EncodedText(None, None, np.zeros(2, np.float32), None, score)


def test_the_feature_is_gens_score_above_the_references() -> None:
    scores = Disfluency().compute([encoded(-2.0), encoded(1.0)], [encoded(3.0), encoded(1.0)])
    assert scores[:, 0].tolist() == [5.0, 0.0]
    with pytest.raises(ValueError, match="keep_disfluency"):
        Disfluency().compute([encoded(None)], [encoded(1.0)])


@pytest.mark.slow
def test_the_shipped_detector_reads_a_grammar_slip_as_more_broken_than_a_rewording() -> None:
    from evaluator.features import compute_features

    ref = "A man is riding a horse along the beach."
    rewordings = [
        "A man rides a horse on the beach.",
        "Along the beach a man is riding a horse.",  # a fronted phrase without its comma
    ]
    slips = [
        "A man is ride a horse along the beach.",  # verb form
        "A men is riding a horse along the beach.",  # agreement
        "A man riding is a horse along beach the.",  # swapped neighbours
    ]
    texts = rewordings + slips
    scores = compute_features([ref] * len(texts), texts, ["disfluency"])["disfluency"].tolist()
    assert max(scores[: len(rewordings)]) < min(scores[len(rewordings) :]), scores


def tiny_base(features: list[str]) -> MismatchModel:
    torch.manual_seed(0)
    return MismatchModel(
        MismatchConfig(use_text=False, feature_names=features, set_dim=8, num_heads=2)
    )


def test_a_new_metric_column_keeps_every_trained_weight() -> None:
    base = tiny_base(["bleu", "chrf"])
    grafted = with_metric_columns(base, ("disfluency",))
    assert grafted.config.feature_names == ["bleu", "chrf", "disfluency"]
    old, new = base.state_dict(), grafted.state_dict()
    assert set(old) == set(new)
    for name, value in old.items():
        if name == "metric_set.metric_embedding.weight":
            assert torch.equal(new[name][:2], value) and new[name].shape[0] == 3
        else:
            assert torch.equal(new[name], value), name
    values = torch.rand(4, 3)
    assert grafted(features=values).shape == (4, base.config.num_classes)
    with pytest.raises(ValueError, match="already reads chrf"):
        with_metric_columns(base, ("chrf",))


def test_the_scaler_gains_bounds_for_the_new_column_from_the_train_splits(
    tmp_path: Path,
) -> None:
    folders = []
    for name, values in (("real", [0.0, 1.0, 2.0]), ("synth", [3.0, 4.0])):
        pairs_dir, features_dir = tmp_path / name, tmp_path / f"{name}_features"
        pairs_dir.mkdir()
        features_dir.mkdir()
        ids = [f"{name}{i}" for i in range(len(values))]
        pd.DataFrame(
            {"id": ids, "ref": "a b", "gen": "a c", "label": "NoContr", "label_id": 0}
        ).to_parquet(pairs_dir / "train.parquet")
        pd.DataFrame({"id": ids, "disfluency": values}).to_parquet(features_dir / "train.parquet")
        folders.append((pairs_dir, features_dir))
    scaler = FeatureScaler(["bleu"], [0.0], [50.0], (0.0, 1.0), margin=2.0)
    config = {"features": {"names": ["bleu"], "aggregate": "max"}}
    start = Checkpoint(tiny_base(["bleu"]), scaler, config, tmp_path)
    extended = with_features(start, ("disfluency",), folders)
    assert extended.feature_names == ["bleu", "disfluency"]
    assert extended.scaler.names == ["bleu", "disfluency"]
    assert extended.scaler.low.tolist() == [0.0, 0.0]
    assert extended.scaler.high.tolist() == [50.0, 4.0]
    assert extended.scaler.margin == 2.0
    assert config["features"]["names"] == ["bleu"]  # the start's config is left as it was


def test_a_new_column_with_infinite_values_names_its_cache(tmp_path: Path) -> None:
    from mismatch_core.errors import DataError

    pairs_dir, features_dir = tmp_path / "real", tmp_path / "real_features"
    pairs_dir.mkdir()
    features_dir.mkdir()
    pd.DataFrame(
        {"id": ["a", "b"], "ref": "x y", "gen": "x z", "label": "NoContr", "label_id": 0}
    ).to_parquet(pairs_dir / "train.parquet")
    pd.DataFrame({"id": ["a", "b"], "disfluency": [0.5, float("inf")]}).to_parquet(
        features_dir / "train.parquet"
    )
    scaler = FeatureScaler(["bleu"], [0.0], [50.0])
    start = Checkpoint(tiny_base(["bleu"]), scaler, {"features": {"names": ["bleu"]}}, tmp_path)
    with pytest.raises(
        DataError, match="real_features/train.parquet: feature 'disfluency' has 1 NaN or infinite"
    ):
        with_features(start, ("disfluency",), [(pairs_dir, features_dir)])


def test_the_detector_script_can_make_most_broken_twins_wrong_verb_forms() -> None:
    """Drawn among all GramErr rules, wrong verb forms without a "be" before them were too rare
    for the detector to learn ("to surrounded", "He graduating"); --verb-form-share makes the
    broken twin a verb form where one applies (another rule's where none does), and 0 leaves
    the draw as the shipped detector's: the first of all GramErr rules in a random order."""
    import importlib.util
    import random

    from mismatch_core.resources import REPO_ROOT, load_spacy
    from synth.perturb.grammar import RULES

    spec = importlib.util.spec_from_file_location(
        "train_disfluency", REPO_ROOT / "scripts" / "train_disfluency.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    texts = [
        "He wanted to surround the house before dawn.",
        "The committee decided to transfer the funds last year.",
        "A woman carried a girl across the busy street.",
        "She began her career in London in 1990.",
        "The players will travel to Madrid next week.",
        "They wrote a letter to the mayor about the park.",
        "The boy is riding a red bicycle down the hill.",
        "Two red apples on a wooden table.",  # no verb: another rule breaks it
    ]
    verb_forms = script.twins(texts, seed=13, verb_form_share=1.0)
    rules = [rule for _, _, rule, _ in verb_forms]
    assert len(rules) == len(texts) and rules[:7] == ["GramErr/verb_form"] * 7
    assert verb_forms[7][0] == texts[7] and rules[7] != "GramErr/verb_form"
    drawn = script.twins(texts, seed=13)
    shipped = [
        script.first_change(doc, RULES["GramErr"], random.Random(f"13:{index}")).text
        for index, doc in enumerate(load_spacy(()).pipe(texts))
    ]
    assert [broken for _, broken, _, _ in drawn] == shipped
    assert len({rule for _, _, rule, _ in drawn}) > 2
