"""Error spans: gold regions of synthetic pairs, wordpieces to character spans, the span
tagger, its training, spans in predictions, copying a tagger, and the bench's measures."""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from evaluator import Evaluator, SpanReachWarning, inference
from evaluator.bench.spans import char_counts, f1, word_diff_regions
from evaluator.cli import CommandError, main
from evaluator.cli.bench.spans import bench_spans
from evaluator.features import FeatureScaler, text_key
from evaluator.features.encoder_pass import encode_distinct, token_states, tokenize
from evaluator.features.token_store import MAX_TOKENS, TokenStore, TokenTable
from evaluator.hub import load, save_pretrained
from evaluator.model import MismatchConfig, MismatchModel
from evaluator.predict_io import Pairs
from evaluator.signature import signature
from evaluator.spans import pair_spans, token_spans
from evaluator.training.span_settings import SpanTraining
from evaluator.training.spans import (
    SpanExamples,
    copy_span_tagger,
    overlap_labels,
    tagger_real_bases,
    train_span_tagger,
    with_span_tagger,
)
from mismatch_core.errors import CheckpointError
from mismatch_core.resources import DEFAULT_ENCODER, load_tokenizer
from mismatch_core.taxonomy import CODES, INDEX
from synth.spans import changed_regions, error_regions

FEATURES = ["bleu", "chrf"]
REF = "The company reported a 12 percent rise in profits and plans to hire 300 staff in Manchester."


def marked(text: str, regions) -> list[str]:
    return [text[start:end] for start, end in regions]


# --- gold regions of synthetic pairs ------------------------------------------------------


def test_a_substitution_marks_the_new_word_without_punctuation() -> None:
    gen = REF.replace("Manchester", "Liverpool")
    regions = error_regions(REF, gen, "STErr", json.dumps({"base": "ref"}))
    assert marked(gen, regions.gen) == ["Liverpool"] and regions.ref == []
    number = error_regions(REF, REF.replace("12", "13"), "NumErr", {})
    assert marked(REF.replace("12", "13"), number.gen) == ["13"]  # the whole word, not "3"


def test_the_rewording_of_the_base_is_not_part_of_the_error() -> None:
    base = "Last year the company reported a 12 percent rise in profits; it plans to hire 300 staff in Manchester."
    gen = base.replace("300", "30")
    detail = json.dumps({"base": "rewrite", "base_text": base})
    regions = error_regions(REF, gen, "NumErr", detail)
    assert marked(gen, regions.gen) == ["30"]


def test_scattered_edits_mark_each_place_and_a_deletion_its_neighbours() -> None:
    base = "Two dogs run across the park to the river."
    gen = "Two dogs dogs run across the park park to the river."
    assert marked(gen, changed_regions(base, gen, base, omission=False).gen) == ["dogs", "park"]
    dropped = "Two dogs run across park to the river."  # "the" dropped: GramErr
    assert marked(dropped, changed_regions(base, dropped, base, omission=False).gen) == [
        "across",
        "park",
    ]


def test_an_omission_is_placed_in_the_reference_or_left_unknown() -> None:
    gen = "The company reported a 12 percent rise in profits and plans to hire 300 staff."
    on_ref = error_regions(REF, gen, "MissInfo", {"base": "ref"})
    assert on_ref.gen == [] and marked(REF, on_ref.ref) == ["in Manchester"]
    base = "Profits rose 12 percent, the company said; it plans to hire 300 staff in Manchester."
    cut = "Profits rose 12 percent, the company said; it plans to hire 300 staff."
    placed = error_regions(REF, cut, "MissInfo", {"base_text": base})
    assert marked(REF, placed.ref) == ["in Manchester"]
    reworded = "Profits rose 12 percent, the company said; it plans to hire 300 people in Leeds."
    unknown = error_regions(
        REF, "Profits rose 12 percent, the company said.", "MissInfo", {"base_text": reworded}
    )
    assert unknown.ref is None
    twice = "The boy went to the park. Later the girl went to the park too."
    swapped = "Later the girl went to the park too. The boy went to the park."
    ambiguous = error_regions(
        twice, "Later the girl went too. The boy went to the park.", "MissInfo",
        {"base_text": swapped},
    )  # fmt: skip
    assert ambiguous.ref is None  # "to the park" is in the reference twice
    assert error_regions(REF, REF, "NoContr", "{}").gen == []


# --- wordpieces to spans -----------------------------------------------------------------


def test_wordpieces_become_whole_words_merged_when_side_by_side() -> None:
    text = "Hire 1,500,000 new staff in Manchester."
    offsets = np.array(
        [
            [0, 4],
            [5, 6],
            [6, 7],
            [7, 10],
            [10, 11],
            [11, 14],
            [15, 18],
            [19, 24],
            [25, 27],
            [28, 38],
            [38, 39],
        ]
    )
    probs = np.array([0.1, 0.2, 0.1, 0.9, 0.1, 0.1, 0.7, 0.1, 0.1, 0.95, 0.1])
    spans = token_spans(text, offsets, probs, threshold=0.5)
    assert [(text[s:e], round(p, 3)) for s, e, p in spans] == [
        ("Manchester", 0.95),  # the period is left out
        ("1,500,000 new", 0.8),  # one flagged piece marks the whole number; words merge
    ]
    assert token_spans(text, offsets, np.zeros(len(offsets)), threshold=0.5) == []
    with pytest.raises(ValueError, match="offsets but"):
        token_spans(text, offsets, probs[:3], threshold=0.5)


