"""MissInfo rules: delete a key detail so that the rest still reads as a grammatical text.

No rule drops a negation cue ('not', 'no', 'without' ...): a lost negation is NegErr.

What goes is always a whole constituent from the parse carrying at least two content
words: one conjunct of a coordination, an optional prepositional phrase, a relative,
participial or adverbial clause, an appositive, or one sentence of a multi-sentence text.
Single adjectives are never deleted (that reads as an AttrErr). The one exception to
"still grammatical" is truncation: the text stops early, as a decoder cut off by its length
limit does (the stress tests' truncation), losing at least two content words.
"""

from __future__ import annotations

from spacy.tokens import Doc, Token

from synth.perturb import noise
from synth.perturb.base import Change, Context, edit_change, has_negation, replace, weighted
from synth.perturb.lexicon_function_words import OPTIONAL_PREPOSITIONS, PP_REQUIRED_VERBS

CONTENT_POS = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM")
MIN_CONTENT_WORDS = 2
FINITE_TAGS = ("VBZ", "VBP", "VBD", "MD")


def _content_words(doc: Doc, start: int, end: int) -> int:
    return sum(1 for t in doc[start:end] if t.pos_ in CONTENT_POS)


def _is_contiguous(token: Token) -> bool:
    return token.right_edge.i - token.left_edge.i + 1 == sum(1 for _ in token.subtree)


def _finite_verbs(doc: Doc, start: int, end: int) -> int:
    return sum(1 for t in doc[start:end] if t.tag_ in FINITE_TAGS)


def _delete(doc: Doc, start: int, end: int, rule: str) -> Change | None:
    """Delete tokens [start, end) with the commas that set them off.

    None when too little content goes, when brackets or quotes would be left unbalanced,
    or when every finite verb would go (a misparse that would leave a fragment).
    """
    while end > start + 1 and doc[end - 1].text in (".", "!", "?"):
        end -= 1  # the sentence-final mark belongs to the remaining text
    if end <= start or _content_words(doc, start, end) < MIN_CONTENT_WORDS:
        return None
    if has_negation(doc[start:end]):
        return None  # a dropped negation is NegErr, not MissInfo
    if _content_words(doc, 0, start) + _content_words(doc, end, len(doc)) < MIN_CONTENT_WORDS:
        return None  # "Man in leather gear." -> "Man." keeps too little to compare
    deleted = doc[start:end].text
    if any(deleted.count(a) != deleted.count(b) for a, b in ("()", "[]")) or deleted.count('"') % 2:
        return None
    if _finite_verbs(doc, 0, len(doc)) and not (
        _finite_verbs(doc, 0, start) + _finite_verbs(doc, end, len(doc))
    ):
        return None
    before = doc[start - 1] if start > 0 else None
    after = doc[end] if end < len(doc) else None
    if before is not None and after is not None and before.text == "(" and after.text == ")":
        return None  # "Fylde (abbreviated to AFC Fylde)" -> "Fylde ()"
    if after is not None and after.pos_ in ("DET", "NOUN", "PROPN", "NUM", "PRON"):
        if before is not None and not before.is_punct:
            return None  # the parse put a phrase boundary inside a noun phrase
    comma_before = before is not None and before.text == ","
    comma_after = after is not None and after.text == ","
    closes = after is None or (after.is_punct and after.text in ".!?;:") or after.is_sent_start
    if comma_before and (comma_after or closes):
        start -= 1
        if comma_after:
            end += 1
    elif comma_after and (before is None or before.is_sent_end or before.text in ".!?;:"):
        end += 1
    elif comma_before and not (
        before is not None and after is not None and not after.is_punct and _closes_aside(before)
    ):
        start -= 1
    last = doc[end - 1]
    # Start right after the previous word, so no space is left before following punctuation.
    begin = doc[start - 1].idx + len(doc[start - 1].text) if start > 0 else doc[start].idx
    return replace(doc, begin, last.idx + len(last.text), "", rule)


def _closes_aside(comma: Token) -> bool:
    """Whether ``comma`` closes an aside that a comma before it opened, in the same sentence:
    the words between hang from a word before the opening comma, not as a list's next item
    ("My brother, a keen cook, is ..."); a deletion after it keeps it ("My brother, a keen
    cook is not crying" before)."""
    doc = comma.doc
    opening = next((t for t in reversed(doc[comma.sent.start : comma.i]) if t.text == ","), None)
    if opening is None or opening.i + 1 == comma.i:
        return False
    inner = doc[opening.i + 1 : comma.i]
    attached = [t for t in inner if not opening.i < t.head.i < comma.i]
    return bool(attached) and all(t.head.i < opening.i and t.dep_ != "conj" for t in attached)


