"""Who does what to whom, across a change of voice: 'A man is eating the cereal' and 'The
cereal is being eaten by a man' say the same thing in another order; 'The cereal is eating a
man' swaps the roles.

Word order, n-gram overlap and sentence vectors move alike under both: a passive rewording
reads as a big change, a role swap as a small one. Which side of the verb each participant
stands on, read through the voice (before a passive verb stands what is acted on, after its
'by' who acts), tells them apart. No parser is run: a clause is a form of 'be' with a
participle (a passive with its 'by' phrase, or a progressive '-ing'), and its participants are
the content words on each side of the verb up to the clause's bounds.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluator.features.lexical import stop_words, word_tokens
from evaluator.features.registry import Metric, register
from evaluator.features.relations import relation

BE_FORMS = frozenset("am is are was were be been being".split())
VERB_TAGS = ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
# Verbs that say nothing of who does what ('is', 'has', 'does'): never the verb of a clause.
LIGHT_VERBS = frozenset({"be", "have", "do"})
PARTICIPLE_GAP = 2  # words between 'be' and its participle ('is being eaten', 'was also seen')
AGENT_GAP = 3  # words between a passive participle and its 'by' ('cut up by', 'eaten slowly by')
# Words that end a clause besides punctuation: what one side of a verb can reach.
CLAUSE_BOUNDS = frozenset("and but or while because when whereas although though then".split())
# A participant after a verb ends where a preposition starts another phrase ('of' does not).
PREPOSITIONS = frozenset(
    "in on at with above below into onto from to near under over through across along down up "
    "behind beside for during after before around toward towards without against among".split()
)
# A word right after one of these is a noun ('a cut', 'the kite'), not a verb.
DETERMINERS = frozenset("a an the this that these those his her its their my your our some".split())
# Two words name the same participant when equal or when WordNet puts one above the other
# ('woman' and 'lady', 'man' and 'person'): a reworded participant stays the same one.
SAME_PARTICIPANT = frozenset({"synonym", "hypernym", "hyponym"})


@dataclass(frozen=True)
class Clause:
    """A verb with its participants: ``agent`` acts, ``patient`` is acted on."""

    verbs: frozenset[str]  # the lemmas the verb can be a form of
    agent: frozenset[str]
    patient: frozenset[str]
    passive: bool


@functools.lru_cache(maxsize=200_000)
def verb_forms(word: str) -> dict[str, tuple[str, ...]]:
    """The verbs the word can be a form of, each with the Penn tags of that form ('eaten' ->
    {'eat': ('VBN',)}; 'chased' -> {'chase': ('VBD', 'VBN')})."""
    from lemminflect import getAllLemmas, getInflection

    return {
        lemma: tuple(tag for tag in VERB_TAGS if word in getInflection(lemma, tag))
        for lemma in getAllLemmas(word, upos="VERB").get("VERB", ())
    }


def can_be(word: str, tag: str) -> bool:
    """Whether the word can be the form ``tag`` of a verb other than LIGHT_VERBS."""
    return any(tag in tags for lemma, tags in verb_forms(word).items() if lemma not in LIGHT_VERBS)


def is_bound(token: str) -> bool:
    return not token.isalnum() or token in CLAUSE_BOUNDS


def participants(tokens: list[str]) -> frozenset[str]:
    """The content words among ``tokens``."""
    return frozenset(t for t in tokens if t.isalpha() and t not in stop_words())


def side_before(tokens: list[str], end: int) -> list[str]:
    """The tokens before ``end`` back to the clause's start."""
    start = end
    while start > 0 and not is_bound(tokens[start - 1]):
        start -= 1
    return tokens[start:end]


def side_after(tokens: list[str], start: int) -> list[str]:
    """The tokens from ``start`` on to the clause's end or a preposition that starts another
    phrase: 'a bowl of cereal' is one participant, 'a fish with a knife' ends at 'with'."""
    end = start
    while end < len(tokens) and not is_bound(tokens[end]) and tokens[end] not in PREPOSITIONS:
        end += 1
    return tokens[start:end]


def participle_after_be(tokens: list[str], be: int, tag: str) -> int | None:
    """The position of the first participle with Penn tag ``tag`` (VBN or VBG) at most
    PARTICIPLE_GAP words after the form of 'be' at ``be`` ('being' itself is skipped)."""
    for position in range(be + 1, min(be + 2 + PARTICIPLE_GAP, len(tokens))):
        token = tokens[position]
        if is_bound(token):
            return None
        if can_be(token, tag):
            return position
    return None


def after_be(tokens: list[str], position: int) -> bool:
    """Whether a form of 'be' stands at most PARTICIPLE_GAP words before ``position``."""
    return any(t in BE_FORMS for t in tokens[max(0, position - 1 - PARTICIPLE_GAP) : position])


