"""The generator over real corpus groups and the real rules: balance, splits, determinism, cleanliness."""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections import Counter

import pandas as pd
import pytest
import yaml

import synth.generate
from mismatch_core.resources import data_dir, load_spacy
from mismatch_core.taxonomy import CODES
from synth.config import SynthConfig
from synth.corpora import (
    SOURCES,
    Corpus,
    Group,
    human_overlap,
    load_corpus,
    normalise,
    passages,
    split_of,
)
from synth.generate import GroupQueue, _parse_groups, _screen, _work_chunk, generate
from synth.pairing import group_paraphrases, make_errors
from synth.perturb import Context, load_screens
from synth.quotas import Quotas, harvest_classes, plan_round
from synth.rules import shared_rules


@pytest.fixture(scope="module")
def small_corpus() -> Corpus:
    corpus = load_corpus(data_dir())
    rng = random.Random(0)
    by_source: dict[str, list] = {}
    for group in corpus.groups:
        by_source.setdefault(group.source, []).append(group)
    # questions are the only inputs for QuestErr, so keep plenty of them
    sizes = {"multi30k": 60, "coco": 60, "webnlg": 120, "squad": 500}
    groups = [g for source, n in sizes.items() for g in rng.sample(by_source[source], n)]
    return dataclasses.replace(corpus, groups=groups)


@pytest.fixture(scope="module")
def config() -> SynthConfig:
    # the default process count (2): results must not depend on which worker made a pair
    return SynthConfig(num_pairs=560, seed=7, texts_per_chunk=150, max_source_share=0.6)


@pytest.fixture(scope="module")
def generated(small_corpus, config):
    return generate(config, corpus=small_corpus)


def test_classes_are_balanced_in_each_split(generated, config):
    train, val, manifest = generated
    counts = manifest["per_class"]
    mean = config.num_pairs / len(CODES)
    assert set(counts) == set(CODES)
    for code, count in counts.items():
        assert abs(count - mean) <= 0.1 * mean, (code, count)
    assert len(train) + len(val) == manifest["num_pairs"]
    assert manifest["splits"] == {"train": len(train), "val": len(val)}
    for frame in (train, val):
        per_class = frame["label"].value_counts()
        split_mean = len(frame) / len(CODES)
        assert set(per_class.index) == set(CODES)
        for code, count in per_class.items():
            assert abs(count - split_mean) <= 0.15 * split_mean + 1, (code, count, len(frame))


def test_no_rule_raised(generated):
    assert generated[2]["rule_errors"] == {}


def test_no_group_in_both_splits(generated):
    train, val, manifest = generated
    assert not set(train["group"]) & set(val["group"])
    assert manifest["groups_in_both_splits"] == 0


def test_errors_differ_from_ref_and_no_gen_is_empty(generated):
    train, val, _ = generated
    for frame in (train, val):
        assert (frame["gen"].str.strip() != "").all()
        errors = frame[frame["label"] != "NoContr"]
        assert (errors["gen"] != errors["ref"]).all()


def _work_chunk_late(task):
    """The worker, delayed by a hash of its chunk seed: chunks finish out of order."""
    time.sleep(task[-1] % 4 * 0.1)
    return _work_chunk(task)


def test_same_seed_gives_identical_output(generated, small_corpus, config, monkeypatch):
    """Even when the workers finish their chunks in another order, and when there are more of
    them (small late rounds were cut into one chunk per worker, each with its own seed): each
    chunk's pairs are taken in the order the chunks were sent, and every pair lands in its
    group's split."""
    assert config.processes == SynthConfig().processes == 2
    monkeypatch.setattr(synth.generate, "_work_chunk", _work_chunk_late)  # forked workers see it
    train, val, _ = generate(dataclasses.replace(config, processes=3), corpus=small_corpus)
    assert train.equals(generated[0])
    assert val.equals(generated[1])
    for split, frame in (("train", train), ("val", val)):
        assert {split_of(g, config.seed, config.val_fraction) for g in frame["group"]} == {split}


def test_another_seed_gives_other_pairs(generated, small_corpus, config):
    train, val, _ = generate(dataclasses.replace(config, seed=8), corpus=small_corpus)
    pairs = lambda frame: set(zip(frame["ref"], frame["gen"], strict=True))  # noqa: E731
    before = pairs(generated[0]) | pairs(generated[1])
    after = pairs(train) | pairs(val)
    assert len(before & after) < 0.5 * len(after)