def _agrees_without(noun: Token) -> bool:
    """Can the second conjunct of a subject go without breaking verb agreement?"""
    if noun.dep_ not in ("nsubj", "nsubjpass"):
        return True
    verb = noun.head
    finite = next((c for c in verb.children if c.dep_ in ("aux", "auxpass")), verb)
    return finite.tag_ in ("VBD", "MD") and finite.lower_ not in ("were", "was")


def drop_conjunct(doc: Doc, ctx: Context) -> Change | None:
    """ "drove to the hospital and saw a doctor" -> "saw a doctor" (or "drove to the hospital")."""
    if _is_question(doc):
        return None
    options: list[tuple[int, int]] = []
    for token in doc:
        conjuncts = [c for c in token.children if c.dep_ == "conj"]
        ccs = [c for c in token.children if c.dep_ == "cc" and c.i > token.i]
        if len(conjuncts) != 1 or len(ccs) != 1 or not _is_contiguous(conjuncts[0]):
            continue
        conj, cc = conjuncts[0], ccs[0]
        if token.dep_ == "conj" or any(c.dep_ == "conj" for c in conj.children):
            continue  # lists of three or more lose their "and" when one item goes
        if cc.i > conj.i or (
            conj.pos_ != token.pos_ and {conj.pos_, token.pos_} != {"VERB", "AUX"}
        ):
            continue
        second = (cc.i, conj.right_edge.i + 1)
        if token.pos_ in ("NOUN", "PROPN"):
            follows = doc[second[1]] if second[1] < len(doc) else None
            if follows is not None and (
                follows.tag_ in FINITE_TAGS or follows.pos_ in ("PROPN", "NOUN", "NUM", "DET")
            ):
                continue  # a misparse: the "conjunct" runs on into the next phrase
            if _agrees_without(token) and not _finite_verbs(doc, *second):
                options.append(second)
            continue
        if token.pos_ not in ("VERB", "AUX"):
            continue
        right_of_verb = [c for c in token.children if token.i < c.i < cc.i]
        if any(c.dep_ not in ("punct", "advmod") for c in right_of_verb):
            options.append(second)  # the first verb keeps its own complement
        own_subject = any(c.dep_ in ("nsubj", "nsubjpass") for c in conj.children)
        has_aux = any(c.dep_ in ("aux", "auxpass") for c in token.children)
        if (
            not own_subject
            and (not has_aux or conj.tag_ == token.tag_)
            and all(c.right_edge.i < cc.i for c in right_of_verb)
        ):
            before = [c for c in token.children if c.i < token.i]
            if not any(c.dep_ == "neg" for c in before):  # the deletion would drop it
                options.append((_conjunct_start(token, conj, before), conj.left_edge.i))
    options = [o for o in options if _content_words(doc, *o) >= MIN_CONTENT_WORDS]
    if not options:
        return None
    start, end = ctx.rng.choice(options)
    return _delete(doc, start, end, "MissInfo/conjunct")


def _conjunct_start(verb: Token, conj: Token, before: list[Token]) -> int:
    """Where dropping ``verb`` and what follows it up to its conjunct starts, the shared
    subject and aux kept: at the verb, unless the conjunct brings an aux of its own that
    would follow the kept one twice ("is cutting an onion and is not crying" -> "is is not
    crying"). A finite one replaces the verb's auxes ("is not crying"); a non-finite one
    replaces the verb's aux of the same word ("has been cutting ... and been crying" -> "has
    been crying"), or none ("has washed the car and been praised" -> "has been praised")."""
    own = [c for c in conj.children if c.dep_ in ("aux", "auxpass") and c.i < conj.i]
    auxes = [c for c in before if c.dep_ in ("aux", "auxpass")]
    if not own or not auxes:
        return verb.i
    first = min(own, key=lambda c: c.i)
    if first.tag_ in FINITE_TAGS:
        return min(c.i for c in auxes)
    return next((c.i for c in auxes if c.lower_ == first.lower_), verb.i)


def _is_question(doc: Doc) -> bool:
    """Questions lose their sense with any clause gone ("Why was old oil?")."""
    return doc.text.rstrip().endswith("?")


def _verb_keeps_enough(verb: Token, prep: Token) -> bool:
    """Can the verb do without this PP? A participle of a caption can ("A dog running");
    a finite verb needs another complement left ("who play at X" -> "who play" cannot)."""
    if verb.pos_ != "VERB" or verb.lemma_.lower() in PP_REQUIRED_VERBS:
        return False
    if verb.tag_ == "VBG":
        return True
    kept = ("dobj", "prep", "advmod", "xcomp", "ccomp", "acomp", "attr", "prt", "dative", "oprd")
    return any(c.dep_ in kept for c in verb.children if c.i > verb.i and c != prep)


