"""Token states: the sharded store, padded batches, and the model's token-level branch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from evaluator.features import text_key
from evaluator.features.token_store import TokenStore, TokenTable
from evaluator.model import MismatchConfig, MismatchModel


def states(length: int, dim: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((length, dim)).astype(np.float16)


def test_store_appends_shards_and_reads_them_back(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    store = TokenStore(path)
    assert len(store) == 0 and not path.exists()
    first = {text_key("a b c"): states(3), text_key(""): states(0)}
    assert store.add(first) == 2
    assert store.add(first) == 0  # nothing new, no empty shard
    assert store.add({text_key("d"): states(1, seed=1), text_key("a b c"): states(3, seed=9)}) == 1
    reopened = TokenStore(path)
    assert len(reopened) == 3 and reopened.shards == 2 and "a b c" in reopened
    np.testing.assert_array_equal(reopened.states[text_key("a b c")], states(3))
    table = reopened.table(["d", "", "a b c"])
    assert table.lengths.tolist() == [1, 0, 3]
    with pytest.raises(KeyError, match="no token states stored for text 'missing'"):
        reopened.table(["missing"])


def test_two_writers_at_once_keep_each_others_shards(tmp_path: Path) -> None:
    """Two `mismatch features` runs filling one store (train and val at once) both wrote shard
    00000: the later one replaced the other's states, and its keys could sit beside them."""
    path = tmp_path / "tokens"
    first, second = TokenStore(path), TokenStore(path)  # both opened before either wrote
    assert first.add({text_key("a"): states(3)}) == 1
    assert second.add({text_key("b"): states(2, seed=1)}) == 1
    both = TokenStore(path)
    assert sorted(both.states) == sorted([text_key("a"), text_key("b")]) and both.shards == 2
    np.testing.assert_array_equal(both.states[text_key("a")], states(3))
    np.testing.assert_array_equal(both.states[text_key("b")], states(2, seed=1))


def test_a_shard_whose_write_fails_leaves_nothing_behind(tmp_path: Path, monkeypatch) -> None:
    """Its name is taken by making the states file first; a failed keys write (a full disk,
    Ctrl-C) must not leave those states, which no later run would write over."""
    import evaluator.features.token_store as token_store

    path = tmp_path / "tokens"

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(token_store.pq, "write_table", full_disk)
        with pytest.raises(OSError, match="No space left"):
            TokenStore(path).add({text_key("a"): states(3)})
    assert sorted(p.name for p in path.iterdir()) == []
    assert TokenStore(path).add({text_key("a"): states(3)}) == 1
    assert sorted(p.name for p in path.iterdir()) == ["00000.keys.parquet", "00000.npy"]


def test_an_unfinished_shard_is_ignored_and_odd_shapes_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    TokenStore(path).add({text_key("x"): states(2)})
    np.save(path / "00001.npy", states(5))  # states written, keys not: an interrupted shard
    assert len(TokenStore(path)) == 1
    with pytest.raises(ValueError, match="widths"):
        TokenStore(path).add({text_key("y"): states(2, dim=6)})
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(ValueError, match="is not a folder"):
        TokenStore(tmp_path / "file")
    (path / "notes.txt").write_text("mine")  # a folder of someone's files is not a store
    with pytest.raises(ValueError, match="holds notes.txt, not only token-store shards"):
        TokenStore(path)


def test_table_batches_are_zero_padded_with_a_mask() -> None:
    rows = [states(2), states(0), states(3, seed=1)]
    table = TokenTable(rows, dim=4)
    batch, mask = table.batch(torch.tensor([2, 0, 1]))
    assert batch.shape == (3, 3, 4) and batch.dtype == torch.float32
    assert mask.tolist() == [[True, True, True], [True, True, False], [False, False, False]]
    np.testing.assert_array_equal(batch[0].numpy(), rows[2].astype(np.float32))
    np.testing.assert_array_equal(batch[1, :2].numpy(), rows[0].astype(np.float32))
    assert not batch[1, 2].any() and not batch[2].any()


def token_model(**overrides) -> MismatchModel:
    config = {"feature_names": ["a"], "embedding_dim": 8, "use_tokens": True, "token_dim": 4}
    return MismatchModel(MismatchConfig(**{**config, **overrides})).eval()


