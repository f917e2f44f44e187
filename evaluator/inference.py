"""Model outputs for raw texts from a loaded checkpoint (features + embeddings computed here).

Several references per pair: the pair is read against each reference on its own (that
reference's metric features, text, alignment and tokens). The reading the head finds
likeliest NoContr gives the score and the ratings (those of a model with
``ratings_read_all_references`` read each metric's value that reads closest over all
references, ``over_references``): the output says what some reference says. The model's
``deciding_reference`` rule (``reading_rows``) says which reference names the errors, the
classes, spans and ``ref_index``: the likeliest one, or the reference closest on the metrics
where both readings score as errors, so that an error is not named against an unrelated
reference. The likeliness is the head's P(NoContr) alone, without the term of
``head_only_features``: those columns refine the errors, not which reading gives the
ratings, so a task's ratings stay what they were fitted as. Aggregating the features over
all references first would let a far reference's values enter each reading (an exact copy
next to a negated reference read as an error). A pair with one reference costs exactly one
reading. A model with a span tagger also scores every wordpiece of gen and of the naming
reference (``evaluator.spans`` turns the scores into spans). A
task model whose ratings read the source (``MismatchConfig.source_features``) also scores gen
against each pair's source with those metrics; every pair then needs one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from evaluator.features import compute_features, encode_texts, pair_key, text_key
from evaluator.features.compute import check_pairs
from evaluator.features.encoder_pass import length_batches
from evaluator.features.registry import CLOSER
from evaluator.features.token_store import TokenTable, pair_tokens
from evaluator.hub import Checkpoint
from evaluator.malloc import heap_allocations
from evaluator.model.mismatch_model import (
    DECIDING_REFERENCES,
    NO_CONTRADICTION,
    READS_NOCONTR,
    MismatchConfig,
)
from mismatch_core.pairs import first_without_source, references

# span tagging batches (token_probabilities): pairs, and padded tokens a side; independent of
# predict's batch_size, as the tagger's inputs are small (at most MAX_TOKENS states a text)
TAG_BATCH_PAIRS = 256
TAG_BATCH_TOKENS = 256 * 32


# what a scorer scores at once: (refs, gens, srcs) of some pairs (evaluator.evaluator)
Chunk = tuple[list, list[str], list[str | None]]


@dataclass
class PairOutputs:
    """Per pair: mismatch-class probabilities, for a fine-tuned model raw rating outputs, and
    the unscaled metric features the model read (callers that report the metrics themselves
    need not compute them again)."""

    probabilities: np.ndarray  # (n, num_classes), taxonomy order; column 0 (NoContr) is the score
    ratings: np.ndarray | None  # (n, num_ratings) as ``MismatchModel.rate`` returns them
    # (n, checkpoint feature names), of the reference that names the errors; None: the model
    # reads none
    features: pd.DataFrame | None = None
    # per pair, which of its references names its errors (0 for a single reference)
    ref_index: np.ndarray | None = None
    # per pair, the span tagger's probabilities for the wordpieces of gen (part of an error)
    # and of the naming reference (left out by gen), None for a pair read as correct; the
    # lists are None when spans were not asked for or the model has no tagger; the offsets
    # are those wordpieces' (start, end) characters in the text (encoder_pass.Tokenized)
    gen_token_probs: list[np.ndarray | None] | None = None
    ref_token_probs: list[np.ndarray | None] | None = None
    gen_token_offsets: list[np.ndarray | None] | None = None
    ref_token_offsets: list[np.ndarray | None] | None = None


def predict_proba(
    checkpoint: Checkpoint,
    refs: Sequence[str | Sequence[str]],
    gens: Sequence[str],
    batch_size: int = 64,
) -> np.ndarray:
    """Probabilities (n, num_classes) in taxonomy order; column 0 (NoContr) is the score."""
    return predict_outputs(checkpoint, refs, gens, batch_size).probabilities


def predict_outputs(
    checkpoint: Checkpoint,
    refs: Sequence[str | Sequence[str]],
    gens: Sequence[str],
    batch_size: int = 64,
    spans_below: float | None = None,
    srcs: Sequence[str | None] | None = None,
) -> PairOutputs:
    """Class probabilities and rating outputs, each pair read against its references as
    ``reading_rows`` picks them; with ``ratings_read_all_references`` the ratings read every
    reference.
    ``spans_below``: also the span tagger's wordpiece probabilities (when the model has one)
    for each pair whose P(NoContr) is below it, the pairs that will show spans.
    ``srcs``: each pair's source, read when the ratings read it (ValueError naming the first
    pair without one). The encoder pass runs on the model's device."""
    model = checkpoint.model.eval()
    config = model.config
    device = model_device(model)
    check_pairs(refs, gens)
    source = source_scores(checkpoint, gens, srcs, device)
    tag = spans_below is not None and model.span_tagger is not None
    if not gens:
        return PairOutputs(
            np.zeros((0, config.num_classes), dtype=np.float32),
            np.zeros((0, config.num_ratings), dtype=np.float32) if config.num_ratings else None,
            ref_index=np.zeros(0, dtype=np.int64),
            gen_token_probs=[] if tag else None,
            ref_token_probs=[] if tag else None,
            gen_token_offsets=[] if tag else None,
            ref_token_offsets=[] if tag else None,
        )
    # one row per (pair, reference): every reading sees one reference only
    owner = [i for i, ref in enumerate(refs) for _ in references(ref)]
    flat_refs = [one for ref in refs for one in references(ref)]
    flat_gens = [gens[i] for i in owner]
    embeddings: dict[str, np.ndarray] = {}
    alignments: dict[str, np.ndarray] | None = {} if config.use_alignment else None
    tokens: dict[str, np.ndarray] | None = {} if config.use_tokens or tag else None
    offsets: dict[str, np.ndarray] | None = {} if tag else None
    features = None
    if config.use_metrics or config.use_alignment or tokens is not None:
        frame = compute_features(
            flat_refs,
            flat_gens,
            names=config.feature_names if config.use_metrics else [],
            encoder=config.encoder,
            batch_size=batch_size,
            embeddings_out=embeddings,
            num_layers=checkpoint.num_layers,
            alignments_out=alignments,
            tokens_out=tokens,
            offsets_out=offsets,
            device=device,
        )
        if config.use_metrics:
            features = torch.from_numpy(checkpoint.scaler.transform(frame))
    rating_features = None if model.rating_head is None else features
    if rating_features is not None and config.ratings_read_all_references:
        rating_features = torch.from_numpy(
            over_references(
                rating_features.numpy(),
                np.asarray(owner),
                config.feature_names,
                config.reference_aggregate,
            )
        )
    text_inputs = _text_inputs(checkpoint, flat_refs, flat_gens, embeddings, batch_size, device)
    alignment = None
    if alignments is not None:
        keys = [pair_key(ref, gen) for ref, gen in zip(flat_refs, flat_gens, strict=True)]
        alignment = torch.from_numpy(np.stack([alignments[key] for key in keys]))
    token_tables = None
    if config.use_tokens and tokens is not None:
        token_tables = {
            side: TokenTable([tokens[text_key(t)] for t in texts], config.embedding_dim)
            for side, texts in (("ref", flat_refs), ("gen", flat_gens))
        }
    pair_rows = torch.arange(len(owner))  # row i of both token tables is flat pair i
    probabilities, closeness, ratings = [], [], []
    with torch.no_grad():
        for start in range(0, len(owner), batch_size):
            rows = slice(start, start + batch_size)
            ref, gen = text_inputs(rows)
            pair_features = None if features is None else features[rows].to(device)
            representation = model.represent(
                features=pair_features,
                ref=_to(ref, device),
                gen=_to(gen, device),
                alignment=None if alignment is None else alignment[rows].to(device),
                tokens=None
                if token_tables is None
                else _to(
                    pair_tokens(
                        token_tables["ref"], pair_rows[rows], token_tables["gen"], pair_rows[rows]
                    ),
                    device,
                ),
            )
            rating_rows = None if rating_features is None else rating_features[rows].to(device)
            source_rows = None if source is None else source[owner[rows]].to(device)
            logits, closer, rated = model.read_heads(
                representation, pair_features, rating_rows, source_rows
            )
            probabilities.append(logits.float().softmax(dim=-1).cpu())
            closeness.append(closer.cpu())
            if rated is not None:
                ratings.append(rated.float().cpu())
    chosen, pair_probs, pair_ratings = pair_readings(
        config,
        torch.cat(probabilities).numpy(),
        torch.cat(closeness).numpy(),
        torch.cat(ratings).numpy() if ratings else None,
        None if features is None else features.numpy(),
        np.asarray(owner),
        len(gens),
    )
    if config.use_metrics and len(owner) > len(gens):  # the naming reference's features
        frame = frame.iloc[chosen.naming].reset_index(drop=True)
    first_row = np.searchsorted(np.asarray(owner), np.arange(len(gens)))
    outputs = PairOutputs(
        pair_probs,
        pair_ratings,
        frame if config.use_metrics else None,
        ref_index=chosen.naming - first_row,
    )
    if tag and tokens is not None and offsets is not None:
        wrong = np.flatnonzero(outputs.probabilities[:, NO_CONTRADICTION] < spans_below).tolist()
        naming = [flat_refs[chosen.naming[i]] for i in wrong]
        gen_probs, ref_probs = token_probabilities(model, tokens, naming, [gens[i] for i in wrong])
        n = len(gens)
        gen_side: list[np.ndarray | None] = [None] * n
        ref_side: list[np.ndarray | None] = [None] * n
        gen_at: list[np.ndarray | None] = [None] * n
        ref_at: list[np.ndarray | None] = [None] * n
        for k, i in enumerate(wrong):
            gen_side[i], ref_side[i] = gen_probs[k], ref_probs[k]
            gen_at[i], ref_at[i] = offsets[text_key(gens[i])], offsets[text_key(naming[k])]
        outputs.gen_token_probs, outputs.ref_token_probs = gen_side, ref_side
        outputs.gen_token_offsets, outputs.ref_token_offsets = gen_at, ref_at
    return outputs


