"""Timing of speed.py and ort_speed.py: our predict, bert_score.score and the readers over the
same pairs (`mismatch bench predict`'s 2,000, seed 13) in one process, round robin, best of
two rounds, as `mismatch bench predict` times them; and predict + each reader against
bert_score's time."""

import time
from collections.abc import Callable

from evaluator.cli.bench.predict import CHECKPOINT, ROUNDS, WARMUP_PAIRS, bench_pairs
from evaluator.evaluator import Evaluator
from mismatch_core.resources import encoder_path

Run = Callable[[list[str], list[str]], object]


def scorers() -> dict[str, Run]:
    """Our predict (with spans, as the bench times it) and bert_score with the same MiniLM."""
    evaluator = Evaluator.from_pretrained(CHECKPOINT)

    def ours(r: list[str], g: list[str]) -> None:
        evaluator.predict(r, g, batch_size=64, progress=False)

    def theirs(r: list[str], g: list[str]) -> None:
        import bert_score

        bert_score.score(g, r, model_type=encoder_path(), num_layers=6, batch_size=64)

    return {"predict": ours, "bert_score.score": theirs}


def pairs() -> tuple[list[str], list[str]]:
    """`mismatch bench predict`'s pairs: 2,000 real pairs, seed 13."""
    return bench_pairs(2000, 13)


def time_and_report(refs: list[str], gens: list[str], readers: dict[str, Run]) -> None:
    """Time the scorers and ``readers`` on the pairs; print each one's time and predict + each
    reader's."""
    runs = {**scorers(), **readers}
    for run in runs.values():
        run(refs[:WARMUP_PAIRS], gens[:WARMUP_PAIRS])
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(ROUNDS):
        for name, run in runs.items():
            start = time.perf_counter()
            run(refs, gens)
            times[name].append(time.perf_counter() - start)
    best = {name: min(seconds) for name, seconds in times.items()}
    for name, seconds in best.items():
        print(f"{name:<18} {seconds:7.1f} s  {len(refs) / seconds:6.1f} pairs/s")
    print(f"predict alone: {best['predict'] / best['bert_score.score']:.2f} x bert_score's time")
    for name in readers:
        with_reader = best["predict"] + best[name]
        print(
            f"predict + {name}: {len(refs) / with_reader:.1f} pairs/s, "
            f"{with_reader / best['bert_score.score']:.2f} x bert_score's time"
        )
