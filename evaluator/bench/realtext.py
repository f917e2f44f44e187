"""Real text, measured: a checkpoint's readings beside sentBLEU, chrF and BERTScore-MiniLM on
SICK TRIAL, on held-out real outputs with synth errors applied, and on WMT19 DARR
(`mismatch bench realtext` runs and reports them).

Synthetic validation accuracy only shows that the model learned our rules (the design card's
"Judged on real text"). All three parts are measurement only, never trained or tuned on:
- `bench_sick`: SICK TRIAL (a = reference, b = generated). Two-way entailments must read as
  NoContr (P(NoContr) >= THRESHOLD), contradictions must not; AUROC paraphrase vs
  contradiction.
- `bench_bases`: highly rated real outputs of held-out groups (``evaluator.realtext_data``),
  each perturbed by every synth error rule that applies. The perturbed text must score below
  its base, its top error class (NoContr excluded) must be the rule's class, and the
  unperturbed bases must read as NoContr. The drop is also given over meaning errors alone
  (``MEANING_ERROR_CODES``: all but GramErr and RepErr), what issue #27 asks a task
  checkpoint's rating to respect. Pairs are broken down by rule as well as by class.
- `bench_darr`: WMT19 DARR (gu/kk/lt-en) Kendall-like tau per language pair, a metric tie
  counted as discordant (the WMT19 convention).
Each distinct (reference, generated) pair is scored once (`Scorer`). The baselines are the
project's own feature columns (``evaluator.features.compute_features``): bleu, chrf and
bertscore_f on all-MiniLM-L6-v2 (its last layer), which match sacrebleu and bert_score. A task
checkpoint adds a scored column "rating (<task>)", its mean rating (each criterion on [0, 1];
for NLI P(entailment)), from the same model pass, beside P(NoContr) in the AUROC, drop and tau
figures; the threshold figures (NoContr recall, top error class) stay P(NoContr)'s. These pairs
have no source: for a checkpoint whose ratings read one (``MismatchConfig.source_features``),
the reference stands in for it, and the column says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mismatch_core.resources import DEFAULT_ENCODER
from mismatch_core.taxonomy import CODES, ERROR_CODES, MEANING_ERROR_CODES

THRESHOLD = 0.5  # P(NoContr) at or above it reads as NoContr, as predict labels it
BASELINES = {"sentBLEU": "bleu", "chrF": "chrf", "BERTScore-MiniLM": "bertscore_f"}
OURS = "P(NoContr)"
# The rating that says "good" for a classification task (one probability per class).
GOOD_CLASS = {"nli": "entailment"}
CHUNK_PAIRS = 1024


# --- pure computations -------------------------------------------------------------------


def kendall_like_tau(better: np.ndarray, worse: np.ndarray) -> float:
    """(concordant - discordant) / (concordant + discordant) over relative-ranking pairs, a
    tie counting as discordant (WMT19 DARR): a metric that cannot tell two outputs apart
    gets no credit for it."""
    if len(better) == 0:
        return float("nan")
    concordant = int(np.sum(np.asarray(better) > np.asarray(worse)))
    discordant = len(better) - concordant
    return (concordant - discordant) / (concordant + discordant)


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Area under the ROC curve of a score separating positives from negatives (ties: 0.5)."""
    from sklearn.metrics import roc_auc_score

    labels = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
    return float(roc_auc_score(labels, np.r_[positive, negative]))


def share(mask: np.ndarray) -> float:
    """The share of True in ``mask`` (NaN when empty)."""
    return float(np.mean(mask)) if len(mask) else float("nan")


# --- scoring -----------------------------------------------------------------------------