def source_scores(
    checkpoint: Checkpoint,
    gens: Sequence[str],
    srcs: Sequence[str | None] | None,
    device: str,
) -> torch.Tensor | None:
    """The raw source metric scores (pairs, len(source_features)) of a model whose ratings read
    them, else None (an encoder metric among them runs on ``device``); ValueError names the
    first pair without a source."""
    names = checkpoint.model.config.source_features
    if not names or not gens:
        return None
    if srcs is not None and len(srcs) != len(gens):
        raise ValueError(f"{len(srcs)} srcs but {len(gens)} generated texts")
    missing = first_without_source(srcs, len(gens))
    if missing is not None or srcs is None:
        raise ValueError(
            f"pair {missing} has no src: this checkpoint's ratings read each output against "
            f"its source ({', '.join(names)})"
        )
    frame = compute_features(
        [str(src) for src in srcs],
        list(gens),
        names=names,
        encoder=checkpoint.model.config.encoder,
        device=device,
    )
    return torch.tensor(frame[names].to_numpy(dtype=np.float32))


def token_probabilities(
    model, tokens: dict[str, np.ndarray], refs: list[str], gens: list[str]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The span tagger's probabilities per wordpiece of each gen and each ref (pair i: refs[i]
    against gens[i]), from the texts' token states. Pairs go in batches of similar length
    (the longer side), up to ``TAG_BATCH_PAIRS`` pairs and ``TAG_BATCH_TOKENS`` padded tokens a
    side: the tagger's many small steps cost less in fewer, larger batches. Its arrays come
    from the heap (``heap_allocations``): mapped one by one, their page zeroing doubled its
    time."""
    dim = model.config.embedding_dim
    ref_states = [tokens[text_key(t)] for t in refs]
    gen_states = [tokens[text_key(t)] for t in gens]
    device = model_device(model)
    gen_probs: list[np.ndarray] = [np.zeros(0, np.float32)] * len(gens)
    ref_probs: list[np.ndarray] = [np.zeros(0, np.float32)] * len(gens)
    longer = [max(len(r), len(g)) for r, g in zip(ref_states, gen_states, strict=True)]
    with torch.no_grad(), heap_allocations():
        for batch_rows in length_batches(longer, TAG_BATCH_PAIRS, TAG_BATCH_TOKENS):
            # tables of this batch only: one table of every text costs more than the batches
            ref_table = TokenTable([ref_states[row] for row in batch_rows], dim)
            gen_table = TokenTable([gen_states[row] for row in batch_rows], dim)
            rows = torch.arange(len(batch_rows))
            batch = _to(pair_tokens(ref_table, rows, gen_table, rows), device)
            gen_logits, ref_logits = model.tag(batch)
            for logits, mask, out in (
                (gen_logits, batch["gen_mask"], gen_probs),
                (ref_logits, batch["ref_mask"], ref_probs),
            ):
                values = logits.float().sigmoid().cpu().numpy()
                lengths = mask.sum(dim=1).cpu().numpy()
                for k, row in enumerate(batch_rows):
                    out[row] = values[k, : lengths[k]].copy()
    return gen_probs, ref_probs


def _text_inputs(
    checkpoint: Checkpoint,
    refs: list[str],
    gens: list[str],
    embeddings: dict,
    batch_size: int,
    device: str,
) -> Callable[[slice], tuple[Any, Any]]:
    """A function rows -> (ref, gen) model inputs: embeddings when frozen, token ids when trainable."""
    config = checkpoint.model.config
    if not config.use_text:
        return lambda rows: (None, None)
    if config.encoder_mode == "trainable":
        from mismatch_core.resources import load_tokenizer

        tokenizer = load_tokenizer(config.encoder)

        def tokens(texts: list[str]) -> dict:
            return dict(tokenizer(texts, padding=True, truncation=True, return_tensors="pt"))

        return lambda rows: (tokens(refs[rows]), tokens(gens[rows]))
    missing = sorted({t for t in refs + gens if text_key(t) not in embeddings})
    if missing:
        vectors = encode_texts(
            missing, encoder=config.encoder, batch_size=batch_size, device=device
        )
        embeddings.update({text_key(t): v for t, v in zip(missing, vectors, strict=True)})
    ref_table = torch.from_numpy(
        np.stack([embeddings[text_key(t)] for t in refs]).astype(np.float32)
    )
    gen_table = torch.from_numpy(
        np.stack([embeddings[text_key(t)] for t in gens]).astype(np.float32)
    )
    return lambda rows: (ref_table[rows], gen_table[rows])


def model_device(model: torch.nn.Module) -> str:
    """The torch device name of the model's weights: where predict runs the encoder pass too."""
    return str(next(model.parameters()).device)


