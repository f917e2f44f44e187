"""The `mismatch` console script lists its subcommands and reports user errors cleanly."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evaluator import cli


def test_help_lists_every_subcommand():
    result = subprocess.run(
        [sys.executable, "-m", "evaluator.cli", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    for name in cli.COMMANDS:
        assert name in result.stdout


def test_version_prints_the_package_version_the_signatures_carry(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"mismatch-eval {metadata.version('mismatch-eval')}\n"


def test_unknown_subcommand_exits_non_zero():
    result = subprocess.run(
        [sys.executable, "-m", "evaluator.cli", "frobnicate"], capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "invalid choice" in result.stderr


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(monkeypatch, capsys):
    import evaluator.cli.predict as predict

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(predict, "run", interrupted)
    assert cli.main(["predict", "--input", "pairs.jsonl"]) == 130
    assert capsys.readouterr().err == "mismatch predict: interrupted\n"


def test_a_command_writes_utf8_to_an_ascii_stdout_and_leaves_its_encoding(monkeypatch):
    """With PYTHONIOENCODING=ascii (or a Latin-1 locale) `mismatch predict` ended in a
    UnicodeEncodeError traceback at the first non-ASCII id or text it wrote to stdout; its
    files were UTF-8 all along."""
    import io

    import evaluator.cli.predict as predict

    def writes(args):
        print('{"id": "café", "gen": "東京"}')
        return 0

    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(predict, "run", writes)
    assert cli.main(["predict", "--input", "pairs.jsonl"]) == 0
    stdout.flush()
    assert raw.getvalue().decode("utf-8") == '{"id": "café", "gen": "東京"}\n'
    assert (stdout.encoding, stdout.errors) == ("ascii", "strict")
    raw.truncate(0)
    raw.seek(0)
    with pytest.raises(SystemExit) as ended:  # a help text with a dash
        cli.main(["evaluate", "--help"])
    stdout.flush()
    assert ended.value.code == 0 and "—" in raw.getvalue().decode("utf-8")
    assert (stdout.encoding, stdout.errors) == ("ascii", "strict")


def test_our_error_types_end_a_command_with_one_line_and_status_2(monkeypatch, capsys):
    import evaluator.cli.predict as predict
    from mismatch_core.errors import DataError

    def failing(args):
        raise DataError("pairs.jsonl:3: missing key 'gen'")

    monkeypatch.setattr(predict, "run", failing)
    assert cli.main(["predict", "--input", "pairs.jsonl"]) == 2
    assert capsys.readouterr().err == "mismatch predict: error: pairs.jsonl:3: missing key 'gen'\n"


def test_our_warnings_are_one_line_naming_the_command_and_a_librarys_stay_as_written(
    monkeypatch, capsys
):
    """A long text in `mismatch finetune` printed a source path, a line number and the code
    line that warned; a library's warning keeps its own form, also when it points at our code;
    after the command the caller's way of showing warnings is back."""
    import warnings

    import evaluator.cli.finetune as finetune
    import evaluator.features.encoder_pass as encoder_pass
    from mismatch_core.errors import MismatchWarning

    def warning_run(args):
        message = "5 text(s) longer than 512 tokens were truncated"
        warnings.warn_explicit(message, MismatchWarning, encoder_pass.__file__, 159)
        return 0

    monkeypatch.setattr(finetune, "run", warning_run)
    before = warnings.showwarning
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert cli.main(["finetune", "--task", "nli", "--out", "x"]) == 0
    assert warnings.showwarning is before
    err = capsys.readouterr().err
    assert err == "mismatch finetune: warning: 5 text(s) longer than 512 tokens were truncated\n"
    # a library's warning, even one raised on a line of ours, goes on as it came
    shown = []
    show = cli.warnings_as_command_lines("finetune", lambda *given: shown.append(given))
    show("divide by zero", RuntimeWarning, encoder_pass.__file__, 160)
    assert shown == [("divide by zero", RuntimeWarning, encoder_pass.__file__, 160, None, None)]
    assert capsys.readouterr().err == ""


