"""NoContr rewrite families (the harmless twins of the error rules), rewrite chains, and the
label guards: a lost or added negation is never MissInfo/OutofRef, repetition is RepErr."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from jsonl_files import write_jsonl_gz

from synth import corpora
from synth.chains import build_chains, chrf, combine, family
from synth.perturb import (
    addition,
    attribute,
    grammar,
    load_rules,
    omission,
    paraphrase_forms,
    paraphrase_syntax,
)
from synth.perturb.base import Context
from synth.rules import shared_rules

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def outputs(nlp, rule, text: str, seeds: int = 8) -> set[str]:
    return {
        c.text for seed in range(seeds) if (c := rule(nlp(text), Context(rng=random.Random(seed))))
    }


@pytest.mark.parametrize(
    ("rule", "text", "expected"),
    [
        (
            paraphrase_syntax.active_to_passive,
            "A man rides a horse on the beach.",
            "A horse is ridden by a man on the beach.",
        ),
        (
            paraphrase_syntax.active_to_passive,
            "A boy is kicking a ball.",
            "A ball is being kicked by a boy.",
        ),
        (
            paraphrase_syntax.passive_to_active,
            "The bridge was built by the Romans.",
            "The Romans built the bridge.",
        ),
        (
            paraphrase_syntax.front_adverbial,
            "He left after the show ended.",
            "After the show ended, he left.",
        ),
        (
            paraphrase_syntax.back_adverbial,
            "In 1990, the company was founded.",
            "The company was founded in 1990.",
        ),
        (
            paraphrase_syntax.possessive_to_of,
            "A man holds the girl's hand.",
            "A man holds the hand of the girl.",
        ),
        (
            paraphrase_syntax.of_to_possessive,
            "The mother of the boy is smiling.",
            "The boy's mother is smiling.",
        ),
        (paraphrase_syntax.verb_to_light, "She decided to leave.", "She made a decision to leave."),
        (paraphrase_syntax.light_to_verb, "He took a walk in the park.", "He walked in the park."),
        (
            paraphrase_syntax.progressive_to_simple,
            "Several men are operating a giant pulley.",
            "Several men operate a giant pulley.",
        ),
        (
            paraphrase_syntax.progressive_to_simple,
            "A girl is dancing and a boy is singing.",
            "A girl is dancing and a boy sings.",
        ),
        (paraphrase_syntax.progressive_to_simple, "I am planning to stay.", "I plan to stay."),
        (
            attribute.same_value_adjective,
            "Several men in hard hats are operating a giant pulley system.",
            "Several men in hard hats are operating a large pulley system.",
        ),
        (
            attribute.same_value_adjective,
            "An old man sits on a bench.",
            "An elderly man sits on a bench.",
        ),
        (
            attribute.same_value_adjective,
            "A tiny white dog sleeps on the bed.",
            "A small white dog sleeps on the bed.",
        ),
        (paraphrase_forms.spelling, "A gray dog.", "A grey dog."),
        (
            paraphrase_forms.number_expression,
            "About 300 people came.",
            "About three hundred people came.",
        ),
        (
            paraphrase_forms.number_expression,
            "The city has 1.5 million residents.",
            "The city has 1,500,000 residents.",
        ),
        (paraphrase_forms.number_expression, "It grew 12 percent.", "It grew 12%."),
        (
            paraphrase_forms.number_expression,
            "He sold three hundred copies.",
            "He sold 300 copies.",
        ),
    ],
)
def test_rewrite_family_fires(nlp, rule, text, expected):
    assert expected in outputs(nlp, rule, text)


def test_rewrites_keep_numbers_negations_and_names(nlp):
    rules = [
        r
        for module in (paraphrase_syntax, paraphrase_forms, attribute)
        for r in module.RULES["NoContr"]
    ]
    texts = [
        "John did not visit the museum in Paris in 2001.",
        "The 3 boys were not seen by the teacher at the station.",
        "In 2004, Mary's brother never took a walk with 300 soldiers.",
        "The 3 big dogs did not chase John in Paris.",
    ]
    for text in texts:
        for rule in rules:
            if rule is paraphrase_forms.number_expression:
                continue  # re-expresses numbers by design (checked above)
            for out in outputs(nlp, rule, text):
                assert sorted(NUMBER.findall(out)) == sorted(NUMBER.findall(text)), (
                    rule.__name__,
                    out,
                )
                assert out.count("not") + out.count("never") == text.count("not") + text.count(
                    "never"
                )
                for name in ("John", "Paris", "Mary"):
                    assert (name in out) == (name in text), (rule.__name__, out)


def test_rewrites_refuse_what_would_change_the_meaning(nlp):
    assert not outputs(nlp, paraphrase_syntax.active_to_passive, "A man has a dog.")  # no patient
    for text in ("A man looks at something that he is holding", "a man is grabbing what he sees"):
        assert not outputs(nlp, paraphrase_syntax.active_to_passive, text), text  # object first
    assert not outputs(nlp, paraphrase_syntax.front_adverbial, "A small cooler is on a wood table.")
    assert not outputs(nlp, paraphrase_syntax.possessive_to_of, "Two chefs wear chef's uniforms.")
    assert not outputs(nlp, paraphrase_syntax.verb_to_light, "The man looks happy.")
    assert not outputs(nlp, paraphrase_forms.number_expression, "In 2000 he left.")  # a year
    for text in (  # the progressive kept: a negation or question needs 'does', the past may
        # frame an interrupted event, a shared 'is' would leave 'singing', some verbs shift
        "A man is not riding a horse.",
        "Is he riding a horse?",
        "He's riding a horse.",
        "A man was riding a horse when it rained.",
        "A man is riding and singing.",
        "Four girls are wearing black leotards with light blue accents and standing in a line.",
        "The man is drowning in the lake.",
        "The company is going to hire 300 staff.",
        "A man has been riding a horse.",
    ):
        assert not outputs(nlp, paraphrase_syntax.progressive_to_simple, text), text
    for text in (  # no noun, another sense of the word or the noun, a person's size
        "The killer is still at large.",
        "The dog is big.",
        "We have little time.",
        "A little while later he left.",
        "Someone is surfing a giant wave.",
        "My old friend came.",
        "His big brother plays.",
        "A little person holds a flag.",
    ):
        assert not outputs(nlp, attribute.same_value_adjective, text), text
    # sideways or toned down, never stronger
    assert outputs(nlp, attribute.same_value_adjective, "A large rock lies there.") == {
        "A big rock lies there."
    }


def test_all_new_families_are_registered():
    names = {r.__name__ for r in load_rules()["NoContr"]}
    assert {
        "active_to_passive",
        "front_adverbial",
        "possessive_to_of",
        "verb_to_light",
        "progressive_to_simple",
        "same_value_adjective",
        "spelling",
        "number_expression",
    } <= names


def test_a_rewrite_chain_diverges_and_mixes_families(nlp):
    text = "A man rides a horse on the beach."
    seen = []
    for seed in range(12):
        chains = build_chains([nlp(text)], random.Random(seed), 3, shared_rules())
        if text in chains:
            doc, rules = chains[text]
            seen.append((chrf(doc.text, text), rules, doc.text))
    assert seen
    low = [item for item in seen if item[0] < 0.6 and len({family(r) for r in item[1]}) >= 2]
    assert low, seen


def test_combine_applies_separate_edits():
    assert (
        combine("A gray dog runs.", [(2, 6, "grey"), (11, 15, "is running")])
        == "A grey dog is running."
    )


NEGATED = "A man who is not wearing a hat is sitting on a bench in the park and is not smiling."


def test_omission_never_drops_a_negation(nlp):
    for rule in omission.RULES["MissInfo"]:
        for out in outputs(nlp, rule, NEGATED, seeds=30):
            assert out.count(" not ") == NEGATED.count(" not "), (rule.__name__, out)


def test_addition_never_adds_a_negation(nlp):
    other = nlp("The woman is not holding an umbrella near a red car.")
    doc = nlp("A dog runs in the yard.")
    for rule in addition.RULES["OutofRef"]:
        for seed in range(10):
            change = rule(doc, Context(rng=random.Random(seed), other_doc=lambda: other))
            assert change is None or "not" not in change.text


def test_join_clause_adds_a_clause_inside_the_text(nlp):
    other = nlp("A woman reads a book.")
    change = addition.join_other_clause(
        nlp("A dog runs on the beach."), Context(rng=random.Random(0), other_doc=lambda: other)
    )
    assert change.text.startswith("A dog runs on the beach") and change.text.endswith(
        "a woman reads a book."
    )


def test_doubled_words_are_repetition_not_grammar(nlp):
    assert addition.duplicate_word in addition.RULES["RepErr"]
    names = {r.__name__ for r in grammar.RULES["GramErr"]}
    assert "duplicate_word" not in names
    out = outputs(nlp, addition.duplicate_word, "A man rides a horse on the beach.")
    assert out and all(re.search(r"\b(\w+) \1\b", text) for text in out)


def test_sick_trial_is_never_read(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="only SICK TRAIN"):
        corpora.sick_groups(tmp_path / "sick_trial.jsonl.gz")
    opened = []
    real = corpora.iter_jsonl

    def spy(path: Path):
        opened.append(str(path))
        return real(path)

    monkeypatch.setattr(corpora, "iter_jsonl", spy)
    from mismatch_core.resources import data_dir

    corpus = corpora.load_corpus(data_dir(), sources=("sick",))
    assert not [p for p in opened if "trial" in p]
    assert any(p.endswith("sick_train.jsonl.gz") for p in opened)
    groups = [g for g in corpus.groups if g.source == "sick"]
    assert groups and all(len(g.texts) >= 2 for g in groups)
    texts = [t for g in groups for t in g.texts]
    assert len(texts) == len(set(texts))  # a sentence sits in one group only


def test_a_sick_train_line_without_a_key_is_named(tmp_path):
    """A malformed SICK TRAIN line stops the reader with its file, line and the missing key."""
    path = tmp_path / "sick_train.jsonl.gz"
    good = {"id": "1", "a": "Men sing.", "b": "Men are singing.", "paraphrase": True}
    rows = [
        {**good, "split": "train"},
        {"id": "2", "a": "A dog runs.", "paraphrase": True, "split": "train"},
    ]
    write_jsonl_gz(path, rows)
    with pytest.raises(ValueError, match=r"sick_train.jsonl.gz:2: missing key 'b'"):
        corpora.sick_paraphrases(path)
    write_jsonl_gz(path, [{**good, "split": "train", "a": 5}])
    with pytest.raises(ValueError, match=r"sick_train.jsonl.gz:1: key 'a' must be a string"):
        corpora.sick_paraphrases(path)


@pytest.mark.parametrize(
    "text",
    [
        "Dog with tongue out looking up at a young boy with glasses",  # particle: 'At a young boy, Dog ... looking up'
        "A woman wearing a red tank top is cutting a hamburger in half.",  # 'In half, ...'
        "A boy is covered in bubbles.",  # 'In bubbles, a boy is covered'
        "A man holding a tennis racket is looking in the distance with his hand over his mouth.",  # body part
        "A woman s sitting in front of a bunch of vegetable in a dress while at a farmers market.",  # dangling 'while'
        "A white dog is swimming after a duck.",  # 'After a duck, a white dog is swimming': chasing, not time
    ],
)
def test_front_adverbial_refuses_phrases_the_verb_needs(nlp, text):
    assert not outputs(nlp, paraphrase_syntax.front_adverbial, text)


def test_front_adverbial_still_moves_scene_adverbials(nlp):
    assert "In a kitchen, a woman is cooking food." in outputs(
        nlp, paraphrase_syntax.front_adverbial, "A woman is cooking food in a kitchen."
    )


@pytest.mark.parametrize(
    "text",
    [
        "A woman in a black t-shirt is showing a man in a striped shirt something at an exhibit.",  # second object
        "A boy blows bubbles with an orange bubble wand.",  # 'Bubbles with a wand are blown'
        "Villagers holding a large net with some fish in it.",  # 'held by villagers with some fish in it'
    ],
)
def test_passive_refuses_second_objects_and_with_phrases(nlp, text):
    assert not outputs(nlp, paraphrase_syntax.active_to_passive, text)


@pytest.mark.parametrize(
    "text",
    [
        "A woman is bending over, while others walk by.",  # 'others take a walk by'
        "A man in a striped shirt is looking down at something.",  # 'taking a look down'
        "A man and a woman look closely at something together.",  # 'take a look closely'
    ],
)
def test_light_verb_refuses_particles_and_adverbs(nlp, text):
    assert not outputs(nlp, paraphrase_syntax.verb_to_light, text)


def test_a_names_leading_the_loses_its_capital_when_moved(nlp):
    out = outputs(
        nlp,
        paraphrase_syntax.front_adverbial,
        "The Guiana Space Centre is located in Kourou, French Guiana.",
    )
    assert out == {"In Kourou, French Guiana, the Guiana Space Centre is located."}


def test_fronting_keeps_an_unknown_name_capitalised_and_no_pronoun_before_its_antecedent(nlp):
    assert outputs(
        nlp, paraphrase_syntax.front_adverbial, "Alfons Gorbach was born in Austria."
    ) == {"In Austria, Alfons Gorbach was born."}
    text = "A boy shining the woman's shoes as the guy in blue watches while he sweeps the streets."
    assert not any(
        out.startswith("While he") for out in outputs(nlp, paraphrase_syntax.front_adverbial, text)
    )


def test_passive_refuses_a_path_phrase_after_the_object(nlp):
    text = "A little girl with brown hair is blowing the petals off of a flower."
    assert not outputs(nlp, paraphrase_syntax.active_to_passive, text)


def test_combine_capitalises_a_number_word_at_the_start():
    assert (
        combine("5 athletes are doing a routine.", [(0, 1, "five")])
        == "Five athletes are doing a routine."
    )


def test_second_audit_refusals(nlp):
    assert not outputs(
        nlp,
        paraphrase_syntax.active_to_passive,
        "A person hits a yellow volleyball over the net to her opponent in a pool.",
    )
    assert not outputs(
        nlp,
        paraphrase_syntax.front_adverbial,
        "A dog pulls at the sleeve of a man in a leather coat.",
    )
    text = (
        "A Loyal Character Dancer was published by Soho Press in the United States, where Native Americans"
        " are among the ethnic groups."
    )
    assert not outputs(nlp, paraphrase_syntax.passive_to_active, text)


def test_third_audit_refusals(nlp):
    assert not outputs(
        nlp,
        paraphrase_forms.number_expression,
        "300 North LaSalle in Illinois was completed in 2009.",
    )
    assert not any(
        "hundredm" in out
        for out in outputs(nlp, paraphrase_forms.number_expression, "The length is 900m.")
    )
    assert not outputs(
        nlp, paraphrase_syntax.possessive_to_of, "AS Gubbio's home ground is in Italy."
    )
    assert not outputs(
        nlp, paraphrase_syntax.verb_to_light, "A white dog is swimming after a duck."
    )
