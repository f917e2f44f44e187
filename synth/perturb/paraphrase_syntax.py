"""NoContr rules that restructure a sentence without changing who did what, when or where.

Each is the harmless twin of an error: active <-> passive ("A man rides a horse" <-> "A horse
is ridden by a man") against swapped roles (EntErr); a final adverbial moved to the front or
back ("A dog runs in the park" <-> "In the park, a dog runs") against reordered events
(PredOrdErr); possessive <-> of-phrase ("the dog's ball" <-> "the ball of the dog") against
swapped owners; a verb <-> its light-verb phrase ("decided" <-> "made a decision") against a
changed predicate (PredErr) or a broken verb form (GramErr); the present progressive as the
simple present ("A man is riding" -> "A man rides") against a broken verb form ("A man is
ride", GramErr/verb_form). Every rule keeps all words that carry content, every number,
negation and name; it only moves them or changes function words and verb forms.
"""

from __future__ import annotations

from lemminflect import getInflection
from spacy.tokens import Doc, Span, Token

from synth.perturb.base import (
    Change,
    Context,
    moved_text,
    noun_lexname,
    opens_sentence,
    replace,
    replace_span,
    replace_tokens,
)
from synth.perturb.grammar import verb_lemma

NOUN_POS = ("NOUN", "PROPN")
# verbs whose object is no patient: "has a dog" -> "a dog is had" is no English
NO_PASSIVE = frozenset(
    "have be get want need lack cost weigh resemble fit suit mean do make take give let become "
    "seem say tell ask keep include contain face reach enter leave attend play wear"
    # two objects, one often misparsed: 'showing a man in a shirt something'
    " show teach hand pass offer send bring lend sell serve feed pay promise owe award grant".split()
)
SUBJECT_TO_OBJECT = {"he": "him", "she": "her", "we": "us", "they": "them", "it": "it"}
OBJECT_TO_SUBJECT = {"him": "he", "us": "we", "them": "they", "it": "it"}
PLURAL_PRONOUNS = frozenset(("we", "they", "us", "them"))
OBJECT_PATH_PREPOSITIONS = frozenset(("with", "over", "into", "onto", "across", "through", "to", "off"))
SECOND_OBJECT_DEPS = frozenset(("dobj", "npadvmod", "dative", "attr", "oprd", "appos"))
BLOCKING_DEPS = frozenset(("dative", "prt", "ccomp", "xcomp", "neg", "oprd", "conj", "cc", "agent", "attr", "acomp"))


def _rewrite_one(doc: Doc, ctx: Context, candidates: list, rule: str) -> Change | None:
    """One of the (first token, last token, new text) candidates, drawn with ``ctx.rng``, applied."""
    if not candidates:
        return None
    first, last, new = ctx.rng.choice(candidates)
    return replace_span(doc[first : last + 1], new, rule)

def _be(present: bool, plural: bool) -> str:
    if present:
        return "are" if plural else "is"
    return "were" if plural else "was"


def _plural(noun: Token) -> bool:
    return (
        noun.tag_ in ("NNS", "NNPS")
        or noun.lower_ in PLURAL_PRONOUNS
        or any(c.dep_ == "conj" for c in noun.children)
    )


def _contiguous(token: Token) -> bool:
    return token.right_edge.i - token.left_edge.i + 1 == sum(1 for _ in token.subtree)


def _inflect(lemma: str, tag: str) -> str | None:
    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else None


def _phrase(doc: Doc, head: Token, as_subject: bool, to_start: bool) -> str | None:
    """A noun phrase's text for its new place; pronouns change case (he <-> him)."""
    span = doc[head.left_edge.i : head.right_edge.i + 1]
    if head.pos_ == "PRON":
        table = OBJECT_TO_SUBJECT if as_subject else SUBJECT_TO_OBJECT
        if len(span) != 1 or head.lower_ not in table:
            return None
        word = table[head.lower_]
        return word[0].upper() + word[1:] if to_start else word
    if head.pos_ not in NOUN_POS:
        return None
    return moved_text(span, to_start)


