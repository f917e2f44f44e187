"""Synth rules built on the stress tests' noise (``synth.perturb.noise``).

Each rule must make the error its class names and nothing else: a GramErr disfluency keeps
the words (or drops only function words), a swap keeps the words' forms, a truncation is a
prefix, a tokenised NoContr keeps every word and entity. ``edit_change`` must report whole
words, since the generator looks the old words up in the reference.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from synth.perturb import addition, entity, event_order, grammar, omission, paraphrase, predicate
from synth.perturb.base import Change, Context, edit_change, rule_weight, weighted
from synth.rules import weighted_sample

CAPTION = "A man is riding a horse on the beach while his dog runs beside him."
STORY = "John Smith was born in Boston in 1950. He played for the Red Sox and retired in 1980."


def changes(nlp, rule, text: str, seeds: int = 12) -> list[Change]:
    """The rule's changes over several seeds (a rule draws its level and places at random)."""
    doc = nlp(text)
    made = [rule(doc, Context(rng=random.Random(seed))) for seed in range(seeds)]
    return [c for c in made if c is not None]


def words(text: str) -> Counter:
    return Counter(text.replace(".", " ").replace(",", " ").lower().split())


def test_edit_change_reports_whole_words() -> None:
    change = edit_change("A man rides a horse on the beach.", "A man rides horse on beach.", "x/y")
    assert change.span == (12, 26)
    assert (change.old, change.new) == ("a horse on the", "horse on")
    assert edit_change("A man rides.", "A man rides.", "x/y") is None
    assert edit_change("A man rides.", "  ", "x/y") is None


def test_drop_function_word_deletes_only_function_words(nlp) -> None:
    made = changes(nlp, grammar.drop_function_word, CAPTION)
    assert made
    for change in made:
        lost = words(CAPTION) - words(change.text)
        assert lost and set(lost) <= {"a", "the", "on", "is"}, lost
        assert not words(change.text) - words(CAPTION)
    assert any(len(words(CAPTION) - words(c.text)) > 1 for c in made)  # graded: several edits


def test_bare_verb_lemmatises_but_leaves_past_tense_alone(nlp) -> None:
    made = changes(nlp, grammar.bare_verb, CAPTION)
    assert {c.text for c in made} >= {
        "A man be ride a horse on the beach while his dog run beside him."
    }
    assert not changes(nlp, grammar.bare_verb, "They went home and cooked dinner together.")


@pytest.mark.parametrize(
    "rule", [addition.duplicate_word, grammar.swap_neighbours, grammar.rotate_sentence]
)
def test_reordering_and_doubling_keep_the_words(nlp, rule) -> None:
    made = changes(nlp, rule, CAPTION)
    assert made
    for change in made:
        added, lost = words(change.text) - words(CAPTION), words(CAPTION) - words(change.text)
        assert not lost
        if rule is addition.duplicate_word:
            assert added and all(n == 1 for n in added.values())
        else:
            assert not added and change.text != CAPTION


def test_punctuation_noise_changes_only_marks(nlp) -> None:
    made = changes(nlp, grammar.punctuation_noise, CAPTION)
    assert made
    for change in made:
        assert change.text != CAPTION
        assert words(change.text.translate(str.maketrans("", "", ";:!?-"))) == words(CAPTION)


def test_disfluency_rules_skip_very_short_texts(nlp) -> None:
    for rule in (addition.duplicate_word, grammar.swap_neighbours, addition.repeat_ngram):
        assert not changes(nlp, rule, "Hello world.")


def test_swap_verbs_trades_verbs_of_one_form(nlp) -> None:
    made = changes(
        nlp, predicate.swap_verbs, "The company hired Alice and fired Bob after the meeting."
    )
    assert {c.text for c in made} == {"The company fired Alice and hired Bob after the meeting."}
    assert not changes(nlp, predicate.swap_verbs, "A man is riding a horse while his dog runs.")
    bare_pair = "Eight young people are either standing or sitting as a group."
    assert not changes(nlp, predicate.swap_verbs, bare_pair)


def test_swap_verbs_keeps_frames_and_sentences_apart(nlp) -> None:
    # one verb takes an object, the other a place: "sits graffiti" would be nonsense
    assert not changes(nlp, predicate.swap_verbs, "A man sits on a wall and sprays graffiti.")
    # verbs of unrelated sentences, and a participle that modifies a noun
    assert not changes(nlp, predicate.swap_verbs, "The company hired Alice. The bank fired Bob.")
    text = "A singer holds a microphone wrapped with green tape and wears a hat."
    made = changes(nlp, predicate.swap_verbs, text)
    assert made  # holds / wears still trade places
    for change in made:
        assert "wrapped with green tape" in change.text


