"""What a run produces: the accepted pairs as train/val frames, the manifest that describes
them, and the files ``write`` puts on disk."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from mismatch_core.atomic import atomic_directory
from mismatch_core.pairs import SYNTH_COLUMNS, pair_folder_problem
from mismatch_core.taxonomy import CODES, index_of
from synth.config import SynthConfig
from synth.corpora import Corpus


@dataclass
class Candidate:
    """A pair a worker proposes; the accepted ones are the rows of the output."""

    ref: str
    gen: str
    label: str
    source: str
    group: str
    rule: str
    detail: str


def pair_frame(split: str, rows: list[Candidate]) -> pd.DataFrame:
    """The accepted pairs of one split in the columns of ``SYNTH_COLUMNS``, ids in order."""
    frame = pd.DataFrame([asdict(row) for row in rows], columns=list(Candidate.__dataclass_fields__))
    frame.insert(0, "id", [f"{split}-{i:07d}" for i in range(len(frame))])
    frame["label_id"] = frame["label"].map(index_of).astype("int64")
    return frame[list(SYNTH_COLUMNS)]


def build_manifest(config: SynthConfig, corpus: Corpus, frames: dict[str, pd.DataFrame], seconds: float) -> dict:
    """What the run made (counts per class, source and rule, divergence of bases) from what;
    the generator adds its rounds, shortfall and rule errors."""
    both = pd.concat(frames.values(), ignore_index=True)
    total = len(both)
    train_groups = set(frames["train"]["group"])
    return {
        "num_pairs": total,
        "seed": config.seed,
        "config": asdict(config),
        "splits": {s: len(f) for s, f in frames.items()},
        "per_class": {code: int((both["label"] == code).sum()) for code in CODES},
        "per_source": both["source"].value_counts().to_dict(),
        "per_source_share": (both["source"].value_counts() / max(total, 1)).round(4).to_dict(),
        "per_rule": both["rule"].value_counts().to_dict(),
        "paraphrase_based": int(both["detail"].str.contains('"base": "(?:paraphrase|rewrite)"').sum()),
        "divergence": _divergence(both, config.divergent_chrf),
        "groups_in_both_splits": len(train_groups & set(frames["val"]["group"])),
        "corpus_sha256": corpus.sha256,
        "excluded_for_human_overlap": {
            "groups": dict(corpus.excluded_groups),
            "texts": dict(corpus.excluded_texts),
        },
        "seconds": round(seconds, 1),
        "pairs_per_second": round(total / seconds, 1) if seconds else None,
    }


def _divergence(both: pd.DataFrame, threshold: float) -> dict:
    """How far error bases and NoContr gens are from their references (sentence chrF): the share
    below ``threshold``, quantiles, the per-class share, and the kinds of base used."""
    details = both["detail"].map(json.loads)
    errors = both["label"] != "NoContr"
    base = details[errors].map(lambda d: d["base_chrf"])
    gen = details[~errors].map(lambda d: d["chrf"])
    quantiles = (0.1, 0.25, 0.5, 0.75, 0.9)

    def summary(values: pd.Series) -> dict:
        if values.empty:
            return {"pairs": 0}
        return {
            "pairs": int(len(values)),
            f"share_below_{threshold:g}": round(float((values < threshold).mean()), 4),
            "quantiles": {f"{q:g}": round(float(values.quantile(q)), 4) for q in quantiles},
        }

    labels = both.loc[errors, "label"]
    return {
        "error_base_chrf": summary(base),
        "error_base_chrf_per_class": {
            code: round(float((base[labels == code] < threshold).mean()), 4) for code in CODES[1:] if (labels == code).any()
        },
        "error_base_kinds": details[errors].map(lambda d: d.get("base", "ref")).value_counts().to_dict(),
        "nocontr_gen_chrf": summary(gen),
    }


PAIR_SET_FILES = ("train.parquet", "val.parquet", "manifest.json")  # one synth output folder


def write(out_dir: Path, train: pd.DataFrame, val: pd.DataFrame, manifest: dict) -> None:
    """Write train/val parquet and manifest.json as one folder (staged, then swapped in), so
    a failed write leaves the old set whole; DataError when ``out_dir`` holds other files
    (``pair_set_problem``, which the command checks before generating)."""
    with atomic_directory(out_dir, PAIR_SET_FILES) as staging:
        train.to_parquet(staging / "train.parquet", index=False)
        val.to_parquet(staging / "val.parquet", index=False)
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def pair_set_problem(out_dir: Path) -> str | None:
    """Why ``out_dir`` cannot take a pair set, or None (absent, empty or a pair set)."""
    return pair_folder_problem(out_dir, PAIR_SET_FILES)