def token_inputs(lengths: list[int], other: list[int], seed: int = 0) -> dict:
    generator = torch.Generator().manual_seed(seed)

    def side(counts: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(counts)
        values = torch.nn.functional.normalize(
            torch.randn(len(counts), width, 8, generator=generator), dim=-1
        )
        mask = torch.arange(width).unsqueeze(0) < torch.tensor(counts).unsqueeze(1)
        return values * mask.unsqueeze(-1), mask

    ref, ref_mask = side(lengths)
    gen, gen_mask = side(other)
    return {"ref": ref, "ref_mask": ref_mask, "gen": gen, "gen_mask": gen_mask}


def test_token_branch_ignores_padding_and_token_order() -> None:
    model = token_model()
    inputs = {"features": torch.full((3, 1), 0.5), "ref": torch.ones(3, 8), "gen": torch.ones(3, 8)}
    tokens = token_inputs([3, 5, 0], [2, 4, 1])
    logits = model(**inputs, tokens=tokens)
    padded = {
        key: torch.cat([value, torch.zeros_like(value[:, :2])], dim=1)
        for key, value in tokens.items()
    }
    torch.testing.assert_close(model(**inputs, tokens=padded), logits)
    order = torch.tensor([1, 0, 2, 4, 3])
    shuffled = dict(tokens, ref=tokens["ref"][:, order], ref_mask=tokens["ref_mask"][:, order])
    torch.testing.assert_close(model(**inputs, tokens=shuffled), logits)
    changed = dict(tokens, gen=torch.flip(tokens["gen"], dims=[-1]))
    assert not torch.allclose(model(**inputs, tokens=changed)[:2], logits[:2])


def test_token_branch_needs_tokens_and_a_frozen_text_branch() -> None:
    model = token_model()
    with pytest.raises(ValueError, match="pass tokens="):
        model(features=torch.zeros(1, 1), ref=torch.ones(1, 8), gen=torch.ones(1, 8))
    with pytest.raises(ValueError, match="use_tokens needs use_text in frozen encoder mode"):
        token_model(use_text=False)


def test_a_token_base_fine_tunes_and_rates_as_predict_does(tmp_path: Path) -> None:
    """Fine-tuning caches the token states of the human-rated texts, and the task checkpoint
    reads each pair against its references exactly as ``mismatch predict`` does."""
    import gzip
    import json

    import pandas as pd
    from tiny_bert import tiny_bert
    from transformers import AutoTokenizer

    from evaluator.features import FeatureScaler
    from evaluator.finetune.config import FitSettings
    from evaluator.finetune.datamodule import prepare_task
    from evaluator.finetune.outputs import task_outputs
    from evaluator.finetune.train import export, fit
    from evaluator.hub import load, save_pretrained
    from evaluator.inference import predict_outputs
    from mismatch_core.resources import encoder_path

    encoder = tmp_path / "encoder"
    tokenizer = AutoTokenizer.from_pretrained(encoder_path())
    tiny_bert(tokenizer.vocab_size, hidden_size=16, num_layers=1).save_pretrained(encoder)
    tokenizer.save_pretrained(encoder)
    features = ["bleu", "chrf"]
    torch.manual_seed(0)
    config = MismatchConfig(
        feature_names=features, encoder=str(encoder), embedding_dim=16, text_dim=8, set_dim=8,
        num_heads=2, num_blocks=1, use_tokens=True, token_dim=4,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    scaler = FeatureScaler.fit(pd.DataFrame(rng.random((40, 2)), columns=features))
    base = save_pretrained(MismatchModel(config), tmp_path / "base", scaler=scaler)
    words = "the a dog cat ran sat on mat big small red house park".split()
    rows = []
    for group in range(12):
        refs = [" ".join(rng.choice(words, 5)), " ".join(rng.choice(words, 6))]
        for system in range(3):
            gen = refs[0] if system == 0 else " ".join(rng.choice(words, 5))
            scores = dict.fromkeys(
                ("coherence", "consistency", "fluency", "relevance"), 5.0 - system
            )
            rows.append({"id": f"s:{group}:{system}", "ref": refs, "gen": gen, "src": None,
                         "group": f"s:{group}", "scores": scores})  # fmt: skip
    root = tmp_path / "human"
    (root / "summarization").mkdir(parents=True)
    with gzip.open(root / "summarization" / "summeval.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    prepared = prepare_task("summarization", str(base), tmp_path / "cache", root)
    assert (
        prepared.inputs.tokens is not None
        and (tmp_path / "cache" / "summarization.tokens").is_dir()
    )
    settings = FitSettings(
        max_steps=4, val_check_interval=2, patience=2, batch_size=8, val_fraction=0.3
    )
    module, data, _ = fit(
        prepared, np.arange(len(prepared.records)), settings, 0, checkpoint=str(base)
    )
    checkpoint = load(export(module, data, tmp_path / "task"))
    assert checkpoint.model.config.use_tokens
    records = prepared.records[:6]
    expected = predict_outputs(
        checkpoint, [list(r.refs) for r in records], [r.gen for r in records]
    )
    picked = np.arange(6)
    _, probabilities, ratings = task_outputs(
        checkpoint.model,
        prepared.features[prepared.inputs.pair_rows(picked)],
        prepared.inputs.subset(picked),
    )
    np.testing.assert_allclose(probabilities, expected.probabilities, atol=1e-5)
    np.testing.assert_allclose(ratings, expected.ratings, atol=1e-5)


def test_length_buckets_cover_every_pair_once_in_batches_of_similar_length() -> None:
    from torch.utils.data import RandomSampler

    from evaluator.training.data import LengthBucketBatchSampler

    lengths = [int(n) for n in np.random.default_rng(0).integers(1, 100, size=1000)]
    torch.manual_seed(0)
    sampler = LengthBucketBatchSampler(RandomSampler(range(1000)), 32, False, lengths, 10)
    batches = list(sampler)
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    assert [len(b) for b in batches].count(32) == 31 and len(batches) == len(sampler) == 32
    spread = np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches])
    assert spread < 20  # random batches of 32 span about 90
    assert batches != list(
        LengthBucketBatchSampler(RandomSampler(range(1000)), 32, False, lengths, 10)
    )