def test_a_bad_pretrain_config_key_is_one_line_naming_the_file_and_key(tmp_path, capsys):
    config = tmp_path / "pretrain.yaml"
    config.write_text("model:\n  bogus_key: 3\n")
    assert cli.main(["pretrain", "fit", "--config", str(config)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1  # not LightningCLI's usage text
    assert error.startswith(f"mismatch pretrain: error: fit --config {config}: ")
    assert "model.bogus_key" in error
    config.write_text("trainer:\n  max_epochs: abc\n")  # jsonargparse spreads this over lines
    assert cli.main(["pretrain", "fit", "--config", str(config)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "trainer.max_epochs" in error
    config.write_text(  # refused when the data module is built, before its files are read
        f"data:\n  pairs_dir: {tmp_path}\n  features: {tmp_path}\n  batch_size: 0\n"
    )
    assert cli.main(["pretrain", "fit", "--config", str(config)]) == 2
    last = capsys.readouterr().err.splitlines()[-1]  # after Lightning's "Seed set" line
    assert last.startswith("mismatch pretrain: error: fit --config ")
    assert last.endswith("data.batch_size must be at least 1, got 0")


def test_a_pretrain_config_without_settings_is_named_before_parsing(tmp_path, capsys):
    """jsonargparse says only "Unexpected config: ..." of these, or nothing (a repeated key)."""
    config = tmp_path / "pretrain.yaml"
    for text, problem in (
        ("# all defaults\n", "no settings in the file (a YAML mapping of keys to values)"),
        (  # the parser kept the second section alone, silently
            "model:\n  lr: 0.1\ndata:\n  batch_size: 4\nmodel:\n  lr: 0.5\n",
            "key 'model' is given twice in one mapping (lines 1 and 5)",
        ),
        (
            "trainer: {max_steps: 4, max_steps: 400}\n",
            "key 'max_steps' is given twice in one mapping (lines 1 and 1)",
        ),
        (  # a merge key is no repeat, and the checks after it still run
            "model:\n  <<: {lr: 0.1}\n  lr: 0.2\ndata: 5\n",
            "key 'data' must be a mapping of its settings, got 5",
        ),
        ("- fit\n", "the file must be a YAML mapping of keys to values, got ['fit']"),
        ("data: 5\n", "key 'data' must be a mapping of its settings, got 5"),
    ):
        config.write_text(text)
        assert cli.main(["pretrain", "fit", f"--config={config}"]) == 2
        error = capsys.readouterr().err
        assert error.startswith(f"mismatch pretrain: error: fit --config={config}: {config}: ")
        assert problem in error and error.count("\n") == 1


def test_the_training_commands_check_their_arguments_before_loading_torch(tmp_path):
    """Loading torch and Lightning takes seconds: --help and a misspelt task answer without."""
    script = f"""
import sys
from evaluator.cli import main
for argv in (["evaluate", "--task", "summarisation", "--out", {str(tmp_path)!r}],
             ["finetune", "--task", "summarisation", "--out", {str(tmp_path / "x")!r}]):
    assert main(argv) == 2
for argv in (["evaluate", "--help"], ["finetune", "--help"], ["adapt", "train", "--help"],
             ["spans", "train", "--help"]):
    try:
        main(argv)
    except SystemExit as done:
        assert done.code == 0
print(sorted(name for name in sys.modules if name.split(".")[0] in ("torch", "lightning")))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "unknown task(s) summarisation" in result.stderr
    assert "unknown task 'summarisation'" in result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


def test_evaluate_writes_results_only_where_told(capsys):
    """docs/results holds the shipped results: a one-task check must not replace them."""
    with pytest.raises(SystemExit) as done:
        cli.main(["evaluate", "--task", "nli"])
    assert done.value.code == 2
    assert "the following arguments are required: --out" in capsys.readouterr().err


def help_entries(text: str) -> list[str]:
    """The options of a --help text, each with its help joined on one line."""
    entries: list[str] = []
    inside = False  # in an option's entry: its wrapped help lines are indented further
    for line in text.splitlines():
        if line.startswith("  -"):
            entries.append(line.strip())
            inside = True
        elif inside and line.startswith("    ") and line.strip():
            entries[-1] += " " + line.strip()
        else:
            inside = False
    return entries


def test_help_states_each_default_once(capsys):
    """Every option of every command: a default the help text does not give is added, none
    is said twice, none is 'None' or empty."""
    commands = [[name] for name in cli.COMMANDS if name not in ("adapt", "spans", "pretrain")]
    commands += [["adapt", mode] for mode in ("pairs", "chains", "train")]
    commands += [["spans", mode] for mode in ("train", "copy")]
    for argv in commands:
        with pytest.raises(SystemExit) as done:
            cli.main([*argv, "--help"])
        assert done.value.code == 0
        for entry in help_entries(capsys.readouterr().out):
            assert entry.count("(default") <= 1, (argv, entry)
            assert "(default: None)" not in entry and "(default: )" not in entry, (argv, entry)
    for argv, stated in (
        (["adapt", "train", "--help"], "epochs per run (the best is kept) (default: 8)"),
        (["predict", "--help"], "pairs per batch (default: 64)"),
        (["stress", "--help"], "random seeds per test (default: 5)"),
    ):
        with pytest.raises(SystemExit):
            cli.main(argv)
        assert stated in " ".join(capsys.readouterr().out.split()), argv  # argparse wraps lines


@pytest.mark.parametrize(
    ("script", "arguments", "line"),
    [
        ("pretrain.py", ["fit", "--config", "empty.yaml"], "scripts/pretrain.py: error: fit --config"),
        (
            "finetune.py",
            ["fit", "--config", "configs/finetune/dialogue.yaml", "--data.checkpoint", "/nowhere"],
            "scripts/finetune.py: error: checkpoint directory /nowhere does not exist",
        ),
        (  # found after the fit's data was read: a FileExistsError traceback
            "finetune.py",
            ["fit", "--config", "configs/finetune/dialogue.yaml", "--data.cache_dir", "empty.yaml"],
            "error: data.cache_dir: empty.yaml exists and is not a directory",
        ),
        (  # a TypeError on the missing store
            "evaluate_split.py",
            ["checkpoints/mismatch-base", "--pairs", "p.parquet", "--features", "f.parquet",
             "--embeddings", "empty.yaml"],
            "/checkpoints/mismatch-base reads alignments: give --alignments",
        ),
        (  # a folder: a FileNotFoundError traceback saying it did not exist
            "evaluate_split.py",
            ["checkpoints/mismatch-base", "--pairs", "p.parquet", "--features", "f.parquet",
             "--embeddings", ".", "--alignments", "empty.yaml"],
            "scripts/evaluate_split.py: error: --embeddings .: no such file",
        ),
        (
            "setup_nltk_data.py",
            ["--dest", "empty.yaml/nltk"],
            "error: --dest empty.yaml/nltk: cannot make the folder, a file is in the way",
        ),
        (  # trained on no text, an untrained detector written with exit 0
            "train_disfluency.py",
            ["--pairs", "p.parquet", "--val-pairs", "p.parquet", "--texts", "0"],
            "error: --texts must be at least 1, got 0",
        ),
        (
            "train_disfluency.py",
            ["--pairs", "p.parquet", "--val-pairs", "p.parquet", "--verb-form-share", "1.5"],
            "error: --verb-form-share must be in 0..1, got 1.5",
        ),
        (  # found by save_detector, after the training
            "train_disfluency.py",
            ["--pairs", "p.parquet", "--val-pairs", "p.parquet", "--out", "."],
            "scripts/train_disfluency.py: error: --out: . is the working directory or holds it",
        ),
        (  # pyarrow's traceback
            "train_disfluency.py",
            ["--pairs", "empty.yaml", "--val-pairs", "empty.yaml"],
            "error: empty.yaml is not a readable parquet file of pairs",
        ),
    ],
)
def test_the_training_scripts_end_bad_input_with_one_line(tmp_path, script, arguments, line):
    """Each gave a traceback with status 1 (or wrote output it should not have) where the
    `mismatch` commands name the problem in one line."""
    from mismatch_core.resources import REPO_ROOT

    (tmp_path / "empty.yaml").write_text("")
    arguments = [
        str(REPO_ROOT / a) if a.startswith(("configs/", "checkpoints/")) else a for a in arguments
    ]
    assert line in script_error(script, arguments, tmp_path)


def test_a_file_system_error_no_check_foresaw_is_one_line(capsys) -> None:
    """A name too long for the file system, a full disk: a traceback before, exit 1."""

    def refused() -> None:
        raise OSError(36, "File name too long", "x" * 300)

    assert cli.run_reporting_errors("mismatch finetune", refused) == 2
    error = capsys.readouterr().err
    assert error.startswith("mismatch finetune: error: [Errno 36] File name too long: 'xxx")
    assert error.count("\n") == 1


TERMINATED_RUN = """
import os, signal, sys, time
from pathlib import Path
from evaluator.cli import run_reporting_errors
from mismatch_core.atomic import atomic_path

def run():
    ours = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *given: ours(*given))  # as Lightning wraps it in a fit
    child = os.fork()  # a metric worker: SIGTERM's default action there
    if child == 0:
        os._exit(0 if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else 1)
    assert os.waitpid(child, 0)[1] == 0, "the forked child kept the command's handler"
    try:
        with atomic_path(Path("scores.jsonl")) as temporary:
            temporary.write_text("half")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
    finally:  # a second SIGTERM must not cut the cleanup short, also where Lightning's
        signal.signal(signal.SIGTERM, ours)  # teardown has put our handler back
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)
        print("cleanup finished")

sys.exit(run_reporting_errors("mismatch predict", run))
"""


APPLICATION_RUN = """
import os, signal, sys, time
from evaluator.cli import run_reporting_errors

def mine(*given):
    print("mine", flush=True)

signal.signal(signal.SIGTERM, mine)

def run():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.5)

status = run_reporting_errors("mismatch predict", run)
child = os.fork()  # after the command, a fork keeps the application's handler too
if child == 0:
    os._exit(0 if signal.getsignal(signal.SIGTERM) == mine else 1)
print("kept", signal.getsignal(signal.SIGTERM) == mine and os.waitpid(child, 0)[1] == 0)
sys.exit(status)
"""


AFTER_RUNS = """
import os, signal, sys, threading, time
from evaluator import cli

def terminated():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)

