"""The Python API: `Evaluator.from_pretrained(...).predict(refs, gens)` -> one `Prediction` per pair.

An Evaluator wraps a loaded checkpoint and turns the raw model outputs of
`evaluator.inference.predict_outputs` into named results: the score P(NoContr), the task
ratings on their human scales, every mismatch class with its probability, the classes over
a threshold and, when the checkpoint has a span tagger, which words of gen are wrong and
which reference words gen leaves out (``evaluator.spans``). Pairs are processed in chunks of
similar length (identical references kept together, so each chunk encodes a shared reference
once) and returned in input order.
`predict_stream` does the same chunk by chunk for inputs too large to hold (`mismatch predict`).
"""

from __future__ import annotations

import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from evaluator.features.cpu_workers import CpuWorkers, shared_cpu_workers
from evaluator.features.token_store import MAX_TOKENS
from evaluator.hub import Checkpoint, CheckpointError, load, task_count_problem
from evaluator.inference import Chunk, PairOutputs, predict_outputs
from evaluator.predict_io import ROUND_DIGITS, Pairs, Prediction
from evaluator.signature import Signature, signature
from evaluator.spans import pair_spans
from evaluator.tasks import Criterion, normalised_outputs
from mismatch_core.checkpoint_files import CONFIG_FILE
from mismatch_core.errors import MismatchWarning, PairError
from mismatch_core.pairs import (
    check_pairs,
    first_empty_reference,
    first_without_source,
    has_text,
    is_null,
    references,
    short_reference_pairs,
)
from mismatch_core.resources import torch_device
from mismatch_core.taxonomy import CODES

CHUNK_PAIRS = 1024  # pairs per predict_outputs call: the progress bar's step
# A reference of fewer words is rare in the base's training: 278 of the 251,654 texts of the
# synthetic corpora, 22 of its 1,628 real bases (docs/experiments/2026-12-03-short-texts).
SHORT_REFERENCE_WORDS = 4
TASK_KINDS = ("regression", "classification")
# encoder_pass warns per call; predict counts truncated pairs itself and warns once
_ENCODER_TRUNCATION_MESSAGE = r"\d+ text\(s\) longer than \d+ tokens were truncated"


# (checkpoint, [(refs, gens, srcs), ...], batch_size, spans_below) -> the model outputs of each
# chunk, in order; spans_below: tag the pairs whose P(NoContr) is below it (None: no spans)
ChunkScorer = Callable[[Checkpoint, list[Chunk], int, float | None], Iterable[PairOutputs]]


class TruncationWarning(MismatchWarning):
    """Some texts were longer than the encoder's limit and were cut; the message counts them."""


class SpanReachWarning(MismatchWarning):
    """Some pairs tagged with spans have a text longer than the span tagger reads (its first
    MAX_TOKENS wordpieces); the message counts them. Apart from TruncationWarning: the
    scores read these texts whole."""


class ShortReferenceWarning(MismatchWarning):
    """Some pairs have a reference of fewer than SHORT_REFERENCE_WORDS words (a short answer,
    an emoji), rare in the base's training: it may name their errors wrong ("No." against
    "Yes." reads NoContr); the message counts them."""


# what predict counts over a whole input and warns once about: commands print each as a line
COUNTED_WARNINGS = (TruncationWarning, SpanReachWarning, ShortReferenceWarning)


