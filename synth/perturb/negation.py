"""NegErr rules: make the generated text say the opposite polarity of the reference.

Negation is placed on the main clause (the parse root), with do-support for bare finite
verbs ("took" -> "did not take"), "not" after the first auxiliary ("is sitting" -> "is not
sitting"), and caption-specific forms for verbless captions ("a dog running" -> "a dog not
running", "a man with a hat" -> "a man without a hat", "A man" -> "No man"). An existing
negation is removed instead, re-inflecting the verb when do-support goes away.
"""

from __future__ import annotations

from lemminflect import getInflection
from spacy.tokens import Doc, Token

from synth.perturb.base import Change, Context, indefinite_article, lemmas, replace, replace_token
from synth.perturb.lexicon_function_words import EXPANDED_AUX, NEGATION_WORDS, NEGATIVE_CONTRACTIONS

DO_FORMS = {"VBD": "did", "VBZ": "does", "VBP": "do"}
POLAR_PRONOUNS = {
    "someone": "no one",
    "somebody": "nobody",
    "something": "nothing",
    "everyone": "no one",
    "everybody": "nobody",
    "everything": "nothing",
    "always": "never",
}
AFFIRMED_PRONOUNS = {
    "nobody": "somebody",
    "nothing": "something",
    "never": "always",
    "none": "some",
}
NO_DET_HEADS = ("lot", "few", "couple", "bit", "number", "pair", "variety", "total", "kind")


def _is_negated(doc: Doc) -> bool:
    return any(t.dep_ == "neg" or t.lower_ in NEGATION_WORDS for t in doc)


def _is_question(doc: Doc) -> bool:
    return doc.text.rstrip().endswith("?")


def _root(doc: Doc, ctx: Context) -> Token:
    return ctx.rng.choice(list(doc.sents)).root


def _subject(verb: Token) -> Token | None:
    return next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "expl")), None)


def _with_case(new: str, old: Token) -> str:
    return new[0].upper() + new[1:] if old.text[:1].isupper() else new


def negate_main_verb(doc: Doc, ctx: Context) -> Change | None:
    """Insert "not" after the first auxiliary, or use do-support on a bare finite verb."""
    if _is_negated(doc):
        return None
    root = _root(doc, ctx)
    if root.pos_ not in ("VERB", "AUX"):
        return None
    auxes = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    aux = auxes[0] if auxes else (root if root.lemma_ == "be" and root.tag_ != "VBG" else None)
    subject = _subject(root)
    contract = ctx.rng.random() < 0.3
    if aux is not None:
        if aux.lower_ not in NEGATIVE_CONTRACTIONS and aux.lower_ not in ("'s", "'re", "am", "'m"):
            return None
        if subject is None or subject.i < aux.i:
            if aux.lower_ == "can":
                new = "cannot"
            elif contract and aux.lower_ in NEGATIVE_CONTRACTIONS:
                new = NEGATIVE_CONTRACTIONS[aux.lower_]
            else:
                new = f"{aux.text} not"
        elif aux.lower_ in NEGATIVE_CONTRACTIONS:  # question word order: "Is he ..." -> "Isn't he ..."
            new = NEGATIVE_CONTRACTIONS[aux.lower_]
        else:
            return None
        return replace_token(aux, _with_case(new, aux), "NegErr/aux_not")
    if root.tag_ in DO_FORMS and root.lemma_ != "do":
        if subject is None or subject.i > root.i:
            return None
        lemma = (lemmas(root.lower_, "VERB") or (root.lemma_,))[0]
        if root.lower_ not in getInflection(lemma, tag=root.tag_):  # a mis-tagged noun
            return None
        do = DO_FORMS[root.tag_]
        new = f"{NEGATIVE_CONTRACTIONS[do]} {lemma}" if contract else f"{do} not {lemma}"
        return replace_token(root, new, "NegErr/do_support")
    return None


def negate_participle(doc: Doc, ctx: Context) -> Change | None:
    """Verbless caption: negate its participle ("A dog running in a field" -> "not running")."""
    if _is_negated(doc) or _is_question(doc):
        return None
    candidates = [
        t
        for t in doc
        if t.tag_ == "VBG"
        and t.i > 0
        and t.text.islower()
        and ((t.dep_ == "acl" and t.head.dep_ == "ROOT") or t.dep_ == "ROOT")
        and not any(c.dep_ in ("aux", "auxpass", "nsubj") for c in t.children)
    ]
    if not candidates:
        return None
    verb = ctx.rng.choice(candidates)
    return replace_token(verb, f"not {verb.text}", "NegErr/participle")


