"""The checkpoints shipped in `checkpoints/` load, fit the code that reads them, and pass basic sanity.

Read through the public API only (`Evaluator.from_pretrained(...).predict`), on the real
packaged encoder, with one reference and five outputs: an exact copy, three copies with one
key error (a negation, a wrong number, a wrong place name) and a correct paraphrase. An exact
copy must read as NoContr and outrank each error on `score` and, for task checkpoints, on the
rating; task checkpoints must also rate the paraphrase above each error. Every number they
give these texts is pinned to the checkpoint's signature (tests/pinned_scores.json).

Cases the shipped task checkpoints fail today are marked xfail(strict=True) with the value
measured when the mark was set: the failure stays visible, and a refit checkpoint that passes
forces the mark's removal (issue #27).
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest
from safetensors.numpy import load_file

from evaluator import Evaluator
from evaluator.features.registry import available_features
from evaluator.hub import save_from_checkpoint
from evaluator.predict_io import read_jsonl_file
from evaluator.tasks import TASKS, get_task
from mismatch_core.resources import REPO_ROOT
from mismatch_core.taxonomy import CODES

REF = (
    "The company reported a 12 percent rise in profits last year and plans to hire "
    "300 new staff in Manchester."
)
ERRORS = {
    "negated": REF.replace("and plans to hire", "and does not plan to hire"),
    "number": REF.replace("12 percent", "21 percent"),
    "name": REF.replace("Manchester", "Liverpool"),
}
FAR = "It rained all day in London on Tuesday."  # a reference unrelated to REF
PARAPHRASE = (
    "Last year the company's profits rose by 12 percent, and it intends to take on 300 new "
    "employees in Manchester."
)
# A text of 264 words: its exact copy once read as RepErr (P(NoContr) 0.001), as did copies of
# 190 words and more, since the density feature grows with length and was kept far past its
# training range (docs/experiments/2026-11-30-long-copies)
LONG_REF = (
    "The city council met on Tuesday evening to discuss the new budget for the coming year. "
    "After three hours of debate, the members agreed to spend 45 million dollars on roads, "
    "schools and public transport. The mayor said the plan would create about 600 jobs and "
    "repair more than 120 kilometres of damaged streets before the winter. Several residents "
    "spoke during the public session. A teacher from the northern district asked why the "
    "schools in her area had waited so long for new heating systems, and a bus driver "
    "complained that the night routes had been cut twice in the last two years. The council "
    "promised to review both issues in the spring. Opposition members argued that the budget "
    "relied too heavily on a tax increase that had not yet been approved by the regional "
    "government. They proposed delaying the transport projects until the tax question was "
    "settled, but their motion was rejected by a vote of nine to four. The finance director "
    "explained that the city had saved 8 million dollars over the past year by renegotiating "
    "energy contracts and reducing the number of rented offices. She added that these savings "
    "would cover the first stage of the road repairs even if the tax increase failed. Local "
    "business groups welcomed the decision, saying that better roads and reliable buses would "
    "help shops in the centre, which have struggled since the new shopping park opened on the "
    "edge of town. The council will publish the full budget on its website next week, and a "
    "final vote is planned for the end of the month."
)
pytestmark = pytest.mark.slow  # the packaged encoder

CHECKPOINTS = ["base", *TASKS]
# The rating that says "good" for a classification task (one probability per class).
GOOD_CLASS = {"nli": "entailment"}


def xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=f"issue #27: {reason}")


# (checkpoint, check) -> measured value when marked; checks: "copy", "score-<error>",
# "rating-<error>", "paraphrase-<error>"
KNOWN_FAILURES = {
    # mean rating (0-1), measured on the checkpoints refitted 2026-11-27, data2text and question
    # generation with 2,000 reference triples and dialogue with 4,000
    # (docs/experiments/2026-11-27-triples-current-base); before it data2text failed the
    # negated and number checks, dialogue the name check and question generation all three
    # captioning failed the negated and number checks from 2026-11-27 until its refit of
    # 2026-12-02 (paraphrase 0.907 < 0.923 and 0.958 then; 0.892 against 0.828 and 0.882 now)
    ("question_generation", "paraphrase-number"): "paraphrase 0.265 < wrong number 0.741",
    ("question_generation", "paraphrase-name"): "paraphrase 0.265 < wrong name 0.602",
    # summarization reads each output against its source since 2026-11-27
    # (docs/experiments/2026-11-27-source-metrics); the example has none, so the reference
    # stands in, and the paraphrase's words are not all in it (before: only the number check
    # failed, 0.887 < 0.921); values of the refit of 2026-12-02 (0.684 against 0.827, 0.911
    # and 0.816 before it)
    ("summarization", "paraphrase-negated"): "paraphrase 0.772 < negated 0.943",
    ("summarization", "paraphrase-number"): "paraphrase 0.772 < wrong number 0.984",
    ("summarization", "paraphrase-name"): "paraphrase 0.772 < wrong name 0.973",
}


def cases(names: list[str], checks: list[str]) -> list:
    out = []
    for name in names:
        for check in checks:
            reason = KNOWN_FAILURES.get((name, check))
            marks = [xfail(reason)] if reason else []
            out.append(pytest.param(name, check, marks=marks, id=f"{name}-{check}"))
    return out


def sources(evaluator: Evaluator, refs: list[str]) -> list[str] | None:
    """These examples have no source: for a checkpoint whose ratings read one, the reference
    stands in for it (as in ``mismatch bench realtext``)."""
    return list(refs) if evaluator.checkpoint.model.config.source_features else None


@cache
def evaluated(name: str) -> tuple[Evaluator, dict]:
    """The loaded checkpoint and its predictions for the copy, each error and the paraphrase
    (once per run)."""
    evaluator = Evaluator.from_pretrained(REPO_ROOT / "checkpoints" / f"mismatch-{name}")
    texts = {"copy": REF, **ERRORS, "paraphrase": PARAPHRASE}
    refs = [REF] * len(texts)
    predictions = evaluator.predict(
        refs, list(texts.values()), sources(evaluator, refs), progress=False
    )
    return evaluator, dict(zip(texts, predictions, strict=True))


@cache
def beside_far(name: str) -> dict:
    """The checkpoint's predictions for the copy and each error, read against REF with FAR
    beside it (once per run)."""
    evaluator, _ = evaluated(name)
    texts = {"copy": REF, **ERRORS}
    refs = [[REF, FAR]] * len(texts)
    predictions = evaluator.predict(
        refs, list(texts.values()), sources(evaluator, [REF] * len(texts)), progress=False
    )
    return dict(zip(texts, predictions, strict=True))


def quality(evaluator: Evaluator, prediction) -> float:
    """One number per prediction from the ratings: the good class's probability, or the mean
    rating with each criterion mapped from its human scale to [0, 1]."""
    if evaluator.kind == "classification":
        (task,) = evaluator.checkpoint.tasks
        return prediction.ratings[GOOD_CLASS[task]]
    return float(np.mean([c.normalise(prediction.ratings[c.key]) for c in evaluator.criteria]))


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_checkpoint_loads_and_matches_the_registry_and_its_task(name: str) -> None:
    evaluator, predictions = evaluated(name)
    checkpoint = evaluator.checkpoint
    assert checkpoint.config["taxonomy"] == list(CODES)
    unknown = set(checkpoint.feature_names) - set(available_features())
    assert not unknown, f"features the registry does not compute: {sorted(unknown)}"
    assert len(set(checkpoint.feature_names)) == len(checkpoint.feature_names)
    for prediction in predictions.values():
        assert list(prediction.mismatch) == list(CODES)
        assert sum(prediction.mismatch.values()) == pytest.approx(1.0, abs=1e-4)
    if name == "base":
        assert checkpoint.tasks == {} and evaluator.criteria == []
        assert all(p.ratings == {} for p in predictions.values())
        return
    task = get_task(name)
    assert checkpoint.tasks == {
        name: {
            "kind": task.kind,
            "criteria": [{"key": c.key, "low": c.low, "high": c.high} for c in task.criteria],
        }
    }
    for prediction in predictions.values():
        assert list(prediction.ratings) == [c.key for c in task.criteria]
        for criterion in task.criteria:
            assert criterion.low <= prediction.ratings[criterion.key] <= criterion.high


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_saving_a_loaded_checkpoint_again_writes_the_same_files(name: str, tmp_path) -> None:
    """Its signature's sha256 survives a load and a save (``save_from_checkpoint``): the
    base's config once lacked two keys the code writes, so a copy saved again signed otherwise."""
    evaluator, _ = evaluated(name)
    checkpoint = evaluator.checkpoint
    shipped = REPO_ROOT / "checkpoints" / f"mismatch-{name}"
    saved = save_from_checkpoint(
        checkpoint,
        checkpoint.model,
        tmp_path / shipped.name,
        training=checkpoint.config["training"],
        metrics=checkpoint.config["metrics"],
    )
    assert sorted(p.name for p in saved.iterdir()) == sorted(p.name for p in shipped.iterdir())
    for path in shipped.iterdir():
        assert (saved / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.parametrize(("name", "check"), cases(CHECKPOINTS, ["copy"]))
def test_an_exact_copy_reads_as_no_contradiction(name: str, check: str) -> None:
    _, predictions = evaluated(name)
    assert predictions["copy"].score >= 0.95, predictions["copy"].mismatch


@cache
def evaluated_long(name: str) -> tuple[Evaluator, list]:
    """Predictions for an exact copy of LONG_REF and for the copy with one number changed."""
    evaluator = Evaluator.from_pretrained(REPO_ROOT / "checkpoints" / f"mismatch-{name}")
    gens = [LONG_REF, LONG_REF.replace("45 million", "54 million")]
    refs = [LONG_REF] * len(gens)
    return evaluator, evaluator.predict(refs, gens, sources(evaluator, refs), progress=False)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_a_long_exact_copy_reads_as_no_contradiction_and_above_a_wrong_number(name: str) -> None:
    evaluator, (copy, wrong) = evaluated_long(name)
    assert copy.score >= 0.95 and copy.labels == ["NoContr"], copy.mismatch
    assert "NumErr" in wrong.labels, wrong.mismatch
    if evaluator.rating_keys:
        assert quality(evaluator, copy) > quality(evaluator, wrong), (copy.ratings, wrong.ratings)


@pytest.mark.parametrize(("name", "check"), cases(CHECKPOINTS, [f"score-{e}" for e in ERRORS]))
def test_a_copy_outscores_a_copy_with_a_key_error(name: str, check: str) -> None:
    _, predictions = evaluated(name)
    error = check.removeprefix("score-")
    assert predictions["copy"].score > predictions[error].score, (
        predictions["copy"].score,
        predictions[error].score,
    )


@pytest.mark.parametrize(("name", "check"), cases(list(TASKS), [f"rating-{e}" for e in ERRORS]))
def test_a_copy_is_rated_above_a_copy_with_a_key_error(name: str, check: str) -> None:
    evaluator, predictions = evaluated(name)
    error = check.removeprefix("rating-")
    copy, wrong = (quality(evaluator, predictions[k]) for k in ("copy", error))
    assert copy > wrong, (copy, wrong, predictions["copy"].ratings, predictions[error].ratings)


def test_a_copy_of_one_of_several_references_reads_as_that_copy() -> None:
    """The negated reference beside the copied one must not enter its reading (with features
    aggregated over both references, P(NoContr) was 0.139 instead of 0.9999)."""
    evaluator, predictions = evaluated("base")
    for refs in ([ERRORS["negated"], REF], [REF, ERRORS["negated"]]):
        multi = evaluator.predict([refs], [REF], progress=False)[0]
        assert multi.labels == predictions["copy"].labels == ["NoContr"]
        assert multi.score == pytest.approx(predictions["copy"].score, abs=0.05)


def base_reading(rule: str | None, monkeypatch) -> Evaluator:
    """The shipped base, reading several references by deciding_reference ``rule`` for the
    rest of the test (monkeypatch restores its config); None: by its shipped config."""
    evaluator, _ = evaluated("base")
    if rule is not None:
        monkeypatch.setattr(evaluator.checkpoint.model.config, "deciding_reference", rule)
    return evaluator


@pytest.mark.parametrize(
    "rule",
    [
        pytest.param("likeliest", marks=pytest.mark.xfail(strict=True, reason=(
            "the rule before 2026-12-02: the unrelated reference names the negated and "
            "wrong-name copies' errors (MissInfo, no span); "
            "docs/experiments/2026-12-02-errors-named-closest"))),
        pytest.param(None, id="shipped"),
    ],
)  # fmt: skip
def test_an_error_beside_an_unrelated_reference_is_named_against_the_near_one(
    rule: str | None, monkeypatch
) -> None:
    """Each copy with one error, beside an unrelated reference in either order, keeps the
    labels and spans it has against its reference alone."""
    _, predictions = evaluated("base")
    evaluator = base_reading(rule, monkeypatch)
    for refs in ([REF, FAR], [FAR, REF]):
        multi = evaluator.predict([refs] * len(ERRORS), list(ERRORS.values()), progress=False)
        for error, prediction in zip(ERRORS, multi, strict=True):
            assert prediction.ref_index == refs.index(REF), error
            assert prediction.labels == predictions[error].labels, error
            marked = [(s["start"], s["end"], s["label"]) for s in prediction.spans]
            assert marked == [(s["start"], s["end"], s["label"]) for s in predictions[error].spans]


@pytest.mark.parametrize("name", list(TASKS))
def test_a_copy_of_one_of_several_references_is_rated_as_that_copy(name: str) -> None:
    """A far reference beside the copied one must not lower the ratings. With each metric's max
    over the references the far one's novelty and edit distance entered them: captioning rated
    a copy of a caption 0.970 (yes_fraction) alone and 0.745 beside two more captions of the
    image, translation a copy da_z 1.76 alone and 1.07 beside an unrelated sentence."""
    evaluator, predictions = evaluated(name)
    multi = beside_far(name)["copy"]
    assert multi.ref_index == 0
    assert multi.ratings == pytest.approx(predictions["copy"].ratings, abs=1e-4)


@pytest.mark.parametrize(("name", "check"), cases(list(TASKS), [f"far-{e}" for e in ERRORS]))
def test_an_unrelated_reference_does_not_hide_an_error(name: str, check: str) -> None:
    """Beside an unrelated reference, a copy with one key error must still rate below the copy.
    (A floor, not the guard of the feature reading: a first version of 2026-12-02 read every
    column at its own best, so a wrong city's changed_place came from the unrelated reference,
    0.08 for 1.0, and passed this too; test_predict's over_references test guards that. The
    likeliest reading of the negated and wrong-name copies is the unrelated reference's, by
    P(NoContr), so their ratings do move beside it.)"""
    evaluator, _ = evaluated(name)
    predictions = beside_far(name)
    copy, wrong = predictions["copy"], predictions[check.removeprefix("far-")]
    assert quality(evaluator, copy) > quality(evaluator, wrong), (copy.ratings, wrong.ratings)


# A reworded output with one order word or one question turned: sentence vectors barely
# feel the change, the head's order and question terms name it (issue #23).
REWORDED_ERRORS = {
    "PredOrdErr": (
        "The rise in profits was followed by a plan to hire 300 staff.",
        "A plan to take on 300 employees was preceded by the increase in profits.",
    ),
    "QuestErr": (
        "Why did the company hire 300 new staff?",
        "Did the firm take on 300 new employees?",
    ),
}


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_a_reworded_output_with_a_turned_order_or_question_names_it(name: str) -> None:
    evaluator, _ = evaluated(name)
    refs, gens = zip(*REWORDED_ERRORS.values(), strict=True)
    predictions = evaluator.predict(
        list(refs), list(gens), sources(evaluator, list(refs)), progress=False
    )
    for code, prediction in zip(REWORDED_ERRORS, predictions, strict=True):
        assert prediction.labels == [code], (code, prediction.mismatch)


# `make demo` (examples/pairs.jsonl), read by the base as issue #23 asks: the good real
# translations and the paraphrase read as NoContr, each constructed error as its class.
DEMO_READINGS = {
    "wmt17-good-1": "NoContr",
    "wmt17-good-2": "NoContr",
    "number": "NumErr",
    "negation": "NegErr",
    "entity": "EntErr",
    "place": "STErr",
    "missing": "MissInfo",
    "added": "OutofRef",
    "multi-ref": "NoContr",
}
DEMO_MISSES = {"multi-ref": "P(NoContr) 0.008, read as HypErr 0.63 (its 'workers')"}


@cache
def demo_predictions() -> dict:
    evaluator, _ = evaluated("base")
    pairs, _ = read_jsonl_file(REPO_ROOT / "examples" / "pairs.jsonl")
    predictions = evaluator.predict(pairs.refs, pairs.gens, ids=pairs.ids, progress=False)
    return {p.id: p for p in predictions}


@pytest.mark.parametrize(
    "pair",
    [
        pytest.param(
            p, marks=[pytest.mark.xfail(strict=True, reason=f"issue #23: {DEMO_MISSES[p]}")]
        )
        if p in DEMO_MISSES
        else p
        for p in DEMO_READINGS
    ],
)
def test_the_base_reads_each_demo_pair_as_the_demo_says(pair: str) -> None:
    prediction = demo_predictions()[pair]
    top = max(prediction.mismatch, key=prediction.mismatch.__getitem__)
    assert top == DEMO_READINGS[pair], prediction.mismatch
    assert (prediction.score >= 0.5) == (top == "NoContr"), prediction.score


@pytest.mark.parametrize(("name", "check"), cases(list(TASKS), [f"paraphrase-{e}" for e in ERRORS]))
def test_a_correct_paraphrase_is_rated_above_a_copy_with_a_key_error(name: str, check: str) -> None:
    """The company example of issue #27: a rewording that keeps every fact must rate above a
    near-copy that changes one."""
    evaluator, predictions = evaluated(name)
    paraphrase, error = predictions["paraphrase"], check.removeprefix("paraphrase-")
    good, wrong = quality(evaluator, paraphrase), quality(evaluator, predictions[error])
    assert good > wrong, (good, wrong, paraphrase.ratings, predictions[error].ratings)


@pytest.mark.parametrize("name", list(TASKS))
def test_a_task_checkpoint_keeps_the_shipped_base_unchanged(name: str) -> None:
    """Fitted on the shipped base with its mismatch judgement frozen: every tensor of the base
    is in the task checkpoint bit for bit (so its synthetic val accuracy is the base's), and
    the features are scaled alike (the task reads each over its references as it was fitted
    to, ``aggregate``; the base rates nothing)."""
    base_dir, task_dir = (REPO_ROOT / "checkpoints" / f"mismatch-{n}" for n in ("base", name))
    base = load_file(base_dir / "model.safetensors")
    task = load_file(task_dir / "model.safetensors")
    changed = [k for k in base if k not in task or not np.array_equal(task[k], base[k])]
    assert not changed, f"{len(changed)} of {len(base)} base tensors differ, e.g. {changed[:3]}"
    base_config, task_config = (
        json.loads((d / "config.json").read_text()) for d in (base_dir, task_dir)
    )
    task_config["features"].pop("aggregate")
    base_config["features"].pop("aggregate")
    assert task_config["features"] == base_config["features"]


@pytest.mark.parametrize(
    "rule",
    [
        pytest.param("likeliest", marks=pytest.mark.xfail(strict=True, reason=(
            "the rule before 2026-12-02: the base gives the unrelated first reference "
            "P(NoContr) 0.203 and the true one 0.105 (it reads the dropped place as STErr), so "
            "the likeliest reading names the errors against the first reference"))),
        pytest.param(None, id="shipped"),
    ],
)  # fmt: skip
def test_missing_words_are_placed_in_the_reference_that_names_the_errors(
    rule: str | None, monkeypatch
) -> None:
    """Omitted words are reported in the naming reference's own offsets (here the second)."""
    evaluator = base_reading(rule, monkeypatch)
    gen = REF.replace(" in Manchester", "")
    other = "A spokesman said the figures would be published in March."
    (prediction,) = evaluator.predict([[other, REF]], [gen], progress=False)
    assert prediction.missing, prediction.mismatch
    for item in prediction.missing:
        assert item["ref_index"] == 1
        assert REF[item["ref_start"] : item["ref_end"]] == item["text"]
    assert any("Manchester" in item["text"] for item in prediction.missing)


# the words each error changed: the top span must overlap them
CHANGED_WORDS = {"negated": "does not plan", "number": "21", "name": "Liverpool"}


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_spans_mark_the_changed_words_and_nothing_in_a_copy(name: str) -> None:
    """Issue #24: every shipped checkpoint has the span tagger; the most probable span of each
    one-error copy lies on the words the error changed, and an exact copy has no span."""
    evaluator, predictions = evaluated(name)
    assert evaluator.has_spans
    assert predictions["copy"].spans == [] and predictions["copy"].missing == []
    for error, words in CHANGED_WORDS.items():
        gen = ERRORS[error]
        start = gen.index(words)
        top = predictions[error].spans[0]
        assert gen[top["start"] : top["end"]] == top["text"]
        assert top["start"] < start + len(words) and start < top["end"], (error, top)


def test_a_symbol_the_vocabulary_lacks_does_not_hide_the_word_beside_it() -> None:
    """An emoji glued to a word made the word unknown to the encoder: against "great",
    "terrible😀" read 0.447 and "great😀" 0.138 (GramErr); "35℃" against "25°C" lost its
    number and read as MissInfo (docs/experiments/2026-12-02-symbols-the-vocabulary-lacks)."""
    evaluator, _ = evaluated("base")
    food = "The food was great and the staff were friendly."
    weather = "It was 25°C today."
    great, terrible, same, warmer = evaluator.predict(
        [food, food, weather, weather],
        [
            food.replace("great", "great😀"),
            food.replace("great", "terrible😀"),
            "It was 25℃ today.",
            "It was 35℃ today.",
        ],
        progress=False,
    )
    assert great.labels == ["NoContr"] and same.labels == ["NoContr"]
    assert terrible.labels == ["AttrErr"] and terrible.spans[0]["text"] == "terrible😀"
    assert warmer.labels == ["NumErr"] and warmer.spans[0]["text"] == "35℃"


# Every number each shipped checkpoint gives the five company texts, under its signature
# (the README's promise: equal signatures, equal scores). Rewritten by running this file
# (`.venv/bin/python tests/test_shipped_checkpoints.py`) after a change that is meant to move
# them: a new checkpoint changes the signature by itself, a change of code that moves a score
# under the same checkpoint needs a new package version first (pyproject.toml, then `make
# setup`, which installs it, so that the signatures carry it).
PINNED = REPO_ROOT / "tests" / "pinned_scores.json"


def approx(value: float):
    # float rounding (batching, CPU kernels) turns the sixth decimal, which predictions keep
    return pytest.approx(value, rel=1e-4, abs=2e-6)


def leaves(value, path: str = "") -> dict:
    """A nested record as {path: leaf}, so numbers compare with a tolerance, names exactly."""
    if not isinstance(value, dict | list):
        return {path: value}
    found = {}
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        found.update(leaves(item, f"{path}/{key}"))
    return found


def pinned_record(name: str) -> dict:
    """The signature and every score, class probability, rating and span of `evaluated`."""
    evaluator, predictions = evaluated(name)
    return {
        "signature": str(evaluator.signature),
        "predictions": {
            text: {
                "score": p.score,
                "mismatch": p.mismatch,
                "ratings": p.ratings,
                "spans": [[s["start"], s["end"], s["label"], s["prob"]] for s in p.spans or []],
            }
            for text, p in predictions.items()
        },
    }


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_scores_are_the_pinned_ones_of_their_signature(name: str) -> None:
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))[name]
    record = pinned_record(name)
    rewrite = f"rewrite {PINNED.name} by running {__file__}"
    assert record["signature"] == pinned["signature"], f"the signature changed: {rewrite}"
    now, then = leaves(record["predictions"]), leaves(pinned["predictions"])
    moved = {
        path: (then.get(path), now.get(path))
        for path in now.keys() | then.keys()
        if path not in now
        or path not in then
        or now[path] != (then[path] if isinstance(then[path], str) else approx(then[path]))
    }
    assert not moved, (
        f"{len(moved)} of {len(now)} values moved under an unchanged signature, e.g. "
        f"{dict(list(moved.items())[:3])}; raise the package version (pyproject.toml), "
        f"install it (make setup), then {rewrite}"
    )


if __name__ == "__main__":
    from mismatch_core.atomic import write_text_atomic

    records = {name: pinned_record(name) for name in CHECKPOINTS}
    write_text_atomic(PINNED, json.dumps(records, indent=1) + "\n")
    print(f"{PINNED}: {len(records)} checkpoints pinned")