def test_offsets_fit_the_token_states_and_round_trip_on_unicode() -> None:
    texts = [
        "  Zürich — 東京 hat 21 Mitarbeiter 😀 eingestellt. ",
        "",
        "naïve café's déjà-vu",
        "The company [SEP] sold 2,500 cars [CLS] in Paris.",  # no state, so no offset
    ]
    tokenizer = load_tokenizer(DEFAULT_ENCODER)
    offsets = tokenize(tokenizer, texts, tokenizer.model_max_length, offsets=True).offsets
    assert offsets is not None  # as training reads them
    encoded = encode_distinct(texts, keep_offsets=True)  # as predict reads them
    for text, at in zip(texts, offsets, strict=True):
        assert len(at) == len(token_states(encoded[text]))
        np.testing.assert_array_equal(encoded[text].offsets, at)  # as predict reads
        for start, end, _ in token_spans(text, at, np.ones(len(at)), 0.5):
            assert text[start:end].strip() == text[start:end] and text[start:end]
    # a text over both limits: 128 kept wordpieces, literal specials dropped on either side of
    # the cut, and the encoder's own truncation at 512
    long = " ".join(["[SEP]", *(f"word{i} alpha" for i in range(300)), "[CLS]"])
    (long_offsets,) = tokenize(tokenizer, [long], 512, offsets=True).offsets or []
    encoded_long = encode_distinct([long], keep_offsets=True)[long]
    assert len(long_offsets) == len(token_states(encoded_long)) == MAX_TOKENS
    np.testing.assert_array_equal(encoded_long.offsets, long_offsets)
    kept = [t for t in tokenizer.tokenize(long) if t not in ("[SEP]", "[CLS]")][:MAX_TOKENS]
    assert [long[s:e].lower() for s, e in long_offsets] == [t.removeprefix("##") for t in kept]
    first = texts[0]
    pieces = [first[s:e] for s, e in offsets[0]]
    assert "21" in pieces and "Mitarbeiter".lower() in "".join(pieces).lower().replace("##", "")


def test_tagging_in_batches_gives_each_pair_its_own_probabilities(monkeypatch) -> None:
    """Batched by length, in batches of two: every pair gets what it gets alone."""
    torch.manual_seed(0)
    config = MismatchConfig(feature_names=FEATURES, use_text=False, span_dim=8)
    model = MismatchModel(config).eval()
    rng = np.random.default_rng(0)
    texts = [f"text {i}" for i in range(14)]
    tokens = {}
    for text, length in zip(texts, rng.integers(1, 30, len(texts)), strict=True):
        states = rng.standard_normal((int(length), config.embedding_dim))
        tokens[text_key(text)] = (states / np.linalg.norm(states, axis=1, keepdims=True)).astype(
            np.float16
        )
    refs, gens = texts[:7], texts[7:]
    monkeypatch.setattr(inference, "TAG_BATCH_PAIRS", 2)
    gen_probs, ref_probs = inference.token_probabilities(model, tokens, refs, gens)
    for i, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
        (alone_gen,), (alone_ref,) = inference.token_probabilities(model, tokens, [ref], [gen])
        assert len(gen_probs[i]) == len(tokens[text_key(gen)])
        assert len(ref_probs[i]) == len(tokens[text_key(ref)])
        np.testing.assert_allclose(gen_probs[i], alone_gen, atol=1e-5)
        np.testing.assert_allclose(ref_probs[i], alone_ref, atol=1e-5)


def test_pair_spans_label_gen_spans_with_the_top_class_that_has_a_place_in_gen() -> None:
    gen = "They hire 30 staff."
    probs = np.zeros(len(CODES))
    probs[INDEX["MissInfo"]], probs[INDEX["NumErr"]], probs[INDEX["NoContr"]] = 0.5, 0.3, 0.2
    at = REF.index("Manchester")
    spans, missing = pair_spans(
        gen,
        np.array([[0, 4], [5, 9], [10, 12], [13, 18], [18, 19]]),
        np.array([0.0, 0.0, 0.9, 0.0, 0.0]),
        REF,
        np.array([[at - 3, at - 1], [at, at + 10]]),
        np.array([0.1, 0.8]),
        2,
        probs,
    )
    assert spans == [{"start": 10, "end": 12, "text": "30", "label": "NumErr", "prob": 0.9}]
    assert missing == [
        {
            "ref_index": 2,
            "ref_start": at,
            "ref_end": at + 10,
            "text": "Manchester",
            "label": "MissInfo",
            "prob": 0.8,
        }
    ]


# --- the tagger and its training ----------------------------------------------------------


def test_the_tagger_reads_a_text_the_same_alone_or_padded_in_a_batch() -> None:
    torch.manual_seed(0)
    model = MismatchModel(
        MismatchConfig(feature_names=FEATURES, use_text=False, span_dim=8, embedding_dim=6)
    ).eval()
    rng = np.random.default_rng(0)
    texts = [rng.standard_normal((n, 6)).astype(np.float16) for n in (3, 7, 0, 5)]
    table = TokenTable(texts, 6)
    from evaluator.features.token_store import pair_tokens

    together = model.tag(pair_tokens(table, [0, 1, 2], table, [1, 3, 0]))
    for row, (ref, gen) in enumerate([(0, 1), (1, 3), (2, 0)]):
        alone = model.tag(pair_tokens(table, [ref], table, [gen]))
        gen_length, ref_length = len(texts[gen]), len(texts[ref])
        assert torch.allclose(together[0][row, :gen_length], alone[0][0, :gen_length], atol=1e-5)
        assert torch.allclose(together[1][row, :ref_length], alone[1][0, :ref_length], atol=1e-5)
    assert (together[0][2, 3:] == -1e4).all() and (together[1][2] == -1e4).all()  # padding
    with pytest.raises(ValueError, match="no span tagger"):
        MismatchModel(MismatchConfig(feature_names=FEATURES, use_text=False)).tag({})