def _to(value, device: str):
    if value is None or isinstance(value, torch.Tensor):
        return None if value is None else value.to(device)
    return {key: tensor.to(device) for key, tensor in value.items()}


def over_references(
    features: np.ndarray,
    owner: np.ndarray,
    names: Sequence[str],
    aggregate: str,
    scaled: np.ndarray | None = None,
) -> np.ndarray:
    """Per (pair, reference) row, each feature combined over the rows of its pair (``owner``:
    the pair of each row), what a model with ``ratings_read_all_references`` rates from
    (``MismatchConfig.reference_aggregate``).

    "best" (``registry.CLOSER``): a similarity's max and a distance's min over the references,
    so each reference adds its evidence of closeness; every other column (the kind of
    difference: agreement, changed words, repetition; a ratio) at the reference that reads
    closest, the highest sum of the closeness columns, each signed by its direction, of the
    scaled features (``scaled``, where ``features`` are raw scores: the metric baselines). An
    exact copy of one reference so reads as that copy whatever references come beside it, and
    an unrelated reference does not wipe out what these columns find against a close one.
    "max": each
    feature's max, as checkpoints fitted before 2026-12-02 read them: a far reference raised
    the distance and novelty columns, so an exact copy of one reference with another beside it
    rated below the copy alone. The scaler is non-decreasing per feature, so a max or a min
    reads the raw scores as the scaled ones."""
    owner = np.asarray(owner)
    if aggregate == "max":
        combined = pd.DataFrame(features).groupby(owner).transform("max")
        return combined.to_numpy(dtype=features.dtype, copy=True)  # writable: torch.from_numpy
    if aggregate != "best":
        raise ValueError(f'reference aggregate must be "best" or "max", got {aggregate!r}')
    direction = closeness_directions(names).astype(features.dtype)
    signed = pd.DataFrame(features * direction).groupby(owner).transform("max")
    combined = signed.to_numpy(dtype=features.dtype) * direction
    neither = direction == 0
    if neither.any():
        pairs, rows_of_pair = np.unique(owner, return_inverse=True)
        closeness = metric_closeness(features if scaled is None else scaled, names)
        closest = closest_rows(closeness, rows_of_pair, len(pairs))
        combined[:, neither] = features[closest[rows_of_pair]][:, neither]
    return combined


