"""`mismatch bench realtext`: a checkpoint on real text, beside sentBLEU, chrF and BERTScore-MiniLM.

Synthetic validation accuracy only shows that the model learned our rules (the design card's
"Judged on real text"). Three parts, all measurement only, never trained or tuned on:
- sick: SICK TRIAL (a = reference, b = generated). Two-way entailments must read as NoContr
  (P(NoContr) >= threshold), contradictions must not; AUROC paraphrase vs contradiction.
- bases: highly rated real outputs of held-out groups (``evaluator.realtext_data``), each
  perturbed by every synth error rule that applies. The perturbed text must score below its
  base, its top error class (NoContr excluded) must be the rule's class, and the unperturbed
  bases must read as NoContr. The drop is also given over meaning errors alone
  (``MEANING_ERROR_CODES``: all but GramErr and RepErr), what issue #27 asks a task
  checkpoint's rating to respect. The JSON breaks the pairs down by rule as well as by class, so
  a user sees which errors the checkpoint misses (the report names, for P(NoContr) and a task
  checkpoint's rating, the five rules each drops least).
- darr: WMT19 DARR (gu/kk/lt-en) Kendall-like tau per language pair, a metric tie counted as
  discordant (the WMT19 convention).
Each distinct (reference, generated) pair is scored once. The baselines are the project's own
feature columns (``evaluator.features.compute_features``): bleu, chrf and bertscore_f on
all-MiniLM-L6-v2 (its last layer), which match sacrebleu and bert_score. A task checkpoint adds
a scored column "rating (<task>)", its mean rating (each criterion on [0, 1]; for NLI
P(entailment)), from the same model pass, beside P(NoContr) in the AUROC, drop and tau figures;
the threshold figures (NoContr recall, top error class) stay P(NoContr)'s. These pairs have
no source: for a checkpoint whose ratings read one (``MismatchConfig.source_features``), the
reference stands in for it, and the column says so.

Defaults: up to 150 held-out bases per dataset and 1,500 DARR pairs per language pair (seeded
samples; all 51,700 DARR pairs would take several times as long). A 1,500 sample moved chrF's
mean tau by 0.04 from its value on all pairs (0.252 vs 0.289): compare metrics within one run,
and use --darr-limit 0 for final figures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.cli.bench.parts import (
    check_part_options,
    parse_parts,
    run_parts,
    table,
    write_result,
)
from mismatch_core.resources import DEFAULT_CHECKPOINT, DEFAULT_ENCODER
from mismatch_core.taxonomy import CODES, ERROR_CODES, MEANING_ERROR_CODES

PARTS = ("sick", "bases", "darr")
THRESHOLD = 0.5  # P(NoContr) at or above it reads as NoContr, as predict labels it
DEFAULT_DARR_LIMIT = 1500  # pairs per language pair; 0 = all 51,700
DEFAULT_BASES_LIMIT = 150  # real bases per dataset; 0 = all held-out
BASELINES = {"sentBLEU": "bleu", "chrF": "chrf", "BERTScore-MiniLM": "bertscore_f"}
OURS = "P(NoContr)"
# The rating that says "good" for a classification task (one probability per class).
GOOD_CLASS = {"nli": "entailment"}
CHUNK_PAIRS = 1024
MIN_RULE_PAIRS = 20  # a rule's drop on fewer pairs says little; the report lists the rest in JSON
WEAKEST_RULES = 5


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


# --- report ------------------------------------------------------------------------------


def percent(value: float) -> str:
    return "—" if np.isnan(value) else f"{100 * value:.1f}%"


def sick_report(result: dict) -> str:
    return "\n".join(
        [
            f"SICK TRIAL: {result['pairs']} pairs, {result['paraphrases']} two-way entailments, "
            f"{result['contradictions']} contradictions (a = ref, b = gen)",
            f"two-way entailments read as NoContr (P(NoContr) >= {THRESHOLD}): "
            f"{percent(result['paraphrase_nocontr_recall'])}",
            f"contradictions read as NoContr: {percent(result['contradiction_read_as_nocontr'])}",
            table(
                ["metric", "AUROC paraphrase vs contradiction"],
                [[m, f"{v:.3f}"] for m, v in result["auroc"].items()],
            ),
        ]
    )


def bases_report(result: dict) -> str:
    metrics = list(result["drop"])
    counts = ", ".join(f"{name} {n}" for name, n in result["bases"].items())
    by_dataset = ", ".join(
        f"{name} {percent(v)}" for name, v in result["base_nocontr_recall_by_dataset"].items()
    )
    rows = [
        [
            code,
            str(row["pairs"]),
            str(row["bases"]),
            *[percent(row["drop"][m]) for m in metrics],
            percent(row["top_error_is_class"]),
        ]
        for code, row in result["per_class"].items()
    ]
    rows.append(
        [
            "all",
            str(result["pairs"]),
            str(sum(result["bases"].values())),
            *[percent(result["drop"][m]) for m in metrics],
            f"{percent(result['top_error_is_class_mean_over_classes'])} (class mean)",
        ]
    )
    rows.append(
        [
            "meaning",
            str(result["meaning_pairs"]),
            "",
            *[percent(result["drop_meaning"][m]) for m in metrics],
            f"(all but {', '.join(c for c in ERROR_CODES if c not in MEANING_ERROR_CODES)})",
        ]
    )
    errors = ", ".join(f"{rule} {n}" for rule, n in sorted(result["rule_errors"].items())) or "none"
    counted = [(r, row) for r, row in result["per_rule"].items() if row["pairs"] >= MIN_RULE_PAIRS]
    ours = [m for m in metrics if m == OURS or m.startswith("rating (")]
    weakest_lines = []
    for metric in ours:  # the checkpoint's own scores: P(NoContr) and a task's rating
        weakest = sorted(counted, key=lambda item: item[1]["drop"][metric])[:WEAKEST_RULES]
        missed = ", ".join(
            f"{rule} {percent(row['drop'][metric])} ({row['pairs']} pairs, "
            f"{percent(row['read_as_nocontr'])} read as NoContr)"
            for rule, row in weakest
        )
        weakest_lines.append(
            f"rules whose errors {metric} drops least ({MIN_RULE_PAIRS}+ pairs; per rule in "
            f"the JSON): {missed or 'none'}"
        )
    return "\n".join(
        [
            f"Real bases (held-out groups): {counts}; {result['pairs']} perturbed pairs",
            f"unperturbed bases read as NoContr: {percent(result['base_nocontr_recall'])} "
            f"({by_dataset})",
            "drop: share of pairs with score(ref, base) > score(ref, perturbed); top error = "
            "class: share whose top error class (NoContr excluded) is the rule's class",
            table(
                ["class", "pairs", "bases", *[f"drop {m}" for m in metrics], "top error = class"],
                rows,
            ),
            *weakest_lines,
            f"rules that raised: {errors}",
        ]
    )


def darr_report(result: dict) -> str:
    lps = list(result["pairs"])
    counts = ", ".join(f"{lp} {n}" for lp, n in result["pairs"].items())
    rows = [
        [m, *[f"{result['tau'][m][lp]:.3f}" for lp in lps], f"{result['tau'][m]['mean']:.3f}"]
        for m in result["tau"]
    ]
    return "\n".join(
        [
            f"WMT19 DARR: {counts} pairs; {result['distinct_scored']} distinct (ref, gen) scored",
            "Kendall-like tau (ties discordant):",
            table(["metric", *lps, "mean"], rows),
        ]
    )


REPORTS: dict[str, Callable[[dict], str]] = {
    "sick": sick_report,
    "bases": bases_report,
    "darr": darr_report,
}


# --- command -----------------------------------------------------------------------------


def bench_realtext(args: argparse.Namespace) -> None:
    from evaluator.cli import CommandError
    from evaluator.cli.scoring import check_json_output, checkpoint_inputs
    from evaluator.hub import load
    from evaluator.realtext_data import DARR, SICK_TRIAL, bases_trained_on
    from evaluator.signature import signature
    from mismatch_core.checkpoint_files import resolve_checkpoint
    from mismatch_core.resources import data_dir

    parts = parse_parts(args.parts, PARTS)
    root = data_dir()  # a missing data folder: one line, from the command's entry point
    paths = {"sick": root / SICK_TRIAL, "darr": root / DARR}
    check_part_options(
        parts,
        [("--bases-limit", args.bases_limit, "bases"), ("--darr-limit", args.darr_limit, "darr")],
    )
    if args.out:
        inputs = [*paths.values(), *checkpoint_inputs(args.checkpoint)]
        check_json_output("--out", Path(args.out), inputs, "the report")
    for part in ("sick", "darr"):
        if part in parts and not paths[part].is_file():
            raise CommandError(f"{paths[part]}: no such file")
    name, revision = resolve_checkpoint(args.checkpoint or DEFAULT_CHECKPOINT)
    scorer = Scorer(load(name, revision))
    trained_on = bases_trained_on(scorer.checkpoint.config.get("training"))
    left_out = {}
    if "bases" in parts and scorer.rating and trained_on:
        why = (
            f"{name} was fitted on {', '.join(trained_on)} (its training record), whose "
            "held-out groups the bases part scores, so its figures there would not be held out"
        )
        if args.parts is not None:  # asked for
            raise CommandError(f"{why}; leave the part out (--parts sick,darr)")
        parts.remove("bases")
        left_out["bases"] = why
        print(f"bases part left out: {why}", file=sys.stderr, flush=True)
    darr_limit = DEFAULT_DARR_LIMIT if args.darr_limit is None else args.darr_limit or None
    bases_limit = DEFAULT_BASES_LIMIT if args.bases_limit is None else args.bases_limit or None
    result: dict = {
        "checkpoint": str(name),
        "signature": signature(scorer.checkpoint, THRESHOLD).to_dict(),
        "threshold": THRESHOLD,
        "seed": args.seed,
        "bases_limit": bases_limit,
        "darr_limit": darr_limit,
        "baselines": {
            m: f"{column} ({DEFAULT_ENCODER})" if column.startswith("bert") else column
            for m, column in BASELINES.items()
        },
        "seconds": {},
        **({"left_out": left_out} if left_out else {}),
    }
    print(f"realtext bench: checkpoint {name}; threshold {THRESHOLD}; seed {args.seed}", flush=True)
    print(f"signature {result['signature']['signature']}", flush=True)
    if scorer.rating:
        print(
            f"{scorer.rating}: the task's mean rating, each criterion on [0, 1] "
            "(a classification task: the good class's probability)",
            flush=True,
        )
    runs = {
        "sick": lambda: bench_sick(scorer, paths["sick"]),
        "bases": lambda: bench_bases(scorer, root / "human", bases_limit, args.seed),
        "darr": lambda: bench_darr(scorer, paths["darr"], darr_limit, args.seed),
    }
    run_parts(parts, runs, REPORTS, result)
    write_result(args.out, result)