def toy_examples(n: int, seed: int) -> SpanExamples:
    """Gen = ref with one token replaced by a new one (label 1); ref labels all 0."""
    rng = np.random.default_rng(seed)
    refs, gens, gen_labels, ref_labels = [], [], [], []
    for _ in range(n):
        length = int(rng.integers(3, 9))
        ref = rng.standard_normal((length, 6))
        ref /= np.linalg.norm(ref, axis=1, keepdims=True)
        gen = ref.copy()
        where = int(rng.integers(length))
        gen[where] = rng.standard_normal(6)
        gen[where] /= np.linalg.norm(gen[where])
        labels = np.zeros(length, dtype=np.float32)
        labels[where] = 1.0
        refs.append(ref.astype(np.float16))
        gens.append(gen.astype(np.float16))
        gen_labels.append(labels)
        ref_labels.append(np.zeros(length, dtype=np.float32))
    return SpanExamples(
        TokenTable(refs, 6),
        TokenTable(gens, 6),
        gen_labels,
        ref_labels,
        np.ones(n, dtype=bool),
        ["NumErr"] * n,
    )


def test_training_teaches_the_tagger_the_changed_token_and_nothing_else_moves() -> None:
    torch.manual_seed(0)
    model = MismatchModel(
        MismatchConfig(feature_names=FEATURES, use_text=False, span_dim=16, embedding_dim=6)
    )
    before = {k: v.clone() for k, v in model.state_dict().items() if not k.startswith("span_")}
    train, dev = toy_examples(600, 0), toy_examples(100, 1)
    from evaluator.features.token_store import pair_tokens

    def hit_rate() -> float:
        rows = np.arange(len(dev))
        with torch.no_grad():
            logits, _ = model.tag(pair_tokens(dev.ref, rows, dev.gen, rows))
        return float(
            np.mean(
                [
                    int(logits[i, : len(dev.gen_labels[i])].argmax())
                    == int(dev.gen_labels[i].argmax())
                    for i in rows
                ]
            )
        )

    untrained = hit_rate()
    history = train_span_tagger(
        model, train, dev, SpanTraining(dim=16, epochs=6, learning_rate=1e-2), log=lambda _: None
    )
    losses = [row["dev_loss"] for row in history["dev_history"]]
    assert len(losses) >= 2 and history["best_dev_loss"] == min(losses) < losses[0]
    assert untrained < 0.5 < 0.8 < hit_rate()  # chance is about 1 in 6
    after = model.state_dict()
    assert all(torch.equal(value, after[key]) for key, value in before.items())


def test_overlap_labels_mark_wordpieces_touching_a_region() -> None:
    offsets = np.array([[0, 3], [4, 8], [8, 10], [11, 14]])
    assert overlap_labels(offsets, [(5, 9)]).tolist() == [0, 1, 1, 0]
    assert overlap_labels(offsets, []).tolist() == [0, 0, 0, 0]


# --- spans in predictions ------------------------------------------------------------------


def span_checkpoint(
    directory: Path,
    *,
    flag: float,
    nocontr: float,
    span_dim: int = 8,
    tasks: dict | None = None,
    training: dict | None = None,
) -> Path:
    """A tiny lexical checkpoint whose tagger flags every token (``flag`` > 0) or none, and
    whose head reads NoContr (``nocontr`` > 0) or NumErr."""
    torch.manual_seed(0)
    num_ratings = len(next(iter(tasks.values()))["criteria"]) if tasks else 0
    model = MismatchModel(
        MismatchConfig(
            feature_names=FEATURES, use_text=False, span_dim=span_dim, num_ratings=num_ratings
        )
    ).eval()
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.zero_()
        model.head.bias[INDEX["NoContr"]] = nocontr
        model.head.bias[INDEX["NumErr"]] = 5.0
        if model.span_tagger is not None:
            for layer in (model.span_tagger.gen_output, model.span_tagger.ref_output):
                layer.weight.zero_()
                layer.bias.fill_(flag)
    rng = np.random.default_rng(0)
    scaler = FeatureScaler.fit(pd.DataFrame(rng.random((20, 2)), columns=FEATURES))
    return save_pretrained(model, directory, scaler=scaler, tasks=tasks, training=training)