def clauses(text: str) -> list[Clause]:
    """The text's passive clauses with a 'by' phrase and its progressive ones ('is eating')."""
    tokens = word_tokens(text)
    found, last_verb = [], -1
    for be, token in enumerate(tokens):
        if token not in BE_FORMS or be < last_verb:  # 'being' in 'is being eaten' starts none
            continue
        verb = participle_after_be(tokens, be, "VBN")
        if verb is not None:
            # 'by' may follow a phrase of the verb's own ('cracked into a bowl by')
            near = tokens[verb + 1 : verb + 2 + AGENT_GAP]
            by = next((i for i, t in enumerate(near) if t == "by" or is_bound(t)), None)
            if by is not None and near[by] == "by":
                found.append(
                    Clause(
                        frozenset(verb_forms(tokens[verb])) - LIGHT_VERBS,
                        agent=participants(side_after(tokens, verb + 2 + by)),
                        patient=participants(side_before(tokens, be)),
                        passive=True,
                    )
                )
                last_verb = verb
                continue
        verb = participle_after_be(tokens, be, "VBG")
        if verb is not None:
            found.append(
                Clause(
                    frozenset(verb_forms(tokens[verb])) - LIGHT_VERBS,
                    agent=participants(side_before(tokens, be)),
                    patient=participants(side_after(tokens, verb + 1)),
                    passive=False,
                )
            )
            last_verb = verb
    return [c for c in found if c.agent and c.patient]


def active_clauses(text: str, verbs: frozenset[str]) -> list[Clause]:
    """Each form of one of ``verbs`` (or of a word WordNet relates to one, 'cut' for
    'slice') in the text read as an active verb: who acts before it, what is acted on after."""
    tokens = word_tokens(text)
    found = []
    for position, token in enumerate(tokens):
        lemmas = frozenset(verb_forms(token)) - LIGHT_VERBS
        if position and tokens[position - 1] in DETERMINERS:
            continue  # 'a kite', 'the cut': a noun
        if after_be(tokens, position) and not can_be(token, "VBG"):
            continue  # a participle of a passive ('was eaten'), or 'is lead' for 'is led'
        if lemmas and any(same_verb(a, b) for a in lemmas for b in verbs):
            agent = participants(side_before(tokens, position))
            patient = participants(side_after(tokens, position + 1))
            if agent and patient:
                found.append(Clause(lemmas, agent, patient, passive=False))
    return found


def same_word(a: str, b: str) -> bool:
    return a == b or relation(a, b) in SAME_PARTICIPANT


@functools.lru_cache(maxsize=200_000)
def same_verb(a: str, b: str) -> bool:
    """Whether the verbs are one, share a WordNet verb sense or one's sense is directly above
    the other's ('slice' and 'cut'); other parts of speech do not count ('kite' and 'fly')."""
    if a == b:
        return True
    from mismatch_core.resources import wordnet

    reader = wordnet()
    senses_a, senses_b = set(reader.synsets(a, pos="v")), set(reader.synsets(b, pos="v"))
    above_a = {h for s in senses_a for h in s.hypernyms()}
    above_b = {h for s in senses_b for h in s.hypernyms()}
    return bool(senses_a & senses_b or senses_a & above_b or senses_b & above_a)


def overlap(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether the two sides share a participant."""
    return any(same_word(x, y) for x in a for y in b)


def compare(ref_clauses: list[Clause], gen_clauses: list[Clause]) -> tuple[bool, bool]:
    """(some verb keeps its roles under another voice, some verb has its roles swapped)."""
    voice_changed = swapped = False
    for one in ref_clauses:
        for other in gen_clauses:
            if not any(same_verb(a, b) for a in one.verbs for b in other.verbs):
                continue
            kept = overlap(one.agent, other.agent) and overlap(one.patient, other.patient)
            crossed = overlap(one.agent, other.patient) and overlap(one.patient, other.agent)
            voice_changed |= kept and one.passive != other.passive
            swapped |= crossed and not kept
    return voice_changed, swapped


@register
class VoiceRoles(Metric):
    """voice_changed: 1 when a verb of a passive clause (a form of 'be', a participle, a 'by'
    phrase) on one side appears active on the other with the same participants on each role
    ('A man is eating the cereal' -> 'The cereal is being eaten by a man'), 0 otherwise.
    roles_swapped: 1 when a verb of a passive or progressive clause keeps its participants but
    they trade roles ('The dog is chasing the cat' -> 'The cat is chasing the dog', or 'The
    cat is being chased by the dog'), 0 otherwise. Participants match when equal or related
    in WordNet (synonym, hypernym, hyponym); verbs likewise ('slice' and 'cut')."""

    name = "voice_roles"
    version = 1
    columns = ("voice_changed", "roles_swapped")

    def compute(self, refs: Sequence[str], gens: Sequence[str]) -> np.ndarray:
        scores = np.zeros((len(refs), len(self.columns)), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            ref_clauses, gen_clauses = clauses(ref), clauses(gen)
            if not ref_clauses and not gen_clauses:
                continue
            # a clause of one side against the other side's clauses and its active verbs
            forward = compare(ref_clauses, gen_clauses + active_for(gen, ref_clauses))
            backward = compare(gen_clauses, ref_clauses + active_for(ref, gen_clauses))
            scores[row] = (forward[0] or backward[0], forward[1] or backward[1])
        return scores


def active_for(text: str, passive_from: list[Clause]) -> list[Clause]:
    """The text's active forms of the verbs of the other side's passive clauses."""
    verbs = frozenset(v for c in passive_from if c.passive for v in c.verbs)
    return active_clauses(text, verbs) if verbs else []
