"""The evaluator network: Set Transformer blocks, the metric-set branch and the full model."""

from evaluator.model.metric_set import MetricSetEncoder
from evaluator.model.mismatch_model import MismatchConfig, MismatchModel, score_from_logits

__all__ = ["MetricSetEncoder", "MismatchConfig", "MismatchModel", "score_from_logits"]