def test_a_tagged_text_past_the_taggers_reach_is_counted_in_one_warning(tmp_path: Path) -> None:
    """The tagger reads a text's first MAX_TOKENS wordpieces: an error past them got a span
    on a word both texts share, and nothing said so. Only pairs that are tagged count."""
    flagged = Evaluator.from_pretrained(span_checkpoint(tmp_path / "a", flag=10.0, nocontr=0.0))
    filler = "The committee met again on Tuesday to open all the pending files. " * 12
    refs = [filler + "The company hired 300 staff.", REF, REF]
    gens = [filler + "The company hired 21 staff.", "They hire 30 staff.", filler]
    with pytest.warns(SpanReachWarning) as caught:
        flagged.predict(refs, gens, progress=False)
    assert [str(w.message) for w in caught] == [
        f"2 of 3 pair(s) were tagged with spans on a text longer than the span tagger's "
        f"{MAX_TOKENS} wordpieces; their spans and missing words come from the first "
        f"{MAX_TOKENS} alone and may point at the wrong words"
    ]
    correct = Evaluator.from_pretrained(span_checkpoint(tmp_path / "c", flag=10.0, nocontr=20.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flagged.predict(refs, gens, progress=False, spans=False)  # no spans, nothing to say
        flagged.predict(refs[1:2], gens[1:2], progress=False)
        correct.predict(refs, gens, progress=False)  # read as correct: not tagged
    chunks = [Pairs(["a", "b"], refs[:2], gens[:2], [None, None])]
    with pytest.warns(
        SpanReachWarning, match=r"^1 of 2 pair\(s\) were tagged with spans on a text"
    ):
        list(flagged.predict_stream(chunks, total=2, progress=False))


def test_of_several_references_only_the_deciding_one_is_counted(tmp_path: Path) -> None:
    """A long reference that did not decide the pair was not tagged: it does not count."""
    evaluator = Evaluator.from_pretrained(span_checkpoint(tmp_path / "a", flag=10.0, nocontr=0.0))
    filler = "The committee met again on Tuesday to open all the pending files. " * 12
    refs, gen = [[REF, filler]], "They hire 30 staff."
    texts = [gen, REF, filler]
    tokenizer = load_tokenizer(DEFAULT_ENCODER)
    gen_at, short_at, long_at = (
        offsets[:MAX_TOKENS]
        for offsets in tokenize(tokenizer, texts, tokenizer.model_max_length, offsets=True).offsets
        or []
    )
    probabilities = np.eye(len(CODES))[[INDEX["NumErr"]]]
    for naming, ref_at, counted in ((0, short_at, 0), (1, long_at, 1)):
        output = inference.PairOutputs(
            probabilities,
            None,
            ref_index=np.array([naming]),
            gen_token_probs=[np.ones(len(gen_at))],
            ref_token_probs=[np.ones(len(ref_at))],
            gen_token_offsets=[gen_at],
            ref_token_offsets=[ref_at],
        )
        (found,), count = evaluator._spans(output, refs, [gen], [0])
        assert count == counted and {m["ref_index"] for m in found[1]} == {naming}


def test_only_a_word_past_the_last_wordpiece_is_past_the_taggers_reach() -> None:
    """What the tokenizer drops (a combining accent, a zero-width space) may follow a text of
    exactly MAX_TOKENS wordpieces; it hides no error."""
    from evaluator.evaluator import _past_reach

    text = "word " * (MAX_TOKENS - 1) + "e"
    offsets = np.array([[5 * k, 5 * k + 4] for k in range(MAX_TOKENS)])  # the last: "e"
    assert not _past_reach(text, offsets)
    assert not _past_reach(text + "\u0301\u200b .", offsets)
    assert _past_reach(text + " more", offsets)
    assert not _past_reach(text + " more", offsets[:-1])  # fewer than MAX_TOKENS: all read


def test_predictions_carry_spans_only_when_asked_and_read_as_an_error(tmp_path: Path) -> None:
    flagged = Evaluator.from_pretrained(span_checkpoint(tmp_path / "a", flag=10.0, nocontr=0.0))
    refs = [REF, ["Kids play ball.", " Two children play football in a park."]]
    gens = [" They hire 30 staff in Zürich 😀.", "Children play football in the park."]
    first, second = flagged.predict(refs, gens, progress=False)
    assert first.labels == ["NumErr"]
    assert [s["text"] for s in first.spans] == ["They hire 30 staff in Zürich 😀"]
    for prediction, gen in ((first, gens[0]), (second, gens[1])):
        assert all(
            gen[s["start"] : s["end"]] == s["text"] and s["label"] == "NumErr"
            for s in prediction.spans
        )
    assert first.missing[0]["text"] == REF.rstrip(".") and first.missing[0]["ref_index"] == 0
    chosen = second.missing[0]["ref_index"]
    reference = refs[1][chosen]
    assert (
        reference[second.missing[0]["ref_start"] : second.missing[0]["ref_end"]]
        == (second.missing[0]["text"])
    )
    assert all(
        p.spans is None and p.missing is None
        for p in flagged.predict(refs, gens, progress=False, spans=False)
    )
    quiet = Evaluator.from_pretrained(span_checkpoint(tmp_path / "b", flag=-10.0, nocontr=0.0))
    assert [(p.spans, p.missing) for p in quiet.predict(refs, gens, progress=False)] == [
        ([], [])
    ] * 2
    correct = Evaluator.from_pretrained(span_checkpoint(tmp_path / "c", flag=10.0, nocontr=20.0))
    assert [
        (p.labels, p.spans, p.missing) for p in correct.predict(refs, gens, progress=False)
    ] == [(["NoContr"], [], [])] * 2
    plain = Evaluator.from_pretrained(
        span_checkpoint(tmp_path / "d", flag=0.0, nocontr=0.0, span_dim=0)
    )
    assert not plain.has_spans and plain.predict(refs, gens, progress=False)[0].spans is None


def test_a_trained_tagger_is_copied_into_a_task_checkpoint(tmp_path: Path) -> None:
    source = load(span_checkpoint(tmp_path / "base", flag=3.0, nocontr=0.0))
    task = {
        "summarization": {
            "kind": "regression",
            "criteria": [{"key": "coherence", "low": 1.0, "high": 5.0}],
        }
    }
    target = load(span_checkpoint(tmp_path / "task", flag=0.0, nocontr=0.0, span_dim=0, tasks=task))
    model = copy_span_tagger(source, target)
    assert model.span_tagger is not None
    for key, value in source.model.span_tagger.state_dict().items():
        assert torch.equal(model.span_tagger.state_dict()[key], value)
    kept = {k: v for k, v in model.state_dict().items() if not k.startswith("span_tagger.")}
    assert all(torch.equal(v, target.model.state_dict()[k]) for k, v in kept.items())
    with pytest.raises(ValueError, match="has no span tagger"):
        copy_span_tagger(target, source)
    target.config["features"]["num_layers"] = 3
    with pytest.raises(ValueError, match="token layer"):
        copy_span_tagger(source, target)


def toy_span_pairs(directory: Path, n: int = 40) -> list[dict]:
    """A synth folder of n pairs, every other one a NumErr (as ``mismatch synth`` writes them);
    returns the rows."""
    rows = []
    for i in range(n):
        ref = f"Team {i} hired {10 + i} new staff in Leeds last year."
        gen, label = (
            (ref.replace(f"{10 + i}", f"{90 + i}"), "NumErr") if i % 2 else (ref, "NoContr")
        )
        rows.append(
            {
                "id": f"train-{i:07d}",
                "ref": ref,
                "gen": gen,
                "label": label,
                "label_id": INDEX[label],
                "source": "toy",
                "group": f"g{i}",
                "rule": f"{label}/toy",
                "detail": json.dumps({"base": "ref"}),
            }
        )
    directory.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(directory / "train.parquet", index=False)
    return rows


def test_spans_train_command_adds_a_tagger_and_keeps_the_rest(tmp_path: Path, capsys) -> None:
    base = span_checkpoint(tmp_path / "base", flag=0.0, nocontr=0.0, span_dim=0)
    pairs = tmp_path / "synth"
    rows = toy_span_pairs(pairs)
    out = tmp_path / "with-spans"
    code = main(
        [
            "spans",
            "train",
            "--checkpoint",
            str(base),
            "--pairs",
            str(pairs),
            "--tokens",
            str(tmp_path / "tokens"),
            "--out",
            str(out),
            "--epochs",
            "2",
            "--dim",
            "8",
        ]
    )
    assert code == 0
    json.loads((out / "config.json").read_text(), parse_constant=pytest.fail)  # strict JSON
    trained, original = load(out), load(base)
    printed = json.loads(capsys.readouterr().out)  # the training record, where and what it wrote
    assert printed["out"] == str(out) and printed["signature"] == str(signature(trained))
    assert trained.model.config.span_dim == 8
    record = trained.config["training"]["span_tagger"]
    assert record["epochs"] == 2 and 1 <= len(record["dev_history"]) <= 2  # was the history
    assert (
        trained.config["training"]["span_tagger"]["train_pairs"]
        + trained.config["training"]["span_tagger"]["dev_pairs"]
        == 40
    )
    kept = {k: v for k, v in trained.model.state_dict().items() if not k.startswith("span_tagger.")}
    assert kept.keys() == original.model.state_dict().keys()
    assert all(torch.equal(v, original.model.state_dict()[k]) for k, v in kept.items())
    assert len(TokenStore(tmp_path / "tokens")) == 60  # 40 refs, 20 changed gens
    fresh = with_span_tagger(trained, 8, seed=1)  # training starts from a new tagger
    assert fresh.span_tagger is not None and not torch.equal(
        fresh.span_tagger.gen_output.weight, trained.model.span_tagger.gen_output.weight
    )
    assert text_key(rows[1]["gen"]) in TokenStore(tmp_path / "tokens").states
    human = tmp_path / "human"
    write_human(human, {"wmt17": [(f"t{i}", f"Ref {i} of the day.", f"Ref {i} of today.", 0.9)
                                  for i in range(6)]})  # fmt: skip
    with_real = main(["spans", "train", "--checkpoint", str(base), "--pairs", str(pairs),
                      "--tokens", str(tmp_path / "tokens"), "--out", str(out), "--epochs", "1",
                      "--dim", "8", "--real-bases", str(human)])  # fmt: skip
    record = load(out).config["training"]["span_tagger"]
    real = tagger_real_bases(human, seed=record["seed"])
    assert with_real == 0 and record["real_base_pairs"] == len(real) > 6
    assert record["train_pairs"] + record["dev_pairs"] == 40 + len(real)
    bad = main(["spans", "train", "--checkpoint", str(base), "--pairs", str(pairs),
                "--tokens", str(tmp_path / "tokens"), "--out", str(out),
                "--real-bases", str(tmp_path / "nowhere")])  # fmt: skip
    assert bad == 2 and "nowhere" in capsys.readouterr().err
    missing = main(
        [
            "spans",
            "train",
            "--checkpoint",
            str(base),
            "--pairs",
            str(tmp_path / "none"),
            "--tokens",
            str(tmp_path / "tokens"),
            "--out",
            str(out),
        ]
    )
    assert missing == 2 and "train.parquet" in capsys.readouterr().err
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    refused = main(["spans", "train", "--checkpoint", str(base), "--pairs", str(pairs),
                    "--tokens", str(tmp_path / "tokens"), "--out", str(tmp_path / "notes")])  # fmt: skip
    assert refused == 2 and "not a checkpoint directory" in capsys.readouterr().err
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"


def spans_train(tmp_path: Path, pairs: Path, *options: str) -> int:
    """`mismatch spans train` on a tiny base checkpoint, into tmp_path/out."""
    base = tmp_path / "base"
    if not base.exists():
        span_checkpoint(base, flag=0.0, nocontr=0.0, span_dim=0)
    return main(["spans", "train", "--checkpoint", str(base), "--pairs", str(pairs),
                 "--tokens", str(tmp_path / "tokens"), "--out", str(tmp_path / "out"),
                 *options])  # fmt: skip


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"drop": "group"}, "lacks column(s) group"),
        ({"detail": "[]"}, "row 3 (id 'train-0000002'): detail must be a JSON object, got '[]'"),
        ({"detail": None}, "row 3 (id 'train-0000002'): detail must be a JSON object, got null"),
        ({"detail": "{not json"}, "row 3 (id 'train-0000002'): detail is not valid JSON"),
        ({"detail": '{"base_text": 7}'}, "row 3 (id 'train-0000002'): detail base_text"),
        ({"ref": "list"}, "row 1 (id 'train-0000000'): ref is a list of references"),
    ],
)
def test_spans_train_names_the_pair_it_cannot_train_on(
    tmp_path: Path, capsys, change: dict, expected: str
) -> None:
    """Found before the encoder pass: the message names train.parquet, the pair and the key,
    and neither the token store nor the checkpoint is written."""
    pairs = tmp_path / "synth"
    frame = pd.DataFrame(toy_span_pairs(pairs))
    if "drop" in change:
        frame = frame.drop(columns=change["drop"])
    elif "ref" in change:  # a parquet column holds lists in every row or in none
        frame["ref"] = frame["ref"].map(lambda ref: [ref])
    else:
        ((key, value),) = change.items()
        frame[key] = frame[key].astype(object)
        frame.at[2, key] = value
    frame.to_parquet(pairs / "train.parquet", index=False)
    assert spans_train(tmp_path, pairs) == 2
    err = capsys.readouterr().err
    assert f"{pairs / 'train.parquet'}" in err and expected in err and "Traceback" not in err
    assert not (tmp_path / "tokens").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("out", ["tokens", "tokens/checkpoint"])