def _verb_group(verb: Token) -> list[Token] | None:
    """The auxiliaries before the verb, adjacent to it and to each other (None if not)."""
    auxes = sorted((c for c in verb.children if c.dep_ in ("aux", "auxpass")), key=lambda t: t.i)
    if any(a.i != verb.i - len(auxes) + k for k, a in enumerate(auxes)):
        return None
    return auxes


def _passive_would_mislead(doc: Doc, verb: Token, obj: Token) -> bool:
    """Whether the passive would break the sentence or move a phrase to another noun: a second
    object ('showing a man something' -> 'a man is being shown ... something'), a noun phrase
    or appositive next to the object (a misparsed title or name), or a *with* or *off* phrase on
    or after the object ('blows bubbles with a wand' -> 'Bubbles with a wand are blown by a
    boy'; 'blowing the petals off a flower' -> '... by a girl off a flower')."""
    following = doc[obj.right_edge.i + 1] if obj.right_edge.i + 1 < len(doc) else None
    if following is not None and (
        following.text in (",", "(", "-", "–")
        or following.pos_ in ("NOUN", "PROPN", "PRON", "NUM", "DET")
        or following.text[:1].isupper()  # a title: 'followed the novel Into Battle'
    ):
        return True
    if any(t.dep_ == "appos" for t in obj.subtree):
        return True
    if any(c.dep_ == "prep" and c.lower_ in OBJECT_PATH_PREPOSITIONS for c in obj.children):
        return True  # 'hits a volleyball over the net to her': the phrase is the verb's path
    return any(c.i > obj.i and (c.dep_ in SECOND_OBJECT_DEPS or c.dep_ == "prep" and c.lower_ in ("with", "off")) for c in verb.children)


def active_to_passive(doc: Doc, ctx: Context) -> Change | None:
    """'A man rides a horse on the beach' -> 'A horse is ridden by a man on the beach'; 'A man
    riding a horse' -> 'A horse being ridden by a man'."""
    candidates = []
    for verb in doc:
        if verb.pos_ != "VERB" or verb_lemma(verb) in NO_PASSIVE:
            continue
        if any(c.dep_ in BLOCKING_DEPS for c in verb.children):
            continue
        objects = [c for c in verb.children if c.dep_ == "dobj"]
        if len(objects) != 1 or objects[0].i < verb.i:
            continue  # an object before its verb is a relative: 'something that he is holding'
        if objects[0].i != verb.i + 1 and doc[verb.i + 1].dep_ != "det":
            continue
        obj = objects[0]
        if obj.left_edge.i != verb.i + 1 or not _contiguous(obj) or obj.lower_.endswith("self"):
            continue
        if _passive_would_mislead(doc, verb, obj):
            continue
        vbn = _inflect(verb_lemma(verb), "VBN")
        if vbn is None:
            continue
        subjects = [c for c in verb.children if c.dep_ == "nsubj"]
        if verb.dep_ == "acl" and verb.tag_ == "VBG" and not subjects and verb.head.pos_ == "NOUN":
            noun = verb.head  # a caption: 'A man riding a horse'
            if verb.left_edge.i != verb.i or noun.dep_ != "ROOT" or noun.left_edge.i >= verb.i:
                continue
            subject_span = doc[noun.left_edge.i : verb.i]
            if any(t.dep_ in ("acl", "relcl") and t.head == noun and t != verb for t in subject_span):
                continue
            group = f"being {vbn}"
            subject_text: str | None = moved_text(subject_span, False)
            start = noun.left_edge.i
        else:
            if verb.dep_ != "ROOT" or len(subjects) != 1 or not _contiguous(subjects[0]):
                continue
            subject = subjects[0]
            auxes = _verb_group(verb)
            if auxes is None or subject.right_edge.i + 1 != verb.i - len(auxes):
                continue
            if any(t.dep_ == "appos" or t.text == "," for t in subject.subtree):
                continue  # 'The novel, X, ...': the appositive would be split from its noun
            plural = _plural(obj)
            if not auxes and verb.tag_ in ("VBZ", "VBP", "VBD"):
                group = f"{_be(verb.tag_ != 'VBD', plural)} {vbn}"
            elif len(auxes) == 1 and verb.tag_ == "VBG" and auxes[0].lemma_ == "be":
                group = f"{_be(auxes[0].tag_ != 'VBD', plural)} being {vbn}"
            elif len(auxes) == 1 and verb.tag_ == "VB" and auxes[0].tag_ == "MD":
                group = f"{auxes[0].text} be {vbn}"
            else:
                continue
            subject_text = _phrase(doc, subject, False, False)
            start = subject.left_edge.i
        object_text = _phrase(doc, obj, True, opens_sentence(doc[start]))
        if subject_text is None or object_text is None:
            continue
        candidates.append((start, obj.right_edge.i, f"{object_text} {group} by {subject_text}"))
    return _rewrite_one(doc, ctx, candidates, "NoContr/passive")


