"""A cross-encoder of xenc_train.py loaded for reading: P(same meaning) of (ref, gen) pairs in
length-sorted batches of 64, with the time it took. A subclass may run the model another way
by overriding ``logits``."""

import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoTokenizer, BertForSequenceClassification


class CrossEncoder:
    def __init__(self, folder: Path, int8: bool = False) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(folder / "model")
        model = BertForSequenceClassification.from_pretrained(folder / "model").eval()
        if int8:  # torch's dynamic quantization of the linear layers
            model = torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8
            )
        self.model = model
        self.seconds = 0.0

    @torch.no_grad()
    def same_meaning(self, refs: list[str], gens: list[str]) -> np.ndarray:
        start = time.perf_counter()
        order = sorted(range(len(refs)), key=lambda i: len(refs[i]) + len(gens[i]))
        p = np.zeros(len(refs))
        for i in range(0, len(order), 64):
            chunk = order[i : i + 64]
            batch = self.tokenizer(
                [refs[j] for j in chunk],
                [gens[j] for j in chunk],
                padding=True,
                truncation=True,
                max_length=256,
                return_tensors="pt",
            )
            p[chunk] = torch.softmax(torch.as_tensor(self.logits(batch)), -1)[:, 0].numpy()
        self.seconds += time.perf_counter() - start
        return p

    def logits(self, batch: dict) -> torch.Tensor | np.ndarray:
        """(batch, 3) class logits of a tokenized batch."""
        return self.model(**batch).logits