def test_spans_train_refuses_a_token_store_that_overlaps_the_checkpoint(
    tmp_path: Path, capsys, out: str
) -> None:
    """--tokens X --out X trained to the end, then refused to replace X (the store's shards
    were in it); --out inside the store wrote the checkpoint and broke the store."""
    pairs = tmp_path / "synth"
    toy_span_pairs(pairs)
    span_checkpoint(tmp_path / "base", flag=0.0, nocontr=0.0, span_dim=0)
    code = main(["spans", "train", "--checkpoint", str(tmp_path / "base"), "--pairs", str(pairs),
                 "--tokens", str(tmp_path / "tokens"), "--out", str(tmp_path / out)])  # fmt: skip
    assert code == 2
    assert "overlap; keep the token store and the checkpoint in separate folders" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "tokens").exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--dim", "0", "span training: dim must be at least 1"),
        ("--dim", "3", "span training: dim must be even (two GRU directions), got 3"),
        ("--epochs", "0", "span training: epochs must be at least 1"),
        ("--batch-size", "0", "span training: batch_size must be at least 1"),
        ("--patience", "0", "span training: patience must be at least 1"),
        ("--learning-rate", "-1", "span training: learning_rate must be a positive number"),
        ("--learning-rate", "nan", "span training: learning_rate must be a positive number"),
        ("--max-pairs", "0", "--max-pairs must be at least 1"),
        ("--max-pairs", "-5", "--max-pairs must be at least 1"),
        ("--max-pairs", "1", "training needs both (a tenth of the groups is held out)"),
        ("--seed", "-1", "span training: seed must be in 0.."),
    ],
)
def test_spans_train_checks_its_numbers_first(
    tmp_path: Path, capsys, option: str, value: str, message: str
) -> None:
    pairs = tmp_path / "synth"
    toy_span_pairs(pairs)
    assert spans_train(tmp_path, pairs, option, value) == 2
    error = capsys.readouterr().err
    assert error.startswith("mismatch spans: error: ") and message in error
    assert not (tmp_path / "tokens").exists() and not (tmp_path / "out").exists()


