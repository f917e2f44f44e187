"""Change-kind features: the WordNet relation of swapped words and added repetition."""

from __future__ import annotations

import numpy as np
import pytest

from evaluator.features import compute_features
from evaluator.features.relations import (
    ChangedKind,
    OrderWords,
    QuestionForm,
    Repetition,
    VerbContrast,
    WordRelations,
    changed_words,
    question_forms,
    relation,
)

RELATION_COLUMNS = list(WordRelations.columns)


@pytest.mark.parametrize(
    ("removed", "added", "expected"),
    [
        ("dog", "hound", "synonym"),
        ("hot", "cold", "antonym"),
        ("dog", "animal", "hypernym"),
        ("women", "people", "hypernym"),  # 'people' read as the plural of 'person'
        ("instruments", "accordions", "hyponym"),  # inflected forms through morphy
        ("guitar", "cello", "sibling"),
        ("dog", "cat", "sibling"),
        ("guitar", "sandwich", None),
        ("dog", "qwzx", None),  # not in WordNet
    ],
)
def test_relation_of_a_swapped_word(removed, added, expected):
    assert relation(removed, added) == expected


def test_changed_words_are_the_multiset_difference_in_text_order():
    removed, added = changed_words(["dog", "dog", "park"], ["dog", "cat", "park", "tree"])
    assert (removed, added) == (["dog"], ["cat", "tree"])


def test_word_relation_shares_name_the_kind_of_substitution():
    refs = ["A dog runs in the park.", "A dog runs in the park.", "A dog runs in the park."]
    gens = ["An animal runs in the park.", "A cat runs in the park.", "A dog runs in the park."]
    frame = compute_features(refs, gens, RELATION_COLUMNS)
    general, sibling, copy = frame.to_dict("records")
    assert general["wordnet_hypernym"] == 1.0 and general["wordnet_sibling"] == 0.0
    assert sibling["wordnet_sibling"] == 1.0 and sibling["wordnet_hypernym"] == 0.0
    assert all(value == 0.0 for value in copy.values())
    # two of the three content words differ on each side: 1 - F1 of {dog, runs, park} vs {cat, ...}
    assert sibling["wordnet_changed"] == pytest.approx(1 - 4 / 6)


def test_word_relations_divide_by_the_changed_pairs():
    # 'dog' -> 'animal', 'car' -> 'automobile' (synonym): 2 x 2 changed pairs, one of each relation
    rows = WordRelations().compute(["A dog in the car."], ["An animal in the automobile."])
    values = dict(zip(WordRelations.columns, rows[0], strict=True))
    assert values["wordnet_hypernym"] == 0.25
    assert values["wordnet_synonym"] == 0.25


def test_changed_kind_names_what_sort_of_word_changed():
    refs = [
        "Friends pose in summer clothing.",
        "A woman talks to a Madrid police officer.",
        "A man rides a bike.",
        "A red car and a dog.",
        "A dog runs.",
    ]
    gens = [
        "Friends pose in winter clothing.",
        "A woman talks to a London police officer.",
        "A girl rides a bike.",
        "A big car and a cat.",  # 'red' -> 'big' (qualities), 'dog' -> 'cat' (neither kind)
        "A dog runs.",
    ]
    rows = ChangedKind().compute(refs, gens)
    assert list(ChangedKind.columns) == [
        "changed_time", "changed_place", "changed_person", "changed_attribute",
    ]  # fmt: skip
    np.testing.assert_array_equal(rows[:3], np.eye(4)[:3])
    np.testing.assert_array_equal(rows[3], [0.0, 0.0, 0.0, 0.5])
    np.testing.assert_array_equal(rows[4], np.zeros(4))


def test_repetition_tells_a_doubled_word_from_a_repeated_phrase_and_sentence():
    ref = "The man walks his dog on the beach."
    gens = [
        "The the man walks his dog on the beach.",
        "The man walks his dog on the beach on the beach.",
        "The man walks his dog on the beach. The man walks his dog.",
        ref,
    ]
    rows = Repetition().compute([ref] * 4, gens)  # columns: word, phrase, trigram
    doubled_word, repeated_phrase, repeated_sentence, copy = rows
    assert doubled_word.tolist() == pytest.approx([1 / 9, 0.0, 0.0])
    assert repeated_phrase[0] == 0.0 and repeated_phrase[1] == pytest.approx(1 / 11)
    # 'the man walks', 'man walks his', 'walks his dog' come back once each, in 13 words
    assert repeated_sentence[0] == 0.0 and repeated_sentence[2] == pytest.approx(3 / 13)
    assert copy.tolist() == [0.0, 0.0, 0.0]


