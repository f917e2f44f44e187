"""The `mismatch` console script: one subcommand per capability, imported only when used.

Every command has one module in this package, defining ``add_arguments(parser)`` and
``run(args) -> int``, or, where another tool reads every argument (``--help`` too; ``pretrain``
forwards to the LightningCLI in ``evaluator.training.pretrain``), ``FORWARDS_ARGUMENTS = True``
and ``run(arguments: list[str]) -> int``. No command imports another: what several share sits
in modules of its own (``scoring``, ``fit_inputs``, ``bench.parts``). No library code imports
from this package (the scripts under scripts/ do)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import select
import signal
import sys
import threading
import warnings
from collections.abc import Callable

from mismatch_core.errors import (
    CheckpointError,
    ConfigError,
    DataError,
    MismatchWarning,
    ResourceMissingError,
    WorkerError,
)
from mismatch_core.resources import configure_offline_mode, quiet_hub_libraries, torch_device
from mismatch_core.version import PACKAGE, package_version

# subcommand -> (module that defines add_arguments(parser) and run(args) -> int, or
# FORWARDS_ARGUMENTS and run(arguments) -> int; help line)
COMMANDS: dict[str, tuple[str, str]] = {
    "synth": ("evaluator.cli.synth", "build synthetic mismatch pairs from the reference corpora"),
    "features": ("evaluator.cli.features", "compute (and cache) metric features for pairs"),
    "pretrain": ("evaluator.cli.pretrain", "pretrain the mismatch evaluator (LightningCLI; see configs/pretrain.yaml)"),
    "adapt": ("evaluator.cli.adapt", "continue a base's mismatch training on real outputs (divergent bases)"),
    "finetune": ("evaluator.cli.finetune", "fine-tune the base evaluator on a task's human ratings, or your own"),
    "evaluate": ("evaluator.cli.evaluate", "fine-tune and evaluate per task (or your own ratings) against metric baselines"),
    "predict": ("evaluator.cli.predict", "rate generated texts against references; name their errors"),
    "compare": ("evaluator.cli.compare", "compare systems on the same references, with significance"),
    "spans": ("evaluator.cli.spans", "train a span tagger (which words are wrong) for a checkpoint"),
    "stress": ("evaluator.cli.stress", "blind-spot stress tests for any metric, ours included"),
    "bench": ("evaluator.cli.bench", "benchmarks: throughput (synth, features, predict), real text (realtext, spans)"),
    "demo": ("evaluator.cli.demo", "run the main job on a few real pairs and print a table"),
}


def warnings_as_command_lines(name: str, default: Callable) -> Callable:
    """A ``warnings.showwarning`` that prints a MismatchWarning as one line naming the command,
    as its errors are (``mismatch finetune: warning: 5 text(s) longer than ...``), not with a
    source path and line; any other warning goes to ``default``."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, MismatchWarning):
            print(f"mismatch {name}: warning: {message}", file=file or sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)

    return show


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with an option's default stated where its help text does not say it.
    Subcommand modes pass it on: ``add_parser(..., formatter_class=parser.formatter_class)``."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if (
            not text
            or not action.option_strings
            or action.default in (None, "", argparse.SUPPRESS)
            or action.default is False
            or "default" in text
        ):
            return text
        return f"{text} (default: %(default)s)"


class Terminated(BaseException):
    """SIGTERM (a job's time limit, ``kill``), raised where the command stands so that atomic
    writes drop their temporary files on the way out, as for Ctrl-C; SIGTERM's default action
    ended the process at once and left them."""


class _Sigterm:
    """What the commands running in this process do with SIGTERM (signals are per process)."""

    commands = 0  # commands running (run_reporting_errors; an inner one counts as well)
    # True once Terminated was raised (a second SIGTERM waits for the cleanup) or the command
    # ended: our handler lets SIGTERM pass until a command installs it again
    terminating = False
    # a swallowed Terminated's SIGTERM, sent again (_terminated_again)
    resend: threading.Timer | None = None
    resend_delay = 0.01  # seconds