def passive_to_active(doc: Doc, ctx: Context) -> Change | None:
    """'The ball is being dunked by a man' -> 'A man is dunking the ball'; 'was built by the
    Romans' -> 'the Romans built'."""
    candidates = []
    for verb in doc:
        if verb.tag_ != "VBN" or verb.dep_ != "ROOT":
            continue
        subjects = [c for c in verb.children if c.dep_ == "nsubjpass"]
        agents = [c for c in verb.children if c.dep_ == "agent"]
        if len(subjects) != 1 or len(agents) != 1 or agents[0].i != verb.i + 1:
            continue
        if any(c.dep_ in BLOCKING_DEPS - {"agent"} for c in verb.children):
            continue
        subject, agent = subjects[0], agents[0]
        objects = [c for c in agent.children if c.dep_ == "pobj"]
        auxes = _verb_group(verb)
        if len(objects) != 1 or auxes is None or not auxes or not _contiguous(subject):
            continue
        actor = objects[0]
        if agent.right_edge.i != actor.right_edge.i or subject.right_edge.i + 1 != auxes[0].i:
            continue
        if any(t.dep_ in ("relcl", "appos", "acl") or t.text == "," for t in actor.subtree):
            continue  # 'Soho Press in the US, where ..., printed': a long agent loses its commas
        lemma = verb_lemma(verb)
        plural = _plural(actor)
        words = [a.lower_ for a in auxes]
        if len(words) == 1 and words[0] in ("is", "are", "am"):
            group = _inflect(lemma, "VBP" if plural else "VBZ")
        elif len(words) == 1 and words[0] in ("was", "were"):
            group = _inflect(lemma, "VBD")
        elif len(words) == 2 and words[1] == "being" and words[0] in ("is", "are", "was", "were"):
            group = f"{_be(words[0] in ('is', 'are'), plural)} {_inflect(lemma, 'VBG')}"
        elif len(words) == 2 and words[1] == "be" and auxes[0].tag_ == "MD":
            group = f"{auxes[0].text} {lemma}"
        elif len(words) == 2 and words[1] == "been" and words[0] in ("has", "have", "had"):
            have = "had" if words[0] == "had" else "have" if plural else "has"
            group = f"{have} {verb.lower_}"
        else:
            continue
        start = subject.left_edge.i
        actor_text = _phrase(doc, actor, True, opens_sentence(doc[start]))
        patient_text = _phrase(doc, subject, False, False)
        if not group or "None" in group or actor_text is None or patient_text is None:
            continue
        candidates.append((start, actor.right_edge.i, f"{actor_text} {group} {patient_text}"))
    return _rewrite_one(doc, ctx, candidates, "NoContr/active")


FRONTABLE = frozenset(
    "in on at near during after before outside inside under beside behind across along through "
    "throughout since until above below over around inside".split()
)
CLAUSE_MARKS = frozenset("when while after before because although though since until once".split())
# verb + preposition pairs where the phrase is the verb's argument, not a scene adverbial:
# 'looking at a boy', 'swimming after a duck', 'covered in bubbles', 'cutting it in half'
SELECTED_PREPOSITIONS = {
    "at": frozenset("look stare gaze glance peer point pull tug smile grin laugh yell shout bark wave aim throw kick shoot swing squint frown".split()),
    "after": frozenset("run swim chase go come look race hurry dash follow".split()),
    "in": frozenset("cover fill dress clothe coat wrap soak drench cut split break tear fold engage participate involve interest result dip immerse".split()),
    "on": frozenset("work rely depend focus act concentrate insist comment count".split()),
    "over": frozenset("hold put place lean bend".split()),
}
POSSESSIVE_PRONOUNS = frozenset("his her their its my your our".split())