def forked_default():
    child = os.fork()
    if child == 0:
        os._exit(0 if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else 1)
    return os.waitpid(child, 0)[1]

statuses = [cli.run_reporting_errors("x", terminated) for _ in range(2)]
print(statuses, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, cli._Sigterm.commands)
inner = lambda: print("went on", cli.run_reporting_errors("inner", terminated))
print(cli.run_reporting_errors("outer", inner))  # the outer command's SIGTERM ends it too
found = []  # a command in another thread: signals land in the main thread, no handler
thread = threading.Thread(target=lambda: found.append(cli.run_reporting_errors("x", lambda: 0)))
thread.start()
thread.join()
print(found, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, cli._Sigterm.commands)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # an ignored SIGTERM: a worker gets the default
print(cli.run_reporting_errors("x", forked_default))
"""


def test_sigterm_ends_a_command_without_leaving_its_temporary_file(tmp_path: Path) -> None:
    """SIGTERM's default action ended the process where it stood: the output's temporary file
    stayed (.scores.<pid>.tmp.jsonl)."""
    result = subprocess.run(
        [sys.executable, "-c", TERMINATED_RUN], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 143, result.stderr
    assert result.stderr == "mismatch predict: terminated\n"
    assert result.stdout == "cleanup finished\n"
    assert list(tmp_path.iterdir()) == []
    # an application running a command in its process keeps its own handler
    result = subprocess.run(
        [sys.executable, "-c", APPLICATION_RUN], capture_output=True, text=True, cwd=tmp_path
    )
    assert (result.returncode, result.stdout) == (0, "mine\nkept True\n"), result.stderr
    # one command after another, each stopped; an inner command's SIGTERM ends the outer one;
    # a command in a thread; a fork under an ignored SIGTERM
    result = subprocess.run([sys.executable, "-c", AFTER_RUNS], capture_output=True, text=True)
    assert result.stderr == "x: terminated\nx: terminated\nouter: terminated\n"
    assert result.stdout == "[143, 143] True 0\n143\n[0] True 0\n0\n", result.stderr


SIGTERM_IN_DEL = """
import os
import signal
import sys
import time

