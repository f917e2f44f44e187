"""Train the disfluency detector behind the ``disfluency`` feature (evaluator.features.disfluency).

Clean texts are the references and the NoContr outputs of training-side pair files (synthetic
pairs, ``mismatch adapt pairs``). Each gets a broken twin from one synth GramErr rule (agreement,
verb form, noun number, article, pronoun case, dropped function words, bare verbs, swapped
neighbours, a rotated sentence, noisy punctuation) and, where one applies, a reworded twin from
one synth NoContr rule (a fronted or moved adverbial, active <-> passive, possessive <-> of, a
light verb, the simple aspect, a synonym, a same-value adjective, a contraction, a number in
words, British/American spelling). The detector learns, from the encoder's token states at
``--layer``, to score the broken twin high and the original and the reworded twin low: a moved
phrase is not a rotated sentence, with or without the comma after a fronted phrase (half of
them lose it). With ``--verb-form-share`` the broken twin is a wrong verb form, where one
applies, for about that share of the train and val texts. The epoch kept is the one whose val
broken twins most often score above both their original and their reworded twin (the mean of
the two shares). Never pass a measurement-only set.

    python scripts/train_disfluency.py --pairs DATA/real/train.parquet DATA/synth/train.parquet \
        --val-pairs DATA/real/val.parquet DATA/synth/val.parquet --out checkpoints/disfluency-detector
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch.nn import functional

from evaluator.cli import run_reporting_errors
from evaluator.features.disfluency import (
    CONFIG_FILE,
    WEIGHTS_FILE,
    DisfluencyDetector,
    save_detector,
)
from evaluator.features.encoder_pass import (
    MAX_BATCH_TOKENS,
    length_batches,
    padded_ids,
    tokenize,
)
from evaluator.features.token_store import TokenTable
from mismatch_core.atomic import folder_problem
from mismatch_core.errors import DataError
from mismatch_core.pairs import read_pairs, references
from mismatch_core.resources import configure_offline_mode, load_encoder, load_spacy
from synth.perturb import load_rules
from synth.perturb.base import Context
from synth.perturb.grammar import RULES, verb_form

REWORDINGS = load_rules()["NoContr"]

WORDS = (3, 60)  # clean texts of this many words: one-word labels and long documents left out


def clean_texts(paths: list[str], limit: int, seed: int) -> list[str]:
    """References and NoContr outputs of the pair files, distinct, shuffled, at most ``limit``."""
    texts: list[str] = []
    for path in paths:
        pairs = read_pairs(path, labelled=True)
        texts += [one for ref in pairs["ref"] for one in references(ref)]
        texts += list(pairs.loc[pairs["label"] == "NoContr", "gen"])
    texts = [t for t in dict.fromkeys(texts) if WORDS[0] <= len(t.split()) <= WORDS[1]]
    random.Random(seed).shuffle(texts)
    return texts[:limit]


def first_change(doc, rules: list, rng: random.Random):
    """The change of the first rule (in random order) that applies to ``doc``, or None."""
    for rule in rng.sample(rules, len(rules)):
        change = rule(doc, Context(rng=rng, other_doc=lambda: None))
        if change is not None and change.text.strip() and change.text != doc.text:
            return change
    return None


def twins(
    texts: list[str], seed: int, verb_form_share: float = 0.0
) -> list[tuple[str, str, str, str | None]]:
    """(clean, broken, GramErr rule, reworded or None) for each text a GramErr rule applies to.
    With chance ``verb_form_share`` per text the broken twin is a wrong verb form where one
    applies (else the draw below): drawn among all GramErr rules, the forms without a "be"
    before them ("to surrounded", "He graduating") are too rare for the detector to learn
    (docs/experiments/2026-12-03-verb-form-detector). 0 draws no extra random number."""
    out = []
    for index, doc in enumerate(load_spacy(()).pipe(texts, batch_size=256)):
        rng = random.Random(f"{seed}:{index}")
        broken = None
        if verb_form_share and rng.random() < verb_form_share:
            broken = first_change(doc, [verb_form], rng)
        if broken is None:
            broken = first_change(doc, RULES["GramErr"], rng)
        if broken is not None:
            reworded = first_change(doc, REWORDINGS, rng)
            text = reworded and reworded.text
            if text and reworded.rule == "NoContr/front_adverbial" and rng.random() < 0.5:
                text = text.replace(", ", " ", 1)  # a fronted phrase often goes without its comma
            out.append((texts[index], broken.text, broken.rule, text))
    return out


def check_twins(found: list, option: str, paths: list[str], need_reworded: bool) -> None:
    """DataError unless the texts of ``paths`` gave broken twins (nothing is learned without
    them) and, when ``need_reworded`` (val), some reworded twins: the kept epoch's score
    reads both."""
    where = f"{option} {' '.join(paths)}"
    if not found:
        raise DataError(
            f"{where}: no text of {WORDS[0]}-{WORDS[1]} words that a GramErr rule breaks"
        )
    if need_reworded and not any(reworded for *_, reworded in found):
        raise DataError(f"{where}: no text that a NoContr rewording applies to")


def layer_states(texts: list[str], layer: int) -> dict[str, np.ndarray]:
    """text -> its token states at ``layer`` (CLS and SEP included), float16."""
    tokenizer, model = load_encoder()
    distinct = list(dict.fromkeys(texts))
    max_length = min(tokenizer.model_max_length, model.config.max_position_embeddings)
    ids = tokenize(tokenizer, distinct, max_length).ids
    states = {}
    for batch in length_batches([len(row) for row in ids], 64, MAX_BATCH_TOKENS):
        lengths = [len(ids[i]) for i in batch]
        input_ids, mask = padded_ids([ids[i] for i in batch], tokenizer.pad_token_id)
        with torch.inference_mode():
            hidden = model(input_ids=input_ids, attention_mask=mask, output_hidden_states=True)
        for row, index in enumerate(batch):
            states[distinct[index]] = (
                hidden.hidden_states[layer][row, : lengths[row]].numpy().astype(np.float16)
            )
    return states


def logits(detector: DisfluencyDetector, table: TokenTable, rows: list[int]) -> np.ndarray:
    detector.eval()
    with torch.no_grad():
        out = [
            detector(*table.batch(torch.tensor(rows[s : s + 512])))
            for s in range(0, len(rows), 512)
        ]
    detector.train()
    return torch.cat(out).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", required=True, help="training-side pair files")
    parser.add_argument("--val-pairs", nargs="+", required=True)
    parser.add_argument("--out", type=Path, default=Path("checkpoints/disfluency-detector"))
    parser.add_argument("--texts", type=int, default=12000, help="clean training texts")
    parser.add_argument("--val-texts", type=int, default=3000)
    parser.add_argument("--layer", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--verb-form-share",
        type=float,
        default=0.0,
        help="chance per text, train and val alike, that its broken twin is a wrong verb form "
        "where one applies (0: drawn among all GramErr rules, as the shipped detector was)",
    )
    args = parser.parse_args()
    if not 0.0 <= args.verb_form_share <= 1.0:
        parser.error(f"--verb-form-share must be in 0..1, got {args.verb_form_share}")
    for option in ("texts", "val_texts", "epochs"):
        if getattr(args, option) < 1:
            parser.error(
                f"--{option.replace('_', '-')} must be at least 1, got {getattr(args, option)}"
            )
    problem = folder_problem(args.out, (CONFIG_FILE, WEIGHTS_FILE))
    if problem:  # checked before the work, as save_detector checks it again before the swap
        raise DataError(f"--out: {problem}")
    started = time.time()
    train_texts = clean_texts(args.pairs, args.texts, args.seed)
    val_texts = clean_texts(args.val_pairs, args.val_texts, args.seed)  # read before the work
    configure_offline_mode()
    layers = load_encoder()[1].config.num_hidden_layers
    if not 0 <= args.layer <= layers:
        parser.error(f"--layer must be in 0..{layers} (the encoder's layers), got {args.layer}")
    torch.manual_seed(args.seed)
    train = twins(train_texts, args.seed, args.verb_form_share)
    check_twins(train, "--pairs", args.pairs, need_reworded=False)
    val = twins(val_texts, args.seed + 1, args.verb_form_share)
    check_twins(val, "--val-pairs", args.val_pairs, need_reworded=True)
    texts_seen = [t for c, b, _, r in train + val for t in (c, b, r) if t]
    states = layer_states(texts_seen, args.layer)
    dim = next(iter(states.values())).shape[1]
    table = TokenTable(list(states.values()), dim)
    row_of = {text: row for row, text in enumerate(states)}
    print(f"{len(train)} train and {len(val)} val twins encoded in {time.time() - started:.0f} s")
    reworded = [r for _, _, _, r in train if r]
    texts = [c for c, _, _, _ in train] + reworded + [b for _, b, _, _ in train]
    labels = torch.tensor([0.0] * (len(train) + len(reworded)) + [1.0] * len(train))
    text_rows = [row_of[t] for t in texts]
    val_clean, val_broken = [row_of[c] for c, _, _, _ in val], [row_of[b] for _, b, _, _ in val]
    has_rewording = [k for k, twin in enumerate(val) if twin[3]]
    val_reworded = [row_of[val[k][3]] for k in has_rewording]
    detector = DisfluencyDetector(args.layer, dim=dim)
    optimizer = torch.optim.AdamW(detector.parameters(), lr=1e-3, weight_decay=1e-2)
    order_rng = np.random.default_rng(args.seed)
    best, best_state, history, per_rule = -1.0, None, [], {}
    for epoch in range(1, args.epochs + 1):
        order = order_rng.permutation(len(texts))
        for start in range(0, len(texts), 128):
            rows = order[start : start + 128]
            loss = functional.binary_cross_entropy_with_logits(
                detector(*table.batch(torch.tensor([text_rows[i] for i in rows]))), labels[rows]
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        broken = logits(detector, table, val_broken)
        above = broken > logits(detector, table, val_clean)
        above_reworded = broken[has_rewording] > logits(detector, table, val_reworded)
        score = (above.mean() + above_reworded.mean()) / 2
        history.append(
            {
                "epoch": epoch,
                "val_above_original": round(float(above.mean()), 4),
                "val_above_reworded": round(float(above_reworded.mean()), 4),
            }
        )
        print(history[-1], flush=True)
        if score > best:
            best = float(score)
            best_state = {k: v.clone() for k, v in detector.state_dict().items()}
            per_rule = pd.Series(above).groupby([r for _, _, r, _ in val]).mean().round(4).to_dict()
    assert best_state is not None
    detector.load_state_dict(best_state)
    record = {
        "pairs": [f"{Path(p).parent.name}/{Path(p).name}" for p in args.pairs],
        "val_pairs": [f"{Path(p).parent.name}/{Path(p).name}" for p in args.val_pairs],
        "train_twins": len(train),
        "train_reworded": len(reworded),
        "val_twins": len(val),
        "val_reworded": len(val_reworded),
        "seed": args.seed,
        "verb_form_share": args.verb_form_share,
        "history": history,
        "val_score": best,
        "val_above_original_per_rule": per_rule,
    }
    save_detector(detector.eval(), args.out, record)
    print(f"val score (broken above original and above reworded): {best:.4f}; wrote {args.out}")


if __name__ == "__main__":
    sys.exit(run_reporting_errors("scripts/train_disfluency.py", main))
