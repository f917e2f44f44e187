"""Fast feature tests: registry, surface statistics, aggregation, scaler, embedding store, cache."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unicodedata

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch

from evaluator.cli import main as cli_main
from evaluator.features import (
    DEFAULT_FEATURES,
    EmbeddingStore,
    FeatureScaler,
    available_features,
    compute_features,
    encoder_pass,
    pair_key,
    text_key,
)
from evaluator.features.cache import foreign_cache_problem, row_key, update_feature_cache
from evaluator.features.embeddings import encoder_reading, encoder_source
from evaluator.features.lexical import (
    Agreement,
    EditDistance,
    Fragments,
    LengthRatio,
    Rouge,
    UnfinishedEnd,
    extractive_fragments,
    rouge_l,
)
from evaluator.features.registry import METRICS, metrics_for
from evaluator.model.mismatch_model import SourceScaling
from mismatch_core.errors import DataError, WorkerError
from mismatch_core.vocabulary_gaps import ENCODER_TEXT_FORM

# Features that need neither the encoder nor WordNet: cheap enough for every test run.
LIGHT = [
    "rouge1_f", "rougeL_p", "bleu", "chrf", "chrf_pp", "ter", "length_ratio", "edit_distance",
    "novel_2gram", "coverage", "density", "compression", "numbers_agree", "negation_agree",
    "entities_agree",
]  # fmt: skip


def test_default_features_are_registered_once_each():
    assert set(DEFAULT_FEATURES) <= set(available_features())
    assert len(set(DEFAULT_FEATURES)) == len(DEFAULT_FEATURES)


def test_unknown_or_repeated_feature_is_named():
    with pytest.raises(ValueError, match="'rouge9_f'"):
        metrics_for(["bleu", "rouge9_f"])
    with pytest.raises(ValueError, match="named twice: bleu"):
        metrics_for(["bleu", "bleu"])


def test_fragments_follow_grusky_algorithm():
    article = "the cat sat on the mat".split()
    summary = "the cat sat on a mat".split()
    assert extractive_fragments(article, summary) == [4, 1]
    row = Fragments().compute(["the cat sat on the mat"], ["the cat sat on a mat"])[0]
    novel_1, novel_2, novel_3, coverage, density, compression = row
    assert novel_1 == pytest.approx(1 / 6)
    assert novel_2 == pytest.approx(2 / 5)
    assert novel_3 == pytest.approx(2 / 4)
    assert coverage == pytest.approx(5 / 6)
    assert density == pytest.approx(17 / 6)
    assert compression == pytest.approx(1.0)


def grusky_algorithm_1(article: list[str], summary: list[str]) -> list[int]:
    """Algorithm 1 of Grusky et al. (2018) as printed: the whole article for every position."""
    lengths = []
    i = 0
    while i < len(summary):
        best, j = 0, 0
        while j < len(article):
            if summary[i] == article[j]:
                i_end, j_end = i, j
                while (
                    i_end < len(summary)
                    and j_end < len(article)
                    and summary[i_end] == article[j_end]
                ):
                    i_end, j_end = i_end + 1, j_end + 1
                best = max(best, i_end - i)
                j = j_end
            else:
                j += 1
        i += max(best, 1)
        if best:
            lengths.append(best)
    return lengths


def test_fragments_are_those_of_algorithm_1_on_random_texts():
    """Few distinct tokens make many overlapping runs, where a skipped position would show."""
    rng = np.random.default_rng(0)
    for _ in range(3_000):
        article = [str(token) for token in rng.integers(0, 3, rng.integers(0, 25))]
        summary = [str(token) for token in rng.integers(0, 3, rng.integers(0, 25))]
        assert extractive_fragments(article, summary) == grusky_algorithm_1(article, summary)


def test_agreement_of_numbers_negation_and_names():
    rows = Agreement().compute(
        ["Four apples fell.", "He took 4 gifts.", "Anna met Tom in Paris.", "a dog runs"],
        ["Six apples fell.", "He did not take four gifts.", "Anna met Bob in Paris.", "a dog runs"],
    )
    numbers, negation, names = rows.T
    assert numbers.tolist() == [0.0, 1.0, 1.0, 1.0]
    assert negation.tolist() == [1.0, 0.0, 1.0, 1.0]
    assert names[2] == pytest.approx(2 * 2 / 6)
    assert names[[0, 1, 3]].tolist() == [1.0, 1.0, 1.0]


def test_length_ratio_and_edit_distance():
    assert LengthRatio().compute(["a b c d", ""], ["a b", "x y"])[:, 0].tolist() == [0.5, 2.0]
    assert EditDistance().compute(["abcd", ""], ["abcf", ""])[:, 0].tolist() == [0.25, 0.0]


def test_rouge_l_is_the_longest_common_subsequence_over_each_length():
    precision, recall, f = rouge_l(["a", "b", "c", "d"], ["b", "x", "d"])
    assert (precision, recall) == (2 / 3, 2 / 4)
    assert f == pytest.approx(2 * precision * recall / (precision + recall))
    assert rouge_l([], ["a"]) == rouge_l(["a"], []) == (0.0, 0.0, 0.0)


def test_rouge_of_long_texts_builds_no_table_of_their_token_pairs():
    """rouge-score's own ROUGE-L needs len(ref) x len(gen) cells: 1.15 GB at 50,000 chars."""
    import tracemalloc

    words = [f"w{index % 997}" for index in range(6_000)]
    ref, gen = " ".join(words), " ".join(reversed(words))
    metric = Rouge()
    tracemalloc.start()
    try:
        values = metric.compute([ref], [gen])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000  # a table of 6,000 x 6,000 cells takes over 280 MB
    assert values[0, 0] == 1.0 and 0.0 < values[0, 6] < 1.0


@pytest.mark.parametrize(
    ("gen", "unfinished"),
    [
        ("A man rides a horse.", 0.0),
        ("Is it?! ", 0.0),
        ('He said "no."', 0.0),
        ("the storm hit ( again . ) ''", 0.0),
        ("Wait\u2026", 0.0),
        ("A man rides a horse on the", 1.0),
        ("The list: apples, pears:", 1.0),
        ("described as 'tall'", 1.0),
        ("It ended.\u00a0", 0.0),
        ("He cried ! ``", 1.0),
        ("", 1.0),
    ],
)
def test_unfinished_end_reads_the_last_mark_of_gen_alone(gen, unfinished):
    assert UnfinishedEnd().compute(["A finished reference.", "unfinished reference"], [gen, gen])[
        :, 0
    ].tolist() == [unfinished, unfinished]