def _movable(token: Token) -> bool:
    if not _contiguous(token) or token.left_edge.i != token.i and token.dep_ == "prep":
        return False
    if token.dep_ == "prep":
        return token.lower_ in FRONTABLE and any(c.dep_ == "pobj" for c in token.children)
    if token.dep_ == "advcl":
        return any(c.dep_ == "mark" and c.lower_ in CLAUSE_MARKS and c.i == token.left_edge.i for c in token.children)
    return False


def _single_statement(doc: Doc) -> Span | None:
    sentences = list(doc.sents)
    if len(sentences) != 1 or doc.text.rstrip().endswith("?"):
        return None
    root = sentences[0].root
    if root.lemma_ == "be":
        return None  # 'A cooler is on a table': the phrase is the predicate, it cannot move
    if root.pos_ not in ("VERB", "AUX") or not any(c.dep_ in ("nsubj", "nsubjpass") for c in root.children):
        return None
    return sentences[0]


def _body_end(doc: Doc) -> int:
    end = len(doc)
    while end > 0 and doc[end - 1].is_punct:
        end -= 1
    return end


def _needed_by_verb(doc: Doc, root: Token, phrase: Token) -> bool:
    """Whether a final phrase belongs to the verb or to a word before it, so that fronting it
    would strand a word or change who is where: a clause with a pronoun subject ('While he
    sweeps, a boy ...'), a particle or stranded word just before it
    ('looking up at a boy', 'while at a market', 'located at In ...'), a phrasal verb, a
    selected preposition (``SELECTED_PREPOSITIONS``), a bare object ('in half', 'in bubbles')
    or a body part ('with his hand over his mouth')."""
    if phrase.dep_ != "prep":  # a clause: its pronoun must not come before its antecedent
        return any(t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "PRON" for t in phrase.subtree)
    before = doc[phrase.left_edge.i - 1]
    stranded = before.pos_ in ("ADP", "SCONJ", "CCONJ", "PART") or before.dep_ in ("prt", "mark", "cc")
    if before.text != "," and (stranded or before.lower_ in CLAUSE_MARKS):
        return True
    if any(c.dep_ in ("prt", "conj") for c in root.children):
        return True  # a phrasal verb; a second clause the phrase may belong to
    lemma = root.lemma_.lower()
    if any(c.dep_ == "prep" and lemma in SELECTED_PREPOSITIONS.get(c.lower_, ()) for c in root.children):
        return True  # 'point at meat in a window': the phrase may belong to the verb's argument
    if lemma in NO_PASSIVE:
        return True  # 'showing a man in a shirt something': two objects, often misparsed
    objects = [c for c in phrase.children if c.dep_ == "pobj"]
    if not objects:
        return True
    noun = objects[0]
    if noun.pos_ in ("NUM", "PRON") or noun.lower_ in ("half", "halves", "pieces", "two", "line", "unison"):
        return True
    if any(c.lower_ in POSSESSIVE_PRONOUNS for c in noun.children):
        return True
    determined = any(c.dep_ in ("det", "poss", "nummod") for c in noun.children)
    return noun.pos_ == "NOUN" and not determined


def front_adverbial(doc: Doc, ctx: Context) -> Change | None:
    """'A dog runs in the park.' -> 'In the park, a dog runs.'; 'He left after the show ended.'
    -> 'After the show ended, he left.'"""
    if _single_statement(doc) is None:
        return None
    end = _body_end(doc)
    root = next(iter(doc.sents)).root
    candidates = [
        c for c in root.children
        if c.i > root.i and c.right_edge.i == end - 1 and _movable(c) and c.left_edge.i > 1
        and not _needed_by_verb(doc, root, c)
    ]  # fmt: skip
    if not candidates:
        return None
    phrase = ctx.rng.choice(candidates)
    start = phrase.left_edge.i
    rest_end = start - 1 if doc[start - 1].text == "," else start
    main = doc[0:rest_end]
    new = f"{moved_text(doc[start:end], True)}, {moved_text(main, False)}"
    return replace_span(doc[:end], new, "NoContr/front_adverbial")


