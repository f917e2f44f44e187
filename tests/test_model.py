"""The evaluator network: permutation invariance, metric masks, both encoder modes, overfitting."""

from __future__ import annotations

import pytest
import torch
from tiny_bert import tiny_bert
from transformers import AutoTokenizer

from evaluator.model import MismatchConfig, MismatchModel, score_from_logits
from mismatch_core.resources import encoder_path
from mismatch_core.taxonomy import NUM_CLASSES

FEATURES = ["rouge1", "rouge2", "rougeL", "bleu", "chrf", "bertscore"]
EMBEDDING_DIM = 24


def frozen_model(**overrides) -> MismatchModel:
    torch.manual_seed(0)
    config = MismatchConfig(feature_names=FEATURES, embedding_dim=EMBEDDING_DIM, **overrides)
    return MismatchModel(config).eval()


def batch(n: int = 5, seed: int = 1) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {
        "features": torch.rand(n, len(FEATURES), generator=generator),
        "ref": torch.randn(n, EMBEDDING_DIM, generator=generator),
        "gen": torch.randn(n, EMBEDDING_DIM, generator=generator),
    }


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(encoder_path())


@pytest.mark.parametrize("metric_ids", [True, False])
def test_permuting_metrics_leaves_output_unchanged(metric_ids: bool) -> None:
    model = frozen_model(metric_ids=metric_ids)
    inputs = batch()
    order = torch.tensor([3, 0, 5, 1, 4, 2])
    with torch.no_grad():
        full = model(**inputs)
        permuted = model(
            features=inputs["features"][:, order],
            ref=inputs["ref"],
            gen=inputs["gen"],
            metric_ids=order,
        )
    assert torch.allclose(full, permuted, atol=1e-5)


def test_metric_identity_matters_when_ids_are_used() -> None:
    model = frozen_model()
    inputs = batch()
    with torch.no_grad():
        full = model(**inputs)
        relabelled = model(**inputs, metric_ids=torch.tensor([1, 0, 2, 3, 4, 5]))
    assert not torch.allclose(full, relabelled, atol=1e-4)


@pytest.mark.parametrize("metric_ids", [True, False])
def test_masked_metric_equals_model_on_the_subset(metric_ids: bool) -> None:
    model = frozen_model(metric_ids=metric_ids, num_inducing=3)
    inputs = batch()
    keep = torch.tensor([True, True, False, True, False, True])
    mask = keep.expand(len(inputs["features"]), -1)
    with torch.no_grad():
        full = model(**inputs)
        masked = model(**inputs, feature_mask=mask)
        subset = model(
            features=inputs["features"][:, keep],
            ref=inputs["ref"],
            gen=inputs["gen"],
            metric_ids=torch.arange(len(FEATURES))[keep],
        )
    assert torch.isfinite(masked).all()
    assert not torch.allclose(full, masked, atol=1e-4)
    assert torch.allclose(masked, subset, atol=1e-5)


def test_all_metrics_masked_is_an_error() -> None:
    model = frozen_model()
    inputs = batch(2)
    with pytest.raises(ValueError, match="at least one present metric"):
        model(**inputs, feature_mask=torch.zeros(2, len(FEATURES), dtype=torch.bool))


def test_wrong_number_of_metric_columns_is_an_error() -> None:
    model = frozen_model()
    inputs = batch(2)
    inputs["features"] = inputs["features"][:, :4]
    with pytest.raises(ValueError, match="4 metric columns"):
        model(**inputs)