def test_training_needs_an_epoch_and_refuses_a_loss_that_is_not_a_number() -> None:
    """Either would leave no finite dev loss, which config.json (strict JSON) cannot hold."""
    model = MismatchModel(
        MismatchConfig(feature_names=FEATURES, use_text=False, span_dim=8, embedding_dim=6)
    )
    train, dev = toy_examples(20, 0), toy_examples(10, 1)
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        SpanTraining(dim=8, epochs=0)
    assert model.span_tagger is not None
    with torch.no_grad():
        model.span_tagger.gen_output.bias.fill_(float("nan"))  # as after a diverged step
    with pytest.raises(FloatingPointError, match="epoch 1: dev loss is nan"):
        train_span_tagger(model, train, dev, SpanTraining(dim=8, epochs=2), log=lambda _: None)


def test_a_divergence_after_a_good_epoch_keeps_that_epoch(monkeypatch) -> None:
    model = MismatchModel(
        MismatchConfig(feature_names=FEATURES, use_text=False, span_dim=8, embedding_dim=6)
    )
    train, dev = toy_examples(20, 0), toy_examples(10, 1)
    tagger = model.span_tagger
    assert tagger is not None
    after_epoch_1: dict = {}

    def note_epoch_1(line: str) -> None:
        if line.startswith("span tagger epoch 1:"):
            after_epoch_1.update(copy.deepcopy(tagger.state_dict()))

    step = torch.optim.AdamW.step

    def diverging_step(self, *args, **kwargs):  # every step after epoch 1 blows up
        result = step(self, *args, **kwargs)
        if after_epoch_1:
            with torch.no_grad():
                tagger.gen_output.bias.fill_(float("nan"))
        return result

    monkeypatch.setattr(torch.optim.AdamW, "step", diverging_step)
    history = train_span_tagger(model, train, dev, SpanTraining(dim=8, epochs=3), log=note_epoch_1)
    assert history["best_epoch"] == 1
    assert [(e["epoch"], e["dev_loss"] is None) for e in history["dev_history"]] == [
        (1, False),
        (2, True),
    ]
    for name, value in tagger.state_dict().items():  # epoch 1's weights, not the start's
        assert torch.equal(value, after_epoch_1[name]), name
    json.dumps(history, allow_nan=False)  # config.json can record it


