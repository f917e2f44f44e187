"""Reading this record's cross-encoders: class probabilities of (ref, gen) pairs in
length-sorted batches of 64 (`class_probabilities`; `model_probabilities` for a transformers
classifier), and a saved cross-encoder loaded for
reading P(same meaning), with the time it took (`CrossEncoder`; a subclass may run the model
another way by overriding ``logits``)."""

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from training import encoded
from transformers import AutoTokenizer, BertForSequenceClassification


@torch.no_grad()
def class_probabilities(
    logits_of: Callable[[dict], torch.Tensor | np.ndarray],
    tokenizer,
    refs: list[str],
    gens: list[str],
) -> np.ndarray:
    """(n, 3) class probabilities in the order given; ``logits_of`` reads a tokenized batch."""
    order = sorted(range(len(refs)), key=lambda i: len(refs[i]) + len(gens[i]))
    p = np.zeros((len(refs), 3), dtype=np.float32)
    for i in range(0, len(order), 64):
        chunk = order[i : i + 64]
        batch = encoded(tokenizer, [refs[j] for j in chunk], [gens[j] for j in chunk])
        p[chunk] = torch.softmax(torch.as_tensor(logits_of(batch)), -1).numpy()
    return p


def model_probabilities(
    model: torch.nn.Module, tokenizer, refs: list[str], gens: list[str]
) -> np.ndarray:
    """``class_probabilities`` of a transformers sequence classifier."""
    return class_probabilities(lambda batch: model(**batch).logits, tokenizer, refs, gens)


def quantized(model: torch.nn.Module) -> torch.nn.Module:
    """The model with its linear layers quantized to int8 (torch's dynamic quantization)."""
    return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


class CrossEncoder:
    def __init__(self, folder: Path, int8: bool = False) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(folder / "model")
        model = BertForSequenceClassification.from_pretrained(folder / "model").eval()
        self.model = quantized(model) if int8 else model
        self.seconds = 0.0

    def same_meaning(self, refs: list[str], gens: list[str]) -> np.ndarray:
        start = time.perf_counter()
        p = class_probabilities(self.logits, self.tokenizer, refs, gens)[:, 0]
        self.seconds += time.perf_counter() - start
        return p

    def logits(self, batch: dict) -> torch.Tensor | np.ndarray:
        """(batch, 3) class logits of a tokenized batch."""
        return self.model(**batch).logits