def back_adverbial(doc: Doc, ctx: Context) -> Change | None:
    """'In 1990, the company was founded.' -> 'The company was founded in 1990.'"""
    if _single_statement(doc) is None:
        return None
    end = _body_end(doc)
    root = next(iter(doc.sents)).root
    first = next((c for c in root.children if c.left_edge.i == 0), None)
    if first is None or not _movable(first) or first.right_edge.i + 2 >= end:
        return None
    comma = first.right_edge.i + 1
    if doc[comma].text != "," or root.i <= comma:
        return None
    main = doc[comma + 1 : end]
    if main[0].is_punct:
        return None
    new = f"{moved_text(main, True)} {moved_text(doc[0:comma], False)}"
    return replace_span(doc[:end], new, "NoContr/back_adverbial")


NOT_OWNERS = frozenset(("DATE", "TIME", "CARDINAL", "MONEY", "QUANTITY", "PERCENT", "ORDINAL"))
OWNER_KINDS = frozenset(("noun.person", "noun.animal"))


def possessive_to_of(doc: Doc, ctx: Context) -> Change | None:
    """"the dog's red ball" -> "the red ball of the dog"."""
    candidates = []
    for case in doc:
        if case.dep_ != "case" or case.lower_ not in ("'s", "'", "’s"):
            continue
        owner, owned = case.head, case.head.head
        if owner.dep_ != "poss" or owner.pos_ not in NOUN_POS or owned.pos_ != "NOUN":
            continue
        if owner.ent_type_ in NOT_OWNERS or owner.i >= owned.i or owner.right_edge.i != case.i:
            continue
        first = owner.left_edge.i
        if first > 0 and doc[first - 1].pos_ == "PROPN":
            continue  # the owner is the end of a longer name: 'AS Gubbio's home ground'
        if owned.left_edge.i != first or case.i - first > 5 or owned.i - case.i > 4:
            continue
        between = doc[case.i + 1 : owned.i]
        if any(t.head != owned or t.dep_ not in ("amod", "compound", "nummod") for t in between):
            continue
        owner_span = doc[first : case.i]
        if any(t.dep_ == "poss" and t != owner for t in owner_span):
            continue
        if owner.pos_ == "NOUN" and not any(c.dep_ in ("det", "poss") for c in owner.children):
            continue  # "chef's uniforms" names a kind: "the uniforms of chef" is no English
        to_start = opens_sentence(doc[first])
        owned_text = doc[case.i + 1 : owned.i + 1].text
        the = "The" if to_start else "the"
        new = f"{the} {owned_text} of {moved_text(owner_span, False)}"
        candidates.append((first, owned.i, new))
    return _rewrite_one(doc, ctx, candidates, "NoContr/possessive")


def of_to_possessive(doc: Doc, ctx: Context) -> Change | None:
    """"the mother of the boy" -> "the boy's mother" (owners that are people or animals)."""
    candidates = []
    for of in doc:
        if of.lower_ != "of" or of.dep_ != "prep" or of.i == 0:
            continue
        owned = of.head
        objects = [c for c in of.children if c.dep_ == "pobj"]
        if owned.pos_ != "NOUN" or owned.i != of.i - 1 or len(objects) != 1:
            continue
        owner = objects[0]
        det = doc[owned.left_edge.i]
        if det.lower_ != "the" or det.dep_ != "det" or not _contiguous(owned) or owned.right_edge.i != owner.i:
            continue
        if owner.right_edge.i != owner.i or owner.ent_type_ in NOT_OWNERS or owner.pos_ not in NOUN_POS:
            continue
        if owner.pos_ == "NOUN" and noun_lexname(owner.lemma_.lower()) not in OWNER_KINDS:
            continue  # "the top of the hill" -> "the hill's top" reads oddly
        if owner.pos_ == "PROPN" and owner.ent_type_ != "PERSON":
            continue
        owner_span = doc[of.i + 1 : owner.i + 1]
        if any(t.dep_ not in ("det", "amod", "compound") for t in owner_span if t != owner):
            continue
        mark = "'" if owner.tag_ in ("NNS", "NNPS") and owner.text.endswith("s") else "'s"
        to_start = opens_sentence(det)
        owner_text = moved_text(owner_span, to_start)
        owned_text = doc[det.i + 1 : owned.i + 1].text
        candidates.append((det.i, owner.i, f"{owner_text}{mark} {owned_text}"))
    return _rewrite_one(doc, ctx, candidates, "NoContr/of_possessive")