def _raise_terminated(signum: int, frame: object) -> None:
    """Our SIGTERM handler; a second SIGTERM passes, also where Lightning's teardown has put
    the handler back, so that it does not cut the first one's cleanup short."""
    if not _Sigterm.terminating:
        _Sigterm.terminating = True
        raise Terminated


def _terminated_again(default_hook: Callable) -> Callable:
    """A ``sys.unraisablehook`` that raises a swallowed Terminated again: Python drops what a
    ``__del__`` raises, so a SIGTERM that landed in one was lost, and every later SIGTERM
    passed (the command ran to its end). The signal is sent again from a thread, so that its
    handler raises it where the command stands next, not inside this hook, which would drop
    it too (a command that ends first raises it as it ends: ``_stop_resend``); other
    unraisable errors go to ``default_hook``."""

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, Terminated):
            if _Sigterm.resend is not None:  # one resend is enough, and one is stopped at the end
                _Sigterm.resend.cancel()
            resend = threading.Timer(_Sigterm.resend_delay, os.kill, (os.getpid(), signal.SIGTERM))
            resend.daemon = True
            _Sigterm.resend = resend  # before all else: the command's end raises it if need be
            _Sigterm.terminating = False
            resend.start()
            return
        default_hook(unraisable)

    return hook


def _stop_resend() -> bool:
    """Whether a ``__del__`` swallowed a SIGTERM during the command. Its resend is stopped (or
    waited for, and then passes), so that it cannot end the process after the command has
    returned, nor be lost with a daemon thread at exit."""
    resend, _Sigterm.resend = _Sigterm.resend, None
    if resend is None:
        return False
    resend.cancel()
    if resend.ident is not None:  # started (a SIGTERM in the hook can stop it before)
        resend.join()
    return True


def _stdout_reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has stopped reading (``| head``), not
    some other pipe a command wrote to."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        # Linux reports a pipe whose reader has gone as POLLERR, macOS and the BSDs (and a
        # socket whose reader closed) as POLLHUP
        gone = select.POLLERR | select.POLLHUP
        return any(events & gone for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), a stdout with no file
        return False


def _default_sigterm_in_child() -> None:
    """A process forked while a command runs (metric workers, data loaders) gets SIGTERM's
    default back, whatever handler it inherited (Lightning wraps ours, or an ignored SIGTERM,
    in its own during a fit or a prediction): raised there, Terminated could unwind the
    command's frames the child inherited and delete the temporary files the command still
    writes, and Lightning's handler waits on the parent's process group (a metric pool's
    worker hung there when the pool ended)."""
    if _Sigterm.commands:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


os.register_at_fork(after_in_child=_default_sigterm_in_child)


class CommandError(Exception):
    """A user error: printed as one line on stderr with exit status 2, as are the project's
    own error types (``mismatch_core.errors``) that reach the entry point."""