@pytest.mark.parametrize(
    ("ref", "gen"),
    [("", ""), ("   ", "\n\t"), ("Ünïcödé 東京 😀 — “quotes”", "東京"), ("word", ""), ("", "word")],
)
def test_empty_and_unicode_texts_give_finite_values(ref, gen):
    frame = compute_features([ref], [gen], LIGHT)
    assert list(frame.columns) == LIGHT
    assert np.isfinite(frame.to_numpy()).all()


@pytest.mark.parametrize(("ref", "gen"), [("A dog runs.", "[SEP]"), ("[CLS] [SEP]", "A dog runs.")])
def test_a_text_of_special_tokens_alone_scores_as_an_empty_one(ref, gen):
    """The tokenizer reads "[SEP]" as its SEP token, so no wordpiece is left: BERTScore was
    0 / 0 (a FloatingPointError naming the pair, from predict too)."""
    names = ["bertscore_p", "bertscore_r", "bertscore_f"]
    frame = compute_features([ref], [gen], names)
    emptied = compute_features([ref.replace("[CLS] [SEP]", "")], [gen.replace("[SEP]", "")], names)
    pd.testing.assert_frame_equal(frame, emptied)
    assert (frame.to_numpy() == 0).all()


def test_a_decomposed_copy_scores_as_the_copy_it_is():
    """"café" typed as "e" and a combining accent is the same text; the lexical metrics read
    it as another word (BLEU and chrF fell, so P(NoContr) of the copy was 0.79, not 0.99998)."""
    from evaluator.features.compute import feature_versions

    text = "We had a coffee at the café near the river with 12 friends."
    composed, decomposed = (unicodedata.normalize(form, text) for form in ("NFC", "NFD"))
    assert composed != decomposed
    frame = compute_features([composed, composed], [composed, decomposed], LIGHT)
    np.testing.assert_array_equal(frame.iloc[1].to_numpy(), frame.iloc[0].to_numpy())
    assert all(version.endswith("|NFC") for version in feature_versions(LIGHT).values())
    assert not feature_versions(["bertscore_f"])["bertscore_f"].endswith("|NFC")


def test_multi_reference_aggregates_each_feature():
    refs = ["a dog runs on the grass", "the cat sleeps on a sofa"]
    gen = "a cat sleeps on the grass"
    single = compute_features(refs, [gen, gen], LIGHT)
    for aggregate in ("max", "min", "mean"):
        multi = compute_features([refs], [gen], LIGHT, aggregate=aggregate)
        expected = getattr(single, aggregate)()
        np.testing.assert_allclose(multi.iloc[0].to_numpy(), expected.to_numpy())


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="2 references but 1"):
        compute_features(["a", "b"], ["a"], LIGHT)
    with pytest.raises(ValueError, match="pair 1: ref must be"):
        compute_features(["a", []], ["a", "b"], LIGHT)
    with pytest.raises(ValueError, match="pair 0: gen must be a string"):
        compute_features(["a"], [None], LIGHT)
    with pytest.raises(ValueError, match="aggregate"):
        compute_features(["a"], ["a"], LIGHT, aggregate="median")


def test_no_pairs_gives_empty_frame():
    frame = compute_features([], [], LIGHT)
    assert frame.shape == (0, len(LIGHT))


def test_scaler_maps_bounds_to_unit_interval_clips_at_margin_and_round_trips_json():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"ter": rng.exponential(50, 1000), "bleu": rng.uniform(0, 100, 1000)})
    train["constant"] = 3.0
    scaler = FeatureScaler.fit(train, margin=2.0)
    assert scaler.names == ["ter", "bleu", "constant"]
    low, high = scaler.low[1], scaler.high[1]
    test = pd.DataFrame(
        {"bleu": [low, high, -1e6, low - (high - low)], "constant": [3.0, 2.0, 4.0, 3.0],
         "ter": [0, 1e6, 50, 50]}
    )  # fmt: skip
    scaled = scaler.transform(test)
    assert scaled.dtype == np.float32 and scaled.shape == (4, 3)
    np.testing.assert_allclose(scaled[:, 1], [0.0, 1.0, -2.0, -1.0], atol=1e-6)
    assert scaled[:, 2].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert scaled[1, 0] == 3.0  # a TER of 1e6 stops at 1 + margin
    restored = FeatureScaler.from_dict(json.loads(json.dumps(scaler.to_dict())))
    np.testing.assert_array_equal(restored.transform(test), scaled)


def test_source_scaling_in_the_model_matches_the_scaler():
    """A checkpoint scales its source columns with torch buffers: same numbers as the scaler,
    constant column included."""
    rng = np.random.default_rng(1)
    train = pd.DataFrame({"rouge1_p": rng.uniform(0, 1, 200), "novel_1gram": 0.5})
    scaler = FeatureScaler.fit(train)
    test = pd.DataFrame({"rouge1_p": [-4.0, 0.2, 0.7, 9.0], "novel_1gram": [0.4, 0.5, 0.6, 0.5]})
    scaling = SourceScaling(2)
    scaling.set_bounds(torch.tensor(scaler.low).float(), torch.tensor(scaler.high).float())
    scaled = scaling(torch.tensor(test.to_numpy()).float()).numpy()
    np.testing.assert_allclose(scaled, scaler.transform(test), atol=1e-6)
    assert scaled[:, 1].tolist() == [0.0, 0.0, 1.0, 0.0]


def test_scaler_keeps_the_order_of_values_below_the_synthetic_range():
    """Real outputs sit below the near-copies the bounds were fitted on; their order must survive."""
    scaler = FeatureScaler.fit(pd.DataFrame({"embed_cos": np.linspace(0.8, 1.0, 101)}))
    scaled = scaler.transform(pd.DataFrame({"embed_cos": [0.3, 0.5, 0.7]}))[:, 0]
    assert scaled[0] < scaled[1] < scaled[2] < 0.0


def test_scaler_format_1_clips_at_the_bounds():
    state = {
        "format": 1,
        "names": ["bleu"],
        "low": [0.0],
        "high": [10.0],
        "quantiles": [0.01, 0.99],
    }
    scaler = FeatureScaler.from_dict(state)
    assert scaler.transform(pd.DataFrame({"bleu": [-5.0, 5.0, 50.0]}))[:, 0].tolist() == [
        0.0,
        0.5,
        1.0,
    ]


