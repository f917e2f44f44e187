"""Train a checkpoint's span tagger on synthetic pairs whose rules recorded what they changed.

Every synthetic error pair knows its gold regions (``synth.spans.error_regions``): the
characters of gen its rule changed, and for an omission the characters of ref gen leaves out.
A wordpiece is labelled 1 when its characters overlap a gold region. Pairs built on a
reworded base teach that the rewording is no error (its tokens are 0), and NoContr pairs
label every token 0. Only the tagger learns; the rest of the checkpoint stays as it is, so
its mismatch judgement and ratings do not change. The token states come from a TokenStore
(one frozen encoder pass per text, kept on disk), as for the token-level branch.

Synthetic bases are the reference or a rewrite of it; real outputs differ from their
references far more. ``tagger_real_bases`` adds such bases: the highly rated outputs of the
human-rating groups that task fine-tuning trains on (never the bench's held-out groups), each
with every applicable error rule applied, and each also as itself (NoContr, no span).
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch.nn import functional

from evaluator.features.encoder_pass import tokenize
from evaluator.features.token_store import TokenStore, TokenTable, pair_tokens
from evaluator.hub import Checkpoint
from evaluator.model import MismatchModel
from evaluator.training.span_settings import SpanTraining
from mismatch_core.errors import DataError
from mismatch_core.pairs import detail_problem
from mismatch_core.resources import load_tokenizer
from synth.spans import Region, error_regions


@dataclass
class SpanExamples:
    """Pairs as token tables and labels: row i of ``ref``/``gen`` is pair i's text; labels per
    wordpiece (gen: part of the error; ref: left out by gen); ``ref_known`` False where the
    omitted words could not be placed in ref (its ref labels are not trained on)."""

    ref: TokenTable
    gen: TokenTable
    gen_labels: list[np.ndarray]
    ref_labels: list[np.ndarray]
    ref_known: np.ndarray
    labels: list[str]  # the pair's class

    def __len__(self) -> int:
        return len(self.labels)


def check_span_pairs(pairs: pd.DataFrame, path: Path) -> None:
    """Raise DataError naming the file, and for a bad row its number and id, unless every pair
    can be trained on: ``group`` chooses the held-out pairs, ``detail`` (a JSON object, its
    ``base_text`` a string) gives ``error_regions`` the rule's base, and the gold regions are
    placed in one reference. Checked before the slow encoder pass."""
    missing = [column for column in ("group", "detail") if column not in pairs.columns]
    if missing:
        raise DataError(f"{path} lacks column(s) {', '.join(missing)} (mismatch synth output)")
    rows = zip(pairs["id"], pairs["ref"], pairs["detail"], strict=True)
    for row, (pair_id, ref, detail) in enumerate(rows):
        where = f"{path}: row {row + 1} (id {pair_id!r})"
        if not isinstance(ref, str):
            raise DataError(
                f"{where}: ref is a list of references; placing error spans needs one "
                "reference string per pair"
            )
        problem = detail_problem(detail)
        if problem:
            raise DataError(f"{where}: detail {problem}")


def span_examples(pairs: pd.DataFrame, store: TokenStore, encoder: str) -> SpanExamples:
    """The labelled token tables of pairs (columns ref, gen, label, detail), synthetic or
    built on real bases (``tagger_real_bases``)."""
    tokenizer = load_tokenizer(encoder)
    limit = tokenizer.model_max_length
    refs, gens = pairs["ref"].tolist(), pairs["gen"].tolist()
    ref_offsets = tokenize(tokenizer, refs, limit, offsets=True).offsets
    gen_offsets = tokenize(tokenizer, gens, limit, offsets=True).offsets
    assert ref_offsets is not None and gen_offsets is not None
    ref_table, gen_table = store.table(refs), store.table(gens)
    gen_labels, ref_labels, known = [], [], []
    rows = zip(refs, gens, pairs["label"], pairs["detail"], ref_offsets, gen_offsets, strict=True)
    for index, (ref, gen, label, detail, ref_at, gen_at) in enumerate(rows):
        for side, table, offsets in (("ref", ref_table, ref_at), ("gen", gen_table, gen_at)):
            if int(table.lengths[index]) != len(offsets):
                raise ValueError(
                    f"pair {index}: {len(offsets)} wordpiece offsets for its {side} but "
                    f"{int(table.lengths[index])} token states; the store was built with "
                    "another encoder"
                )
        regions = error_regions(ref, gen, label, detail)
        gen_labels.append(overlap_labels(gen_at, regions.gen))
        ref_labels.append(overlap_labels(ref_at, regions.ref or []))
        known.append(regions.ref is not None)
    return SpanExamples(
        ref_table, gen_table, gen_labels, ref_labels, np.array(known), pairs["label"].tolist()
    )


def tagger_real_bases(human_dir: Path, seed: int) -> pd.DataFrame:
    """Span-training pairs on real outputs (columns ref, gen, label, detail, group): per highly
    rated output of the groups the bench does not hold out (``real_bases.untested_bases`` for
    seed 0 alone, the bench's partition), the output itself as NoContr and one pair per error
    rule that applies to it, its base recorded in ``detail`` so ``error_regions`` marks only
    what the rule changed. Groups carry their dataset's name. A record sharing a text with a
    held-out record of any dataset is left out, so the bench's texts stay unseen."""
    from evaluator.realtext_data import BENCH_SEED, perturb_bases
    from evaluator.training.real_bases import untested_bases

    records = untested_bases(human_dir, seeds=(BENCH_SEED,))
    refs = [record.ref for record in records]
    bases = [record.text for record in records]
    groups = [record.group for record in records]
    rows = [
        {"ref": ref, "gen": base, "label": "NoContr", "detail": "{}", "group": group}
        for ref, base, group in zip(refs, bases, groups, strict=True)
    ]
    for item in perturb_bases(refs, bases, groups, seed).items:
        rows.append(
            {
                "ref": refs[item.base],
                "gen": item.text,
                "label": item.code,
                "detail": json.dumps({"rule": item.rule, "base_text": bases[item.base]}),
                "group": groups[item.base],
            }
        )
    return pd.DataFrame(rows, columns=["ref", "gen", "label", "detail", "group"])


def overlap_labels(offsets: np.ndarray, regions: list[Region]) -> np.ndarray:
    """1.0 for each wordpiece whose characters overlap a region, else 0.0."""
    labels = np.zeros(len(offsets), dtype=np.float32)
    for start, end in regions:
        labels[(offsets[:, 0] < end) & (offsets[:, 1] > start)] = 1.0
    return labels


def with_span_tagger(checkpoint: Checkpoint, dim: int, seed: int) -> MismatchModel:
    """A copy of the checkpoint's model with a new, randomly initialised span tagger (one the
    checkpoint already has is not kept)."""
    torch.manual_seed(seed)
    config = replace(checkpoint.model.config, span_dim=dim)
    model = MismatchModel(config)
    state = {
        name: tensor
        for name, tensor in checkpoint.model.state_dict().items()
        if not name.startswith("span_tagger.")
    }
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not name.startswith("span_tagger.") for name in missing):
        raise ValueError(f"the checkpoint's weights do not fit: {unexpected or missing}")
    return model


