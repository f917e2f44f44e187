"""Scalar metric features of (reference, generated) pairs: compute, cache, scale, embed."""

from evaluator.features.compute import compute_features, feature_versions, pair_key
from evaluator.features.embeddings import EmbeddingStore, text_key
from evaluator.features.encoder_pass import encode_texts
from evaluator.features.registry import DEFAULT_FEATURES, available_features
from evaluator.features.scaling import FeatureScaler

__all__ = [
    "DEFAULT_FEATURES",
    "EmbeddingStore",
    "FeatureScaler",
    "available_features",
    "compute_features",
    "encode_texts",
    "feature_versions",
    "pair_key",
    "text_key",
]