def drop_prepositional_phrase(doc: Doc, ctx: Context) -> Change | None:
    """ "A dog running in a grassy field" -> "A dog running": drop an optional PP."""
    question = _is_question(doc)
    candidates = [
        t
        for t in doc
        if t.dep_ == "prep"
        and t.lower_ in OPTIONAL_PREPOSITIONS
        and any(c.dep_ == "pobj" for c in t.children)
        and _is_contiguous(t)
        and (t.head.pos_ == "NOUN" or (not question and _verb_keeps_enough(t.head, t)))
        and _content_words(doc, t.i, t.right_edge.i + 1) >= MIN_CONTENT_WORDS
        and not _finite_verbs(doc, t.i, t.right_edge.i + 1)  # a misparse swallowing the verb
        and (t.right_edge.i + 1 == len(doc) or doc[t.right_edge.i + 1].pos_ != "CCONJ")
    ]
    if not candidates:
        return None
    prep = ctx.rng.choice(candidates)
    return _delete(doc, prep.left_edge.i, prep.right_edge.i + 1, "MissInfo/prep_phrase")


def _is_droppable_clause(token: Token) -> bool:
    if not _is_contiguous(token):
        return False
    if token.dep_ == "relcl":
        return True
    if token.dep_ == "acl":
        return token.tag_ in ("VBG", "VBN") and token.i > token.head.i
    if token.dep_ == "advcl":
        return token.tag_ == "VBG" or any(c.dep_ == "mark" for c in token.children)
    if token.dep_ == "appos":
        doc = token.doc
        left = token.left_edge.i
        head = token.head
        # "Born in New York City, Albert Fountain, was ...": the "appositive" is the subject
        return left > 0 and doc[left - 1].text == "," and head.i < left and head.dep_ != "pobj"
    return False


def drop_clause(doc: Doc, ctx: Context) -> Change | None:
    """Drop a relative, participial or adverbial clause, or an appositive."""
    if _is_question(doc):
        return None
    candidates = [t for t in doc if t.dep_ in ("relcl", "acl", "advcl", "appos")]
    candidates = [
        t
        for t in candidates
        if _is_droppable_clause(t)
        and _content_words(doc, t.left_edge.i, t.right_edge.i + 1) >= MIN_CONTENT_WORDS
    ]
    if not candidates:
        return None
    clause = ctx.rng.choice(candidates)
    ends_text = clause.right_edge.i + 1 >= len(doc) or doc[clause.right_edge.i + 1].text in ".!"
    if clause.dep_ == "acl" and clause.head.dep_ == "ROOT" and not ends_text:
        return None  # the caption's own predicate: "A woman looking up, she is ..." breaks
    return _delete(doc, clause.left_edge.i, clause.right_edge.i + 1, f"MissInfo/{clause.dep_}")


def drop_sentence(doc: Doc, ctx: Context) -> Change | None:
    """Drop one sentence of a multi-sentence text."""
    sentences = [
        s
        for s in doc.sents
        if _content_words(doc, s.start, s.end) >= MIN_CONTENT_WORDS
        and s.text[:1].isupper()
        and any(t.pos_ in ("VERB", "AUX") for t in s)
    ]
    if len(sentences) < 2 or len(sentences) != len(list(doc.sents)):
        return None
    if not all(s.text.rstrip()[-1:] in ".!?" for s in sentences[:-1]):
        return None
    sentence = ctx.rng.choice(sentences)
    if has_negation(sentence):
        return None  # a dropped negation is NegErr, not MissInfo
    return replace(doc, sentence.start_char, sentence.end_char, "", "MissInfo/sentence")


TRUNCATION_LEVELS = (0.15, 0.25, 0.35, 0.45)  # share of the tokens cut from the end


def truncate_tail(doc: Doc, ctx: Context) -> Change | None:
    """'A man rides a horse on the beach at sunset.' -> 'A man rides a horse on the'."""
    level = ctx.rng.choice(TRUNCATION_LEVELS)
    kept = len(doc) - noise.count_for(level, len(doc))
    if kept < 3 or _content_words(doc, kept, len(doc)) < MIN_CONTENT_WORDS:
        return None
    if has_negation(doc[kept:]):
        return None  # a cut-off negation is NegErr, not MissInfo
    texts = noise.truncation(doc, ctx.rng, [level])
    return edit_change(doc.text, texts[0], "MissInfo/truncate_tail") if texts else None


RULES = {
    "MissInfo": [
        drop_conjunct,
        drop_prepositional_phrase,
        drop_clause,
        drop_sentence,
        weighted(truncate_tail, 0.4),
    ]
}
