"""mismatch-eval: ratings on a task's human criteria plus mismatch error-type probabilities."""