class Evaluator:
    """A loaded checkpoint ready to score (reference, generated text) pairs."""

    def __init__(self, checkpoint: Checkpoint, device: str = "cpu", threshold: float = 0.5) -> None:
        if not _is_number(threshold) or not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}")
        self.checkpoint = checkpoint
        self.threshold = float(threshold)  # numpy's number too: the signature is JSON
        self.kind, self.criteria = _task_criteria(checkpoint)
        self.device = torch_device(device)
        _check_feature_layer(checkpoint, str(self.device))
        checkpoint.model.to(self.device).eval()

    @classmethod
    def from_pretrained(
        cls,
        path_or_hub_id: str | os.PathLike,
        revision: str | None = None,
        local_files_only: bool = False,
        device: str = "cpu",
        threshold: float = 0.5,
    ) -> Evaluator:
        """Load a checkpoint directory or Hub repo id (CheckpointError if it cannot be had)."""
        return cls(load(path_or_hub_id, revision, local_files_only), device, threshold)

    @property
    def signature(self) -> Signature:
        """What decides this evaluator's scores, printable on one line (see evaluator.signature)."""
        return signature(self.checkpoint, self.threshold)

    @property
    def rating_keys(self) -> list[str]:
        return [criterion.key for criterion in self.criteria]

    @property
    def has_spans(self) -> bool:
        """Whether the checkpoint has a span tagger, so predictions can carry error spans."""
        return self.checkpoint.model.span_tagger is not None

    def predict(
        self,
        refs: Sequence[str | Sequence[str]],
        gens: Sequence[str],
        srcs: Sequence[str | None] | None = None,
        batch_size: int = 64,
        ids: Sequence[str] | None = None,
        progress: bool = True,
        spans: bool = True,
    ) -> list[Prediction]:
        """One Prediction per pair, in input order.

        refs[i] is a reference or a list of references: the pair is read against each one
        alone; the likeliest reading gives its score, and the model's rule picks the one that
        names its errors, classes, labels and spans (``Prediction.ref_index``); a task
        checkpoint fitted on every reference (``ratings_read_all_references``, each shipped
        one) rates from the metrics over all of them (``inference.over_references``: a
        similarity's highest, a distance's lowest, the kind of difference at the closest), so
        a rating can sit above that of any one reference alone.
        srcs[i] is pair i's source; a checkpoint whose ratings read the source needs one for
        every pair (ValueError naming the first id without), the others ignore them. An empty
        reference is a ValueError naming its pair's id; an empty gen is scored.
        ids default to "0", "1", .... A progress bar goes to stderr when `progress` and
        the input spans several chunks; over-long texts are truncated and counted in one
        TruncationWarning, the tagged pairs with a text past the span tagger's reach in
        one SpanReachWarning, and the pairs with a short reference in one
        ShortReferenceWarning. ``spans``: fill each Prediction's spans and missing words
        (when the checkpoint has a span tagger; otherwise they stay None).
        """
        refs, gens, srcs, ids = self._checked(refs, gens, srcs, ids, batch_size)
        n = len(gens)
        if n == 0:
            return []
        limit, truncated = self._truncated_pairs(refs, gens)
        if truncated:
            _warn_truncated(truncated, n, limit, stacklevel=2)
        with _progress_bar(n, progress and n > CHUNK_PAIRS) as bar, shared_cpu_workers():
            predictions, past_reach = self._score(
                ids, refs, gens, srcs, batch_size, score_locally, bar.update, spans
            )
        if past_reach:
            _warn_past_reach(past_reach, n, stacklevel=2)
        short = short_reference_pairs(refs, SHORT_REFERENCE_WORDS)
        if short:
            _warn_short_references(short, n, stacklevel=2)
        return predictions

    def predict_stream(
        self,
        chunks: Iterable[Pairs],
        total: int,
        batch_size: int = 64,
        progress: bool = True,
        scorer: ChunkScorer | None = None,
        spans: bool = True,
    ) -> Iterator[list[Prediction]]:
        """Predictions chunk by chunk, for inputs too large to hold at once.

        Each chunk is scored as `predict` scores a whole input; `total` (the number of pairs
        over all chunks) sizes one progress bar, and over-long texts are counted over all
        chunks in one TruncationWarning at the end, the tagged pairs with a text past the
        span tagger's reach in one SpanReachWarning, and the pairs with a short reference in
        one ShortReferenceWarning. ``scorer`` runs the model on sub-chunks elsewhere
        (`evaluator.multi_device`); None: in this process. ``spans`` as for `predict`.
        Ids are checked within each chunk (given twice: ValueError), not across chunks: that
        would keep every id, which only the caller can afford (``mismatch predict`` does).
        """
        limit = truncated = seen = past_reach = short = 0
        # one set of CPU-metric workers for every chunk, this thread's only while a chunk is
        # scored: the caller may resume the stream on another thread, or leave it open
        with _progress_bar(total, progress and total > CHUNK_PAIRS) as bar, CpuWorkers() as workers:
            for chunk in chunks:
                refs, gens, srcs, ids = self._checked(
                    chunk.refs, chunk.gens, chunk.srcs, chunk.ids, batch_size
                )
                limit, count = self._truncated_pairs(refs, gens)
                truncated += count
                short += short_reference_pairs(refs, SHORT_REFERENCE_WORDS)
                seen += len(gens)
                with workers.serving():
                    predictions, count = self._score(
                        ids,
                        refs,
                        gens,
                        srcs,
                        batch_size,
                        scorer or score_locally,
                        bar.update,
                        spans,
                    )
                past_reach += count
                yield predictions
        if truncated:
            _warn_truncated(truncated, seen, limit, stacklevel=2)
        if past_reach:
            _warn_past_reach(past_reach, seen, stacklevel=2)
        if short:
            _warn_short_references(short, seen, stacklevel=2)

    def _checked(
        self, refs, gens, srcs, ids, batch_size: int
    ) -> tuple[list[str | list[str]], list[str], list[str | None] | None, list[str]]:
        """(refs, gens, srcs, ids) as lists, taken by position (a pandas Series with any index
        reads in its order), ids as strings ("0", "1", ... when None), a missing src (None,
        or NaN as pandas reads an empty cell) as None, a missing gen as an empty output (the
        system produced nothing, as a JSONL null); ValueError or TypeError for input that does
        not line up, naming the pair by its id."""
        import pandas as pd

        for name, values in (("refs", refs), ("gens", gens), ("srcs", srcs), ("ids", ids)):
            if isinstance(values, str | bytes):
                raise TypeError(f"{name} must be a sequence with one item per pair, not a string")
            if isinstance(values, pd.DataFrame | Mapping):  # iterated, they give their keys
                raise TypeError(
                    f"{name} is a {type(values).__name__}: give a sequence with one item per "
                    f"pair (a DataFrame's column, e.g. frame[{name[:-1]!r}])"
                )
            optional = name in ("srcs", "ids")
            if not (hasattr(values, "__len__") or (optional and values is None)):
                raise TypeError(f"{name} must be a sequence, got {type(values).__name__}")
        gens = ["" if is_null(gen) else gen for gen in gens]
        n = len(gens)
        for name, values in (("refs", refs), ("srcs", srcs), ("ids", ids)):
            if values is not None and len(values) != n:
                raise ValueError(f"{len(values)} {name} but {n} generated texts")
        if not _is_integer(batch_size) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        refs = list(refs)
        srcs = None if srcs is None else [None if is_null(src) else src for src in srcs]
        ids = [str(i) for i in range(n)] if ids is None else _checked_ids(ids)
        try:
            check_pairs(refs, gens)
        except PairError as error:
            raise PairError(error.index, error.problem, ids[error.index]) from None
        empty = first_empty_reference(refs)
        if empty is not None:
            ref = refs[empty]
            which = (
                ""
                if isinstance(ref, str)
                else f" (reference {_first_empty(ref) + 1} of {len(ref)})"
            )
            raise ValueError(f"pair {ids[empty]!r} has an empty reference{which}")
        if srcs is not None:
            wrong = next(
                (i for i, src in enumerate(srcs) if not (src is None or isinstance(src, str))), None
            )
            if wrong is not None:
                raise ValueError(
                    f"pair {ids[wrong]!r}: src must be a string or None, got "
                    f"{type(srcs[wrong]).__name__}"
                )
        names = self.checkpoint.model.config.source_features
        if names:
            lacking = first_without_source(srcs, n)
            if lacking is not None:
                raise ValueError(
                    f"pair {ids[lacking]!r} has no src: this checkpoint's ratings read each "
                    f"output against its source ({', '.join(names)}); give src on every pair"
                )
        return [ref if isinstance(ref, str) else list(ref) for ref in refs], gens, srcs, ids

    def _score(
        self,
        ids: Sequence[str],
        refs: list[str | list[str]],
        gens: Sequence[str],
        srcs: Sequence[str | None] | None,
        batch_size: int,
        scorer: ChunkScorer,
        advance: Callable[[int], object],
        spans: bool,
    ) -> tuple[list[Prediction], int]:
        """Predictions in input order, and how many of the pairs tagged with spans have a
        text past the tagger's reach; the model sees chunks of similar length."""
        n = len(gens)
        spans = spans and self.has_spans
        order = sorted(range(n), key=lambda i: _length_key(refs[i], gens[i]))
        probabilities = np.zeros((n, len(CODES)), dtype=np.float64)
        ratings = np.zeros((n, len(self.criteria)), dtype=np.float64)
        naming = np.zeros(n, dtype=np.int64)  # which reference names each pair's errors
        found: list[tuple[list[dict], list[dict]] | None] = [None] * n
        past_reach = 0
        chunks = [order[start : start + CHUNK_PAIRS] for start in range(0, n, CHUNK_PAIRS)]
        texts: list[Chunk] = [
            (
                [refs[i] for i in chunk],
                [gens[i] for i in chunk],
                [None if srcs is None else srcs[i] for i in chunk],
            )
            for chunk in chunks
        ]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_ENCODER_TRUNCATION_MESSAGE)
            outputs = scorer(self.checkpoint, texts, batch_size, self.threshold if spans else None)
            for chunk, output in zip(chunks, outputs, strict=True):
                probabilities[chunk] = output.probabilities
                if output.ref_index is None:
                    raise ValueError(
                        "the scorer did not say which reference each pair was read against"
                    )
                naming[chunk] = output.ref_index
                if self.criteria:
                    ratings[chunk] = output.ratings
                if spans:
                    tagged, count = self._spans(output, refs, gens, chunk)
                    for i, pair in zip(chunk, tagged, strict=True):
                        found[i] = pair
                    past_reach += count
                advance(len(chunk))
        predictions = [
            self._prediction(ids[i], probabilities[i], ratings[i], int(naming[i]), found[i])
            for i in range(n)
        ]
        return predictions, past_reach

    def _spans(
        self,
        output: PairOutputs,
        refs: list[str | list[str]],
        gens: Sequence[str],
        chunk: list[int],
    ) -> tuple[list[tuple[list[dict], list[dict]]], int]:
        """(spans, missing) of each pair of a chunk: none when the pair reads as correct (the
        scorer tagged only the pairs read as errors); and how many tagged pairs have a gen or
        a naming reference that goes on past the tagger's last wordpiece."""
        gen_probs, ref_probs = output.gen_token_probs, output.ref_token_probs
        gen_offsets, ref_offsets = output.gen_token_offsets, output.ref_token_offsets
        if (
            gen_probs is None
            or ref_probs is None
            or gen_offsets is None
            or ref_offsets is None
            or output.ref_index is None
        ):
            raise ValueError("the scorer returned no span probabilities or token offsets")
        found: list[tuple[list[dict], list[dict]]] = [([], []) for _ in chunk]
        past_reach = 0
        for k, i in enumerate(chunk):
            gen_at, ref_at = gen_offsets[k], ref_offsets[k]
            gen_p, ref_p = gen_probs[k], ref_probs[k]
            if gen_p is None or ref_p is None or gen_at is None or ref_at is None:
                continue  # read as correct: not tagged
            index = int(output.ref_index[k])
            ref = _one_reference(refs[i], index)
            found[k] = pair_spans(
                gens[i], gen_at, gen_p, ref, ref_at, ref_p, index, output.probabilities[k]
            )
            past_reach += _past_reach(gens[i], gen_at) or _past_reach(ref, ref_at)
        return found, past_reach

    def _prediction(
        self,
        id_: str,
        probabilities: np.ndarray,
        raw: np.ndarray,
        ref_index: int,
        found: tuple[list[dict], list[dict]] | None,
    ) -> Prediction:
        pairs = list(zip(CODES, probabilities.tolist(), strict=True))
        mismatch = {code: round(p, ROUND_DIGITS) for code, p in pairs}
        over = sorted((-p, index) for index, (_, p) in enumerate(pairs) if p >= self.threshold)
        labels = [CODES[index] for _, index in over]
        return Prediction(
            id=id_,
            score=mismatch[CODES[0]],
            ratings=self._ratings(raw),
            mismatch=mismatch,
            labels=labels,
            ref_index=ref_index,
            spans=None if found is None else found[0],
            missing=None if found is None else found[1],
        )

    def _ratings(self, raw: np.ndarray) -> dict[str, float]:
        if not self.criteria:
            return {}
        normalised = normalised_outputs(raw, self.kind)
        values = (
            list(normalised)
            if self.kind == "classification"
            else [c.denormalise(float(v)) for c, v in zip(self.criteria, normalised, strict=True)]
        )
        return {
            c.key: round(float(v), ROUND_DIGITS) for c, v in zip(self.criteria, values, strict=True)
        }

    def _truncated_pairs(self, refs: list[str | list[str]], gens: Sequence[str]) -> tuple[int, int]:
        """The encoder's token limit and how many pairs have a text over it (it is cut)."""
        limit, over = _over_long_texts(self.checkpoint, [*gens, *_flat(refs)], str(self.device))
        count = sum(
            1
            for ref, gen in zip(refs, gens, strict=True)
            if gen in over or any(one in over for one in references(ref))
        )
        return limit, count