def test_a_feature_that_grows_with_length_stops_at_its_upper_bound():
    """Fragment density is N for an exact copy of N tokens: past the training bound it says
    only that the texts are long. Kept to the margin, a long exact copy read as RepErr."""
    train = pd.DataFrame({"density": np.linspace(1.0, 80.0, 101), "bleu": np.linspace(0, 50, 101)})
    scaler = FeatureScaler.fit(train, quantiles=(0.0, 1.0))
    assert scaler.clipped == ("density",)
    test = pd.DataFrame({"density": [0.21, 40.5, 245.0], "bleu": [-25.0, 25.0, 100.0]})
    scaled = scaler.transform(test)
    np.testing.assert_allclose(scaled[:, 0], [-0.01, 0.5, 1.0], atol=1e-6)  # below: as before
    np.testing.assert_allclose(scaled[:, 1], [-0.5, 0.5, 2.0], atol=1e-6)  # the margin still
    state = json.loads(json.dumps(scaler.to_dict()))
    assert state["format"] == 3 and state["clipped"] == ["density"]
    np.testing.assert_array_equal(FeatureScaler.from_dict(state).transform(test), scaled)
    older = {key: value for key, value in state.items() if key != "clipped"} | {"format": 2}
    assert FeatureScaler.from_dict(older).transform(test)[2, 0] == pytest.approx(244.0 / 79.0)


def test_scaler_errors_name_the_problem():
    scaler = FeatureScaler.fit(pd.DataFrame({"bleu": [0.0, 1.0]}))
    with pytest.raises(KeyError, match="bleu"):
        scaler.transform(pd.DataFrame({"chrf": [1.0]}))
    with pytest.raises(ValueError, match="'bleu' has 1 NaN"):
        scaler.transform(pd.DataFrame({"bleu": [np.nan]}))
    with pytest.raises(ValueError, match="'bleu' has 2 NaN"):  # counts that column only
        FeatureScaler.fit(pd.DataFrame({"bleu": [np.nan, np.nan, 1.0], "chrf": [np.nan, 2.0, 3.0]}))
    with pytest.raises(ValueError, match="lacks high"):
        FeatureScaler.from_dict({"format": 1, "names": ["a"], "low": [0.0], "quantiles": [0, 1]})
    with pytest.raises(ValueError, match="lacks margin"):
        FeatureScaler.from_dict(
            {"format": 2, "names": ["a"], "low": [0.0], "high": [1.0], "quantiles": [0, 1]}
        )
    with pytest.raises(ValueError, match="margin must be"):
        FeatureScaler(["a"], [0.0], [1.0], margin=-1.0)
    with pytest.raises(ValueError, match="lacks clipped"):
        FeatureScaler.from_dict(
            {"format": 3, "names": ["a"], "low": [0.0], "high": [1.0], "quantiles": [0, 1],
             "margin": 3.0}
        )  # fmt: skip
    with pytest.raises(ValueError, match="clipped feature.s. density not among the names"):
        FeatureScaler(["a"], [0.0], [1.0], clipped=["density"])


def test_embedding_store_round_trip(tmp_path):
    store = EmbeddingStore()
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4)
    store.add(["a", "b", "ç東"], vectors)
    path = tmp_path / "emb.parquet"
    store.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["emb.parquet"]
    schema = pq.read_schema(path)
    assert str(schema.field("embedding").type) == "fixed_size_list<element: float>[4]"
    opened = EmbeddingStore.open(path)
    np.testing.assert_array_equal(opened.lookup(["ç東", "a"]), vectors[[2, 0]])
    assert pq.read_table(path).column("key").to_pylist()[0] == text_key("a")
    with pytest.raises(KeyError, match="'missing text'"):
        opened.lookup(["a", "missing text"])
    with pytest.raises(ValueError, match="4-d"):
        opened.add(["c"], np.zeros((1, 5)))


def test_two_runs_filling_one_store_at_once_keep_both_runs_vectors(tmp_path, monkeypatch):
    """Train's and val's `mismatch features` runs sharing an embeddings store: each saves the
    whole store after every chunk, so the later save dropped what the other run had saved
    since it opened the file. A save first takes in the vectors saved meanwhile; a store of
    another encoder saved there meanwhile is refused, not merged."""
    path = tmp_path / "emb.parquet"
    first, second = EmbeddingStore.open_or_new(path), EmbeddingStore.open_or_new(path)
    for store in first, second:
        store.claim("enc")
    first.add(["a"], np.ones((1, 4)))
    first.save(path)
    second.add(["b"], np.full((1, 4), 2.0))
    second.save(path)
    first.add(["c"], np.full((1, 4), 3.0))
    first.save(path)
    saved = EmbeddingStore.open(path)
    assert (len(saved), saved.source) == (3, "enc")
    np.testing.assert_array_equal(saved.lookup(["b", "c"])[:, 0], [2.0, 3.0])
    assert first.vectors[text_key("b")].base is None  # a copy: no view keeps the file read alive
    first.add(["d"], np.zeros((1, 4)))
    with monkeypatch.context() as patch:  # nothing saved meanwhile: the file is not read again
        patch.setattr(EmbeddingStore, "open", None)
        first.save(path)
    assert len(EmbeddingStore.open(path)) == 4

    import mismatch_core.atomic as atomic

    replace = atomic.os.replace

    def then_second_saves(source, target):  # the other run's save lands right after a rename
        replace(source, target)
        monkeypatch.setattr(atomic.os, "replace", replace)
        second.add(["f"], np.full((1, 4), 6.0))
        second.save(path)

    monkeypatch.setattr(atomic.os, "replace", then_second_saves)
    first.add(["g"], np.zeros((1, 4)))
    first.save(path)
    first.save(path)
    assert "f" in EmbeddingStore.open(path)

    other = EmbeddingStore()
    other.claim("another encoder")
    other.add(["e"], np.zeros((1, 4)))
    other.save(path)  # a new store replaces the file, as before
    with pytest.raises(ValueError, match="filled by another encoder, not enc"):
        first.save(path)
    assert EmbeddingStore.open(path).source == "another encoder"
    unrecorded = EmbeddingStore()  # an old store put back meanwhile: not relabelled as enc's
    unrecorded.add(["h"], np.zeros((1, 4)))
    unrecorded.save(path)
    written = path.read_bytes()
    with pytest.raises(DataError, match="holds vectors with no record of the encoder"):
        first.save(path)
    assert path.read_bytes() == written


