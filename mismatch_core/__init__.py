"""The lowest layer, shared by ``synth`` and ``evaluator``: resources, the taxonomy, JSONL
reading, atomic writing and the error types. It imports neither of them."""
