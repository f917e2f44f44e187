"""From per-token scores to character spans a user can read.

The span tagger (``evaluator.model.span_tagger``) scores the wordpieces the encoder kept for a
text (CLS and SEP dropped, the first ``MAX_TOKENS``; see ``encoder_pass.token_states``), whose
character offsets in the text the encoder pass also gives (``encoder_pass.Tokenized``). The
flagged ones become spans of whole words: a flagged wordpiece marks the whitespace-delimited
word around it ("1,500,000", "café's"), words side by side merge into one span, and
punctuation at a span's edges is left out ("Manchester." marks "Manchester"). A span's
probability is the mean of its words' scores, a word's score the highest of its wordpieces'.
"""

from __future__ import annotations

import numpy as np

from mismatch_core.taxonomy import CODES, INDEX
from synth.spans import word_region

SpanTuple = tuple[int, int, float]  # (start, end exclusive, probability)
TOKEN_THRESHOLD = 0.5  # a wordpiece the tagger gives at least this is part of a span
# error classes whose place is in gen (MissInfo's is in the reference)
SPAN_CLASSES = [index for code, index in INDEX.items() if code not in ("NoContr", "MissInfo")]


def token_spans(
    text: str, offsets: np.ndarray, probabilities: np.ndarray, threshold: float
) -> list[SpanTuple]:
    """Spans of whole words whose wordpieces score at least ``threshold``, most probable first."""
    if len(offsets) != len(probabilities):
        raise ValueError(f"{len(offsets)} wordpiece offsets but {len(probabilities)} scores")
    words: dict[tuple[int, int], float] = {}
    for (start, end), probability in zip(offsets.tolist(), probabilities.tolist(), strict=True):
        if probability < threshold or end <= start:
            continue
        word = word_region(text, start, end)
        words[word] = max(words.get(word, 0.0), probability)
    spans: list[tuple[int, int, list[float]]] = []
    for (start, end), probability in sorted(words.items()):
        if spans and not text[spans[-1][1] : start].strip():
            spans[-1] = (spans[-1][0], end, [*spans[-1][2], probability])
        else:
            spans.append((start, end, [probability]))
    merged = [(start, end, float(np.mean(p))) for start, end, p in spans]
    return sorted(merged, key=lambda span: (-span[2], span[0]))


def pair_spans(
    gen: str,
    gen_offsets: np.ndarray,
    gen_probs: np.ndarray,
    ref: str,
    ref_offsets: np.ndarray,
    ref_probs: np.ndarray,
    ref_index: int,
    class_probs: np.ndarray,
) -> tuple[list[dict], list[dict]]:
    """(spans, missing) of one pair read as an error: gen spans carry the most probable error
    class that has a place in gen (any but NoContr and MissInfo), the reference words gen
    leaves out carry MissInfo; each with the mean probability of its words."""
    label = CODES[max(SPAN_CLASSES, key=lambda index: class_probs[index])]
    spans = [
        {"start": start, "end": end, "text": gen[start:end], "label": label, "prob": round(p, 6)}
        for start, end, p in token_spans(gen, gen_offsets, gen_probs, TOKEN_THRESHOLD)
    ]
    missing = [
        {
            "ref_index": ref_index,
            "ref_start": start,
            "ref_end": end,
            "text": ref[start:end],
            "label": "MissInfo",
            "prob": round(p, 6),
        }
        for start, end, p in token_spans(ref, ref_offsets, ref_probs, TOKEN_THRESHOLD)
    ]
    return spans, missing