def test_a_cache_filled_by_another_encoder_is_refused_not_read(tmp_path):
    """Stores are keyed by text alone: a cache folder shared by two encoders (a base on
    another 384-d encoder, say) would give one the other's vectors. Each store names what
    filled it; another encoder, another layer for vectors read at one, another form of the
    text, or no record at all (a store written before sources were) is refused, and a refused
    run writes nothing."""
    from evaluator.features.token_store import TokenStore

    pairs_path, out = tmp_path / "pairs.parquet", tmp_path / "features.parquet"
    pairs = write_pairs(pairs_path, 2)
    texts = [*pairs["ref"], *pairs["gen"]]
    stores = {
        "embeddings_path": tmp_path / "emb.parquet",
        "alignments_path": tmp_path / "al.parquet",
    }

    def fill(**paths) -> None:
        update_feature_cache(pairs_path, out, ["bleu"], progress=False, **paths)

    def refuses(pattern: str, **paths) -> None:
        with pytest.raises(ValueError, match=pattern):
            fill(**paths)

    embeddings = EmbeddingStore()
    embeddings.add(texts, np.ones((len(texts), 384)))
    embeddings.source = "other-encoder"
    embeddings.save(stores["embeddings_path"])
    alignments = EmbeddingStore()  # no source: written before sources were recorded
    pair_keys = [pair_key(r, g) for r, g in zip(pairs["ref"], pairs["gen"], strict=True)]
    alignments.add_keyed({key: np.ones(768) for key in pair_keys})
    alignments.save(stores["alignments_path"])
    old_alignments = stores["alignments_path"].read_bytes()
    reading = re.escape(f"all-MiniLM-L6-v2|text={ENCODER_TEXT_FORM}")
    refused = rf"emb.parquet was filled by other-encoder, not {reading}; use"
    refuses(refused, **stores)
    unrecorded = (
        r"al.parquet holds vectors with no record of the encoder and text form that filled it "
        r"\(written before mismatch-eval recorded them\); .*: fill a new store"
    )
    refuses(unrecorded, alignments_path=stores["alignments_path"])
    assert stores["alignments_path"].read_bytes() == old_alignments  # not marked as this one's
    assert not out.exists()
    stores["alignments_path"].unlink()  # a new store: filled and named by this run
    fill(alignments_path=stores["alignments_path"])
    named = EmbeddingStore.open(stores["alignments_path"]).source
    assert named == f"all-MiniLM-L6-v2|text={ENCODER_TEXT_FORM}|layers=last"
    refused = r"al.parquet was filled by all-MiniLM-L6-v2\|text=.*\|layers=last, not .*\|layers=4"
    refuses(refused, num_layers=4, alignments_path=stores["alignments_path"])
    # the alignments store given as the embeddings' was named as another encoder's
    kind = r"al.parquet holds vectors read at a layer of all-MiniLM-L6-v2, not the mean emb"
    refuses(kind, embeddings_path=stores["alignments_path"])
    tokens_path = tmp_path / "tokens"
    old_tokens = TokenStore(tokens_path)
    old_tokens.add({text_key(text): np.ones((2, 384), np.float16) for text in texts})
    unrecorded = r"tokens \(1 of its 1 shards, 00000.keys.parquet first\) holds vectors with no"
    refuses(unrecorded, tokens_path=tokens_path)
    assert TokenStore(tokens_path).source is None
    new_tokens = tmp_path / "new_tokens"
    fill(tokens_path=new_tokens)
    tokens_source = f"all-MiniLM-L6-v2|text={ENCODER_TEXT_FORM}|layers=last"
    assert TokenStore(new_tokens).source == tokens_source
    refused = r"new_tokens was filled by all-MiniLM-L6-v2\|text=.*\|layers=last, not .*\|layers=4"
    refuses(refused, num_layers=4, tokens_path=new_tokens)
    # a store filled before the tokenizer rewrote the characters its vocabulary lacks: its
    # vectors of a text holding an emoji are another text's
    earlier = EmbeddingStore.open(stores["alignments_path"])
    earlier.source = "all-MiniLM-L6-v2|layers=last"
    earlier.save(stores["alignments_path"])
    refused = (
        r"al.parquet was filled by all-MiniLM-L6-v2\|layers=last, from another form of the text "
        rf"than {reading}\|layers=last reads; fill a new store"
    )
    refuses(refused, alignments_path=stores["alignments_path"])
    earlier.source = "all-MiniLM-L6-v2"  # mean embeddings of that time, given as alignments
    earlier.save(stores["alignments_path"])
    kind = r"al.parquet holds mean embeddings of all-MiniLM-L6-v2, not the vectors read at a"
    refuses(kind, alignments_path=stores["alignments_path"])


def test_readers_refuse_another_encoders_store_and_shards_must_agree(tmp_path):
    """Pretraining, continued training and evaluate_split read the stores through
    InputStores: another encoder's store, or one that does not say what filled it, is a
    DataError there. A token store whose shards two encoders filled names the shard."""
    from evaluator.features.token_store import TokenStore
    from evaluator.training.pair_inputs import InputStores

    texts = ["a dog ran", "a cat sat"]
    store = EmbeddingStore()
    store.add(texts, np.ones((2, 4)))
    store.source = encoder_reading("encoder-a")
    store.save(tmp_path / "emb.parquet")
    tokens = TokenStore(tmp_path / "tokens")
    tokens.claim(encoder_source("encoder-a", None))
    tokens.add({text_key(text): np.ones((2, 4), np.float16) for text in texts})
    read = InputStores(
        EmbeddingStore.open(tmp_path / "emb.parquet"), tokens=TokenStore(tmp_path / "tokens")
    )
    read.check_sources("encoder-a", None)
    with pytest.raises(
        DataError, match=r"emb.parquet was filled by encoder-a\|text=.*, not encoder-b"
    ):
        read.check_sources("encoder-b", None)
    layer = r"tokens was filled by encoder-a\|text=\S*\|layers=last, not encoder-a\|\S*\|layers=3"
    with pytest.raises(DataError, match=layer):
        InputStores(tokens=TokenStore(tmp_path / "tokens")).check_sources("encoder-a", 3)
    unrecorded = EmbeddingStore()  # alignments written before stores recorded their source
    unrecorded.add_keyed({"k": np.ones(4)})
    unrecorded.save(tmp_path / "al.parquet")
    with pytest.raises(DataError, match=r"al.parquet holds vectors with no record of the encod"):
        InputStores(alignments=EmbeddingStore.open(tmp_path / "al.parquet")).check_sources(
            "encoder-a", None
        )
    mixed, old = tmp_path / "mixed_tokens", tmp_path / "old_tokens"
    shutil.copytree(tmp_path / "tokens", mixed)
    TokenStore(old).add({text_key("a third text"): np.ones((1, 4), np.float16)})  # unrecorded
    for suffix in (".npy", ".keys.parquet"):  # beside a recorded shard, as a second one
        shutil.copy(old / f"00000{suffix}", mixed / f"00001{suffix}")
    one_of_two = r"token store \S*mixed_tokens \(1 of its 2 shards, 00001.keys.parquet first\)"
    with pytest.raises(DataError, match=one_of_two + " holds vectors with no record"):
        InputStores(tokens=TokenStore(mixed)).check_sources("encoder-a", None)
    other = TokenStore(tmp_path / "tokens")
    other.source = "encoder-c|layers=last"  # a second shard written by hand for another encoder
    other.add({text_key("another text"): np.ones((1, 4), np.float16)})
    disagree = r"00001.keys.parquet holds states of encoder-c\|layers=last, another shard of"
    with pytest.raises(ValueError, match=disagree):
        TokenStore(tmp_path / "tokens")