# verb -> (light verb, what follows it); intransitive uses only
LIGHT_VERBS = {
    "decide": ("make", "a decision"), "choose": ("make", "a choice"), "walk": ("take", "a walk"),
    "rest": ("take", "a rest"), "nap": ("take", "a nap"), "shower": ("take", "a shower"),
    "bathe": ("take", "a bath"), "stroll": ("take", "a stroll"), "drink": ("take", "a drink"),
    "pause": ("take", "a pause"), "bow": ("take", "a bow"), "dive": ("take", "a dive"),
    "peek": ("take", "a peek"), "glance": ("take", "a glance"), "look": ("take", "a look"),
    "swim": ("go", "for a swim"), "jog": ("go", "for a jog"), "hike": ("go", "for a hike"),
    "comment": ("make", "a comment"), "attempt": ("make", "an attempt"),
}  # fmt: skip
# the object of these verbs becomes the object of a preposition after the phrase
TRANSITIVE_LIGHT = {"visit": ("pay", "a visit to"), "photograph": ("take", "a photograph of")}
LOOK_PREPOSITIONS = frozenset(("at", "around", "into", "through", "inside"))
# words that after a verb are (or may be parsed as) its particle
PARTICLE_WORDS = frozenset("by past up down away off out back over".split())
TO_VERB = {(light, phrase.split()[-1]): verb for verb, (light, phrase) in LIGHT_VERBS.items()}


def verb_to_light(doc: Doc, ctx: Context) -> Change | None:
    """'A boy swims in the lake' -> 'A boy goes for a swim in the lake'; 'decided to leave' ->
    'made a decision to leave'; 'visited Paris' -> 'paid a visit to Paris'."""
    candidates = []
    for verb in doc:
        lemma = verb_lemma(verb)
        if verb.pos_ != "VERB" or verb.tag_ not in ("VB", "VBZ", "VBP", "VBD", "VBG", "VBN"):
            continue
        children = list(verb.children)
        if any(c.dep_ in ("auxpass", "prt", "dative", "acomp", "attr", "oprd", "ccomp", "nsubjpass") for c in children):
            continue
        following = doc[verb.i + 1] if verb.i + 1 < len(doc) else None
        if following is not None and following.lower_ in PARTICLE_WORDS:
            continue  # 'walk by', 'look down at': the verb with its particle is another verb
        if any(c.dep_ == "advmod" for c in children):
            continue  # 'look closely' -> 'take a look closely' is no English
        objects = [c for c in children if c.dep_ == "dobj"]
        if lemma in TRANSITIVE_LIGHT and len(objects) == 1 and objects[0].i > verb.i:
            light, phrase = TRANSITIVE_LIGHT[lemma]
        elif lemma in LIGHT_VERBS and not objects:
            light, phrase = LIGHT_VERBS[lemma]
            if any(c.dep_ == "xcomp" for c in children) and lemma not in ("decide", "choose", "attempt"):
                continue
            preps = [c.lower_ for c in children if c.dep_ == "prep"]
            if "after" in preps:
                continue  # 'swimming after a duck' chases it: no 'swim' to go for
            if lemma == "look" and not (preps and set(preps) <= LOOK_PREPOSITIONS):
                continue  # 'looks like', 'looks happy', a bare 'look'
        else:
            continue
        inflected = _inflect(light, verb.tag_)
        if inflected is None:
            continue
        candidates.append((verb, f"{inflected} {phrase}"))
    if not candidates:
        return None
    verb, new = ctx.rng.choice(candidates)
    new = new[0].upper() + new[1:] if verb.text[:1].isupper() and opens_sentence(verb) else new
    return replace(doc, verb.idx, verb.idx + len(verb.text), new, "NoContr/light_verb")