def test_cli_writes_pairs_and_manifest_then_audits_them(small_corpus, tmp_path, capsys, monkeypatch):
    from evaluator.cli import main

    # the sample corpus stands in for the whole one (loading it takes ~15 s; the tiny set of
    # tests/test_distributed.py runs the command on the whole corpus)
    read: list[tuple] = []
    monkeypatch.setattr(
        synth.generate, "load_corpus", lambda directory, sources: read.append(sources) or small_corpus
    )
    out = tmp_path / "synth"
    assert main(["synth", "--num-pairs", "56", "--seed", "3", "--out", str(out), "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "train.parquet",
        "val.parquet",
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    train, val = pd.read_parquet(out / "train.parquet"), pd.read_parquet(out / "val.parquet")
    assert read == [SOURCES]  # the default config draws from every source
    assert manifest["num_pairs"] == len(train) + len(val) == 56 and manifest["seed"] == 3
    assert manifest["splits"] == {"train": len(train), "val": len(val)}
    assert manifest["per_class"] == dict.fromkeys(CODES, 4)
    assert set(train["label"]) == set(CODES) and not set(train["group"]) & set(val["group"])
    capsys.readouterr()
    assert main(["synth", "--audit", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out

    # a rerun replaces the set; a folder holding anything else is refused before any work.
    # The rerun's generator hands back the first run's pairs (generating is tested above).
    def generate_again(config, progress=None):
        return train, val, {**manifest, "seed": config.seed}

    monkeypatch.setattr(synth.generate, "generate", generate_again)
    assert main(["synth", "--num-pairs", "56", "--seed", "4", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "manifest.json").read_text())["seed"] == 4
    (out / "notes.txt").write_text("mine")

    def no_work(config, progress=None):
        raise AssertionError("a refused folder must be named before any pair is made")

    monkeypatch.setattr(synth.generate, "generate", no_work)
    assert main(["synth", "--num-pairs", "56", "--out", str(out), "--quiet"]) == 2
    assert "holds notes.txt, not only train.parquet" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"
    # a feature cache's folder (data/features/synth holds train.parquet and val.parquet) was
    # replaced by pairs, exit 0
    caches = tmp_path / "features"
    caches.mkdir()
    for split in ("train", "val"):
        pd.DataFrame({"id": ["a"], "bleu": [0.5]}).to_parquet(caches / f"{split}.parquet")
    assert main(["synth", "--num-pairs", "56", "--out", str(caches), "--quiet"]) == 2
    assert f"{caches / 'train.parquet'} holds no pairs (no ref and gen columns: a feature" in (
        capsys.readouterr().err
    )
    assert list(pd.read_parquet(caches / "val.parquet").columns) == ["id", "bleu"]
    for code in CODES:
        assert f"=== {code} (" in printed
    shown = [line for line in printed.splitlines() if line.startswith("[train-")]
    assert len(shown) == len(CODES)  # one pair per class
    for line in shown:
        pair_id = line[1:].split("]")[0]
        row = train[train["id"] == pair_id].iloc[0]
        assert line.split()[1].startswith(row["label"] + "/")


def test_only_the_sources_a_config_draws_from_are_read(monkeypatch):
    """A config without SQuAD needs no squad.jsonl.gz (it stopped synth: no such file)."""
    read: list[tuple] = []

    def record(directory, sources):
        read.append(sources)
        raise KeyboardInterrupt  # stop before any work

    monkeypatch.setattr(synth.generate, "load_corpus", record)
    weights = {"webnlg": 0.4, "coco": 0.3, "multi30k": 0.3}
    with pytest.raises(KeyboardInterrupt):
        generate(SynthConfig(source_weights=weights, max_source_share=0.5))
    assert read == [("coco", "webnlg", "multi30k")]  # in SOURCES' order, whatever the config's


def test_errors_are_also_applied_to_paraphrases(generated):
    train, val, manifest = generated
    assert manifest["paraphrase_based"] > 0.1 * manifest["num_pairs"]


def test_no_text_of_the_human_sets_is_used(generated):
    overlap = human_overlap(data_dir() / "human")
    train, val, _ = generated
    for frame in (train, val):
        assert not {normalise(t) for t in frame["ref"]} & overlap.texts


def test_a_class_the_corpus_cannot_supply_is_reported_as_shortfall(small_corpus):
    # statements only: no text can take a QuestErr rule, so that quota stays open
    groups = [g for g in small_corpus.groups if g.source != "squad"][:60]
    corpus = dataclasses.replace(small_corpus, groups=groups)
    config = SynthConfig(
        num_pairs=140, seed=3, processes=1, texts_per_chunk=100, max_source_share=1.0,
        source_weights={"multi30k": 0.4, "webnlg": 0.3, "coco": 0.3},
    )  # fmt: skip
    train, val, manifest = generate(config, corpus=corpus)
    assert manifest["shortfall"]["QuestErr"] == 10
    assert manifest["per_class"]["QuestErr"] == 0
    assert manifest["num_pairs"] == len(train) + len(val) < 140


def test_squad_paragraphs_add_passages_of_consecutive_sentences():
    # (sentence index, position in the group); sentence 3 was dropped
    sentences = [(0, 10), (1, 11), (2, 12), (4, 13), (5, 14)]
    assert passages(sentences) == [(10, 11), (11, 12), (13, 14), (10, 11, 12)]
    four = [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert passages(four)[-1] == (0, 1, 2, 3) and len(passages(four)) == 3 + 2 + 1


def test_passages_take_their_parse_from_their_sentences(small_corpus):
    nlp = load_spacy()
    paragraph = next(g for g in small_corpus.groups if g.key.startswith("squad-p:") and g.parts)
    docs = _parse_groups([paragraph])[0]
    for i, run in paragraph.parts.items():
        assert docs[i].text == paragraph.texts[i] == " ".join(paragraph.texts[j] for j in run)
        # the parse comes over from the sentences' own parses, and each sentence starts one
        sentence_docs = [nlp(paragraph.texts[j]) for j in run]
        assert [t.dep_ for t in docs[i]] == [t.dep_ for doc in sentence_docs for t in doc]
        starts = {s.start for s in docs[i].sents}
        assert all(sum(len(d) for d in sentence_docs[:k]) in starts for k in range(len(run)))


def test_corpus_paragraph_groups_hold_sentences_and_their_passages(small_corpus):
    paragraphs = [g for g in small_corpus.groups if g.key.startswith("squad-p:")]
    with_passage = [
        any(f"{a} {b}" in g.texts for a, b in zip(g.texts, g.texts[1:], strict=False))
        for g in paragraphs
    ]
    assert sum(with_passage) > 0.5 * len(paragraphs)


def test_group_queue_passes_over_groups_the_screen_rejects():
    groups = [
        Group(f"g{i}", "squad", [f"Text {i}." + (" Then more." if i % 3 == 0 else "")])
        for i in range(9)
    ]
    queue = GroupQueue(groups, random.Random(0))
    taken = queue.take(3, keep=lambda group: "Then" in group.texts[0])
    assert sorted(g.key for g in taken) == ["g0", "g3", "g6"]
    assert queue.take(5, keep=lambda group: False) == []  # a pass with nothing kept ends the take
    assert len(queue.take(4)) == 4


def test_rounds_are_screened_only_when_every_open_class_has_a_screen():
    screens = load_screens()
    order = Group("a", "squad", ["He trained hard. Then he won the race."])
    plain = Group("b", "coco", ["A dog on a sofa."])
    keep = _screen({"PredOrdErr": 40, "QuestErr": 3}, screens)
    assert keep(order) and not keep(plain)
    assert keep(Group("c", "squad", ["Who won the race?"]))
    assert _screen({"PredOrdErr": 40, "GramErr": 1}, screens) is None


def test_nearly_full_classes_close_and_their_pairs_go_to_the_full_ones():
    quotas = Quotas.for_config(SynthConfig(num_pairs=1400, val_fraction=0.0))  # 100 per class
    for code in CODES:
        quotas.need[("train", code)] = 0
    quotas.need[("train", "QuestErr")] = 9  # 91 of 100: further behind than 8% allows
    quotas.need[("train", "PredOrdErr")] = 5
    assert quotas.close_nearly_full("train", 0.08) == 0
    assert quotas.need[("train", "QuestErr")] == 9
    quotas.need[("train", "QuestErr")] = 8
    assert quotas.close_nearly_full("train", 0.08) == 13
    assert set(quotas.open_in("train")) == set(CODES) - {"QuestErr", "PredOrdErr"}
    assert sum(quotas.open_in("train").values()) == 13  # the total stays the requested one
    assert max(quotas.open_in("train").values()) - min(quotas.open_in("train").values()) <= 1


def test_captions_are_paraphrases_only_when_they_name_the_same_things():
    nlp = load_spacy()
    texts = [
        "A white dog runs along the beach.",
        "A white dog runs on a beach.",
        "A white dog runs on a beach at sunset.",
    ]
    close = group_paraphrases("coco", texts, list(nlp.pipe(texts)), 0.5)
    assert close == [[1], [0], []]  # the third adds the sunset


def test_harvest_gives_one_error_per_rule_on_every_base():
    nlp = load_spacy()
    doc = nlp("When did Victoria approve a referendum?")
    rewrite = nlp("When did Victoria approve the referendum?")
    rules = shared_rules()
    one = make_errors("QuestErr", [doc, rewrite], doc, rewrite, False, rules, Context(rng=random.Random(0)))
    every = make_errors("QuestErr", [doc, rewrite], doc, rewrite, True, rules, Context(rng=random.Random(0)))
    assert len(one) == 1 and one[0][2]["base"] == "ref"
    for base in ("ref", "rewrite"):
        rules = [rule for _, rule, detail in every if detail["base"] == base]
        assert len(rules) >= 3 and len(set(rules)) == len(rules), (base, rules)


def test_rare_classes_are_harvested_and_common_ones_drawn():
    config = SynthConfig(source_weights={"coco": 0.5, "squad": 0.5}, max_source_share=0.5)
    attempts = Counter({
        ("coco", "NumErr"): 300, ("squad", "NumErr"): 300,
        ("coco", "AttrErr"): 300, ("squad", "AttrErr"): 300,
        ("coco", "HypErr"): 90, ("squad", "HypErr"): 90,
    })  # fmt: skip
    successes = Counter({("coco", "NumErr"): 12, ("squad", "NumErr"): 20, ("coco", "AttrErr"): 150})
    open_classes = {"NumErr": 10, "AttrErr": 10, "PredOrdErr": 10, "HypErr": 10}
    harvest = harvest_classes(open_classes, attempts, successes, {"PredOrdErr": None}, config)
    # screened (event order) and below scarce_rate on every source (numbers here); AttrErr
    # fails on squad but succeeds on half of the coco texts; HypErr has failed, but only 180 times
    assert harvest == {"PredOrdErr", "NumErr"}


def test_a_small_run_parses_in_proportion_to_its_size_and_a_large_one_as_before():
    # a late round: little is left, so every source gets the round's floor of texts
    late = {"QuestErr": 12, "NegErr": 3}
    for num_pairs, floor in ((280, 28), (56, 20), (1_999, 199), (2_000, 200), (200_000, 200)):
        config = SynthConfig(num_pairs=num_pairs)
        quotas = Quotas.for_config(config)
        plan = plan_round(late, frozenset(), quotas, Counter(), Counter(), config)
        assert set(plan) == set(config.source_weights)
        assert {texts for texts, _ in plan.values()} == {floor}, num_pairs


def test_a_bad_setting_is_named_before_any_work(tmp_path, capsys):
    from evaluator.cli import main

    for setting, message in (
        ({"val_fraction": 2.0}, "val_fraction must be in [0, 1), got 2.0"),
        ({"num_pairs": "abc"}, 'Parser key "num_pairs": Expected a <class \'int\'>. Got value: abc'),
        ({"source_weights": {"coco": 0}}, "source_weights must map sources to positive weights"),
        ({"source_weights": {"bogus": 1.0}}, "source_weights: unknown source(s) bogus; known: squad"),
        ({"max_source_share": 0.0}, "max_source_share 0.0 caps each of the 5 source(s) of "
         "source_weights at 0 pairs: together fewer than num_pairs 200000"),
        ({"max_source_share": 0.05}, "max_source_share 0.05 caps each of the 5 source(s) of "
         "source_weights at 10000 pairs"),
        # it ran and blamed the corpora for a shortfall of 30 pairs, exit 0
        ({"source_weights": {"multi30k": 1}, "num_pairs": 50}, "max_source_share 0.4 caps each "
         "of the 1 source(s) of source_weights at 20 pairs: together fewer than num_pairs 50 "
         "(each needs 50)"),
        # 1/3 of 100 is 33 a source: 99 pairs
        ({"source_weights": {"multi30k": 1, "coco": 1, "squad": 1}, "num_pairs": 100,
          "max_source_share": 0.3334}, "max_source_share 0.3334 caps each of the 3 source(s) of "
         "source_weights at 33 pairs: together fewer than num_pairs 100 (each needs 34)"),
        ({"seed": -1}, "seed must be in 0..4294967295, got -1"),
        (5, "the file must be a YAML mapping of keys to values, got 5"),
    ):
        config = tmp_path / "synth.yaml"
        config.write_text(yaml.safe_dump(setting))
        assert main(["synth", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
        assert f"synth.yaml: {message}" in capsys.readouterr().err
    config.write_text("# every setting left at its default\n")
    assert main(["synth", "--config", str(config), "--out", str(tmp_path / "out")]) == 2
    assert "synth.yaml: no settings in the file" in capsys.readouterr().err
    assert main(["synth", "--processes", "0", "--out", str(tmp_path / "out")]) == 2
    assert "--processes: processes must be at least 1, got 0" in capsys.readouterr().err
    assert main(["synth", "--seed", "-1", "--out", str(tmp_path / "out")]) == 2
    assert "--seed: seed must be in 0..4294967295, got -1" in capsys.readouterr().err
    for small in ("28", "1"):  # 1 and 2 were told of max_source_share's cap instead
        assert main(["synth", "--num-pairs", small, "--out", str(tmp_path / "out")]) == 2
        error = capsys.readouterr().err
        assert "--num-pairs must be at least 42 (one pair per class in each split" in error
        assert error.endswith(f"), got {small}\n")
    config.write_text(yaml.safe_dump({"max_source_share": 0.2, "num_pairs": 70}))
    assert main(["synth", "--config", str(config), "--print_config"]) == 0  # a ValueError
    assert "max_source_share: 0.2" in capsys.readouterr().out  # (checked at every size tried)
    assert main(["synth", "--print_config", "--audit", "5"]) == 2  # a TypeError
    assert "--audit reads OUT/train.parquet; give --out" in capsys.readouterr().err
    assert main(["synth", "--audit", "0", "--out", str(tmp_path / "out")]) == 2
    assert "--audit must be at least 1" in capsys.readouterr().err
    audit = ["synth", "--audit", "2", "--out", str(tmp_path / "out")]  # they went unread
    assert main([*audit, "--num-pairs", "56", "--config", str(config)]) == 2
    assert "--audit reads the pairs already in --out: leave out --config, --num-pairs" in (
        capsys.readouterr().err
    )
    assert main(["synth", "--audit", "2", "--seed", "-1", "--out", str(tmp_path / "out")]) == 2
    assert "--seed must be in 0..4294967295, got -1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_audit_names_a_file_that_is_not_a_synth_output(tmp_path, capsys):
    from evaluator.cli import main

    (tmp_path / "train.parquet").write_text("not parquet")
    assert main(["synth", "--audit", "2", "--out", str(tmp_path)]) == 2
    assert "train.parquet cannot be read as parquet" in capsys.readouterr().err
    pd.DataFrame({"id": ["a"], "ref": ["r"], "gen": ["g"]}).to_parquet(tmp_path / "train.parquet")
    assert main(["synth", "--audit", "2", "--out", str(tmp_path)]) == 2
    assert "not a mismatch synth output: no column(s) label, label_id, rule, detail" in (
        capsys.readouterr().err
    )
    row = {"id": ["a"], "ref": ["r"], "gen": ["g"], "label": ["NoContr"], "label_id": [0]}
    for detail, message in (
        ("{not json", "detail is not valid JSON (Expecting property name"),
        ("[1]", "detail must be a JSON object, got '[1]'"),
        (None, "detail must be a JSON object, got null"),
        ('{"n": ' + "9" * 5000 + "}", "detail is not valid JSON (Exceeds the limit"),
        ("[" * 100_000, "detail is not valid JSON (nested too deeply)"),
    ):
        frame = pd.DataFrame({**row, "rule": ["copy"], "detail": [detail]})
        frame.to_parquet(tmp_path / "train.parquet")
        assert main(["synth", "--audit", "2", "--out", str(tmp_path)]) == 2
        assert f"pair 'a': {message}" in capsys.readouterr().err


def test_manifest_reports_how_far_error_bases_are_from_their_refs(generated):
    train, val, manifest = generated
    divergence = manifest["divergence"]
    base = divergence["error_base_chrf"]
    errors = pd.concat([train, val]).query("label != 'NoContr'")
    assert base["pairs"] == len(errors)
    assert 0 < base["share_below_0.6"] < 1
    assert base["quantiles"]["0.1"] <= base["quantiles"]["0.5"] <= base["quantiles"]["0.9"]
    assert set(divergence["error_base_chrf_per_class"]) <= set(CODES[1:])
    assert divergence["nocontr_gen_chrf"]["pairs"] == manifest["per_class"]["NoContr"]
    details = errors["detail"].map(json.loads)
    off_ref = details[details.map(lambda d: d["base"] != "ref")]
    assert len(off_ref) and all("base_text" in d and d["base_chrf"] < 1 for d in off_ref)