from evaluator import cli
from evaluator.cli import run_reporting_errors

cli._Sigterm.resend_delay = float(sys.argv[2])


class Dropped:
    def __del__(self):  # as regex's SetBase.__del__ ran when a SIGTERM landed
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)


def run():
    for _ in range(int(sys.argv[3])):
        Dropped()
    time.sleep(float(sys.argv[1]))
    print("ran to its end")


status = run_reporting_errors("x", run)
time.sleep(1.5)  # the program that ran the command goes on
print("returned", status)
sys.exit(status)
"""


@pytest.mark.parametrize(
    ("work_after", "resend_delay", "drops", "printed"),
    [
        ("5", "0.01", "1", ""),
        ("0", "5", "1", "ran to its end\n"),  # the command ends first
        ("0", "1", "2", "ran to its end\n"),  # two swallowed: the first resend is stopped too
    ],
)
def test_a_sigterm_that_lands_in_a_del_still_ends_the_command(
    work_after, resend_delay, drops, printed
) -> None:
    """Python drops what a __del__ raises: the command ran to its end, exit 0, and every later
    SIGTERM passed (seen under `predict --devices 2`). A command that ends before the signal
    is sent again returns 143 too; the resend neither ends the program after the command
    returned nor dies unsent with its thread."""
    result = subprocess.run(
        [sys.executable, "-c", SIGTERM_IN_DEL, work_after, resend_delay, drops],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (143, f"{printed}returned 143\n"), result.stderr
    assert result.stderr == "x: terminated\n"


PRINTS_MANY_LINES = """
import sys