def write_pairs(path, count: int, multi: bool = False) -> pd.DataFrame:
    refs = [f"the {i} dogs ran to the park" for i in range(count)]
    pairs = pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(count)],
            "ref": [[ref, "a cat slept"] for ref in refs] if multi else refs,
            "gen": [f"the {i + 1} dogs did not run to a park" for i in range(count)],
        }
    )
    pairs.to_parquet(path)
    return pairs


class Interrupt(Exception):
    pass


def test_cache_resumes_without_recomputing(tmp_path):
    pairs_path, out = tmp_path / "pairs.parquet", tmp_path / "features.parquet"
    write_pairs(pairs_path, 10)
    names = ["bleu", "rouge1_f", "numbers_agree"]

    def stop_after_first(chunk_index, report):
        if chunk_index == 0:
            raise Interrupt

    with pytest.raises(Interrupt):
        update_feature_cache(
            pairs_path, out, names, chunk_size=4, on_chunk=stop_after_first, progress=False
        )
    first = pd.read_parquet(out)
    assert first[names].notna().sum().tolist() == [4, 4, 4]
    # another feature added meanwhile keeps what the interrupted run computed (it was dropped)
    added = update_feature_cache(pairs_path, out, ["chrf"], chunk_size=4, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(out)[names], first[names])
    assert added.partial == names  # the command names them
    second = update_feature_cache(pairs_path, out, names, chunk_size=4, progress=False)
    assert second.computed == {name: 6 for name in names}
    third = update_feature_cache(pairs_path, out, names, chunk_size=4, progress=False)
    assert sum(third.computed.values()) == 0
    frame = pd.read_parquet(out)
    assert list(frame.columns) == ["id", *names, "chrf", "pair_key"] and len(frame) == 10
    pairs = pd.read_parquet(pairs_path)
    expected = compute_features(list(pairs["ref"]), list(pairs["gen"]), names)
    np.testing.assert_allclose(frame[names].to_numpy(), expected.to_numpy())


def test_cache_recomputes_a_bumped_version_and_keeps_other_features(tmp_path, monkeypatch):
    pairs_path, out = tmp_path / "pairs.parquet", tmp_path / "features.parquet"
    write_pairs(pairs_path, 5, multi=True)
    update_feature_cache(pairs_path, out, ["bleu", "chrf"], chunk_size=2, progress=False)
    monkeypatch.setattr(METRICS["chrf"], "version", METRICS["chrf"].version + 1)
    report = update_feature_cache(pairs_path, out, ["chrf", "ter"], chunk_size=2, progress=False)
    assert report.computed == {"chrf": 5, "ter": 5}
    frame = pd.read_parquet(out)
    assert sorted(frame.columns) == ["bleu", "chrf", "id", "pair_key", "ter"]
    versions = json.loads(pq.read_schema(out).metadata[b"mismatch.feature_versions"])
    assert versions["chrf"] == f"v{METRICS['chrf'].version}|NFC"


