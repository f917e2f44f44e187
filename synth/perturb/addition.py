"""OutofRef and RepErr rules: the generated text says more than the reference.

OutofRef adds content the reference does not have, taken from a reference of a different
group (``ctx.other_doc()``): a whole sentence appended, or a prepositional phrase or
participial clause from it attached to a noun. RepErr adds nothing new, it repeats what is
there: the sentence, its main clause, a noun phrase ("a dog and a dog"), a phrase, or the
last words again and again, as a decoder caught in a loop does (the stress tests' repetition),
or single words said twice ("the the dog"). No addition brings in a negation cue: a gained
negation is NegErr.
"""

from __future__ import annotations

import functools

from spacy.tokens import Doc, Span, Token

from mismatch_core.resources import wordnet
from synth.perturb import noise
from synth.perturb.base import Change, Context, has_negation, keeps_capital, noun_lexname, replace

PLACE_PREPOSITIONS = ("near", "beside", "behind", "under", "beneath", "underneath", "alongside")
WORN_OR_HELD = ("wearing", "holding", "carrying")
CONCRETE = ("noun.artifact", "noun.object", "noun.person", "noun.animal", "noun.plant", "noun.food")
HOSTS = (*CONCRETE, "noun.location")

CONTENT_POS = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM")
MAX_OTHER_CHARS = 300
MAX_PHRASE_TOKENS = 8
NP_TAGS = ("JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "HYPH", "VBN")
CORE_DROPPED_DEPS = (
    "prep",
    "advcl",
    "relcl",
    "acl",
    "punct",
    "cc",
    "conj",
    "advmod",
    "npadvmod",
    "appos",
    "mark",
    "parataxis",
    "dep",
    "meta",
    "intj",
)
NOUN_DROPPED_DEPS = ("relcl", "acl", "appos", "punct", "parataxis", "dep")


@functools.lru_cache(maxsize=16384)
def _lexnames(noun: str) -> tuple[str, ...]:
    """Lexicographer files of the noun's two most frequent senses ("yard": length, place)."""
    return tuple(s.lexname() for s in wordnet().synsets(noun, pos="n")[:2])


def _content(tokens) -> set[str]:
    return {t.lower_ for t in tokens if t.pos_ in CONTENT_POS}


def _as_sentence(text: str) -> str:
    """Capitalised and closed with a full stop, so it can stand after another sentence."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?\"'" else text + "."


def _append(doc: Doc, sentence: str, rule: str) -> Change | None:
    """Append a sentence after the text, closing the text's last sentence first."""
    text = doc.text.rstrip()
    joiner = " " if text[-1:] in ".!?\"'" else ". "
    return replace(doc, len(text), len(doc.text), joiner + sentence, rule)


def _is_question(doc: Doc) -> bool:
    return doc.text.rstrip().endswith("?")


# --- OutofRef -------------------------------------------------------------------------


def append_other_sentence(doc: Doc, ctx: Context) -> Change | None:
    """ "... friends." -> "... friends. Jack plays football." (a sentence from another group)."""
    other_doc = ctx.other_doc()
    other = " ".join(other_doc.text.split()) if other_doc is not None else ""
    if not other or _is_question(doc) or other.endswith("?") or other.lower() in doc.text.lower():
        return None
    if has_negation(other_doc):
        return None  # an added negation is NegErr
    return _append(doc, _as_sentence(other), "OutofRef/append_sentence")


JOINERS = (", and", " and", ", while", " while")


def join_other_clause(doc: Doc, ctx: Context) -> Change | None:
    """ "A dog runs on the beach." -> "A dog runs on the beach, and a woman reads a book.": a
    one-sentence clause of another group joined to the last sentence, so the added content sits
    inside the text instead of after a full stop."""
    other_doc = ctx.other_doc()
    if other_doc is None or _is_question(doc) or len(list(other_doc.sents)) != 1:
        return None
    if has_negation(other_doc) or not any(t.dep_ in ("nsubj", "nsubjpass") for t in other_doc):
        return None  # a clause needs its own subject; an added negation is NegErr
    first = other_doc[0]
    clause = other_doc.text.strip().rstrip(".!").strip()
    if not clause or clause.endswith("?") or clause.lower() in doc.text.lower():
        return None
    if not keeps_capital(first):
        clause = clause[:1].lower() + clause[1:]
    text = doc.text.rstrip()
    end = len(text) - 1 if text[-1:] in ".!" else len(text)
    mark = text[end:]
    return replace(doc, end, len(doc.text), f"{ctx.rng.choice(JOINERS)} {clause}{mark}", "OutofRef/join_clause")


def _phrases(other: Doc) -> list[Span]:
    """Modifier phrases of another text, found on POS tags alone (no parse needed).

    A place phrase over a full noun phrase naming a concrete thing ("near a red car") or
    "wearing/holding/carrying" with its object ("wearing a blue hat"): phrases that can
    describe any scene. "on the highest branches" or "at his phone" after an unrelated
    noun read as nonsense, so "in/on/at/by" phrases are not used.
    """
    phrases = []
    for token in other:
        is_pp = token.tag_ == "IN" and token.lower_ in PLACE_PREPOSITIONS
        if not (is_pp or (token.tag_ == "VBG" and token.lower_ in WORN_OR_HELD)):
            continue
        i = token.i + 1
        if i >= len(other) or other[i].tag_ not in ("DT", "PRP$", "CD"):
            continue
        i += 1
        while i < len(other) and other[i].tag_ in NP_TAGS and i - token.i < MAX_PHRASE_TOKENS:
            i += 1
        last = other[i - 1]
        if last.tag_ in ("NN", "NNS") and (i == len(other) or other[i].tag_ not in NP_TAGS):
            if noun_lexname(last.lemma_.lower()) in CONCRETE:
                phrases.append(other[token.i : i])
    return phrases


def _host_nouns(doc: Doc) -> list[Token]:
    """Nouns that end a sentence, after which a modifier phrase can go."""
    hosts = []
    for token in doc:
        senses = _lexnames(token.lemma_.lower())
        if token.pos_ != "NOUN" or token.ent_type_ or not any(s in HOSTS for s in senses):
            continue
        following = doc[token.i + 1] if token.i + 1 < len(doc) else None
        if following is None or following.text in (".", "!", ";"):
            hosts.append(token)  # the end of a sentence: the phrase reads as one more detail
    return hosts


def insert_other_phrase(doc: Doc, ctx: Context) -> Change | None:
    """ "... in the yard" -> "... in the yard near a red car" (a phrase from another group)."""
    tagged = ctx.other_doc()
    hosts = _host_nouns(doc)
    if tagged is None or len(tagged.text) > MAX_OTHER_CHARS or not hosts or _is_question(doc):
        return None
    present = _content(doc)
    phrases = [p for p in _phrases(tagged) if not _content(p) <= present and not has_negation(p)]
    if not phrases:
        return None
    phrase, host = ctx.rng.choice(phrases), ctx.rng.choice(hosts)
    if phrase[0].tag_ == "VBG" and noun_lexname(host.lemma_.lower()) != "noun.person":
        return None  # only a person is wearing or holding something
    text = phrase.text
    if phrase[0].pos_ != "PROPN":
        text = text[0].lower() + text[1:]
    kind = "pp" if phrase[0].tag_ == "IN" else "clause"
    end = host.idx + len(host.text)
    return replace(doc, end, end, f" {text}", f"OutofRef/insert_{kind}")


# --- RepErr ---------------------------------------------------------------------------


def repeat_sentence(doc: Doc, ctx: Context) -> Change | None:
    """Say one sentence twice: "Tom met Sam." -> "Tom met Sam. Tom met Sam."."""
    sentences = [s for s in doc.sents if len(_content(s)) >= 2]
    if not sentences:
        return None
    sentence = ctx.rng.choice(sentences)
    copy = _as_sentence(sentence.text)
    if sentence.end == len(doc):
        return _append(doc, copy, "RepErr/duplicate_sentence")
    end = sentence.end_char
    return replace(doc, end, end, f" {copy}", "RepErr/duplicate_sentence")


def _core(token: Token) -> list[Token]:
    """A clause without the verb's modifiers ("A man in a hat is sitting on a bench" -> "A man
    in a hat is sitting"); a verbless caption keeps its participle ("A dog running")."""
    tokens = [token]
    is_verb = token.pos_ in ("VERB", "AUX")
    for child in token.children:
        dropped = child.dep_ in CORE_DROPPED_DEPS if is_verb else child.dep_ in NOUN_DROPPED_DEPS
        if not dropped or child.dep_ == "acl" and token.dep_ == "ROOT":
            tokens.extend(_core(child))
    return sorted(tokens, key=lambda t: t.i)


def restate_main_clause(doc: Doc, ctx: Context) -> Change | None:
    """Restate the main clause after the text: "Tom met Sam at the party. Tom met Sam."."""
    if _is_question(doc):
        return None
    sentence = ctx.rng.choice(list(doc.sents))
    core = _core(sentence.root)
    words = [t for t in sentence if not t.is_punct]
    if len(core) < 3 or len(core) >= len(words) or len(_content(core)) < 2:
        return None  # nothing to drop: that is repeat_sentence
    kept = {t.i for t in core}
    glued = any(
        not t.whitespace_ and t.i + 1 < len(doc) and t.i + 1 not in kept for t in core[:-1]
    )  # "men, women" without its commas would come out as "menwomen"
    if glued or any(t.is_punct for t in core):
        return None  # a word split by the tokenizer ("id" -> "i" "d") would come out broken
    text = "".join(t.text_with_ws for t in core).strip()
    return _append(doc, _as_sentence(text), "RepErr/restate_clause")


def _stands_alone(chunk: Span) -> bool:
    """A noun phrase that is not part of a name or a list: "Apollo 12", "House of
    Representatives" and "a foot race or walk" would be split by "X and X"."""
    doc, root = chunk.doc, chunk.root
    if any(
        e.start < chunk.end and e.end > chunk.start and (e.start < chunk.start or e.end > chunk.end)
        for e in doc.ents
    ):
        return False
    if root.dep_ == "conj" or any(c.dep_ in ("conj", "cc") for c in root.children):
        return False
    if root.dep_ == "pobj" and root.head.lower_ == "of":
        return False
    following = doc[chunk.end] if chunk.end < len(doc) else None
    return following is None or not (
        following.like_num or following.pos_ == "PROPN" or following.lower_ == "of"
    )  # "in front of a train" -> "in front and front of" splits a fixed phrase


def repeat_noun_phrase(doc: Doc, ctx: Context) -> Change | None:
    """ "a man holding a dog" -> "a man holding a dog and a dog"."""
    chunks = [
        c
        for c in doc.noun_chunks
        if c.root.dep_ in ("dobj", "pobj")
        and c.root.pos_ in ("NOUN", "PROPN")
        and len(c) <= 5
        and all(t.is_alpha or t.text in ("'s", "-") for t in c)
        and _stands_alone(c)
    ]
    if not chunks:
        return None
    chunk = ctx.rng.choice(chunks)
    return replace(
        doc,
        chunk.start_char,
        chunk.end_char,
        f"{chunk.text} and {chunk.text}",
        "RepErr/noun_phrase",
    )


def repeat_phrase(doc: Doc, ctx: Context) -> Change | None:
    """ "sitting in the yard" -> "sitting in the yard in the yard"."""
    phrases = [
        doc[t.i : t.right_edge.i + 1]
        for t in doc
        if t.dep_ == "prep"
        and any(c.dep_ == "pobj" for c in t.children)
        and t.left_edge.i == t.i
        and 2 <= t.right_edge.i + 1 - t.i <= MAX_PHRASE_TOKENS
    ]
    phrases = [p for p in phrases if not any(t.is_punct or t.pos_ in ("VERB", "AUX") for t in p)]
    if not phrases:
        return None
    phrase = ctx.rng.choice(phrases)
    text = phrase.text if phrase.start > 0 else phrase.text[0].lower() + phrase.text[1:]
    return replace(doc, phrase.end_char, phrase.end_char, f" {text}", "RepErr/phrase")


repeat_ngram = noise.noise_rule(noise.repetition, (1, 2, 3), "RepErr/repeat_ngram")
# "the the dog": a word said twice is repetition, not a grammar error (the users read
# it as RepErr)
duplicate_word = noise.noise_rule(noise.repeated_token, (0.05, 0.1, 0.2), "RepErr/duplicate_word")

RULES = {
    "OutofRef": [append_other_sentence, join_other_clause, insert_other_phrase],
    "RepErr": [
        repeat_sentence,
        restate_main_clause,
        repeat_noun_phrase,
        repeat_phrase,
        repeat_ngram,
        duplicate_word,
    ],
}