def train_span_tagger(
    model: MismatchModel,
    train: SpanExamples,
    dev: SpanExamples,
    settings: SpanTraining,
    log=print,
) -> dict:
    """Fit ``model.span_tagger`` (only it) on ``train``, keeping the epoch with the lowest
    loss on ``dev``; the model ends with those weights. Returns the history. A dev loss that
    is not finite (the training diverged) ends the training at the best epoch before it
    (recorded as a dev loss of None); FloatingPointError when the first epoch already
    diverged."""
    if model.span_tagger is None:
        raise ValueError("the model has no span tagger")
    torch.manual_seed(settings.seed)
    generator = np.random.default_rng(settings.seed)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    tagger = model.span_tagger
    for parameter in tagger.parameters():
        parameter.requires_grad_(True)
    optimiser = torch.optim.AdamW(tagger.parameters(), lr=settings.learning_rate)
    best = (float("inf"), copy.deepcopy(tagger.state_dict()), 0)
    history = []
    for epoch in range(1, settings.epochs + 1):
        started = time.perf_counter()
        tagger.train()
        for batch in _batches(train, settings.batch_size, generator):
            loss = _loss(model, train, batch)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(tagger.parameters(), 1.0)
            optimiser.step()
        tagger.eval()
        with torch.no_grad():
            losses = [(float(_loss(model, dev, batch)), len(batch)) for batch in _batches(dev, 256)]
        dev_loss = sum(loss * n for loss, n in losses) / max(sum(n for _, n in losses), 1)
        seconds = time.perf_counter() - started
        if not math.isfinite(dev_loss):  # not a JSON number: recorded as None
            if not best[2]:  # no epoch to keep
                raise FloatingPointError(
                    f"span tagger epoch {epoch}: dev loss is {dev_loss}; the training diverged "
                    "(a lower learning rate may help)"
                )
            history.append({"epoch": epoch, "dev_loss": None, "seconds": round(seconds, 1)})
            log(
                f"span tagger epoch {epoch}: dev loss is {dev_loss}; diverged, keeping epoch {best[2]}"
            )
            break
        history.append(
            {"epoch": epoch, "dev_loss": round(dev_loss, 5), "seconds": round(seconds, 1)}
        )
        log(f"span tagger epoch {epoch}: dev loss {dev_loss:.4f} ({seconds:.0f} s)")
        if dev_loss < best[0]:
            best = (dev_loss, copy.deepcopy(tagger.state_dict()), epoch)
        elif epoch - best[2] >= settings.patience:
            break
    tagger.load_state_dict(best[1])
    tagger.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    # "dev_history", not "epochs": the training record holds the epochs setting beside it
    return {"dev_history": history, "best_epoch": best[2], "best_dev_loss": round(best[0], 5)}