def _is_main_subject(noun: Token) -> bool:
    """The subject of the main clause: "No man is sitting" reads naturally; "wearing no
    striped shirt" or a verbless "No man smoking a cigarette" does not."""
    verb = noun.head
    if noun.dep_ not in ("nsubj", "nsubjpass") or verb.dep_ != "ROOT" or verb.pos_ != "VERB":
        return False  # a copula ("No ingredient of X is Y") states no event to deny
    following = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    return not any(c.dep_ == "appos" for c in noun.children) and not (
        following is not None and following.pos_ == "PROPN"
    )


def negate_determiner(doc: Doc, ctx: Context) -> Change | None:
    """Negate a subject/object: "A man" -> "No man", "someone" -> "no one", "always" -> "never"."""
    if _is_negated(doc) or _is_question(doc):
        return None
    candidates = [
        t
        for t in doc
        if t.dep_ == "det"
        and t.lower_ in ("a", "an", "some")
        and t.head.pos_ == "NOUN"
        and _is_main_subject(t.head)
        and t.head.lower_ not in NO_DET_HEADS
        and t.i + 1 < len(doc)
        and doc[t.i + 1].lower_ not in ("few", "lot", "couple")
    ]
    candidates += [t for t in doc if t.lower_ in POLAR_PRONOUNS and t.dep_ != "compound"]
    if not candidates:
        return None
    token = ctx.rng.choice(candidates)
    new = POLAR_PRONOUNS.get(token.lower_, "no")
    return replace_token(token, new, "NegErr/no_determiner")


def _is_absolute(noun: Token) -> bool:
    """ "with her legs in the air", "with his hand up": a small clause, not a possession."""
    return any(c.dep_ in ("prep", "advmod", "prt", "acl", "relcl") for c in noun.children) or any(
        g.pos_ in ("VERB", "AUX") for g in noun.subtree
    )


def negate_with(doc: Doc, ctx: Context) -> Change | None:
    """Caption attribute: "a man with a hat" -> "a man without a hat".

    Only on the subject or the head of a caption, where "with" marks something the person
    or thing has; "part of X with the ISSN number Y" is no such attribute.
    """
    if _is_negated(doc):
        return None
    candidates = [
        t
        for t in doc
        if t.lower_ == "with"
        and t.dep_ == "prep"
        and t.head.pos_ == "NOUN"
        and (
            t.head.dep_ in ("nsubj", "nsubjpass")
            or (t.head.dep_ == "ROOT" and len(list(doc.sents)) == 1)
        )
        and any(c.dep_ == "pobj" and c.pos_ == "NOUN" and not c.ent_type_ for c in t.children)
        and not any(_is_absolute(c) for c in t.children if c.dep_ in ("pobj", "dobj"))
    ]
    if not candidates:
        return None
    return replace_token(ctx.rng.choice(candidates), "without", "NegErr/without")


def remove_negation(doc: Doc, ctx: Context) -> Change | None:
    """Drop an existing negation: "did not take" -> "took", "cannot" -> "can", "no" -> "a"."""
    candidates = [
        t
        for t in doc
        if (t.dep_ == "neg" and t.lower_ in ("not", "n't", "never"))
        or t.lower_ in AFFIRMED_PRONOUNS
        or (t.lower_ == "without" and t.dep_ == "prep")
        or (t.lower_ == "no" and t.dep_ == "det")
    ]
    if not candidates:
        return None
    neg = ctx.rng.choice(candidates)
    rule = "NegErr/remove"
    if neg.lower_ == "without":
        return replace_token(neg, "with", rule)
    if neg.lower_ in AFFIRMED_PRONOUNS:
        return replace_token(neg, AFFIRMED_PRONOUNS[neg.lower_], rule)
    if neg.lower_ == "no":
        noun = neg.head
        if noun.tag_ == "NN" and neg.i + 1 < len(doc):
            return replace_token(neg, indefinite_article(doc[neg.i + 1].text), rule)
        return replace(doc, neg.idx, neg.idx + len(neg.text), "", rule)
    if neg.lower_ == "never":
        return replace(doc, neg.idx, neg.idx + len(neg.text), "", rule)
    if neg.i == 0 or doc[neg.i - 1].pos_ not in ("AUX", "VERB", "PART"):
        return None
    aux, verb = doc[neg.i - 1], neg.head
    if aux.lemma_ == "do" and aux.tag_ in DO_FORMS and verb.i > neg.i and verb.pos_ == "VERB":
        inflected = getInflection(verb.lemma_, tag=aux.tag_)
        subject = _subject(verb)
        if not inflected or subject is None or subject.i > aux.i:
            return None
        return replace(doc, aux.idx, verb.idx + len(verb.text), inflected[0], rule)
    full = EXPANDED_AUX.get(aux.lower_, aux.text) if neg.lower_ == "n't" else aux.text
    return replace(doc, aux.idx, neg.idx + len(neg.text), _with_case(full, aux), rule)


RULES = {
    "NegErr": [negate_main_verb, negate_participle, negate_determiner, negate_with, remove_negation]
}