def test_pairs_made_again_under_the_same_ids_are_computed_anew(tmp_path, capsys):
    """The cache was keyed by id alone: synth pairs made again into the same folder (same ids,
    other texts) silently kept the old pairs' features."""
    pairs_path, out = tmp_path / "pairs.parquet", tmp_path / "features.parquet"
    names = ["bleu", "numbers_agree"]
    write_pairs(pairs_path, 4, multi=True)
    update_feature_cache(pairs_path, out, names, progress=False)
    again = pd.read_parquet(pairs_path)
    again.loc[[1, 3], "gen"] = ["seven cats sat", "no dog ran"]
    again.iloc[:3].to_parquet(pairs_path)  # and the last pair is gone
    report = update_feature_cache(pairs_path, out, names, progress=False)
    assert (report.other_texts, report.dropped) == (1, 1)
    assert report.computed == {name: 1 for name in names}
    frame = pd.read_parquet(out)
    expected = compute_features(list(again["ref"][:3]), list(again["gen"][:3]), names)
    np.testing.assert_allclose(frame[names].to_numpy(), expected.to_numpy())
    # a cache written before the keys: its rows are taken by id, and it gains the keys
    pq.write_table(pq.read_table(out).drop_columns(["pair_key"]), out)
    report = update_feature_cache(pairs_path, out, names, progress=False)
    assert sum(report.computed.values()) == 0 and "pair_key" in pd.read_parquet(out)
    assert row_key(["A man rides."], "x") == row_key("A man rides.", "x")  # the same features
    assert row_key(["A man rides.", "A man"], "x") != row_key("A man rides.", "x")
    write_pairs(pairs_path, 2)
    args = ["features", "--pairs", str(pairs_path), "--out", str(out), "--features", "bleu"]
    assert cli_main([*args, "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "2 cached row(s) were for other texts under the same ids" in printed
    assert f"1 cached row(s) of ids not in {pairs_path} dropped" in printed
    assert "kept, not computed for every pair: numbers_agree (not asked for now" in printed
    # the pairs of another split (a typo in --out): every cached row would have been dropped
    other = tmp_path / "val.parquet"
    pd.read_parquet(pairs_path).assign(id=["val-0", "val-1"]).to_parquet(other)
    before = out.read_bytes()
    assert cli_main(["features", "--pairs", str(other), *args[3:], "--quiet"]) == 2
    assert f"{out} holds the features of 2 pair(s), none of them in {other}" in (
        capsys.readouterr().err
    )
    assert out.read_bytes() == before
    # ids read as the readers read them: a rerun with timestamp ids was refused
    dated = tmp_path / "dated.parquet"
    pd.read_parquet(pairs_path).assign(id=pd.to_datetime(["2020-01-01", "2020-01-02"])).to_parquet(
        dated
    )
    update_feature_cache(dated, tmp_path / "dated_cache.parquet", ["bleu"], progress=False)
    assert foreign_cache_problem(dated, tmp_path / "dated_cache.parquet") is None
    # a pairs file given as --out is named as what it is, not as another pair set's cache
    assert cli_main(["features", "--pairs", str(pairs_path), "--out", str(other), "--quiet"]) == 2
    assert f"{other} exists but is not a feature cache" in capsys.readouterr().err
    # fine-tuning's caches (keyed by texts; a ratings file of the same name replaced by another)
    # are updated whatever they held: the refusal is the command's
    assert update_feature_cache(other, out, ["bleu"], progress=False).dropped == 2


def test_an_empty_split_says_which_outputs_it_wrote(tmp_path, capsys):
    pairs_path = tmp_path / "pairs.parquet"
    write_pairs(pairs_path, 0)
    out, stored = tmp_path / "features.parquet", tmp_path / "emb.parquet"
    args = ["features", "--pairs", str(pairs_path), "--out", str(out), "--embeddings", str(stored)]
    assert cli_main([*args, "--features", "bleu", "--quiet"]) == 0
    assert "embeddings: 0 added -> none written" in capsys.readouterr().out  # it named the file
    assert len(pd.read_parquet(out)) == 0 and not stored.exists()


def test_cli_reports_user_errors(tmp_path, capsys):
    missing = tmp_path / "none.parquet"
    assert (
        cli_main(["features", "--pairs", str(missing), "--out", str(tmp_path / "o.parquet")]) == 2
    )
    assert "does not exist" in capsys.readouterr().err
    pairs_path = tmp_path / "pairs.parquet"
    write_pairs(pairs_path, 2)
    args = ["features", "--pairs", str(pairs_path), "--out", str(tmp_path / "o.parquet")]
    assert cli_main([*args, "--features", "bleu,nope"]) == 2
    assert "'nope'" in capsys.readouterr().err
    assert cli_main([*args, "--features", "bleu,ter", "--quiet"]) == 0
    assert "computed 4 values" in capsys.readouterr().out
    same = str(tmp_path / "o.parquet")
    assert cli_main([*args, "--features", "bleu", "--embeddings", same]) == 2
    assert f"--embeddings {same} is also --out; each needs its own file" in capsys.readouterr().err
    assert cli_main([*args[:-1], str(pairs_path), "--features", "bleu"]) == 2
    assert "is also --pairs" in capsys.readouterr().err
    inside = ["--out", str(tmp_path / "o.parquet"), "--tokens", str(tmp_path)]  # the next run
    assert cli_main([*args[:3], *inside, "--features", "bleu"]) == 2  # refused the store
    assert f"--pairs {pairs_path} is inside --tokens {tmp_path}, which holds" in (
        capsys.readouterr().err
    )
    args[-1] = str(tmp_path / "new.parquet")
    assert cli_main([*args, "--features", "bleu", "--device", "tpu"]) == 2
    assert "--device: unknown device 'tpu'; use cpu or cuda" in capsys.readouterr().err
    for layers in ("-1", "7"):  # the packaged encoder has 6; named before it is loaded
        assert cli_main([*args, "--features", "bertscore_f", "--num-layers", layers]) == 2
        error = capsys.readouterr().err
        assert f"--num-layers must be in 0..6 for 'all-MiniLM-L6-v2', got {layers}" in error
    assert not (tmp_path / "new.parquet").exists()


@pytest.mark.slow  # the packaged encoder
def test_every_encoder_pass_of_the_cache_runs_on_the_device_asked(tmp_path, monkeypatch):
    """Features, then (once they are cached) embeddings, alignment vectors and token states
    alone: each encoder pass runs on ``device``, "cpu:0" here, a name no default gives."""
    seen = []
    real = encoder_pass.load_encoder

    def spy(encoder, device="cpu"):
        seen.append(device)
        return real(encoder, device)

    monkeypatch.setattr(encoder_pass, "load_encoder", spy)
    pairs_path, out = tmp_path / "pairs.parquet", tmp_path / "f.parquet"
    write_pairs(pairs_path, 3)
    names = ["bleu", "bertscore_f"]
    update_feature_cache(pairs_path, out, names, progress=False, device="cpu:0")
    assert seen and set(seen) == {"cpu:0"}
    seen.clear()
    stores = {
        "embeddings_path": tmp_path / "e.parquet",
        "alignments_path": tmp_path / "a.parquet",
        "tokens_path": tmp_path / "tokens",
    }
    report = update_feature_cache(pairs_path, out, names, progress=False, device="cpu:0", **stores)
    assert report.computed == {"bleu": 0, "bertscore_f": 0}  # the stores alone were filled
    assert report.embeddings_added and report.alignments_added and report.tokens_added
    assert len(seen) == 3 and set(seen) == {"cpu:0"}


def test_cli_never_overwrites_a_parquet_that_is_not_a_feature_cache(tmp_path, capsys):
    pairs_path, other = tmp_path / "pairs.parquet", tmp_path / "other-pairs.parquet"
    write_pairs(pairs_path, 2)
    write_pairs(other, 2)
    before = other.read_bytes()
    args = ["features", "--pairs", str(pairs_path), "--features", "bleu", "--quiet"]
    assert cli_main([*args, "--out", str(other)]) == 2
    assert "is not a feature cache written by mismatch features" in capsys.readouterr().err
    assert other.read_bytes() == before
    assert cli_main([*args, "--out", str(tmp_path)]) == 2
    assert f"--out: {tmp_path} is a directory" in capsys.readouterr().err


def test_a_bad_pair_is_named_by_file_row_and_id(tmp_path, capsys):
    pairs_path = tmp_path / "pairs.parquet"
    pd.DataFrame({"id": ["a", "b"], "ref": ["x", "y"], "gen": ["x", None]}).to_parquet(pairs_path)
    argv = ["features", "--pairs", str(pairs_path), "--out", str(tmp_path / "o.parquet")]
    assert cli_main([*argv, "--features", "bleu"]) == 2
    assert f"{pairs_path}: row 2 (id 'b'): gen must be a string, got null" in (
        capsys.readouterr().err
    )
    pd.DataFrame({"id": ["a", None], "ref": ["x", "y"], "gen": ["x", "y"]}).to_parquet(pairs_path)
    assert cli_main([*argv, "--features", "bleu"]) == 2
    assert f"{pairs_path}: row 2 has no id" in capsys.readouterr().err
    pd.DataFrame({"id": ["a", "a"], "ref": ["x", "y"], "gen": ["x", "y"]}).to_parquet(pairs_path)
    assert cli_main([*argv, "--features", "bleu"]) == 2
    assert f"{pairs_path}: pair id 'a' occurs more than once" in capsys.readouterr().err
    not_parquet = tmp_path / "pairs.jsonl"
    not_parquet.write_text('{"id": "a"}\n')
    argv = ["features", "--pairs", str(not_parquet), "--out", str(tmp_path / "o.parquet")]
    assert cli_main([*argv, "--features", "bleu"]) == 2
    assert f"{not_parquet} is not a readable parquet file of pairs" in capsys.readouterr().err


def test_a_missing_encoder_is_a_user_error_not_a_traceback(tmp_path, capsys):
    pairs_path = tmp_path / "pairs.parquet"
    pd.DataFrame({"id": ["a"], "ref": ["x"], "gen": ["y"]}).to_parquet(pairs_path)
    argv = ["features", "--quiet", "--pairs", str(pairs_path), "--out", str(tmp_path / "o.parquet")]
    assert cli_main([*argv, "--features", "bertscore_f", "--encoder", str(tmp_path / "none")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"mismatch features: error: encoder '{tmp_path / 'none'}'")
    other = tmp_path / "other"  # a folder without a model: --num-layers reads its config first
    other.mkdir()
    (other / "notes.txt").write_text("no model here")
    layers = ["--num-layers", "1", "--encoder", str(other)]
    assert cli_main([*argv, "--features", "bertscore_f", *layers]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"mismatch features: error: encoder '{other}' has no readable model")
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.slow  # the packaged encoder
def test_the_command_shows_no_loading_bars_of_the_hub_libraries(tmp_path):
    """The encoder loads without transformers' "Loading weights" bar: under --quiet nothing
    is drawn, and otherwise only our own bar (the entry point quiets the hub libraries)."""
    pairs_path = tmp_path / "pairs.parquet"
    pd.DataFrame({"id": ["a"], "ref": ["A dog runs."], "gen": ["A cat runs."]}).to_parquet(pairs_path)
    argv = ["features", "--quiet", "--pairs", str(pairs_path), "--out", str(tmp_path / "o.parquet")]
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    result = subprocess.run(
        [sys.executable, "-m", "evaluator.cli", *argv, "--features", "embed_cos"],
        capture_output=True, text=True, env=env, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Loading weights" not in result.stderr


@pytest.mark.slow
def test_alignment_vectors_are_zero_for_a_copy_and_cached_per_pair(tmp_path):

    refs = ["The capital of France is Paris.", "A dog runs.", "Two men sit on a bench."]
    gens = ["The capital of France is Paris.", "", "Three men sit on a bench."]
    found: dict[str, np.ndarray] = {}
    frame = compute_features(refs, gens, [], alignments_out=found)
    assert frame.shape == (3, 0) and len(found) == 3
    copy, empty, changed = (found[pair_key(r, g)] for r, g in zip(refs, gens, strict=True))
    assert copy.shape == (768,) and np.abs(copy).max() < 1e-5
    assert not empty.any()
    assert np.linalg.norm(changed[:384]) > 0.05 and np.linalg.norm(changed[384:]) > 0.05
    # the cache keeps one vector per pair, from the same pass as the features, and resumes
    pairs_path = tmp_path / "pairs.parquet"
    pd.DataFrame({"id": ["a", "b", "c"], "ref": refs, "gen": gens}).to_parquet(pairs_path)
    store_path = tmp_path / "alignments.parquet"
    report = update_feature_cache(
        pairs_path, tmp_path / "f.parquet", ["bleu"], progress=False, alignments_path=store_path
    )
    assert report.alignments_added == 3
    stored = EmbeddingStore.open(store_path)
    np.testing.assert_allclose(stored.lookup_keyed([pair_key(refs[2], gens[2])])[0], changed)
    again = update_feature_cache(
        pairs_path, tmp_path / "f.parquet", ["bleu"], progress=False, alignments_path=store_path
    )
    assert again.alignments_added == 0


def test_adding_a_cpu_feature_to_a_full_cache_skips_the_encoder(tmp_path, monkeypatch):
    pairs_path, out = tmp_path / "pairs.parquet", tmp_path / "features.parquet"
    write_pairs(pairs_path, 4)
    stores = {
        "embeddings_path": tmp_path / "emb.parquet",
        "alignments_path": tmp_path / "al.parquet",
    }
    update_feature_cache(pairs_path, out, ["bleu"], progress=False, **stores)
    written = {name: path.stat().st_mtime_ns for name, path in stores.items()}

    def no_encoder(*args, **kwargs):
        raise AssertionError("the encoder ran for a CPU feature")

    monkeypatch.setattr("evaluator.features.compute.encoder_scores", no_encoder)
    monkeypatch.setattr("evaluator.features.cache.encode_texts", no_encoder)
    report = update_feature_cache(pairs_path, out, ["bleu", "chrf"], progress=False, **stores)
    assert report.computed == {"bleu": 0, "chrf": 4}
    assert {name: path.stat().st_mtime_ns for name, path in stores.items()} == written


@pytest.mark.slow
def test_token_states_come_from_the_feature_pass_and_are_cached(tmp_path):
    from evaluator.features.token_store import TokenStore
    from mismatch_core.resources import load_tokenizer

    refs = ["Two dogs ran across the park.", "A man sleeps."]
    gens = ["Two dogs ran across the park.", ""]
    found: dict[str, np.ndarray] = {}
    compute_features(refs, gens, [], tokens_out=found)
    dogs = found[text_key(refs[0])]
    wordpieces = load_tokenizer("all-MiniLM-L6-v2").tokenize(refs[0])
    assert dogs.dtype == np.float16 and dogs.shape == (len(wordpieces), 384)
    np.testing.assert_allclose(np.linalg.norm(dogs.astype(np.float32), axis=1), 1.0, atol=2e-3)
    assert found[text_key("")].shape == (0, 384)
    pairs_path = tmp_path / "pairs.parquet"
    pd.DataFrame({"id": ["a", "b"], "ref": refs, "gen": gens}).to_parquet(pairs_path)
    store_path = tmp_path / "tokens"
    report = update_feature_cache(
        pairs_path, tmp_path / "f.parquet", ["bleu"], progress=False, tokens_path=store_path
    )
    assert report.tokens_added == 3  # the copy is one text
    stored = TokenStore(store_path).table([refs[0]])
    np.testing.assert_array_equal(stored.flat[:-1].numpy(), dogs)
    again = update_feature_cache(
        pairs_path, tmp_path / "f.parquet", ["bleu"], progress=False, tokens_path=store_path
    )
    assert again.tokens_added == 0


def test_worker_processes_give_each_pair_its_own_row(monkeypatch) -> None:
    """Pieces come back from the worker pool in input order even when a later piece finishes
    first: here the first of the 8 pieces holds long texts (ROUGE-L is quadratic), so the
    other worker is done with all the rest before it returns."""
    from evaluator.features import compute

    monkeypatch.setattr(compute, "usable_cpus", lambda: 2)
    rng = np.random.default_rng(0)
    words = "the a dog cat ran sat on mat big small red blue house park tree man".split()
    lengths = [200] * 8 + [6] * 56  # 64 pairs over the parallel threshold: 8 pieces of 8
    refs = [" ".join(rng.choice(words, n)) for n in lengths]
    gens = [" ".join(rng.choice(words, n)) for n in lengths]
    monkeypatch.setattr(compute, "PARALLEL_MIN_PAIRS", len(refs))
    parallel = compute.cpu_scores(["rouge", "chrf"], refs, gens)
    np.testing.assert_array_equal(parallel, compute.run_cpu_metrics(["rouge", "chrf"], refs, gens))


POOL_REFS = [f"the {i} dogs ran to the park" for i in range(12)]
POOL_GENS = [f"the {i + 1} dogs did not run" for i in range(12)]


def pool_scores():
    from evaluator.features import compute

    return compute.cpu_scores(["bleu", "chrf"], POOL_REFS, POOL_GENS)


def test_a_block_keeps_one_pool_for_every_call_and_stops_it(counted_pools) -> None:
    """Workers parse WordNet and cache words as they read them: a pool per call started cold
    at every chunk of predict and of a feature cache (1,000 pairs: 5.3-6.1 s against 2.3-3.0
    s warm). Inside `shared_cpu_workers` one pool serves every call, an inner block included,
    and none outlives the block; outside a block each call starts and stops its own."""
    from evaluator.features import compute
    from evaluator.features.cpu_workers import shared_cpu_workers

    started = counted_pools
    expected = compute.run_cpu_metrics(["bleu", "chrf"], POOL_REFS, POOL_GENS)
    with shared_cpu_workers():
        first = pool_scores()
        with shared_cpu_workers():
            second = pool_scores()
        workers = multiprocessing.active_children()
        assert len(started) == 1 and len(workers) == 2
    assert not any(worker.is_alive() for worker in workers)
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    np.testing.assert_array_equal(pool_scores(), expected)
    assert len(started) == 2 and multiprocessing.active_children() == []


@pytest.fixture
def fails_rather_than_hangs():
    """A test that would wait for ever on a lost worker fails after 60 s instead."""

    def stop(*_):
        raise TimeoutError("the pool waited for a worker that had ended")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def sleeps(task) -> None:
    """A task longer than any test waits for (module level: a worker unpickles it by name)."""
    time.sleep(60)


def test_an_interrupted_run_stops_its_workers_at_once() -> None:
    """Workers ignore Ctrl-C (it is the command's): an interrupted run waited at exit for the
    tasks already queued, and a second Ctrl-C in that wait left the process stuck."""
    from evaluator.features.cpu_workers import CpuWorkers

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    started = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        with pytest.raises(KeyboardInterrupt), CpuWorkers() as workers:
            workers.map(sleeps, [None] * 4, 2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert multiprocessing.active_children() == []
    assert time.monotonic() - started < 20  # not the 60 s of a task


def killed_by_its_task(task) -> None:
    """A task that ends the worker running it (module level: a worker unpickles it by name)."""
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="killing a worker")
def test_a_worker_that_died_is_replaced_once_then_named(
    monkeypatch, counted_pools, fails_rather_than_hangs
):
    """A worker killed while the workers waited between chunks (the OOM killer; a worker forked
    by a thread that has ended gets its parent-death signal) left multiprocessing.Pool
    waiting for ever; now the call starts fresh workers, and a second loss is an error."""
    from evaluator.features import compute
    from evaluator.features.cpu_workers import shared_cpu_workers

    started = counted_pools
    expected = compute.run_cpu_metrics(["bleu", "chrf"], POOL_REFS, POOL_GENS)
    with shared_cpu_workers():
        pool_scores()
        os.kill(multiprocessing.active_children()[0].pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while len(started) == 1 and time.monotonic() < deadline:  # until the loss is seen
            np.testing.assert_array_equal(pool_scores(), expected)  # the other worker's
        np.testing.assert_array_equal(pool_scores(), expected)
        assert len(started) == 2
    assert multiprocessing.active_children() == []
    monkeypatch.setattr(compute, "_cpu_task", killed_by_its_task)
    with pytest.raises(WorkerError, match="ended unexpectedly"):
        pool_scores()
    assert len(started) == 4 and multiprocessing.active_children() == []


OUTLIVES_MAIN = """
import threading
from evaluator.features import compute

compute.usable_cpus = lambda: 2
compute.PARALLEL_MIN_PAIRS = 2
refs = [f"the {i} dogs ran to the park" for i in range(12)]
gens = [f"the {i + 1} dogs did not run" for i in range(12)]
expected = compute.run_cpu_metrics(["bleu", "chrf"], refs, gens).tolist()
main_ended = threading.Event()

def scores():
    return compute.cpu_scores(["bleu", "chrf"], refs, gens).tolist()

def score_before_and_after_main():
    from evaluator.features.cpu_workers import shared_cpu_workers
    with shared_cpu_workers():  # a stream's workers: started while main runs
        first = scores()
        main_ended.set()
        threading.main_thread().join()
        print("equal" if first == expected and scores() == expected else "differ", flush=True)
    print("equal" if scores() == expected else "differ", flush=True)  # fresh workers, none now

threading.Thread(target=score_before_and_after_main).start()
main_ended.wait()
"""


def test_a_thread_that_outlives_the_main_one_still_scores(tmp_path) -> None:
    """Once the main thread has ended, a process pool refuses new work ("cannot schedule new
    futures after interpreter shutdown"): a stream resumed, or a predict called, on a thread
    that outlives the main one crashed."""
    script = tmp_path / "outlives_main.py"
    script.write_text(OUTLIVES_MAIN, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["equal", "equal"]


def test_a_feature_cache_starts_one_pool_for_all_its_chunks(tmp_path, counted_pools) -> None:
    started = counted_pools
    pairs = write_pairs(tmp_path / "pairs.parquet", 20)
    update_feature_cache(
        tmp_path / "pairs.parquet", tmp_path / "f.parquet", ["bleu"], chunk_size=10, progress=False
    )
    assert len(started) == 1 and multiprocessing.active_children() == []
    expected = compute_features(list(pairs["ref"]), list(pairs["gen"]), ["bleu"])
    cached = pd.read_parquet(tmp_path / "f.parquet")
    np.testing.assert_array_equal(cached["bleu"].to_numpy(), expected["bleu"].to_numpy())


@pytest.mark.parametrize("lengths", [[5, 3, 9, 3, 200, 7, 7, 1], [512] * 5, [], [40] * 70])
def test_length_batches_bound_texts_and_padded_tokens(lengths):
    batches = encoder_pass.length_batches(lengths, batch_size=4, max_tokens=64)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))  # every text once
    assert [lengths[i] for i in flat] == sorted(lengths)  # in length order
    for batch in batches:
        assert len(batch) <= 4
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 64


@pytest.mark.slow  # the packaged encoder
def test_a_token_budget_does_not_change_the_encodings(monkeypatch):
    texts = ["A cat.", "The dog sat on the mat today.", "Short one.", "x " * 60, "It rained."]
    default = encoder_pass.encode_distinct(texts)
    monkeypatch.setattr(encoder_pass, "MAX_BATCH_TOKENS", 24)  # a batch per text or two
    budgeted = encoder_pass.encode_distinct(texts)
    for text in texts:
        torch.testing.assert_close(budgeted[text].tokens, default[text].tokens, atol=1e-5, rtol=0)
        np.testing.assert_allclose(budgeted[text].mean, default[text].mean, atol=1e-5)