@pytest.mark.parametrize(
    ("overrides", "needs", "unread"),
    [
        ({"use_text": False}, "features", ("ref", "gen")),
        ({"use_metrics": False}, "ref and gen", ("features",)),
    ],
)
def test_ablations_use_one_branch(overrides: dict, needs: str, unread: tuple[str, ...]) -> None:
    model = frozen_model(head_hidden=16, **overrides)
    inputs = batch(3)
    other = batch(3, seed=2)  # what the ablated branch would read
    changed = {**inputs, **{name: other[name] for name in unread}}
    kept = {**other, **{name: inputs[name] for name in unread}}
    with torch.no_grad():
        logits = model(**inputs)
        scores = score_from_logits(logits)
        assert torch.equal(model(**changed), logits)  # the other branch is not read
        assert not torch.allclose(model(**kept), logits)  # this one is
    assert logits.shape == (3, NUM_CLASSES)
    assert ((scores >= 0) & (scores <= 1)).all()
    with pytest.raises(ValueError, match=needs):
        model()


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="at least one of"):
        MismatchConfig(feature_names=FEATURES, use_text=False, use_metrics=False)
    with pytest.raises(ValueError, match="encoder_mode"):
        MismatchConfig(feature_names=FEATURES, encoder_mode="finetune")
    with pytest.raises(ValueError, match="text_interactions needs use_text"):
        MismatchConfig(feature_names=FEATURES, use_text=False, text_interactions=True)
    with pytest.raises(ValueError, match="unknown model config keys: colour"):
        MismatchConfig.from_dict({"feature_names": FEATURES, "colour": "red"})
    # sizes the network would only refuse once it runs
    for key, value, message in (
        ("num_heads", -2, "num_heads must be at least 1, got -2"),
        ("set_dim", 0, "set_dim must be at least 1"),
        ("span_dim", -1, "span_dim must not be negative"),
        ("dropout", 3.0, "dropout must be at least 0 and below 1, got 3.0"),
        ("dropout", -0.1, "dropout must be at least 0"),
    ):
        with pytest.raises(ValueError, match=message):
            MismatchConfig(feature_names=FEATURES, **{key: value})


def overfit(
    model: MismatchModel, inputs: dict, labels: torch.Tensor, steps: int
) -> tuple[float, float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(**inputs), labels)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        logits = model(**inputs)
    loss = torch.nn.functional.cross_entropy(logits, labels).item()
    accuracy = (logits.argmax(-1) == labels).float().mean().item()
    return loss, accuracy


@pytest.mark.parametrize("text_interactions", [False, True])
def test_frozen_model_overfits_a_small_batch(text_interactions: bool) -> None:
    model = frozen_model(text_interactions=text_interactions)
    inputs = batch(32)
    labels = torch.arange(32) % NUM_CLASSES
    loss, accuracy = overfit(model, inputs, labels, steps=150)
    assert accuracy == 1.0
    assert loss < 0.05


def test_trainable_model_overfits_a_small_batch(tokenizer) -> None:
    config = MismatchConfig(feature_names=FEATURES, encoder_mode="trainable")
    model = MismatchModel(config, encoder=tiny_bert(tokenizer.vocab_size))
    assert model.config.embedding_dim == 32
    assert model.config.encoder_config["hidden_size"] == 32
    refs = [f"The {i} dogs ran to the park number {i}." for i in range(16)]
    gens = [f"Some {i} cats sat in house {i * 7}." for i in range(16)]
    inputs = {
        "features": torch.rand(16, len(FEATURES), generator=torch.Generator().manual_seed(0)),
        "ref": dict(tokenizer(refs, padding=True, return_tensors="pt")),
        "gen": dict(tokenizer(gens, padding=True, return_tensors="pt")),
    }
    labels = torch.arange(16) % NUM_CLASSES
    loss, accuracy = overfit(model, inputs, labels, steps=150)
    assert accuracy == 1.0
    assert loss < 0.1


def test_frozen_mode_rejects_token_ids(tokenizer) -> None:
    model = frozen_model()
    tokens = dict(tokenizer(["a"], return_tensors="pt"))
    with pytest.raises(ValueError, match="precomputed embeddings"):
        model(features=torch.rand(1, len(FEATURES)), ref=tokens, gen=tokens)


def test_a_certain_mismatch_head_moves_ratings_by_a_bounded_amount() -> None:
    """The ratings read class log-probabilities floored at 1e-4: a head that grows ever more
    certain a class is absent cannot push a rating without bound."""
    model = frozen_model(num_ratings=1, rating_from_mismatch=True)
    assert model.mismatch_rating is not None and model.rating_head is not None
    representation = model.represent(**batch())
    with torch.no_grad():
        model.mismatch_rating.weight.fill_(1.0)
        model.mismatch_rating.bias.zero_()
        for module in model.head.modules():
            if isinstance(module, torch.nn.Linear):
                module.weight.mul_(1e4)
        unbounded = model.head(representation).log_softmax(-1).sum(-1)
        from_mismatch = model.rate(representation) - model.rating_head(representation)
    floor = NUM_CLASSES * torch.log(torch.tensor(1e-4))
    assert (unbounded < 10 * floor).all()  # the head is that certain
    assert (from_mismatch.squeeze(-1) >= floor - 1e-3).all()


