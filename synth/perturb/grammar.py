"""GramErr rules: break grammar while keeping the meaning readable.

Each rule makes one error a reader still understands: subject-verb agreement, a wrong verb
form, a noun that disagrees with its number word, a wrong or missing article, or a pronoun
in the wrong case. None of them changes who did what, so no other class is touched.

The disfluency rules (``synth.perturb.noise``, the code of the ``mismatch stress`` fluency
tests) make one to several edits: dropped function words, bare verbs,
swapped neighbours, a rotated sentence, noisy punctuation. They teach the model that a
broken text is no paraphrase, which a single-edit rule alone did not (docs/stress.md).
"""

from __future__ import annotations

from lemminflect import getInflection
from spacy.tokens import Doc, Token

from synth.perturb import noise
from synth.perturb.base import (
    Change,
    Context,
    Rule,
    indefinite_article,
    lemmas,
    replace_tokens,
)

# Finite verb -> the form for the other grammatical number.
AGREEMENT_SWAPS = {"is": "are", "are": "is", "was": "were", "were": "was", "has": "have",
                   "have": "has", "does": "do", "do": "does"}  # fmt: skip
PLURAL_DETERMINERS = frozenset("these those many several both".split())
SINGULAR_DETERMINERS = frozenset("a an one this that each every another".split())
DETERMINER_SWAPS = {"this": "these", "these": "this", "that": "those", "those": "that"}
# Nouns that read fine without their article ('are part of'), so dropping it is no error.
MASS_USES = frozenset("part lot while little few bit number couple".split())
CASE_SWAPS = {"he": "him", "she": "her", "they": "them", "we": "us", "him": "he",
              "them": "they", "us": "we", "me": "I"}  # fmt: skip


def verb_lemma(token: Token) -> str:
    """The verb's lemma by lemminflect, which is surer than the small spaCy model ('riding'
    -> 'ride', where spaCy sometimes says 'rid')."""
    found = lemmas(token.lower_, "VERB")
    return found[0] if found else token.lemma_.lower()


def _inflect(lemma: str, tag: str) -> str | None:
    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else None


def subject_verb_agreement(doc: Doc, ctx: Context) -> Change | None:
    """'Two paintings are' -> 'Two paintings is', 'A dog runs' -> 'A dog run'."""
    candidates = []
    for verb in doc:
        if verb.ent_type_:
            continue  # 'John van den Brom': a word inside a name, mis-tagged as a verb
        if verb.tag_ not in ("VBZ", "VBP", "VBD") or not any(
            c.dep_ in ("nsubj", "nsubjpass") and c.lower_ not in ("i", "you") for c in verb.children
        ):
            continue
        if verb.lower_ in AGREEMENT_SWAPS:
            candidates.append((verb, AGREEMENT_SWAPS[verb.lower_]))
        elif verb.tag_ in ("VBZ", "VBP") and verb.pos_ == "VERB":
            other = _inflect(verb_lemma(verb), "VBP" if verb.tag_ == "VBZ" else "VBZ")
            if other and other.lower() != verb.lower_:
                candidates.append((verb, other))
    if not candidates:
        return None
    verb, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {verb.i: new}, "GramErr/agreement")


def _wrong_form(verb: Token) -> str | None:
    """An ungrammatical form for a verb in its context ('is ride', 'has arriving', 'can swims')."""
    auxiliaries = {c.lemma_ for c in verb.children if c.dep_ in ("aux", "auxpass")}
    if verb.tag_ == "VBG" and "be" in auxiliaries:
        return _inflect(verb_lemma(verb), "VB")
    if verb.tag_ == "VBN" and "have" in auxiliaries:
        return _inflect(verb_lemma(verb), "VBG")
    if verb.tag_ == "VB" and auxiliaries & {
        "can",
        "will",
        "would",
        "could",
        "should",
        "must",
        "to",
        "do",
    }:
        return _inflect(verb_lemma(verb), "VBD")
    if verb.tag_ == "VBD" and not auxiliaries and verb.dep_ == "ROOT":
        participle = _inflect(verb_lemma(verb), "VBN")
        return (
            participle
            if participle and participle != verb.text
            else _inflect(verb_lemma(verb), "VBG")
        )
    return None


def verb_form(doc: Doc, ctx: Context) -> Change | None:
    """'A man is riding' -> 'A man is ride'; 'He went' -> 'He gone'."""
    candidates = []
    for verb in doc:
        if verb.pos_ != "VERB":
            continue
        new = _wrong_form(verb)
        if new and new.lower() != verb.lower_:
            candidates.append((verb, new))
    if not candidates:
        return None
    verb, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {verb.i: new}, "GramErr/verb_form")