def test_repetition_the_reference_already_has_is_not_counted():
    ref = "It is very very cold."
    rows = Repetition().compute([ref, ref], [ref, "It is very cold."])
    np.testing.assert_array_equal(rows, np.zeros((2, 3)))


@pytest.mark.parametrize(("ref", "gen"), [("", ""), ("word", ""), ("", "Ünïcödé 東京 😀")])
def test_empty_and_unicode_texts_give_zeros(ref, gen):
    names = [
        *RELATION_COLUMNS, *ChangedKind.columns, *Repetition.columns,
        *QuestionForm.columns, *OrderWords.columns, *VerbContrast.columns,
    ]  # fmt: skip
    frame = compute_features([ref], [gen], names)
    assert np.isfinite(frame.to_numpy()).all()
    assert frame.drop(columns="wordnet_changed").to_numpy().sum() == 0.0


@pytest.mark.parametrize(
    ("text", "forms"),
    [
        ("So how does it work?", {"how": 1}),
        ("How many teams play? Which team won?", {"how many": 1, "what": 1}),
        ("Is it known who founded the club?", {"yes/no": 1}),
        ("You went there? He left. Why?", {"other": 1, "why": 1}),
        ("Didn't he leave?", {"yes/no": 1}),  # a contracted auxiliary
        ("Did Mr. Smith go? Really??", {"yes/no": 1, "other": 1}),  # a title, a doubled '?'
        ("It cost 3.5 dollars. Why?", {"why": 1}),
        ("He left.", {}),
    ],
)
def test_question_forms_name_what_each_question_asks_for(text, forms):
    assert question_forms(text) == forms


def test_question_changed_counts_questions_that_ask_for_something_else():
    ref = "When did the club start?"
    gens = [
        "Where did the club start?",  # another wh-word
        "Did the club start?",  # a yes/no question
        "Is it known when the club started?",  # whether the answer is known
        "When did the club begin?",  # reworded, the same question
        "The club started in 1990.",  # no question to compare
        "When did the club start? Why?",  # one question of three unmatched
    ]
    rows = QuestionForm().compute([ref] * len(gens), gens)
    assert rows[:, 0].tolist() == pytest.approx([1.0, 1.0, 1.0, 0.0, 0.0, 1 / 3])


def test_order_flipped_counts_order_words_that_point_the_other_way():
    refs = [
        "After the war, he retired.",
        "Earlier this year, the club won.",
        "The album was followed by a tour.",
        "He sang during the storm.",
        "After the war, he retired.",
        "After the war, he retired.",
        "He retired.",
        "The war succeeds the coup.",
    ]
    gens = [
        "Before the war, he retired.",
        "Later this year, the club won.",
        "The album was preceded by a tour.",
        "He sang after the storm.",
        "Following the war, he retired.",  # reworded, the same way
        "He retired.",  # dropped: nothing points the other way
        "He retired, later.",  # added: nothing of the reference turned
        "The war precedes the coup.",
    ]
    rows = OrderWords().compute(refs, gens)
    assert rows[:, 0].tolist() == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def test_verb_antonym_finds_opposite_events_through_their_inflections():
    refs = ["Prices rose last year.", "She accepted the offer.", "He loved the film."]
    gens = [
        "Prices fell last year.",  # rise -> fall, both inflected
        "She refused the offer.",
        "He hated the movie.",  # one of the two changed pairs (loved -> hated, film -> movie)
    ]
    rows = VerbContrast().compute(refs, gens)
    assert rows[:, 0].tolist() == [1.0, 1.0, 0.25]
    assert compute_features(refs[:1], gens[:1], ["wordnet_antonym"]).iloc[0, 0] == 0.0


def test_verb_antonym_ignores_other_changes():
    refs = ["Prices rose last year.", "The dog ran home.", "She accepted the offer."]
    gens = ["Prices increased last year.", "The cat ran home.", "She accepted the offer."]
    assert VerbContrast().compute(refs, gens)[:, 0].tolist() == [0.0, 0.0, 0.0]