def test_spans_copy_writes_no_target_unless_every_target_fits(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    record = {"span_tagger": {"dim": 8, "best_epoch": 1}}
    source = span_checkpoint(tmp_path / "source", flag=3.0, nocontr=0.0, training=record)
    target = span_checkpoint(tmp_path / "target", flag=0.0, nocontr=0.0, span_dim=0)
    before = {path.name: path.read_bytes() for path in target.iterdir()}
    (tmp_path / "plain").mkdir()  # not a checkpoint
    code = main(["spans", "copy", "--from", str(source), "--to", str(target),
                 str(tmp_path / "plain")])  # fmt: skip
    assert code == 2 and "plain" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in target.iterdir()} == before
    assert main(["spans", "copy", "--from", str(source), "--to", str(target)]) == 0
    copied = load(target)
    assert f"copied into {target}, signature {signature(copied)}" in capsys.readouterr().out
    assert copied.model.config.span_dim == 8
    assert copied.config["training"]["span_tagger"] == {**record["span_tagger"],
                                                        "copied_from": str(source)}  # fmt: skip
    unrecorded = span_checkpoint(tmp_path / "unrecorded", flag=3.0, nocontr=0.0)
    assert main(["spans", "copy", "--from", str(unrecorded), "--to", str(target)]) == 0
    assert load(target).config["training"]["span_tagger"] == {"copied_from": str(unrecorded)}
    # typed from another folder, the record names the same source: the same files, the same
    # signature (the path was kept as typed)
    monkeypatch.chdir(tmp_path)
    assert main(["spans", "copy", "--from", "unrecorded", "--to", "target"]) == 0
    assert load(target).config["training"]["span_tagger"] == {"copied_from": str(unrecorded)}
    assert main(["spans", "copy", "--from", str(source), "--to", "someone/hub-model"]) == 2
    assert "--to someone/hub-model: no such checkpoint folder" in capsys.readouterr().err
    itself = {path.name: path.read_bytes() for path in source.iterdir()}  # it copied into itself
    assert main(["spans", "copy", "--from", str(source), "--to", str(target), str(source)]) == 2
    assert f"--to {source} is the --from checkpoint; name another" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in source.iterdir()} == itself
    # a folder that cannot be replaced (it holds another file) stops the copy before any write
    other = span_checkpoint(tmp_path / "other", flag=0.0, nocontr=0.0, span_dim=0)
    (other / "notes.txt").write_text("mine")
    fresh = span_checkpoint(tmp_path / "fresh", flag=0.0, nocontr=0.0, span_dim=0)
    untouched = {path.name: path.read_bytes() for path in fresh.iterdir()}
    assert main(["spans", "copy", "--from", str(source), "--to", str(fresh), str(other)]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in fresh.iterdir()} == untouched


