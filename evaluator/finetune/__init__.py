"""Per-task fine-tuning on human ratings: cached inputs, training, evaluation against baselines."""
