"""Keep the peak memory of long scoring runs flat (glibc's malloc).

glibc serves a large block from its heap instead of a fresh mapping once a block of that size
has been freed: its mmap threshold rises with every freed block, up to 32 MB. Scoring
allocates and frees arrays of every size chunk after chunk (token states, padded batches), so
the freed heap stayed with the process and fragmented: `mismatch predict` on 20,000 pairs
peaked 66 % above its peak on 2,000 (docs/bench.md). A fixed threshold maps every block
above it on its own and unmaps it when freed. The price is page zeroing on every large
allocation: about 17 % of predict throughput, measured; a larger threshold was no faster, and
trimming the heap after each chunk instead left the peak growing (docs/bench.md).
"""

from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's starting value, now kept fixed


def fix_mmap_threshold() -> bool:
    """Fix the mmap threshold of this process and the workers it forks; False where the C
    library has no glibc ``mallopt`` (macOS, Windows), which changes nothing."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
