"""mismatch-eval: ratings on a task's human criteria plus mismatch error-type probabilities.

``from evaluator import Evaluator, Prediction`` works, and so does the import of its
warnings (``TruncationWarning``, ``SpanReachWarning``, ``ShortReferenceWarning``), but the
import is deferred until first use so that ``import evaluator`` (and every CLI start) stays
cheap: no torch, no models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluator.evaluator import (
        Evaluator,
        Prediction,
        ShortReferenceWarning,
        SpanReachWarning,
        TruncationWarning,
    )

__all__ = [
    "Evaluator",
    "Prediction",
    "TruncationWarning",
    "SpanReachWarning",
    "ShortReferenceWarning",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from evaluator import evaluator as module

        return getattr(module, name)
    raise AttributeError(f"module 'evaluator' has no attribute {name!r}")