def check_device(device: str | None) -> None:
    """CommandError for a --device this machine does not have (None: not given). It loads
    torch: commands call it after their cheap checks, before reading models or inputs."""
    if device is None:
        return
    try:
        torch_device(device)
    except ValueError as error:
        raise CommandError(f"--device: {error}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mismatch",
        description="Fine-grained evaluation of generated text with mismatch error types.",
    )
    parser.add_argument("--version", action="version", version=f"{PACKAGE} {package_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_line) in COMMANDS.items():
        subparsers.add_parser(name, help=help_line, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    with utf8_stdout():  # the help texts too
        return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        parser.parse_args(argv)  # prints help or the "invalid choice" error and exits
    name, rest = argv[0], argv[1:]
    # before a command imports the Hugging Face libraries: offline when no hub answers, and no
    # "Loading weights" bars; no probe of the Hub for help or predict's --offline (which
    # argparse also takes as --off, --offl, ...)
    offline = any(len(arg) >= 4 and "--offline".startswith(arg) for arg in rest)
    configure_offline_mode(offline=offline or "-h" in rest or "--help" in rest)
    quiet_hub_libraries()
    module = importlib.import_module(COMMANDS[name][0])
    args: argparse.Namespace | list[str]
    if getattr(module, "FORWARDS_ARGUMENTS", False):
        args = rest
    else:
        sub = argparse.ArgumentParser(
            prog=f"mismatch {name}", description=COMMANDS[name][1], formatter_class=HelpFormatter
        )
        module.add_arguments(sub)
        args = sub.parse_args(rest)
    shown = warnings.showwarning  # restored after: the filters a command's imports add stay
    warnings.showwarning = warnings_as_command_lines(name, shown)
    try:
        return run_reporting_errors(f"mismatch {name}", lambda: module.run(args))
    finally:
        warnings.showwarning = shown


@contextlib.contextmanager
def utf8_stdout():
    """Standard output in UTF-8 while a command runs, as every file it writes is, whatever
    the locale or PYTHONIOENCODING says: `mismatch predict > out.jsonl` is UTF-8 as `--output
    out.jsonl` is, where an ASCII stdout ended in a UnicodeEncodeError traceback at the first
    non-ASCII text (a help text's dash too). The stream's own encoding is put back after."""
    stream = sys.stdout
    if not isinstance(stream, io.TextIOWrapper) or stream.encoding.lower() in ("utf-8", "utf8"):
        yield
        return
    encoding, errors = stream.encoding, stream.errors
    try:
        stream.reconfigure(encoding="utf-8", errors="strict")
        changed = True
    except (OSError, ValueError):  # a closed or detached stdout: left as it is
        changed = False
    try:
        yield
    finally:
        if changed:
            with contextlib.suppress(OSError, ValueError):  # a closed stdout, a reader gone
                stream.reconfigure(encoding=encoding, errors=errors)


def run_reporting_errors(prog: str, run: Callable[[], int | None]) -> int:
    """``run()``'s exit status; the project's own error types end it with one line on stderr
    and status 2 (the message names what to fix: file, line, key), and so does an error the
    file system raises where no check foresaw it (a name too long, a full disk: the message
    names the path); a reader that stops reading its output (``| head``) ends it quietly with
    status 141; Ctrl-C ends it with status 130, SIGTERM with 143 (where it had its
    default action: an application's own handler stays), each with no temporary file left.
    Also the entry of the scripts."""
    holds = (  # signals land in the main thread; an application's own handler (or an
        # ignored SIGTERM) and an outer command's stay as they are
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    )
    unraisable_hook = sys.unraisablehook
    terminated = False  # a Terminated on its way out of the command
    try:
        try:  # installed inside, so that a SIGTERM right after it is caught below
            _Sigterm.commands += 1
            if holds:
                _Sigterm.terminating = False
                sys.unraisablehook = _terminated_again(unraisable_hook)
                signal.signal(signal.SIGTERM, _raise_terminated)
            return int(run() or 0)
        except Terminated:
            terminated = True
            raise
        finally:  # the default back before any error line is printed
            _Sigterm.commands -= 1
            if holds:  # a SIGTERM still pending here (signal.signal runs it) passes: the
                _Sigterm.terminating = True  # command has ended, and the swap must happen
                swallowed = _stop_resend()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                sys.unraisablehook = unraisable_hook
                if swallowed and not terminated:
                    raise Terminated  # the command ended before the resend was raised
    except (
        CommandError,
        CheckpointError,
        ConfigError,
        DataError,
        ResourceMissingError,
        WorkerError,
        OSError,  # the file system's, where no check foresaw it
    ) as error:  # atomic writes have dropped their temporary files by now
        if isinstance(error, BrokenPipeError) and _stdout_reader_gone():
            # the reader stopped (`| head`): nothing went wrong to report; stdout to
            # /dev/null, or flushing it at exit raises again; the status of a process that
            # SIGPIPE ended
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        with contextlib.suppress(OSError):  # stderr's own reader gone: the status says it
            print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        if not holds:  # an outer command's SIGTERM: it ends that command too
            raise
        print(f"{prog}: terminated", file=sys.stderr)
        return 143
