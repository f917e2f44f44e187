"""Multi-process runs on CPU (Lightning DDP with gloo): pretraining on configs/pretrain_tiny.yaml
and `mismatch predict --devices 2`, each against what one process gives."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.cli import main as cli_main
from evaluator.evaluator import Evaluator

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "checkpoints" / "mismatch-base"


def run_python(*args: str) -> subprocess.CompletedProcess:
    """A child Python that imports this checkout (the DDP launcher re-runs the same command)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=240
    )


@pytest.fixture(scope="session")
def tiny_set(tmp_path_factory) -> Path:
    """The tiny synthetic set of the README: 280 pairs and their features, made once."""
    root = tmp_path_factory.mktemp("tiny")
    assert (
        cli_main(
            [
                "synth",
                "--out",
                str(root / "synth"),
                "--num-pairs",
                "280",
                "--processes",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    for split in ("train", "val"):
        assert (
            cli_main(
                [
                    "features",
                    "--pairs",
                    str(root / "synth" / f"{split}.parquet"),
                    "--out",
                    str(root / "features" / f"{split}.parquet"),
                    "--embeddings",
                    str(root / "embeddings.parquet"),
                    "--alignments",
                    str(root / "alignments.parquet"),
                    "--tokens",
                    str(root / "tokens"),
                    "--quiet",
                ]
            )
            == 0
        )
    return root


def test_two_process_ddp_pretraining_syncs_validation_and_exports_once(
    tiny_set: Path, tmp_path: Path
) -> None:
    runs, export = tmp_path / "runs", tmp_path / "export"
    result = run_python(
        "scripts/pretrain.py",
        "fit",
        "--config",
        "configs/pretrain_tiny.yaml",
        "--trainer.strategy",
        "ddp",
        "--trainer.devices",
        "2",
        "--trainer.accelerator",
        "cpu",
        "--trainer.max_epochs",
        "4",
        "--trainer.enable_progress_bar",
        "false",
        f"--data.pairs_dir={tiny_set / 'synth'}",
        f"--data.features={tiny_set / 'features'}",
        f"--data.embeddings={tiny_set / 'embeddings.parquet'}",
        f"--data.alignments={tiny_set / 'alignments.parquet'}",
        f"--data.tokens={tiny_set / 'tokens'}",
        f"--log_dir={runs}",
        f"--export_dir={export}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("val accuracy") == 1  # rank 0 alone reports and exports
    (run,) = (runs / "pretrain_tiny").iterdir()  # one run folder, not one per process
    (best,) = (run / "checkpoints").glob("best-*.ckpt")
    with (run / "metrics.csv").open() as handle:
        logged = [float(row["val_acc"]) for row in csv.DictReader(handle) if row["val_acc"]]
    evaluator = Evaluator.from_pretrained(export)
    exported = evaluator.checkpoint.config["metrics"]["val_accuracy"]
    # the logged val_acc is over both processes' halves of val: the best one is what rank 0
    # measures alone on the whole val split with the exported weights
    assert len(logged) == 4
    assert exported == pytest.approx(max(logged), abs=1e-6)
    assert f"{exported:.4f}" in best.name
    (prediction,) = evaluator.predict(["Two dogs ran."], ["Three dogs ran."], progress=False)
    assert 0.0 <= prediction.score <= 1.0
    assert evaluator.checkpoint.model.config.use_tokens


SCORE_IN_SMALL_CHUNKS = """
import sys

import evaluator.evaluator

evaluator.evaluator.CHUNK_PAIRS = 2  # several model chunks, so that both processes score some
from evaluator.cli import main

sys.exit(main(sys.argv[1:]))
"""


def test_predict_on_two_cpu_processes_writes_what_one_process_writes(
    tmp_path: Path, monkeypatch
) -> None:
    import evaluator.evaluator

    refs = ["Two dogs ran across the park.", "She did not go to school today.",
            "The company reported a profit of 16 million dollars last year.", "Kids play football.",
            "A man rides a horse on the beach at sunset."]  # fmt: skip
    gens = ["Three dogs ran across the park.", "She went to school today.",
            "The company reported a loss of 16 million dollars.", "Kids play football.",
            "A man rides a horse."]  # fmt: skip
    refs.append("The river runs past the old mill.")
    gens.append("The river runs past the old mill. " * 80)  # over the encoder's 512 tokens
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(
        f'{{"ref": "{ref}", "gen": "{gen}"}}\n' for ref, gen in zip(refs, gens, strict=True)
    ))  # fmt: skip
    common = ["predict", "--quiet", "--checkpoint", str(BASE), "--input", str(source)]
    monkeypatch.setattr(evaluator.evaluator, "CHUNK_PAIRS", 2)
    assert cli_main([*common, "--output", str(tmp_path / "one.csv")]) == 0
    script = tmp_path / "predict_small_chunks.py"
    script.write_text(SCORE_IN_SMALL_CHUNKS)
    result = run_python(
        str(script), *common, "--output", str(tmp_path / "two.csv"), "--devices", "2"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "two.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()
    for chatter in ("GPU available", "Tip:", "Initializing distributed", "LeafSpec"):
        assert chatter not in result.stderr  # --quiet: nothing but real warnings
    # one warning for the run, from the process that writes, not one per process
    assert result.stderr.count("1 of 6 pair(s) have a text longer than the encoder's") == 1
    assert result.stderr.count("1 of 6 pair(s) were tagged with spans on a text longer") == 1
    assert result.stderr.count("1 of 6 pair(s) have a reference of fewer than 4 words") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "one.csv",
        "pairs.jsonl",
        "predict_small_chunks.py",
        "two.csv",  # no temp file left
    ]


PRESS_CTRL_C_WHILE_SCORING = """
import sys

import evaluator.multi_device


def pressed(*args, **kwargs):
    raise KeyboardInterrupt


evaluator.multi_device.ChunkScoring.predict_step = pressed
from evaluator.cli import main

sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_while_two_processes_score_ends_as_interrupted(tmp_path: Path) -> None:
    """Lightning made Ctrl-C a silent exit 1, and leaving the process group then waited on a
    process that had already gone: a RuntimeError traceback, status 1. Lightning's own
    child-process observer (every 5 s) SIGKILLs the main process once a child has died, which
    Lightning's Ctrl-C handling makes it do: where that lands before the main process has
    exited, the status is -9 (the message is the in-process tests')."""
    source = tmp_path / "pairs.jsonl"
    source.write_text('{"ref": "A dog ran.", "gen": "A cat ran."}\n')
    script = tmp_path / "press_ctrl_c.py"
    script.write_text(PRESS_CTRL_C_WHILE_SCORING)
    result = run_python(
        str(script), "predict", "--quiet", "--checkpoint", str(BASE), "--input", str(source),
        "--output", str(tmp_path / "scores.csv"), "--devices", "2", "--accelerator", "cpu",
    )  # fmt: skip
    assert result.returncode in (130, -9), result.stderr[-3000:]
    if result.returncode == 130:
        assert "mismatch predict: interrupted\n" in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl", "press_ctrl_c.py"]
