"""Leave torch.distributed's process group before the process exits (Lightning DDP runs)."""

from __future__ import annotations

import torch


def leave_process_group(wait: bool = True) -> None:
    """Leave the process group, if any, once every process is done with it. A gloo group
    still alive at interpreter exit can abort the process ("terminate called without an
    active exception"): one `mismatch predict --devices 2` run in five did, failing CI.
    ``wait`` False, after an error or Ctrl-C: the other processes may have left already,
    and a barrier with them fails; so does one with a process that failed where this one did
    not (it reports its own error), which is then left without waiting."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        if wait:
            try:
                torch.distributed.barrier()
            except RuntimeError:  # torch's DistBackendError: a peer closed the connection
                pass
        torch.distributed.destroy_process_group()