class Scorer:
    """Scores (reference, generated) pairs with a checkpoint and the baselines, each distinct
    pair once.

    ``metrics``: the scored columns every part reports. A task checkpoint adds its mean rating
    (``rating (<task>)``), what issue #27 judges a task checkpoint by."""

    def __init__(self, checkpoint) -> None:
        from evaluator.evaluator import Evaluator

        self.checkpoint = checkpoint
        self.evaluator = Evaluator(checkpoint)
        self.rating = None  # the mean rating's column; None for the base
        # these pairs have no source: the reference stands in for a checkpoint that reads one
        self.reads_source = bool(checkpoint.model.config.source_features)
        if self.evaluator.criteria:
            (task,) = checkpoint.tasks
            self.rating = f"rating ({task}{', reference as source' if self.reads_source else ''})"
        self.metrics = (OURS, *([self.rating] if self.rating else []), *BASELINES)

    def score(self, refs: list[str], gens: list[str]) -> dict[str, np.ndarray]:
        """{"probabilities": (n, 14) in taxonomy order, metric: (n,) for each of ``metrics``}.

        A baseline column the checkpoint itself reads (with the baselines' encoder and layer,
        for BERTScore) comes from the features predict computed; the rest are computed here."""
        from evaluator.features import compute_features
        from evaluator.features.cpu_workers import shared_cpu_workers
        from evaluator.inference import predict_outputs

        distinct = list(dict.fromkeys(zip(refs, gens, strict=True)))
        row = {pair: i for i, pair in enumerate(distinct)}
        order = sorted(
            range(len(distinct)), key=lambda i: (len(distinct[i][0]), len(distinct[i][1]))
        )
        probabilities = np.zeros((len(distinct), len(CODES)))
        ratings = np.zeros((len(distinct), len(self.evaluator.criteria)))
        with shared_cpu_workers():  # one pool of CPU-metric workers for every chunk
            read = []
            for start in range(0, len(order), CHUNK_PAIRS):
                chunk = order[start : start + CHUNK_PAIRS]
                refs_of_chunk = [distinct[i][0] for i in chunk]
                outputs = predict_outputs(
                    self.checkpoint,
                    refs_of_chunk,
                    [distinct[i][1] for i in chunk],
                    srcs=refs_of_chunk if self.reads_source else None,
                )
                probabilities[chunk] = outputs.probabilities
                if self.rating:
                    ratings[chunk] = outputs.ratings
                if outputs.features is not None:
                    read.append(outputs.features.set_axis(chunk))
            frame = (
                pd.concat(read).sort_index() if read else pd.DataFrame(index=range(len(distinct)))
            )
            missing = [column for column in BASELINES.values() if not self._reads(column)]
            if missing:
                frame[missing] = compute_features(
                    [ref for ref, _ in distinct],
                    [gen for _, gen in distinct],
                    names=missing,
                    encoder=DEFAULT_ENCODER,
                ).to_numpy()
        rows = np.array([row[pair] for pair in zip(refs, gens, strict=True)], dtype=np.int64)
        scores = {"probabilities": probabilities[rows], OURS: probabilities[rows, 0]}
        if self.rating:
            scores[self.rating] = self._mean_rating(ratings)[rows]
        for name, column in BASELINES.items():
            scores[name] = frame[column].to_numpy()[rows]
        return scores

    def _mean_rating(self, raw: np.ndarray) -> np.ndarray:
        """One rating per pair from the raw rating outputs, as ``mismatch=CHECKPOINT#ratings``
        (evaluator.stress) forms it from predict's ratings: for a classification task the good
        class's probability, else the mean over criteria of each rating on [0, 1] (a raw
        output is that rating, which predict bounds (``bounded_ratings``) before mapping it
        to the human scale)."""
        from evaluator.tasks import normalised_outputs

        values = normalised_outputs(raw, self.evaluator.kind)
        if self.evaluator.kind == "classification":
            (task,) = self.checkpoint.tasks
            return values[:, self.evaluator.rating_keys.index(GOOD_CLASS[task])]
        return values.mean(axis=1)

    def _reads(self, column: str) -> bool:
        """Whether the checkpoint's own features include ``column`` as the baseline defines it
        (an encoder metric only from the baselines' encoder at its last layer)."""
        from evaluator.features.registry import COLUMN_TO_METRIC, is_encoder_metric

        checkpoint = self.checkpoint
        if not checkpoint.model.config.use_metrics or column not in checkpoint.feature_names:
            return False
        return not is_encoder_metric(COLUMN_TO_METRIC[column]) or (
            checkpoint.model.config.encoder == DEFAULT_ENCODER and checkpoint.num_layers is None
        )


# --- parts -------------------------------------------------------------------------------