def _warn_truncated(count: int, total: int, limit: int, stacklevel: int) -> None:
    warnings.warn(
        f"{count} of {total} pair(s) have a text longer than the encoder's {limit} "
        "tokens; it was truncated, so its end is not evaluated",
        TruncationWarning,
        stacklevel=stacklevel + 1,
    )


def _warn_short_references(count: int, total: int, stacklevel: int) -> None:
    warnings.warn(
        f"{count} of {total} pair(s) have a reference of fewer than {SHORT_REFERENCE_WORDS} "
        "words; the model learned from sentences and may name errors in such pairs less "
        "reliably (a short answer, an emoji: docs/scoring.md, 'Short texts')",
        ShortReferenceWarning,
        stacklevel=stacklevel + 1,
    )


def _past_reach(text: str, offsets: np.ndarray) -> bool:
    """Whether ``text`` has a letter or digit past the last of the wordpieces the tagger read
    (their character offsets; it reads at most MAX_TOKENS): what the tokenizer drops (a
    combining accent, a zero-width space, a soft hyphen) follows a text of exactly
    MAX_TOKENS wordpieces too."""
    if len(offsets) < MAX_TOKENS:
        return False
    return any(character.isalnum() for character in text[int(offsets[-1][1]) :])


def _warn_past_reach(count: int, total: int, stacklevel: int) -> None:
    """Past the tagger's reach an error got no span, or one on a word both texts share."""
    warnings.warn(
        f"{count} of {total} pair(s) were tagged with spans on a text longer than the span "
        f"tagger's {MAX_TOKENS} wordpieces; their spans and missing words come from the first "
        f"{MAX_TOKENS} alone and may point at the wrong words",
        SpanReachWarning,
        stacklevel=stacklevel + 1,
    )


