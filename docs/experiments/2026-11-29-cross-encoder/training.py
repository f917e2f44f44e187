"""Training of this record's cross-encoders (xenc_train.py, shallow_train.py): batches of 32
pairs cut at 256 tokens, length-pooled (the examples shuffled, each pool of 50 batches' worth
sorted by length and cut into batches, and the batches shuffled, so a batch pads little), AdamW
with a linear warm-up over a tenth of the steps and a linear decay."""

import time
from collections.abc import Callable

import numpy as np
import torch

BATCH, MAX_LENGTH = 32, 256

Example = tuple[str, str, int]  # (ref, gen, class)


def length_pooled(lengths: list[int], batch: int, rng: np.random.Generator) -> list[list[int]]:
    """One epoch's batches of example indices, given each example's length."""
    pool_size = 50 * batch
    order = rng.permutation(len(lengths))
    cut = []
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=lambda j: lengths[j])
        cut += [pool[i : i + batch] for i in range(0, len(pool), batch)]
    return [cut[i] for i in rng.permutation(len(cut))]


def encoded(tokenizer, refs: list[str], gens: list[str]) -> dict:
    """A batch of pairs as the model reads them: ref and gen in one input."""
    return tokenizer(
        refs, gens, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt"
    )


def train_epochs(
    model: torch.nn.Module,
    tokenizer,
    train: list[Example],
    epochs: int,
    learning_rate: float,
    loss: Callable[[torch.Tensor, list[int]], tuple[torch.Tensor, torch.Tensor]],
    after_epoch: Callable[[int], None] | None = None,
) -> None:
    """Train ``model``'s parameters that require grad; ``loss(logits, indices)`` gives the
    loss to step on and the hard-label cross-entropy, whose mean each epoch prints;
    ``after_epoch(epoch)``, if given, runs after each epoch with the model in eval mode."""
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trained, lr=learning_rate, weight_decay=0.01)
    steps = epochs * ((len(train) + BATCH - 1) // BATCH)
    warmup = 0.1 * steps
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps)
    )
    rng = np.random.default_rng(0)
    lengths = [len(ref) + len(gen) for ref, gen, _ in train]
    start = time.time()
    model.train()
    for epoch in range(epochs):
        total = 0.0
        for step, indices in enumerate(length_pooled(lengths, BATCH, rng)):
            if step % 200 == 0:
                print(f"epoch {epoch}, batch {step}: {time.time() - start:.0f} s", flush=True)
            chunk = [train[j] for j in indices]
            logits = model(
                **encoded(tokenizer, [c[0] for c in chunk], [c[1] for c in chunk])
            ).logits
            step_loss, hard = loss(logits, indices)
            step_loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            total += hard.item() * len(chunk)
        print(
            f"epoch {epoch}: hard-label loss {total / len(train):.4f}, {time.time() - start:.0f} s",
            flush=True,
        )
        if after_epoch is not None:
            model.eval()
            after_epoch(epoch)
            model.train()
    model.eval()


def hard_labels(train: list[Example]) -> Callable:
    """The loss of xenc_train.py: the hard label's cross-entropy alone."""

    def loss(logits: torch.Tensor, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        hard = torch.nn.functional.cross_entropy(
            logits, torch.tensor([train[j][2] for j in indices])
        )
        return hard, hard

    return loss