def test_spans_copy_replaces_the_folder_it_read_from_any_working_folder(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """checkpoints/NAME is found in the repository from any folder; the copy must replace that
    folder, not write a new one under the working folder."""
    import mismatch_core.resources

    repo = tmp_path / "repo"
    monkeypatch.setattr(mismatch_core.resources, "REPO_ROOT", repo)
    source = span_checkpoint(tmp_path / "source", flag=3.0, nocontr=0.0)
    shipped = span_checkpoint(repo / "checkpoints" / "task", flag=0.0, nocontr=0.0, span_dim=0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["spans", "copy", "--from", str(source), "--to", "checkpoints/task"]) == 0
    assert load(shipped).model.config.span_dim == 8
    assert not (elsewhere / "checkpoints").exists()
    assert f"copied into {shipped}, signature" in capsys.readouterr().out


def write_human(root: Path, rows: dict[str, list[tuple[str, str, str, float]]]) -> None:
    """The real-base sources as human-rating files: per dataset (group, ref, gen, rating)."""
    from evaluator.realtext_data import BASE_SOURCES

    for source in BASE_SOURCES:
        path = root / source.file
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            for i, (group, ref, gen, rating) in enumerate(rows.get(source.name, [])):
                record = {"id": f"{source.name}:{i}", "ref": ref, "gen": gen, "group": group,
                          "scores": {source.criterion: rating}}  # fmt: skip
                handle.write(json.dumps(record) + "\n")


def test_tagger_real_bases_come_from_training_groups_and_mark_only_the_applied_error(
    tmp_path: Path,
) -> None:
    from evaluator.human_data import HumanRecord
    from evaluator.realtext_data import bench_split

    candidates = [HumanRecord(str(i), ("r",), "g", None, f"g{i}", {}) for i in range(200)]
    test_groups = {r.group for r in bench_split(candidates)[1]}
    train_groups = [r.group for r in candidates if r.group not in test_groups]
    shared_ref = "The minister met 40 farmers in the village on Monday."
    ref = "Two dogs ran across the park in the morning."
    base = "Two dogs ran through the park in the morning."  # a correct rewording
    write_human(
        tmp_path,
        {
            "wmt16": [
                (train_groups[0], ref, base, 0.9),
                (train_groups[1], "A low one.", "A low output.", 0.1),  # rated too low
                (sorted(test_groups)[0], shared_ref, "The minister met 40 farmers.", 0.9),
                # a training group with a held-out group's reference (WMT shares them)
                (train_groups[2], shared_ref, "On Monday the minister met 40 farmers.", 0.9),
                # ... also when the held-out record is rated low, or spaced otherwise
                (sorted(test_groups)[1], "The farmers met 40 ministers.", "Farmers met.", 0.1),
                (train_groups[3], " The farmers met 40 ministers. ", "40 ministers met.", 0.9),
            ]
        },
    )
    pairs = tagger_real_bases(tmp_path, seed=13)
    assert set(pairs["ref"]) == {ref} and set(pairs["group"]) == {f"wmt16:{train_groups[0]}"}
    assert pairs[pairs["label"] == "NoContr"]["gen"].tolist() == [base]
    errors = pairs[pairs["label"] != "NoContr"]
    assert {"NumErr", "RepErr"} <= set(errors["label"])
    for row in errors.itertuples(index=False):
        assert json.loads(row.detail)["base_text"] == base
        regions = error_regions(row.ref, row.gen, row.label, row.detail)
        if row.label == "NumErr":  # "Two" changed: that word, not "through", is the error
            assert marked(row.gen, regions.gen) == [row.gen.split()[0]]


# --- the bench's measures -----------------------------------------------------------------


def test_character_counts_f1_and_the_word_diff_baseline() -> None:
    assert char_counts([(0, 4)], [(2, 6)]) == (2, 2, 2)
    assert char_counts([(0, 4), (2, 4)], []) == (0, 4, 0)  # overlapping regions count once
    assert f1(2, 2, 2) == pytest.approx(0.5) and np.isnan(f1(0, 0, 0))
    ref = "A man rides a horse on the beach."
    gen = "A woman is riding a horse on the beach."
    gen_regions, ref_regions = word_diff_regions(ref, gen)
    assert marked(gen, gen_regions) == ["woman is riding"]
    assert marked(ref, ref_regions) == ["man rides"]


def test_bench_spans_refuses_the_synthetic_part_without_its_pairs(capsys) -> None:
    assert main(["bench", "spans", "--parts", "synth"]) == 2
    assert "--synth-pairs" in capsys.readouterr().err
    assert main(["bench", "spans", "--parts", "darr"]) == 2
    assert "synth,bases" in capsys.readouterr().err
    assert main(["bench", "all", "--out", "results.json"]) == 2  # targets would share the file
    assert "not with all" in capsys.readouterr().err


def test_bench_spans_refuses_options_it_would_not_read(tmp_path: Path, capsys) -> None:
    """Each was accepted and ignored (exit 0); an --out naming the pairs replaced them."""
    assert main(["bench", "spans", "--darr-limit", "5"]) == 2
    assert "--darr-limit: for the realtext target, not spans" in capsys.readouterr().err
    assert main(["bench", "realtext", "--synth-pairs", "v.parquet"]) == 2
    assert "--synth-pairs: for the spans target, not realtext" in capsys.readouterr().err
    for unread in (["--synth-pairs", "v.parquet"], ["--pairs", "3"]):
        assert main(["bench", "spans", "--parts", "bases", *unread]) == 2
        assert f"{unread[0]}: for the synth part; this run has bases" in capsys.readouterr().err
    assert main(["bench", "spans", "--pairs", "3"]) == 2  # the synth part needs --synth-pairs
    assert "--pairs: for the synth part; this run has bases" in capsys.readouterr().err
    pairs = tmp_path / "val.parquet"
    pairs.write_bytes(b"PAR1 pairs")
    assert main(["bench", "spans", "--synth-pairs", str(pairs), "--out", str(pairs)]) == 2
    assert f"--out {pairs} is an input of this run" in capsys.readouterr().err
    assert pairs.read_bytes() == b"PAR1 pairs"
    assert main(["bench", "spans", "--out", str(tmp_path / "r.json.gz")]) == 2
    assert "the report is plain JSON; drop the .gz" in capsys.readouterr().err
    synth_only = ["--parts", "synth", "--synth-pairs", str(pairs)]
    assert main(["bench", "spans", *synth_only, "--bases-limit", "5"]) == 2
    assert "--bases-limit: for the bases part; this run has synth" in capsys.readouterr().err


def test_bench_all_hands_its_pairs_to_the_other_targets(tmp_path: Path) -> None:
    """Under `all`, --pairs is the synth, features and predict targets' too: spans without its
    synth part must not refuse it (it goes on to load the checkpoint)."""
    args = argparse.Namespace(
        target="all", pairs=3, parts=None, synth_pairs=None, bases_limit=None, out=None,
        checkpoint=str(tmp_path / "none"), seed=13,
    )  # fmt: skip
    with pytest.raises(CheckpointError, match="none"):
        bench_spans(args)
    with pytest.raises(CommandError, match="--pairs: for the synth part"):
        bench_spans(argparse.Namespace(**{**vars(args), "target": "spans"}))
