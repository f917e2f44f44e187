"""glibc's mmap threshold: fixed for flat memory, lifted only for the span tagger's phase.

Each case runs in a fresh interpreter, so the threshold it sets never reaches the test process.
A large block counts as mapped on its own when glibc's ``mallinfo2().hblks`` rises with it.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import pytest

try:
    HAS_MALLINFO2 = hasattr(ctypes.CDLL(None), "mallinfo2")
except OSError:
    HAS_MALLINFO2 = False

pytestmark = pytest.mark.skipif(not HAS_MALLINFO2, reason="needs glibc 2.33+ (mallinfo2)")

PRELUDE = """
import ctypes
import numpy as np
from evaluator.malloc import fix_mmap_threshold, heap_allocations

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info

def mapped_on_its_own() -> bool:
    before = libc.mallinfo2().hblks
    block = np.ones(1 << 18)  # 2 MiB
    after = libc.mallinfo2().hblks
    del block
    return after > before
"""


def run(body: str) -> list[str]:
    script = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_tagger_phase_serves_large_blocks_from_the_heap_then_fixes_the_threshold_again():
    out = run(
        """
        fix_mmap_threshold()
        print(mapped_on_its_own())
        with heap_allocations():
            print(mapped_on_its_own())
        print(mapped_on_its_own())
        """
    )
    assert out == ["True", "False", "True"]


def test_the_tagger_phase_leaves_an_unfixed_threshold_to_glibc():
    """Without fix_mmap_threshold (a library user's process) glibc's threshold stays dynamic:
    a freed 2 MiB block raises it, so the next such block comes from the heap, also after the
    phase."""
    out = run(
        """
        print(mapped_on_its_own())
        with heap_allocations():
            pass
        print(mapped_on_its_own())
        """
    )
    assert out == ["True", "False"]
