"""Who does what to whom across a change of voice (``voice_changed``, ``roles_swapped``)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluator.features import compute_features
from evaluator.features.roles import VoiceRoles, clauses

COLUMNS = list(VoiceRoles.columns)


@pytest.mark.parametrize(
    ("ref", "gen"),
    [
        ("A man is eating a bowl of cereal", "Cereal is being eaten by the man"),
        ("The dog chased the cat.", "The cat was chased by the dog."),  # a simple past
        ("The man was bitten by the dog.", "The dog bit the man."),  # passive to active
        ("A woman is peeling a potato", "The potato is being peeled by the lady"),  # a hypernym
        ("A man is slicing a fish", "A fish is being cut by a man"),  # a verb one sense above
        (
            "A man flying a kite above a tall building.",  # 'a kite' is no verb
            "A kite being flown by a man above a tall building.",
        ),
    ],
)
def test_a_change_of_voice_that_keeps_the_roles(ref, gen):
    rows = compute_features([ref, gen], [gen, ref], COLUMNS).to_numpy()
    np.testing.assert_array_equal(rows, [[1.0, 0.0], [1.0, 0.0]])  # either way round


@pytest.mark.parametrize(
    ("ref", "gen"),
    [
        ("The dog is chasing the cat", "The cat is chasing the dog"),
        ("The dog is chasing the cat", "The dog is being chased by the cat"),
        ("Police arrested the suspect.", "Police were arrested by the suspect."),
        ("The man was bitten by the dog.", "The man bit the dog."),
    ],
)
def test_swapped_roles(ref, gen):
    rows = VoiceRoles().compute([ref], [gen])
    np.testing.assert_array_equal(rows, [[0.0, 1.0]])


@pytest.mark.parametrize(
    ("ref", "gen"),
    [
        ("A man is eating a bowl of cereal", "A man is eating a bowl of cereal"),  # a copy
        ("The cereal is being eaten by the man", "The cereal is being eaten by a man"),
        ("The dog is chasing the cat", "The dog is running after the cat"),  # another verb
        ("The dog is chasing the cat", "The dog chased the cat."),  # the same voice
        ("Greece is lead by Nikos Voutsis.", "Greece is led by Nikos Voutsis."),  # 'is lead'
        ("The suspect was arrested.", "Police arrested the suspect."),  # no 'by': no agent
        ("", ""),
        ("word", "Ünïcödé 東京 😀"),
    ],
)
def test_no_change_of_roles_or_voice(ref, gen):
    rows = VoiceRoles().compute([ref], [gen])
    np.testing.assert_array_equal(rows, [[0.0, 0.0]])


def test_a_clause_reads_its_participants_up_to_its_bounds():
    (passive,) = clauses("Eggs are being cracked into a bowl by the woman, and she smiles.")
    assert (passive.verbs, passive.agent, passive.patient, passive.passive) == (
        {"crack"},
        {"woman"},
        {"eggs"},
        True,
    )
    (progressive,) = clauses("A man is slicing a fish with a knife")
    assert (progressive.agent, progressive.patient) == ({"man"}, {"fish"})
