"""Fine-tune a MiniLM cross-encoder on the NLI task's training groups of one seed and read its
test groups the way `mismatch evaluate --task nli` scores them.

    python nli_probe.py SEED INIT OUT [EPOCHS [sick|half]]

INIT: `minilm` (the shipped encoder, a new 3-class head) or a saved cross-encoder folder
(a transformers model with 3 classes in the order same meaning, neither, contradiction, as
../2026-11-29-cross-encoder/xenc_train.py saves them; they map to entailment, neutral,
contradiction). The splits are evaluate's: 80/20 by group with the seed (`split_rows`), and
10 % of the training groups held out for the epoch choice with the fine-tuning's val seed.
After each epoch it prints the validation loss and, on the test groups, the task's τ (Kendall
τ-b of each class probability against the one-hot gold label, averaged over the 3 classes)
and accuracy; OUT/epoch<k>.npz keeps the val and test probabilities. With `sick`, SICK TRAIN's
pairs join the training examples, read both ways with their label in that direction; with
`half`, only half of the training groups train (a seeded group hash picks them).
"""

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "2026-11-29-cross-encoder"))
from cross_encoder import model_probabilities  # noqa: E402
from training import hard_labels, train_epochs  # noqa: E402
from transformers import AutoTokenizer, BertForSequenceClassification  # noqa: E402

from evaluator.finetune.agreement import kendall  # noqa: E402
from evaluator.finetune.datamodule import VAL_SEED_OFFSET, split_rows  # noqa: E402
from evaluator.human_data import HumanRecord, load_records  # noqa: E402
from mismatch_core.jsonl import iter_jsonl  # noqa: E402
from mismatch_core.resources import data_dir, encoder_path  # noqa: E402

CLASSES = ("entailment", "neutral", "contradiction")
LEARNING_RATE = 5e-5
EPOCHS = 3
HALF_SEED_OFFSET = 20_000


def nli_records() -> list[HumanRecord]:
    """MNLI dev matched's records, in the data file's order (the order `mismatch evaluate` reads)."""
    return load_records(data_dir() / "human" / "nli" / "mnli_dev_matched.jsonl.gz")


def gold_classes(records: list[HumanRecord]) -> np.ndarray:
    """Each record's gold class, an index into CLASSES."""
    return np.array([[r.scores[c] for c in CLASSES] for r in records]).argmax(axis=1)


def evaluate_splits(
    records: list[HumanRecord], seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train, validation, test) rows as `mismatch evaluate` splits them for ``seed``."""
    train, test = split_rows(records, np.arange(len(records)), seed, 0.2)
    train, val = split_rows(records, train, VAL_SEED_OFFSET + seed, 0.1)
    return train, val, test


def task_tau(probabilities: np.ndarray, gold: np.ndarray) -> float:
    """Mean over classes of Kendall τ-b between P(class) and the one-hot gold label."""
    onehot = np.eye(3)[gold]
    return float(np.mean([kendall(probabilities[:, c], onehot[:, c]) for c in range(3)]))


def log_loss(probabilities: np.ndarray, gold: np.ndarray) -> float:
    """Mean cross-entropy of the gold class: the validation loss that chooses."""
    return float(-np.log(probabilities[np.arange(len(gold)), gold] + 1e-12).mean())


def sick_examples() -> list[tuple[str, str, int]]:
    """SICK TRAIN's pairs both ways, each labelled by its judgement in that direction."""
    label = {"entails": 0, "neutral": 1, "contradicts": 2}
    out = []
    for _, pair in iter_jsonl(data_dir() / "sick" / "sick_train.jsonl.gz"):
        out.append((pair["a"], pair["b"], label[pair["ab"].split("_")[1]]))
        out.append((pair["b"], pair["a"], label[pair["ba"].split("_")[1]]))
    return out


def main() -> None:
    seed, init, out = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else EPOCHS
    extra = sys.argv[5] if len(sys.argv) > 5 else ""
    if extra not in ("", "sick", "half"):
        sys.exit(f"EXTRA must be sick or half, got {extra!r}")
    torch.manual_seed(seed)
    records = nli_records()
    gold = gold_classes(records)
    train, val, test = evaluate_splits(records, seed)
    if extra == "half":
        train, _ = split_rows(records, train, HALF_SEED_OFFSET + seed, 0.5)
    print(f"seed {seed}: train {len(train)}, val {len(val)}, test {len(test)}", flush=True)
    folder = encoder_path() if init == "minilm" else Path(init)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = BertForSequenceClassification.from_pretrained(folder, num_labels=3)
    examples = [(records[i].refs[0], records[i].gen, int(gold[i])) for i in train]
    if extra == "sick":
        examples += sick_examples()
    print("training examples per class", np.bincount([e[2] for e in examples]), flush=True)
    out.mkdir(parents=True, exist_ok=True)

    def read(rows: np.ndarray) -> np.ndarray:
        refs = [records[i].refs[0] for i in rows]
        gens = [records[i].gen for i in rows]
        return model_probabilities(model, tokenizer, refs, gens)

    def report(epoch: int) -> None:
        p_val, p_test = read(val), read(test)
        val_loss = log_loss(p_val, gold[val])
        accuracy = float((p_test.argmax(axis=1) == gold[test]).mean())
        print(
            f"epoch {epoch}: val loss {val_loss:.4f}, val tau {task_tau(p_val, gold[val]):.4f}, "
            f"test tau {task_tau(p_test, gold[test]):.4f}, test accuracy {accuracy:.4f}",
            flush=True,
        )
        np.savez(out / f"epoch{epoch}.npz", val=p_val, test=p_test, val_rows=val, test_rows=test)

    report(-1)
    train_epochs(model, tokenizer, examples, epochs, LEARNING_RATE, hard_labels(examples), report)


if __name__ == "__main__":
    main()
