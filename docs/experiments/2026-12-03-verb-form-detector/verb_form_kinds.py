"""The broken verb forms and simple-aspect twins of detector_split.py's 3,000 corpus texts
(seed 13), and the kind of each broken form, read from the words around the change."""

import difflib
import random

from mismatch_core.jsonl import iter_jsonl
from mismatch_core.resources import data_dir, load_spacy
from synth.perturb.base import Context
from synth.perturb.grammar import verb_form
from synth.perturb.paraphrase_syntax import progressive_to_simple

BEFORE_BARE = {
    "to",
    "did",
    "does",
    "do",
    "will",
    "can",
    "could",
    "would",
    "should",
    "may",
    "might",
    "must",
    "shall",
}
BE = {"is", "are", "was", "were", "be", "been", "being", "am"}
KINDS = (
    "after be: not -ing",  # "is cook"
    "made -ing, no be before it",  # "He graduating", "has performing"
    "after to/modal/do: past/participle",  # "to surrounded", "did Manning suffered"
    "finite -> other finite/participle",  # "began" -> "begun"
)
LOOK_BACK = (
    3  # words before the change searched for its auxiliary ("did Manning suffer", "did not go")
)


def kind(ref: str, gen: str) -> str:
    """Which kind of wrong verb form ``gen`` holds where ``ref`` has the right one, read from the
    nearest auxiliary within LOOK_BACK words before the change (a surface heuristic)."""
    a, b = ref.split(), gen.split()
    changes = [op for op in difflib.SequenceMatcher(None, a, b).get_opcodes() if op[0] != "equal"]
    if len(changes) != 1:
        return "other"
    _, i1, _, j1, _ = changes[0]
    new, old = b[j1].strip(".,?!").lower(), a[i1].strip(".,?!").lower()
    for word in reversed([w.lower() for w in a[max(0, i1 - LOOK_BACK) : i1]]):
        if word in BEFORE_BARE:
            return "after to/modal/do: past/participle"
        if word in BE:
            return "after be: -ing" if new.endswith("ing") else "after be: not -ing"
        if word.endswith((",", ".", ";", ":", "?")):
            break  # the auxiliary of another clause
    if new.endswith("ing") and not old.endswith("ing"):
        return "made -ing, no be before it"
    if old.endswith("ing"):
        return "-ing -> other (no be)"
    return "finite -> other finite/participle"


def probe_docs() -> list:
    """The 3,000 corpus texts of detector_split.py (seed 13), parsed."""
    texts = [
        record["text"]
        for name in ("coco", "multi30k", "squad", "webnlg")
        for _, record in iter_jsonl(data_dir() / "corpora" / f"{name}.jsonl.gz")
    ]
    return list(load_spacy().pipe(random.Random(13).sample(texts, 3000), batch_size=64))


def corpus_pairs() -> dict[str, list[tuple[str, str]]]:
    """rule name -> (text, rewritten text) for verb_form and progressive_to_simple."""
    docs = probe_docs()
    return {
        rule.__name__: [
            (doc.text, change.text)
            for k, doc in enumerate(docs)
            if (change := rule(doc, Context(rng=random.Random(k)))) is not None
        ]
        for rule in (verb_form, progressive_to_simple)
    }
