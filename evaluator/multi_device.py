"""Scoring on several devices with Lightning: `Trainer.predict` under DDP, gathered in order.

Lightning's DDP launcher runs the whole `mismatch predict` command once per device. Every
process reads the same input and cuts it into the same chunks; the distributed sampler gives
each process a share of the chunks, which it scores with `evaluator.inference.predict_outputs`
(the one place model outputs are computed), and the shares are gathered back into chunk order
on every process, so the result is the one a single process computes.
"""

from __future__ import annotations

import lightning as L
import torch
from torch.utils.data import DataLoader

from evaluator.hub import Checkpoint
from evaluator.inference import Chunk, PairOutputs, predict_outputs
from evaluator.lightning_interrupt import InterruptNoted, interrupt_kept
from evaluator.lightning_quiet import quiet_lightning
from evaluator.process_group import leave_process_group


class ChunkScoring(L.LightningModule):
    """predict_step: one (position, refs, gens, srcs) chunk -> (position, its PairOutputs)."""

    def __init__(self, checkpoint: Checkpoint, batch_size: int, spans_below: float | None) -> None:
        super().__init__()
        self.checkpoint = checkpoint
        # registered, so Lightning moves it to this process's device; the encoder pass follows it
        self.model = checkpoint.model
        self.batch_size = batch_size
        self.spans_below = spans_below

    def predict_step(
        self, chunk: tuple[int, list, list[str], list[str | None]]
    ) -> tuple[int, PairOutputs]:
        position, refs, gens, srcs = chunk
        return position, predict_outputs(
            self.checkpoint, refs, gens, self.batch_size, self.spans_below, srcs
        )


class LightningScorer:
    """A ChunkScorer (see `evaluator.evaluator`) running on ``devices`` processes."""

    def __init__(self, accelerator: str, devices: int) -> None:
        self.noted = InterruptNoted()
        with quiet_lightning():
            self.trainer = L.Trainer(
                accelerator=accelerator,
                devices=devices,
                strategy="ddp",
                logger=False,
                enable_checkpointing=False,
                enable_progress_bar=False,  # the predict command draws one bar over the input
                enable_model_summary=False,
                callbacks=[self.noted],
            )

    @property
    def is_global_zero(self) -> bool:
        return self.trainer.is_global_zero

    def __call__(
        self,
        checkpoint: Checkpoint,
        chunks: list[Chunk],
        batch_size: int,
        spans_below: float | None,
    ) -> list[PairOutputs]:
        items = [(position, *chunk) for position, chunk in enumerate(chunks)]
        # Lightning's sampler needs a chunk for every process: empty ones fill up a short input
        items += [(len(items) + k, [], [], []) for k in range(self.trainer.world_size - len(items))]
        # batch_size=None: each chunk is one step; Lightning adds a distributed sampler that
        # splits the chunks between processes without repeating any (the list serves as a
        # map-style dataset, which torch's annotation does not allow for)
        loader: DataLoader = DataLoader(items, batch_size=None, collate_fn=lambda item: item)  # type: ignore[arg-type]
        with quiet_lightning(), interrupt_kept(self.noted):
            mine = self.trainer.predict(ChunkScoring(checkpoint, batch_size, spans_below), loader)
        shares: list[list[tuple[int, PairOutputs]]] = [[] for _ in range(self.trainer.world_size)]
        torch.distributed.all_gather_object(shares, mine)
        scored = dict(pair for share in shares for pair in share)
        return [scored[position] for position in range(len(chunks))]

    def close(self, wait: bool = True) -> None:
        """Leave the process group (``wait``: see `leave_process_group`)."""
        leave_process_group(wait)