def score_locally(
    checkpoint: Checkpoint,
    chunks: list[Chunk],
    batch_size: int,
    spans_below: float | None,
) -> Iterator[PairOutputs]:
    """The model outputs of each (refs, gens, srcs) chunk, in this process."""
    for refs, gens, srcs in chunks:
        yield predict_outputs(checkpoint, refs, gens, batch_size, spans_below, srcs)


def _is_number(value: object) -> bool:
    """A real number (numpy's too), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _is_integer(value: object) -> bool:
    """An integer (numpy's too), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _checked_ids(ids: Iterable) -> list[str]:
    """ids as strings; each a non-empty string or an integer, none given twice (ValueError,
    TypeError)."""
    checked: dict[str, None] = {}
    for position, id_ in enumerate(ids):
        if not (isinstance(id_, str) or _is_integer(id_)):
            raise TypeError(f"ids[{position}] must be a string or an integer, got {id_!r}")
        if id_ == "":
            raise ValueError(f"ids[{position}] is empty; an id names its pair in the output")
        if str(id_) in checked:
            raise ValueError(f"id {str(id_)!r} is given to more than one pair")
        checked[str(id_)] = None
    return list(checked)


def _first_empty(references: Sequence[str]) -> int:
    return next(i for i, one in enumerate(references) if not has_text(one))


def _one_reference(ref: str | list[str], index: int) -> str:
    return ref if isinstance(ref, str) else ref[index]


def _flat(refs: list[str | list[str]]) -> list[str]:
    return [one for ref in refs for one in references(ref)]


def _length_key(ref: str | list[str], gen: str) -> tuple:
    """Sort key: similar lengths together, and pairs sharing a reference side by side."""
    texts = references(ref)
    return (sum(len(text) for text in texts), texts, len(gen))


def _over_long_texts(checkpoint: Checkpoint, texts: list[str], device: str) -> tuple[int, set[str]]:
    """The encoder's token limit and the distinct texts over it, counted as the encoder does
    (its copy on ``device``, the one predict's encoder pass loads)."""
    from evaluator.features.registry import COLUMN_TO_METRIC, is_encoder_metric

    config = checkpoint.model.config
    encoded_features = any(is_encoder_metric(COLUMN_TO_METRIC[n]) for n in config.feature_names)
    if not (config.use_text or encoded_features):
        return 0, set()
    from mismatch_core.resources import load_encoder

    tokenizer, encoder = load_encoder(config.encoder, device)
    limit = min(tokenizer.model_max_length, encoder.config.max_position_embeddings)
    distinct = list(dict.fromkeys(texts))
    ids = tokenizer([t.strip() for t in distinct], add_special_tokens=True, verbose=False)
    return limit, {t for t, row in zip(distinct, ids["input_ids"], strict=True) if len(row) > limit}


def _check_feature_layer(checkpoint: Checkpoint, device: str) -> None:
    """CheckpointError for a "features.num_layers" past the encoder's last layer, named when
    the evaluator is made: the encoder pass refused it at the first prediction, with a
    traceback. Only where the layer is set: it loads the encoder the predictions run."""
    layer = checkpoint.num_layers
    if layer is None:
        return
    from mismatch_core.resources import load_encoder

    name = checkpoint.model.config.encoder
    layers = load_encoder(name, device)[1].config.num_hidden_layers
    if layer > layers:
        raise CheckpointError(
            f'{checkpoint.path / CONFIG_FILE}: "features.num_layers" is {layer}; the encoder '
            f"{name!r} has {layers} layers"
        )


def _task_criteria(checkpoint: Checkpoint) -> tuple[str | None, list[Criterion]]:
    """The task kind and its criteria in rating-column order; checks they fit the model."""
    tasks = checkpoint.tasks
    num_ratings = checkpoint.model.config.num_ratings
    where = checkpoint.path / "config.json"
    problem = task_count_problem(tasks, num_ratings)
    if problem:
        raise CheckpointError(f"{where}: {problem}")
    if not tasks:
        return None, []
    ((name, task),) = tasks.items()
    try:
        kind = task["kind"]
        criteria = [
            Criterion(c["key"], c["key"], float(c["low"]), float(c["high"]))
            for c in task["criteria"]
        ]
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{where}: task {name!r} is malformed ({error!r})") from None
    if kind not in TASK_KINDS:
        raise CheckpointError(f"{where}: task {name!r} has kind {kind!r}, not one of {TASK_KINDS}")
    if len(criteria) != num_ratings:
        raise CheckpointError(
            f"{where}: task {name!r} names {len(criteria)} criteria but the model has "
            f"{num_ratings} rating output(s)"
        )
    return kind, criteria


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, unit="pair", file=sys.stderr, desc="predict")