def _batches(examples: SpanExamples, size: int, generator: np.random.Generator | None = None):
    """Batches of pairs of similar gen length (less padding); with a generator, the pairs are
    shuffled before the stable sort by length and the batches are drawn in a shuffled order."""
    order = np.arange(len(examples))
    if generator is not None:
        order = generator.permutation(order)
    by_length = order[np.argsort(examples.gen.lengths.numpy()[order], kind="stable")]
    batches = [by_length[start : start + size] for start in range(0, len(by_length), size)]
    if generator is not None:
        batches = [batches[index] for index in generator.permutation(len(batches))]
    return batches


def _loss(model: MismatchModel, examples: SpanExamples, rows: np.ndarray) -> torch.Tensor:
    """Mean token BCE over gen tokens plus over the ref tokens of pairs whose ref side is known."""
    tokens = pair_tokens(examples.ref, rows, examples.gen, rows)
    gen_logits, ref_logits = model.tag(tokens)
    gen_target = _padded([examples.gen_labels[i] for i in rows], gen_logits.shape[1])
    ref_target = _padded([examples.ref_labels[i] for i in rows], ref_logits.shape[1])
    ref_mask = tokens["ref_mask"] & torch.from_numpy(examples.ref_known[rows]).unsqueeze(1)
    gen_loss = functional.binary_cross_entropy_with_logits(
        gen_logits[tokens["gen_mask"]], gen_target[tokens["gen_mask"]]
    )
    if not ref_mask.any():
        return gen_loss
    ref_loss = functional.binary_cross_entropy_with_logits(
        ref_logits[ref_mask], ref_target[ref_mask]
    )
    return gen_loss + ref_loss


def _padded(labels: list[np.ndarray], width: int) -> torch.Tensor:
    out = np.zeros((len(labels), width), dtype=np.float32)
    for row, values in enumerate(labels):
        out[row, : len(values)] = values
    return torch.from_numpy(out)


def copy_span_tagger(source: Checkpoint, target: Checkpoint) -> MismatchModel:
    """The target's model with the source's trained span tagger; ValueError when the tagger
    would read other token states (another encoder or layer) or the source has none."""
    tagger = source.model.span_tagger
    if tagger is None:
        raise ValueError(f"{source.path} has no span tagger")
    for what, mine, theirs in (
        ("encoder", source.model.config.encoder, target.model.config.encoder),
        ("token layer", source.num_layers, target.num_layers),
    ):
        if mine != theirs:
            raise ValueError(
                f"{target.path} reads another {what} ({theirs!r}) than {source.path} ({mine!r})"
            )
    model = with_span_tagger(target, source.model.config.span_dim, seed=0)
    assert model.span_tagger is not None
    model.span_tagger.load_state_dict(tagger.state_dict())
    return model.eval()
