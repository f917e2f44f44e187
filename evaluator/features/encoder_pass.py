"""One encoder forward pass per distinct text, shared by BERTScore and the embedding cosine.

The pass reproduces `bert_score.score(cands, refs, model_type=<MiniLM dir>, num_layers=L)`
with idf off. (Characters the vocabulary lacks are rewritten first, where bert_score reads
each as an unknown word: `mismatch_core.vocabulary_gaps`, an emoji becomes a space, "℃"
becomes "°C".) As there, the text is stripped and tokenised with special tokens (bert_score's
`sent_encode`), truncated to the model limit, the hidden state of layer L is taken for every
token (CLS and SEP included, they can be matched but weigh 0), and a text without wordpieces
scores 0. The same pass gives the mean-pooled last-layer embedding (sentence-transformers
pooling: mean over all attended tokens), so each text is encoded once for both.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from evaluator.features.disfluency import load_detector
from evaluator.features.registry import EncoderMetric, register
from evaluator.features.token_store import MAX_TOKENS
from mismatch_core.errors import MismatchWarning
from mismatch_core.resources import DEFAULT_ENCODER, load_encoder, same_encoder

# Padded tokens per forward pass: 64 texts of up to 192 tokens. The pass's transient memory
# grows with the padded tokens (MiniLM on the CPU: +247 MB for 64 x 188, +586 MB for 64 x 512),
# so one over-long text would lift the peak of a whole run; longer texts go in fewer per batch.
MAX_BATCH_TOKENS = 64 * 192


@dataclass(frozen=True)
class EncodedText:
    """A text's unit-length token states at the BERTScore layer, their weights, its mean embedding."""

    tokens: torch.Tensor | None  # (length, dim), rows divided by their norm
    # (length,), 1 per wordpiece, 0 for CLS/SEP, summing to 1; all 0 for a text without one
    weights: torch.Tensor | None
    mean: np.ndarray  # (dim,) float32, mean-pooled last layer
    # (kept wordpieces, 2) character offsets of the rows ``token_states`` keeps (Tokenized)
    offsets: np.ndarray | None = None
    # the disfluency detector's logit for the text (``keep_disfluency``): > 0 reads as broken
    disfluency: float | None = None

    @property
    def empty(self) -> bool:
        """True when the text has no wordpiece besides CLS and SEP: an empty text, or one that is
        special tokens alone ("[SEP]", which the tokenizer reads as SEP); bert_score scores
        it 0."""
        return self.weights is not None and not bool(self.weights.any())

    def states(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(tokens, weights); ValueError when the text was encoded without them."""
        if self.tokens is None or self.weights is None:
            raise ValueError("token states need an encoding with keep_tokens=True")
        return self.tokens, self.weights


@dataclass(frozen=True)
class Tokenized:
    """Texts as the encoder reads them (bert_score's `sent_encode`)."""

    ids: list[list[int]]  # wordpiece ids with CLS and SEP, cut to the encoder's limit
    truncated: int  # how many texts were over the limit
    # when asked for, per text, (wordpieces, 2) character offsets into the text as given of the
    # wordpieces the token states keep (``token_states``: CLS, SEP and a literal
    # "[CLS]"/"[SEP]" dropped, the first MAX_TOKENS): where a per-token score sits in the text
    offsets: list[np.ndarray] | None = None


def tokenize(tokenizer, texts: Sequence[str], max_length: int, offsets: bool = False) -> Tokenized:
    """Wordpiece ids as bert_score's `sent_encode` gives them; ``offsets``: also the kept
    wordpieces' character offsets (error spans need them; the scores do not)."""
    stripped = [text.strip() for text in texts]
    encoded = tokenizer(
        stripped, add_special_tokens=True, return_offsets_mapping=offsets, verbose=False
    )
    ids, truncated = [], 0
    for row in encoded["input_ids"]:
        if len(row) > max_length:
            row = row[: max_length - 1] + [tokenizer.sep_token_id]
            truncated += 1
        ids.append(row)
    if not offsets:
        return Tokenized(ids, truncated)
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id}
    kept_offsets = []
    rows = zip(texts, stripped, ids, encoded["offset_mapping"], strict=True)
    for text, clean, row, at in rows:
        shift = len(text) - len(text.lstrip()) if clean else 0
        kept = [
            place for token, place in zip(row, at[: len(row)], strict=True) if token not in special
        ]
        kept_offsets.append(np.asarray(kept[:MAX_TOKENS], dtype=np.int64).reshape(-1, 2) + shift)
    return Tokenized(ids, truncated, kept_offsets)


def length_batches(lengths: Sequence[int], batch_size: int, max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut into batches of at most ``batch_size`` texts and at most
    ``max_tokens`` padded tokens (a single longer text makes a batch of its own)."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if batch and (len(batch) == batch_size or (len(batch) + 1) * lengths[index] > max_tokens):
            batches.append(batch)
            batch = []
        batch.append(index)
    if batch:
        batches.append(batch)
    return batches


def padded_ids(rows: Sequence[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Wordpiece id rows as one (rows, longest) batch padded with ``pad_id``, and its attention
    mask (1 = a wordpiece)."""
    input_ids = torch.full((len(rows), max(len(row) for row in rows)), pad_id)
    mask = torch.zeros_like(input_ids)
    for index, row in enumerate(rows):
        input_ids[index, : len(row)] = torch.tensor(row)
        mask[index, : len(row)] = 1
    return input_ids, mask


def encode_distinct(
    texts: Sequence[str],
    encoder: str = DEFAULT_ENCODER,
    batch_size: int = 64,
    num_layers: int | None = None,
    keep_tokens: bool = True,
    keep_offsets: bool = False,
    keep_disfluency: bool = False,
    device: str = "cpu",
) -> dict[str, EncodedText]:
    """Encode each distinct text once in length-sorted batches (``length_batches``); text ->
    EncodedText.

    `num_layers` picks the BERTScore layer (None: the last). Texts over the encoder limit
    are truncated, with one warning that counts them. ``keep_offsets`` (with ``keep_tokens``):
    also the character offsets of the kept token states (``Tokenized.offsets``).
    ``keep_disfluency``: also the disfluency detector's logit per text, from the same pass.
    ``device``: where the encoder runs (a torch device name); what it gives back is on the CPU
    (the detector, a few convolutions, reads the states there).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    detector = load_detector() if keep_disfluency else None
    if detector is not None and not same_encoder(detector.encoder, encoder):
        raise ValueError(
            f"the disfluency detector was trained on {detector.encoder!r} token states; "
            f"this pass runs {encoder!r}"
        )
    tokenizer, model = load_encoder(encoder, device)
    layer = model.config.num_hidden_layers if num_layers is None else num_layers
    if not 0 <= layer <= model.config.num_hidden_layers:
        raise ValueError(
            f"num_layers must be in 0..{model.config.num_hidden_layers} for {encoder!r}, got {layer}"
        )
    distinct = list(dict.fromkeys(texts))
    max_length = min(tokenizer.model_max_length, model.config.max_position_embeddings)
    tokenized = tokenize(tokenizer, distinct, max_length, offsets=keep_tokens and keep_offsets)
    ids, truncated = tokenized.ids, tokenized.truncated
    if truncated:
        warnings.warn(
            f"{truncated} text(s) longer than {max_length} tokens were truncated for {encoder!r}",
            MismatchWarning,
            stacklevel=2,
        )
    if detector is not None and (
        detector.layer > model.config.num_hidden_layers
        or detector.norm.normalized_shape[0] != model.config.hidden_size
    ):
        raise ValueError(
            f"the disfluency detector reads layer {detector.layer} of width "
            f"{detector.norm.normalized_shape[0]}; {encoder!r} has "
            f"{model.config.num_hidden_layers} layers of width {model.config.hidden_size}"
        )
    special = torch.tensor([tokenizer.cls_token_id, tokenizer.sep_token_id])
    result: dict[str, EncodedText] = {}
    for batch in length_batches([len(row) for row in ids], batch_size, MAX_BATCH_TOKENS):
        lengths = [len(ids[index]) for index in batch]
        input_ids, mask = padded_ids([ids[index] for index in batch], tokenizer.pad_token_id)
        with torch.inference_mode():
            on_device = mask.to(device)
            output = model(
                input_ids=input_ids.to(device),
                attention_mask=on_device,
                output_hidden_states=detector is not None
                or (keep_tokens and layer != model.config.num_hidden_layers),
            )
            logits = (
                detector(output.hidden_states[detector.layer].cpu(), mask.bool()).tolist()
                if detector is not None
                else None
            )
        last = output.last_hidden_state  # only what is kept comes back from a GPU
        total = (last * on_device.unsqueeze(-1)).sum(1)
        pooled = (total / on_device.sum(1, keepdim=True).clamp(min=1e-9)).cpu()
        if keep_tokens:
            states = (output.hidden_states[layer] if output.hidden_states else last).cpu()
        for row, index in enumerate(batch):
            tokens = weights = offsets = None
            if tokenized.offsets is not None:
                offsets = tokenized.offsets[index]
            if keep_tokens:
                tokens = states[row, : lengths[row]].clone()
                tokens.div_(torch.norm(tokens, dim=-1).unsqueeze(-1))
                weights = (~torch.isin(input_ids[row, : lengths[row]], special)).float()
                weights.div_(weights.sum().clamp(min=1.0))  # all 0 when the text is empty
            result[distinct[index]] = EncodedText(
                tokens,
                weights,
                pooled[row].numpy().copy(),
                offsets,
                None if logits is None else float(logits[row]),
            )
    return result


def alignment_vector(ref: EncodedText, gen: EncodedText) -> np.ndarray:
    """What each side says that the other does not: (2 * dim,) float32.

    The first half sums the reference's token states weighted by how badly the generated text
    covers them (1 - best cosine, times the token weight); the second half does the same for
    the generated text against the reference. A copy gives zeros; a changed number or name
    gives roughly that token's state on both sides. BERTScore keeps only the scalar
    coverage; the vectors keep *what* is uncovered, which is what names the error type.
    """
    (ref_tokens, ref_weights), (gen_tokens, gen_weights) = ref.states(), gen.states()
    if ref.empty or gen.empty:
        return np.zeros(2 * ref.mean.shape[0], dtype=np.float32)
    similarity = gen_tokens @ ref_tokens.T
    ref_gap = ref_weights * (1 - similarity.max(dim=0).values).clamp(min=0)
    gen_gap = gen_weights * (1 - similarity.max(dim=1).values).clamp(min=0)
    return torch.cat([ref_gap @ ref_tokens, gen_gap @ gen_tokens]).numpy().astype(np.float32)


def token_states(text: EncodedText) -> np.ndarray:
    """The text's wordpiece states (CLS and SEP dropped, at most ``MAX_TOKENS``) as float16
    (length, dim): what the token-level branch of the model reads (see token_store)."""
    tokens, weights = text.states()
    kept = tokens[weights > 0][:MAX_TOKENS]
    return kept.numpy().astype(np.float16)


def token_offsets(text: EncodedText) -> np.ndarray:
    """The (start, end) characters in the text of each row ``token_states`` gives."""
    if text.offsets is None:
        raise ValueError("token offsets need an encoding with keep_offsets=True")
    return text.offsets


def encoder_device(root: torch.device | None) -> str:
    """Where a data module whose trainer runs on ``root`` (None: no trainer) runs the encoder
    pass: that GPU, else the CPU (an `auto` accelerator may pick Apple's MPS, which the pass
    does not take)."""
    return str(root) if root is not None and root.type == "cuda" else "cpu"


def encode_texts(
    texts: list[str], encoder: str = DEFAULT_ENCODER, batch_size: int = 64, device: str = "cpu"
) -> np.ndarray:
    """Mean-pooled float32 embeddings (n, dim), each distinct text encoded once (the encoder on
    ``device``)."""
    encoded = encode_distinct(texts, encoder, batch_size, keep_tokens=False, device=device)
    if not texts:
        _, model = load_encoder(encoder, device)
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    return np.stack([encoded[text].mean for text in texts]).astype(np.float32, copy=False)


@register
class BertScore(EncoderMetric):
    """BERTScore P/R/F (idf off, no baseline rescaling) from the shared encoder pass."""

    name = "bertscore"
    version = 1
    columns = ("bertscore_p", "bertscore_r", "bertscore_f")

    def compute(self, refs: Sequence[EncodedText], gens: Sequence[EncodedText]) -> np.ndarray:
        scores = np.zeros((len(refs), 3), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            (ref_tokens, ref_weights), (gen_tokens, gen_weights) = ref.states(), gen.states()
            if ref.empty or gen.empty:
                continue
            similarity = gen_tokens @ ref_tokens.T
            precision = (similarity.max(dim=1).values * gen_weights).sum().item()
            recall = (similarity.max(dim=0).values * ref_weights).sum().item()
            total = precision + recall
            scores[row] = precision, recall, 2 * precision * recall / total if total else 0.0
        return scores


@register
class EmbedCos(EncoderMetric):
    """Cosine of the mean-pooled embeddings (0 when either has zero norm)."""

    name = "embed_cos"
    version = 1
    columns = ("embed_cos",)

    def compute(self, refs: Sequence[EncodedText], gens: Sequence[EncodedText]) -> np.ndarray:
        scores = np.zeros((len(refs), 1), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            a, b = ref.mean.astype(np.float64), gen.mean.astype(np.float64)
            norms = np.linalg.norm(a) * np.linalg.norm(b)
            scores[row, 0] = float(a @ b / norms) if norms > 0 else 0.0
        return scores


@register
class Disfluency(EncoderMetric):
    """How much more broken gen reads than the reference: the disfluency detector's logit for
    gen minus the reference's (``evaluator.features.disfluency``)."""

    name = "disfluency"
    needs_disfluency = True
    version = 3  # the cache key also holds the detector's digest (compute.feature_versions)
    columns = ("disfluency",)

    def compute(self, refs: Sequence[EncodedText], gens: Sequence[EncodedText]) -> np.ndarray:
        scores = np.zeros((len(refs), 1), dtype=np.float64)
        for row, (ref, gen) in enumerate(zip(refs, gens, strict=True)):
            if ref.disfluency is None or gen.disfluency is None:
                raise ValueError("the disfluency feature needs an encoding with keep_disfluency")
            scores[row, 0] = gen.disfluency - ref.disfluency
        return scores