def closeness_directions(names: Sequence[str]) -> np.ndarray:
    """Per column, +1 a similarity, -1 a distance, 0 neither (``registry.CLOSER``)."""
    return np.array([CLOSER[name] for name in names], dtype=np.float64)


def metric_closeness(scaled: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """Per row, how close gen reads to that row's reference on the metrics: the sum of the
    scaled closeness columns, each signed by its direction."""
    return scaled @ closeness_directions(names).astype(scaled.dtype)


@dataclass(frozen=True)
class ReadingRows:
    """Per pair, the rows (one per (pair, reference)) whose readings it reports."""

    scoring: np.ndarray  # the likeliest reading: P(NoContr) and the ratings
    naming: np.ndarray  # the reference that names the errors: classes, spans, ref_index


def reading_rows(
    rule: str,
    likeliness: np.ndarray,
    scores: np.ndarray,
    scaled: np.ndarray | None,
    names: Sequence[str],
    owner: np.ndarray,
    n: int,
) -> ReadingRows:
    """Per pair, which readings give its outputs (``MismatchConfig.deciding_reference``). The
    score and the ratings: always the row of highest ``likeliness`` (the head's P(NoContr)
    without the ``head_only_features`` term, so that a base gains such a column without a
    task's ratings moving), since a pair is correct when it says what some reference says.
    The errors: that row too under "likeliest"; under "likeliest_errors_closest", the row
    closest on the metrics (``scaled``, the scaled features) where both that row and the
    likeliest read as errors by their ``scores`` (the P(NoContr) predict reports, below
    READS_NOCONTR), so that an output wrong against every reference has its error named
    against the one it is near. Beside an unrelated reference, a negated copy was labelled
    MissInfo (the unrelated reading was likelier by 0.001) instead of NegErr. The score stays
    the likeliest's: taken from the closest reference it lost 10 of the base's 14 SummEval
    stress tests, as a summary reads as an error against every crowd summary and the closest
    one moves with each edit (docs/experiments/2026-12-02-deciding-reference)."""
    likeliest = closest_rows(likeliness, owner, n)
    if rule == "likeliest":
        return ReadingRows(likeliest, likeliest)
    if rule != "likeliest_errors_closest":
        raise ValueError(f"deciding reference must be one of {DECIDING_REFERENCES}, got {rule!r}")
    if scaled is None:
        raise ValueError(f"deciding reference {rule!r} reads the metric features; none given")
    closest = closest_rows(metric_closeness(scaled, names), owner, n)
    wrong = (scores[likeliest] < READS_NOCONTR) & (scores[closest] < READS_NOCONTR)
    return ReadingRows(likeliest, np.where(wrong, closest, likeliest))


def pair_probabilities(flat: np.ndarray, rows: ReadingRows) -> np.ndarray:
    """Per pair, its class probabilities from the readings ``flat`` (one row per (pair,
    reference); NoContr in column 0): P(NoContr) of the scoring row, and the naming row's error
    classes sharing the rest in their own proportions (the naming row reads as an error, so
    its errors hold most of its mass); the naming row whole where the two rows are one."""
    probabilities = flat[rows.naming].copy()
    moved = rows.naming != rows.scoring
    score = flat[rows.scoring[moved], NO_CONTRADICTION]
    errors = probabilities[moved, NO_CONTRADICTION + 1 :]
    scale = (1.0 - score) / errors.sum(axis=1)
    probabilities[moved, NO_CONTRADICTION + 1 :] = errors * scale[:, None]
    probabilities[moved, NO_CONTRADICTION] = score
    return probabilities


def pair_readings(
    config: MismatchConfig,
    probabilities: np.ndarray,
    likeliness: np.ndarray,
    ratings: np.ndarray | None,
    scaled: np.ndarray | None,
    owner: np.ndarray,
    n: int,
) -> tuple[ReadingRows, np.ndarray, np.ndarray | None]:
    """From every (pair, reference) reading (``owner``: each row's pair) of a model with
    ``config``: the rows ``reading_rows`` picks, and per pair its class probabilities
    (``pair_probabilities``) and ratings (the scoring row's; None without). Predict and
    fine-tuning (``evaluator.finetune.outputs``) both read pairs with it."""
    chosen = reading_rows(
        config.deciding_reference,
        likeliness,
        probabilities[:, NO_CONTRADICTION],
        scaled,
        config.feature_names,
        owner,
        n,
    )
    pair_ratings = None if ratings is None else ratings[chosen.scoring]
    return chosen, pair_probabilities(probabilities, chosen), pair_ratings


def closest_rows(score: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Per pair, the index of its row (one per reference) with the highest score, the first on
    ties (``reading_rows`` picks with it, and ``over_references`` the reference closest on
    the metrics)."""
    order = np.lexsort((np.arange(len(owner)), -score, owner))
    first = np.ones(len(order), dtype=bool)
    first[1:] = owner[order][1:] != owner[order][:-1]
    best = order[first]
    if len(best) != n:
        raise ValueError(f"{n} pairs but references for {len(best)}")
    return best