from evaluator.cli import run_reporting_errors


def run():
    if sys.argv[1:] == ["helper"]:  # a helper process's pipe, not stdout's reader
        print("a result")
        raise BrokenPipeError(32, "Broken pipe")
    for line in range(200_000):
        print(f"line {line}")


sys.exit(run_reporting_errors("mismatch synth", run))
"""


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path: Path) -> None:
    """`mismatch synth --audit 5 | head -2` printed "error: [Errno 32] Broken pipe", exit 2."""
    script = tmp_path / "many.py"
    script.write_text(PRINTS_MANY_LINES)
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"{shlex.quote(sys.executable)} {script} | head -1"],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout, result.stderr) == (141, "line 0\n", "")
    # a broken pipe stdout's reader did not cause is an error as before, and stdout is kept
    helper = subprocess.run(
        [sys.executable, str(script), "helper"], capture_output=True, text=True
    )
    assert (helper.returncode, helper.stdout) == (2, "a result\n")
    assert helper.stderr == "mismatch synth: error: [Errno 32] Broken pipe\n"


def script_error(script: str, arguments: list[str], cwd: Path) -> str:
    """What scripts/<script> run in ``cwd`` prints on stderr, having ended with status 2 and
    no traceback."""
    from mismatch_core.resources import REPO_ROOT

    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / script), *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_script_inputs_that_give_nothing_to_learn_or_no_table_are_named(tmp_path: Path) -> None:
    """Val texts without a broken twin made the detector's kept epoch undefined (an assert
    after the training), a layer the encoder lacks an IndexError; a malformed metrics.json
    stopped the ablation table with a JSONDecodeError or KeyError traceback."""
    pd.DataFrame(
        [{"id": "a", "ref": ["Yes.", "No."], "gen": "Fine.", "label": "NoContr", "label_id": 0}]
    ).to_parquet(tmp_path / "short.parquet")
    sentences = ["Two dogs are running on the beach.", "A woman is slicing an onion."]
    pd.DataFrame(
        {"id": ["a", "b"], "ref": sentences, "gen": sentences, "label": "NoContr", "label_id": 0}
    ).to_parquet(tmp_path / "clean.parquet")
    (tmp_path / "metrics.json").write_text(
        '{"val_accuracy": 0.9, "val_macro_f1": 0.8, "val_pairs": 10}'
    )
    (tmp_path / "ablations" / "no_text").mkdir(parents=True)
    (tmp_path / "ablations" / "no_text" / "metrics.json").write_text('{"val_accuracy": 0.9')
    for script, arguments, line in (
        (  # an IndexError after the twins were made and encoded
            "train_disfluency.py",
            ["--pairs", "short.parquet", "--val-pairs", "short.parquet", "--layer", "7"],
            "error: --layer must be in 0..6 (the encoder's layers), got 7",
        ),
        (
            "train_disfluency.py",
            ["--pairs", "clean.parquet", "--val-pairs", "short.parquet"],
            "error: --val-pairs short.parquet: no text of 3-60 words that a GramErr rule breaks",
        ),
        ("ablation_table.py", ["."], "error: ablations/no_text/metrics.json is not JSON"),
    ):
        assert line in script_error(script, arguments, tmp_path)
    assert not (tmp_path / "ablations.md").exists()


def test_the_pretraining_script_shows_lightnings_help(capsys) -> None:
    """Run through `mismatch pretrain`, it showed the wrapper's stub (a leading -c, refused
    too: test_training.py::test_mismatch_pretrain_forwards_arguments)."""
    from mismatch_core.resources import REPO_ROOT

    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "pretrain.py"), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0
    assert "[-c CONFIG] {fit,validate,test,predict}" in result.stdout
    with pytest.raises(SystemExit) as done:  # and so does `mismatch pretrain --help`
        cli.main(["pretrain", "--help"])
    assert done.value.code == 0
    assert "usage: mismatch pretrain [-c CONFIG] {fit,validate,test,predict}" in (
        capsys.readouterr().out
    )