def noun_number(doc: Doc, ctx: Context) -> Change | None:
    """'Two paintings' -> 'Two painting', 'a dog' -> 'a dogs', 'this dog' -> 'these dog'."""
    candidates = []
    for noun in doc:
        if noun.pos_ != "NOUN" or noun.ent_type_:
            continue
        for child in noun.children:
            if child.i > noun.i:
                continue
            word = child.lower_
            plural_cue = word in PLURAL_DETERMINERS or (
                child.dep_ == "nummod" and child.like_num and word not in ("one", "1")
            )
            if plural_cue and noun.tag_ == "NNS":
                singular = _inflect(noun.lemma_, "NN")
                if singular and singular.lower() != noun.lower_:
                    candidates.append((noun, singular))
            elif word in SINGULAR_DETERMINERS and child.dep_ == "det" and noun.tag_ == "NN":
                plural = _inflect(noun.lemma_, "NNS")
                if plural and plural.lower() != noun.lower_:
                    candidates.append((noun, plural))
            if word in DETERMINER_SWAPS and child.dep_ == "det":
                candidates.append((child, DETERMINER_SWAPS[word]))
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {token.i: new}, "GramErr/noun_number")


def article(doc: Doc, ctx: Context) -> Change | None:
    """'an apple' -> 'a apple', 'a dog' -> 'an dog', 'rides a horse' -> 'rides horse'."""
    candidates = []
    for token in doc:
        if token.lower_ not in ("a", "an") or token.dep_ != "det" or token.i + 1 >= len(doc):
            continue
        if token.lower_ == indefinite_article(doc[token.i + 1].text):
            # only a correct article is made wrong; 'a OCLC number' in the source stays put
            candidates.append((token, "an" if token.lower_ == "a" else "a"))
        if token.head.tag_ == "NN" and token.i > 0 and token.head.lower_ not in MASS_USES:
            candidates.append((token, ""))  # a singular count noun needs its article
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {token.i: new}, "GramErr/article")


def pronoun_case(doc: Doc, ctx: Context) -> Change | None:
    """'He chased her' -> 'Him chased her', 'saw them' -> 'saw they'."""
    candidates = []
    for token in doc:
        word = token.lower_
        if token.tag_ != "PRP" or word not in CASE_SWAPS:
            continue
        subject = token.dep_ in ("nsubj", "nsubjpass")
        if subject and word in ("he", "she", "they", "we"):
            candidates.append((token, CASE_SWAPS[word]))
        elif token.dep_ in ("dobj", "pobj") and word in ("him", "them", "us", "me"):
            candidates.append((token, CASE_SWAPS[word]))
    if not candidates:
        return None
    token, new = ctx.rng.choice(candidates)
    return replace_tokens(doc, {token.i: new}, "GramErr/pronoun_case")


# Prepositions whose loss leaves the relation guessable ('sat the bench'); 'before' or
# 'under' would take a time or place with them (an STErr, not a grammar slip).
LIGHT_PREPOSITIONS = frozenset("of in on at to for with by from as about into onto".split())
BE_FORMS = frozenset("is are was were am".split())


def _function_word(token: Token) -> bool:
    """An article, a light preposition, a non-modal auxiliary or infinitival 'to'."""
    if token.lower_ in noise.ARTICLES:
        return token.dep_ == "det"
    if token.pos_ == "ADP":
        return token.lower_ in LIGHT_PREPOSITIONS and token.dep_ in ("prep", "agent", "dative")
    if token.dep_ in ("aux", "auxpass"):
        return token.tag_ != "MD"  # 'can swim' -> 'swim' would drop the modality
    return token.tag_ == "TO"


def _bare_verb_slot(token: Token) -> bool:
    """A verb whose lemma is ungrammatical where it stands: 'he runs', 'is riding', 'has
    eaten', any form of 'be'. A past tense is left alone: 'they went' -> 'they go' is fine
    English with another time (no grammar error)."""
    if token.lower_ in BE_FORMS:
        return True
    return token.pos_ in ("VERB", "AUX") and token.tag_ in ("VBZ", "VBG", "VBN")


drop_function_word = noise.noise_rule(
    noise.removal(_function_word, "articles, light prepositions, auxiliaries and 'to'"),
    (0.25, 0.5, 1.0),
    "GramErr/drop_function_word",
)
bare_verb = noise.noise_rule(
    noise.lemmatization(_bare_verb_slot, "inflected verbs", lemma=verb_lemma),
    (0.5, 1.0),
    "GramErr/bare_verb",
)
swap_neighbours = noise.noise_rule(noise.local_swap, (0.1, 0.2, 0.3), "GramErr/swap_neighbours")
rotate_sentence = noise.noise_rule(noise.middle_swap, (0.3, 0.4, 0.5), "GramErr/rotate_sentence")
punctuation_noise = noise.noise_rule(
    noise.noised_punctuation, (0.1, 0.2, 0.3), "GramErr/punctuation_noise"
)

RULES: dict[str, list[Rule]] = {
    "GramErr": [
        subject_verb_agreement,
        verb_form,
        noun_number,
        article,
        pronoun_case,
        drop_function_word,
        bare_verb,
        swap_neighbours,
        rotate_sentence,
        punctuation_noise,
    ],
}
