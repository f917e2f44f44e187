"""The generator's settings (``SynthConfig``): what a run makes and how; configs/synth.yaml
holds those of the shipped data set.

Config files go through jsonargparse, the project's one config mechanism (LightningCLI reads the
training configs with it): every key is checked against the field's type before any work, and
``dump_config`` writes what ``load_config`` reads back.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jsonargparse import ArgumentParser, Namespace

from mismatch_core.config import check_at_least_one, check_seed, read_config
from synth.corpora import SOURCES


@dataclass
class SynthConfig:
    """Knobs of the generator; configs/synth.yaml holds the defaults used for the shipped data."""

    num_pairs: int = 200_000
    seed: int = 13
    val_fraction: float = 0.2
    # share of references whose errors go on a divergent base: a real paraphrase or, with none,
    # a chain of meaning-preserving rewrites (the rest take their errors on the reference)
    divergent_share: float = 0.9
    # a chain stacks up to this many rewrites of different families (clause-level ones first)
    max_chain_rewrites: int = 4
    # bases below this sentence chrF to the reference count as divergent (preferred as bases,
    # reported in the manifest)
    divergent_chrf: float = 0.6
    # captions of one image count as paraphrases when their content lemmas overlap this much
    min_paraphrase_overlap: float = 0.5
    # NoContr mix: real paraphrase / meaning-preserving rewrite / verbatim copy
    nocontr_real_share: float = 0.5
    nocontr_copy_share: float = 0.03
    # share of references drawn from each source (before quotas); none may end above max
    source_weights: dict[str, float] = field(
        default_factory=lambda: {"multi30k": 0.25, "webnlg": 0.40, "coco": 0.12, "squad": 0.15, "sick": 0.08}
    )
    max_source_share: float = 0.4
    classes_per_text: int = 5
    texts_per_chunk: int = 600
    processes: int = 2
    max_rounds: int = 40
    # stop once a round fills less than this share of the pairs still open: what is left cannot
    # be made from these corpora at a useful rate (the manifest then reports the shortfall)
    min_round_yield: float = 0.01
    # once a round fills less than half of what is open, a class at or above (1 - this) of its
    # quota is closed and its remaining pairs go to the classes that are full: the last few
    # percent of a class only a few texts can take (questions, event order) cost more time
    # than all the rest. The balance bar is +-10% of the mean.
    balance_tolerance: float = 0.08
    # a class that succeeds on fewer texts than this on every source is tried on every text
    # parsed (with all its rules and bases), not only when drawn among ``classes_per_text``
    scarce_rate: float = 0.1

    @property
    def source_cap(self) -> int:
        """The most pairs any one source may give (``max_source_share`` of ``num_pairs``)."""
        return int(self.max_source_share * self.num_pairs)

    def __post_init__(self) -> None:
        """Reject a setting of the wrong type or out of range by name, before any work."""
        at_least_one = ("num_pairs", "classes_per_text", "texts_per_chunk", "processes", "max_rounds")
        if not isinstance(self.max_chain_rewrites, int) or isinstance(self.max_chain_rewrites, bool) or self.max_chain_rewrites < 2:
            raise ValueError(f"max_chain_rewrites must be an integer of at least 2, got {self.max_chain_rewrites!r}")
        for name in (*at_least_one, "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be an integer, got {value!r}")
        check_at_least_one({name: getattr(self, name) for name in at_least_one})
        check_seed(self.seed)
        shares = {
            "val_fraction": (0.0, 1.0, False),
            "divergent_share": (0.0, 1.0, True),
            "divergent_chrf": (0.0, 1.0, True),
            "min_paraphrase_overlap": (0.0, 1.0, True),
            "nocontr_real_share": (0.0, 1.0, True),
            "nocontr_copy_share": (0.0, 1.0, True),
            "max_source_share": (0.0, 1.0, True),
            "min_round_yield": (0.0, 1.0, True),
            "balance_tolerance": (0.0, 1.0, False),
            "scarce_rate": (0.0, 1.0, True),
        }
        for name, (low, high, high_allowed) in shares.items():
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not (low <= value < high or (high_allowed and value == high)):
                bound = "]" if high_allowed else ")"
                raise ValueError(f"{name} must be in [{low:g}, {high:g}{bound}, got {value}")
        if self.nocontr_real_share + self.nocontr_copy_share > 1:
            raise ValueError("nocontr_real_share + nocontr_copy_share must not exceed 1")
        weights = self.source_weights
        if not isinstance(weights, dict) or not weights or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0
            for w in weights.values()
        ):
            raise ValueError(f"source_weights must map sources to positive weights, got {weights!r}")
        unknown = sorted(set(weights) - set(SOURCES))
        if unknown:
            raise ValueError(f"source_weights: unknown source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}")
        cap = self.source_cap
        if cap * len(weights) < self.num_pairs:
            raise ValueError(
                f"max_source_share {self.max_source_share} caps each of the {len(weights)} "
                f"source(s) of source_weights at {cap} pairs: together fewer than num_pairs "
                f"{self.num_pairs} (each needs {math.ceil(self.num_pairs / len(weights))})"
            )


def config_parser() -> ArgumentParser:
    """A parser of SynthConfig's fields as top-level keys (the layout of configs/synth.yaml),
    typed by their annotations; it raises on a bad value instead of exiting."""
    parser = ArgumentParser(exit_on_error=False)
    parser.add_class_arguments(SynthConfig)
    return parser


def load_config(path: Path | None) -> SynthConfig:
    """SynthConfig from a YAML file of its fields (defaults for the ones it leaves out), or the
    defaults without one. An unreadable file, an unknown key, a value of the wrong type or out
    of range raises ConfigError (a ValueError) naming the file and the key."""
    if path is None:
        return SynthConfig()
    return read_config(
        path,
        lambda file: config_parser().parse_string(file.read_text(), cfg_path=str(file)),
        lambda values: SynthConfig(**values.as_dict()),
    )


def dump_config(config: SynthConfig) -> str:
    """The full config as the YAML that ``load_config`` reads."""
    return config_parser().dump(Namespace(**asdict(config)))
