"""The lowest layer, shared by ``synth`` and ``evaluator``: resources, the taxonomy, JSONL
reading, atomic writing, the error types, checkpoint files and configs, pair checks, the
package version and the seeded group split. It imports neither of them."""