def test_swap_names_keeps_places_and_dates(nlp) -> None:
    made = changes(
        nlp, entity.swap_names, "Alice Cooper met Bob Dylan in Paris in 1990 and in London in 1995."
    )
    assert made
    for change in made:
        assert "Paris in 1990" in change.text and "London in 1995" in change.text
        assert change.text.startswith("Bob Dylan met Alice Cooper")
    assert not changes(nlp, entity.swap_names, "She flew from Paris to London in 1990.")


def test_swap_nouns_swaps_the_roles_of_people_or_animals(nlp) -> None:
    made = changes(nlp, entity.swap_nouns, "A man shows a fish to a child.")
    assert {c.text for c in made} == {"A child shows a fish to a man."}
    made = changes(
        nlp, entity.swap_nouns, "Healers were divided into physicians and shamans by the king."
    )
    for change in made:
        assert change.text[0].isupper() and "healers" in change.text  # capitals stay in place
    for text in (
        "Two children are playing with a ball in the park.",  # things: nonsense, not roles
        "A man and a woman watch a girl.",  # a list says the same in any order
        "Two men help a boy.",  # 'two boy' would break the number
        "The runway name of the airport is 11/29.",
    ):
        assert not changes(nlp, entity.swap_nouns, text), text


def test_swap_sentences_reverses_past_events_not_states(nlp) -> None:
    story = "John Smith was born in Boston. He played for the Red Sox and retired in 1980."
    made = changes(nlp, event_order.swap_sentences, story)
    assert {c.text for c in made} == {
        "He played for the Red Sox and retired in 1980. John Smith was born in Boston."
    }
    assert made[0].rule == "PredOrdErr/swap_sentences"
    for states in (
        STORY,  # both dated: the years keep the order whichever sentence comes first
        "Boston is a city in the United States. It has a population of 600,000.",
        "Alfred Jones died in Sidcup, London. London is led by Boris Johnson.",
        "The ship was built in Rostock. It is operated by AIDA Cruises.",
        # facts about different things, an added fact, and background in the past perfect
        "The schools were required to share exams. The university agreed to confer degrees.",
        "He led an army to Albania in 1081. He also founded a monastery.",
        "He had been mentored by Li Meng. He made many reforms.",
    ):
        assert not changes(nlp, event_order.swap_sentences, states), states


def test_truncate_tail_is_a_prefix_losing_content(nlp) -> None:
    made = changes(nlp, omission.truncate_tail, STORY, seeds=30)
    assert made
    for change in made:
        assert STORY.startswith(change.text)
        assert len(change.text.split()) <= len(STORY.split()) - 2
    assert not changes(nlp, omission.truncate_tail, "A dog runs.", seeds=30)


def test_repeat_ngram_appends_the_last_words_again(nlp) -> None:
    made = changes(nlp, addition.repeat_ngram, "Two children are playing with a ball in the park.")
    texts = {c.text for c in made}
    assert "Two children are playing with a ball in the park ball in the park." in texts
    assert all(t.endswith("ball in the park.") for t in texts)


def test_tokenized_splits_marks_and_clitics_but_not_names(nlp) -> None:
    text = "The dog's ball isn't in St. Louis, it's in Kansas City."
    made = changes(nlp, paraphrase.tokenized, text, seeds=40)
    assert made and len(made) < 40  # offered to a share of the texts only
    assert {c.text for c in made} == {
        "The dog 's ball is n't in St. Louis , it 's in Kansas City ."
    }


def test_rule_weight_sets_how_often_a_rule_is_tried_first() -> None:
    def common(doc, ctx):
        return None

    def rare(doc, ctx):
        return None

    assert rule_weight(common) == 1.0
    weighted(rare, 0.1)
    rng = random.Random(0)
    weights = {rule: rule_weight(rule) for rule in (common, rare)}
    firsts = Counter(weighted_sample([common, rare], weights, 2, rng)[0] for _ in range(2000))
    assert 0.05 < firsts[rare] / 2000 < 0.15  # 0.1 / 1.1 = 0.09