def test_a_head_only_column_moves_the_logits_alone() -> None:
    """A head-only column reaches the mismatch head through its own linear term, zero at the
    start; the metric set and the ratings never read it."""
    model = frozen_model(
        head_only_features=["chrf"], num_ratings=1, rating_from_metrics=True,
        rating_from_mismatch=True,
    )  # fmt: skip
    assert model.metric_set is not None and model.metric_set.num_metrics == len(FEATURES) - 1
    assert model.metric_rating is not None and model.metric_rating.in_features == len(FEATURES) - 1
    assert model.feature_logits is not None
    inputs = batch()
    changed = {**inputs, "features": inputs["features"].clone()}
    changed["features"][:, FEATURES.index("chrf")] += 1.0
    with torch.no_grad():
        representation = model.represent(**inputs)
        assert torch.equal(model.represent(**changed), representation)
        assert torch.equal(model(**changed), model.head(representation))  # zero start
        per_class = torch.linspace(-1.0, 1.0, NUM_CLASSES)
        model.feature_logits.weight[:, 0] = per_class
        logits = model.logits(representation, inputs["features"])
        moved = model.logits(representation, changed["features"])
        torch.testing.assert_close(moved - logits, per_class.expand_as(logits))
        torch.testing.assert_close(
            model.rate(representation, changed["features"]),
            model.rate(representation, inputs["features"]),
        )
    with pytest.raises(ValueError, match="pass features="):
        model.logits(representation)
    with pytest.raises(ValueError, match="metric_ids"):
        model(**inputs, metric_ids=torch.arange(len(FEATURES)))


def test_read_heads_gives_what_logits_and_rate_give_alone() -> None:
    """Inference reads both heads from one pass; the closeness that picks a reference is the
    head's own P(NoContr), without the head-only term."""
    model = frozen_model(
        head_only_features=["chrf"], num_ratings=2, rating_from_metrics=True,
        rating_from_mismatch=True,
    )  # fmt: skip
    assert model.feature_logits is not None
    inputs = batch()
    calls = []
    model.head.register_forward_hook(lambda *_: calls.append(1))
    with torch.no_grad():
        model.feature_logits.weight[:, 0] = torch.linspace(-1.0, 1.0, NUM_CLASSES)
        representation = model.represent(**inputs)
        logits, closeness, ratings = model.read_heads(
            representation, inputs["features"], inputs["features"]
        )
        assert len(calls) == 1  # the head runs once for all three
        torch.testing.assert_close(logits, model.logits(representation, inputs["features"]))
        torch.testing.assert_close(closeness, score_from_logits(model.head(representation)))
        assert ratings is not None
        torch.testing.assert_close(ratings, model.rate(representation, inputs["features"]))
    assert frozen_model().read_heads(representation, inputs["features"], None)[2] is None


def test_a_head_only_column_leaves_every_other_layers_initialisation_as_it_was() -> None:
    """Its term draws no random numbers: a task fitted on a base with a head-only column
    starts from the weights of the fit on the same base without it, and draws the same
    batches."""
    others = [name for name in FEATURES if name != "chrf"]
    settings = {"embedding_dim": EMBEDDING_DIM, "num_ratings": 2, "rating_from_metrics": True}
    torch.manual_seed(0)
    plain = MismatchModel(MismatchConfig(feature_names=others, **settings)).state_dict()
    next_plain = torch.rand(3)  # what training draws next
    torch.manual_seed(0)
    grown = MismatchModel(
        MismatchConfig(feature_names=[*others, "chrf"], head_only_features=["chrf"], **settings)
    )
    assert torch.equal(torch.rand(3), next_plain)
    assert grown.feature_logits is not None and not grown.feature_logits.weight.any()
    for name, tensor in plain.items():
        assert torch.equal(tensor, grown.state_dict()[name]), name


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"head_only_features": ["meteor"]}, "not in feature_names: meteor"),
        ({"head_only_features": FEATURES}, "needs a column that is not in head_only_features"),
        ({"head_only_features": ["chrf"], "use_metrics": False}, "needs use_metrics"),
    ],
)
def test_head_only_features_must_name_metric_columns_the_set_can_spare(
    overrides: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        frozen_model(**overrides)