def bench_sick(scorer: Scorer, path: Path) -> dict:
    from evaluator.realtext_data import load_sick

    pairs = load_sick(path)
    scores = scorer.score([p.ref for p in pairs], [p.gen for p in pairs])
    paraphrase = np.array([p.paraphrase for p in pairs])
    contradiction = np.array([p.contradiction for p in pairs])
    ours = scores[OURS]
    return {
        "pairs": len(pairs),
        "paraphrases": int(paraphrase.sum()),
        "contradictions": int(contradiction.sum()),
        "paraphrase_nocontr_recall": share(ours[paraphrase] >= THRESHOLD),
        "contradiction_read_as_nocontr": share(ours[contradiction] >= THRESHOLD),
        "auroc": {
            m: auroc(scores[m][paraphrase], scores[m][contradiction]) for m in scorer.metrics
        },
    }


def bench_bases(scorer: Scorer, human_dir: Path, limit: int | None, seed: int) -> dict:
    from evaluator.realtext_data import real_base_set

    bases = real_base_set(human_dir, limit, seed)
    by_dataset, refs, gens = bases.by_dataset, bases.refs, bases.gens
    perturbations = bases.perturbations
    items = perturbations.items
    base_scores = scorer.score(refs, gens)
    changed = scorer.score([refs[p.base] for p in items], [p.text for p in items])
    owner = np.array([p.base for p in items], dtype=np.int64)
    codes = np.array([p.code for p in items])
    rules = np.array([p.rule for p in items])
    drops = {m: base_scores[m][owner] > changed[m] for m in scorer.metrics}
    top_error = np.array(CODES)[1 + changed["probabilities"][:, 1:].argmax(axis=1)]
    hits = top_error == codes
    per_class = {}
    for code in ERROR_CODES:
        mine = codes == code
        per_class[code] = {
            "pairs": int(mine.sum()),
            "bases": int(len(set(owner[mine].tolist()))),
            "drop": {m: share(drops[m][mine]) for m in scorer.metrics},
            "top_error_is_class": share(hits[mine]),
        }
    per_rule = {}
    for rule in sorted(set(rules.tolist())):
        mine = rules == rule
        per_rule[rule] = {
            "class": str(codes[mine][0]),
            "pairs": int(mine.sum()),
            "drop": {m: share(drops[m][mine]) for m in scorer.metrics},
            "top_error_is_class": share(hits[mine]),
            "read_as_nocontr": share(changed[OURS][mine] >= THRESHOLD),
        }
    present = [c for c in ERROR_CODES if per_class[c]["pairs"]]
    meaning = np.isin(codes, MEANING_ERROR_CODES)
    datasets = list(by_dataset)
    dataset_of = np.array([name for name, rs in by_dataset.items() for _ in rs])
    return {
        "bases": {name: len(rs) for name, rs in by_dataset.items()},
        "pairs": len(items),
        "base_nocontr_recall": share(base_scores[OURS] >= THRESHOLD),
        "base_nocontr_recall_by_dataset": {
            name: share(base_scores[OURS][dataset_of == name] >= THRESHOLD) for name in datasets
        },
        "drop": {m: share(drops[m]) for m in scorer.metrics},
        "meaning_pairs": int(meaning.sum()),
        "drop_meaning": {m: share(drops[m][meaning]) for m in scorer.metrics},
        "top_error_is_class_mean_over_classes": float(
            np.mean([per_class[c]["top_error_is_class"] for c in present])
        )
        if present
        else float("nan"),
        "per_class": per_class,
        "per_rule": per_rule,
        "rule_errors": dict(perturbations.rule_errors),
    }


def bench_darr(scorer: Scorer, path: Path, limit: int | None, seed: int) -> dict:
    from evaluator.realtext_data import load_darr

    by_lp = load_darr(path, limit, seed)
    pairs = [p for lp_pairs in by_lp.values() for p in lp_pairs]
    refs = [p.ref for p in pairs] * 2
    gens = [p.better for p in pairs] + [p.worse for p in pairs]
    scores = scorer.score(refs, gens)
    lps = np.array([p.lp for p in pairs])
    tau = {}
    for metric in scorer.metrics:
        better, worse = scores[metric][: len(pairs)], scores[metric][len(pairs) :]
        tau[metric] = {lp: kendall_like_tau(better[lps == lp], worse[lps == lp]) for lp in by_lp}
        tau[metric]["mean"] = float(np.mean([tau[metric][lp] for lp in by_lp]))
    return {
        "pairs": {lp: len(p) for lp, p in by_lp.items()},
        "distinct_scored": len(set(zip(refs, gens, strict=True))),
        "tau": tau,
    }