def light_to_verb(doc: Doc, ctx: Context) -> Change | None:
    """'took a walk' -> 'walked', 'went for a swim' -> 'swam', 'made a decision to' -> 'decided to'."""
    candidates = []
    for verb in doc:
        light = verb_lemma(verb)
        if light not in ("make", "take", "go") or verb.tag_ not in ("VB", "VBZ", "VBP", "VBD", "VBG", "VBN"):
            continue
        if any(c.dep_ in ("auxpass", "prt", "dative") for c in verb.children):
            continue
        if light == "go":
            fors = [c for c in verb.children if c.dep_ == "prep" and c.lower_ == "for" and c.i == verb.i + 1]
            noun = next((c for c in fors[0].children if c.dep_ == "pobj"), None) if fors else None
        else:
            noun = next((c for c in verb.children if c.dep_ == "dobj"), None)
        if noun is None or (light, noun.lower_) not in TO_VERB:
            continue
        article = doc[noun.i - 1]
        if article.lower_ not in ("a", "an") or noun.left_edge != article or noun.right_edge != noun:
            continue  # 'took a long walk' -> 'walked long' would shift the meaning
        if article.i != verb.i + (2 if light == "go" else 1):
            continue
        target = _inflect(TO_VERB[(light, noun.lower_)], verb.tag_)
        if target is None:
            continue
        target = target[0].upper() + target[1:] if verb.text[:1].isupper() and opens_sentence(verb) else target
        candidates.append((verb, noun, target))
    if not candidates:
        return None
    verb, noun, new = ctx.rng.choice(candidates)
    return replace_span(doc[verb.i : noun.i + 1], new, "NoContr/light_verb_back")


# the present tense of 'be' before a progressive -> the tag of the simple present it becomes
PROGRESSIVE_BE = {"is": "VBZ", "am": "VBP", "are": "VBP"}
# verbs whose progressive says an event is under way or planned, where the simple present
# reads as done or habitual: 'the man is drowning' is no 'the man drowns'
NOT_SIMPLE = frozenset(
    "die drown sink fall arrive leave come go win lose finish stop start begin end become "
    "get turn".split()
)


def _shares_be(conjunct: Token) -> bool:
    """A conjoined -ing word with no auxiliary of its own: its 'is' is the verb's (the tagger
    may call it a noun, 'is riding and singing', and the parser may join it to an object,
    'are wearing leotards with accents and standing')."""
    return (
        conjunct.dep_ == "conj"
        and conjunct.lower_.endswith("ing")
        and not any(c.dep_ == "aux" for c in conjunct.children)
    )


def progressive_to_simple(doc: Doc, ctx: Context) -> Change | None:
    """'A man is riding a horse' -> 'A man rides a horse'; 'We are planning to stay' -> 'We
    plan to stay'. Present tense only: the past progressive often frames an interrupted event
    ('was crossing the street when ...'). Only this direction: a stative verb has no
    progressive ('knows' -> 'is knowing')."""
    candidates = []
    for verb in doc:
        if verb.tag_ != "VBG" or verb.pos_ != "VERB":
            continue
        lemma = verb_lemma(verb)
        if lemma in NOT_SIMPLE:
            continue
        auxiliaries = _verb_group(verb)  # None when a word stands between ('is not riding')
        if not auxiliaries or len(auxiliaries) != 1:
            continue  # 'has been riding', 'will be riding'
        be = auxiliaries[0]
        if be.dep_ != "aux" or be.lower_ not in PROGRESSIVE_BE or not be.whitespace_:
            continue  # contracted ("he's riding"), or not a progressive
        if any(_shares_be(t) for t in verb.subtree if t.i > verb.i):
            continue  # 'is riding and singing': the second verb would keep its -ing
        if opens_sentence(be):
            continue  # 'Is he riding?' asks; the simple present would need 'does'
        simple = _inflect(lemma, PROGRESSIVE_BE[be.lower_])
        if simple is not None and simple.lower() != verb.lower_:
            candidates.append((be, verb, simple))
    if not candidates:
        return None
    be, verb, simple = ctx.rng.choice(candidates)
    return replace_tokens(doc, {be.i: "", verb.i: simple}, "NoContr/simple_aspect")


RULES = {
    "NoContr": [
        active_to_passive,
        passive_to_active,
        front_adverbial,
        back_adverbial,
        possessive_to_of,
        of_to_possessive,
        verb_to_light,
        light_to_verb,
        progressive_to_simple,
    ]
}
