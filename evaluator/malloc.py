"""Keep the peak memory of long scoring runs flat (glibc's malloc).

glibc serves a large block from its heap instead of a fresh mapping once a block of that size
has been freed: its mmap threshold rises with every freed block, up to 32 MB. Scoring
allocates and frees arrays of every size chunk after chunk (token states, padded batches), so
the freed heap stayed with the process and fragmented: `mismatch predict` on 20,000 pairs
peaked 66 % above its peak on 2,000 (docs/bench.md). A fixed threshold maps every block
above it on its own and unmaps it when freed. The price is page zeroing on every large
allocation: about 17 % of predict throughput, measured; a larger threshold was no faster, and
trimming the heap after each chunk instead left the peak growing (docs/bench.md). The span
tagger is the exception (``heap_allocations``): its many mid-sized arrays live only while it
runs, so it takes them from the heap and hands the heap back when it is done.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's starting value, now kept fixed
HEAP_THRESHOLD_BYTES = 32 * 1024 * 1024  # glibc's largest dynamic threshold (64-bit)

_fixed = False  # whether fix_mmap_threshold fixed it in this process


def fix_mmap_threshold() -> bool:
    """Fix the mmap threshold of this process and the workers it forks; False where the C
    library has no glibc ``mallopt`` (macOS, Windows), which changes nothing."""
    global _fixed
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    _fixed = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    return _fixed


@contextlib.contextmanager
def heap_allocations() -> Iterator[None]:
    """Within the block, serve blocks up to 32 MB from the heap; after it, fix the threshold
    again and hand the freed heap back to the system (``malloc_trim``). For a phase that
    allocates and frees mid-sized arrays step after step and keeps little: the span tagger,
    whose page zeroing under the fixed threshold doubled its time. Changes nothing unless
    ``fix_mmap_threshold`` fixed the threshold in this process."""
    if not _fixed:
        yield
        return
    libc = ctypes.CDLL(None)
    libc.mallopt(M_MMAP_THRESHOLD, HEAP_THRESHOLD_BYTES)
    try:
        yield
    finally:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        libc.malloc_trim(0)
