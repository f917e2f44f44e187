"""The pretraining command line (LightningCLI), shared by scripts/pretrain.py and `mismatch pretrain`.

Adds to the stock LightningCLI what every run needs: seeding, checkpointing on val accuracy,
early stopping, a CSV or (offline-capable) wandb logger with an explicit save dir, and, after
``fit``, the export of the best weights with ``save_pretrained`` plus a per-class report and
confusion matrix of the val split. ``validate --ckpt_path CKPT`` does the same report and
export for a checkpoint of a finished run (e.g. one trained with ``--export_dir null``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from argparse import ArgumentError
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI
from lightning.pytorch.loggers import CSVLogger, Logger, WandbLogger
from lightning.pytorch.utilities.exceptions import MisconfigurationException

from evaluator.hub import save_pretrained
from evaluator.lightning_interrupt import InterruptNoted, interrupt_kept
from evaluator.process_group import leave_process_group
from evaluator.signature import folder_signature
from evaluator.training.data import MismatchDataModule
from evaluator.training.module import MismatchModule
from evaluator.training.report import summary, write_report
from mismatch_core.atomic import output_problem, write_text_atomic
from mismatch_core.checkpoint_files import export_problem
from mismatch_core.config import check_seed, config_file_problem, monitor_problem, one_line
from mismatch_core.errors import ConfigError
from mismatch_core.resources import DEFAULT_CHECKPOINT

LoggerKind = Literal["csv", "wandb"]
# what MismatchModule logs that a callback can monitor at a validation (train_acc: per epoch,
# after the epoch's validation)
LOGGED_METRICS = ("val_acc", "val_loss", "train_loss")


def make_logger(kind: LoggerKind, save_dir: str, name: str) -> Logger:
    """CSV by default; wandb (an optional package) goes offline when no API key is set (or
    WANDB_MODE=offline)."""
    if kind == "csv":
        return CSVLogger(save_dir, name=name)
    if importlib.util.find_spec("wandb") is None:
        raise ConfigError("--logger wandb needs the wandb package: pip install -e '.[wandb]'")
    os.makedirs(save_dir, exist_ok=True)
    offline = not os.environ.get("WANDB_API_KEY") or os.environ.get("WANDB_MODE") == "offline"
    return WandbLogger(project="mismatch-eval", name=name, save_dir=save_dir, offline=offline)


class PretrainCLI(LightningCLI):
    """LightningCLI for MismatchModule + MismatchDataModule with the project's run conventions."""

    def parse_arguments(self, parser: LightningArgumentParser, args) -> None:
        """Name a --config file that holds no settings, or gives a section as something other
        than a mapping, before the parser reads it (it says only "Unexpected config: ...")."""
        if args is None or isinstance(args, list):
            problem = config_file_problem(sys.argv[1:] if args is None else args)
            if problem:
                raise ConfigError(problem)
        super().parse_arguments(parser, args)
        subcommand = self.config.get("subcommand")
        problem = settings_problem(self.config.get(subcommand, self.config), subcommand)
        if problem:
            raise ConfigError(problem)

    def instantiate_classes(self) -> None:
        """Build the model and data module; a setting they refuse (a ValueError, before any
        training) is a ConfigError, so the command reports it in one line."""
        try:
            super().instantiate_classes()
        except ValueError as error:
            raise ConfigError(one_line(error)) from None

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_lightning_class_args(ModelCheckpoint, "checkpoint")
        parser.set_defaults(
            {
                "checkpoint.monitor": "val_acc",
                "checkpoint.mode": "max",
                "checkpoint.save_top_k": 1,
                "checkpoint.filename": "best-{epoch:02d}-{val_acc:.4f}",
            }
        )
        parser.add_lightning_class_args(EarlyStopping, "early_stopping")
        parser.set_defaults(
            {
                "early_stopping.monitor": "val_acc",
                "early_stopping.mode": "max",
                "early_stopping.patience": 3,
                # after each validation only: a run that ends before its first validation
                # (a small --trainer.max_steps) has no val_acc to check at the epoch's end
                "early_stopping.check_on_train_epoch_end": False,
            }
        )
        parser.add_argument(
            "--logger", type=LoggerKind, default="csv", help="csv, or wandb (the [wandb] extra)"
        )
        parser.add_argument(
            "--log_dir", type=str, default="runs", help="where logs and checkpoints go"
        )
        parser.add_argument("--run_name", type=str, default="pretrain")
        parser.add_argument(
            "--export_dir",
            type=str | None,
            default=DEFAULT_CHECKPOINT,
            help="save_pretrained target for the best model (null: no export)",
        )
        parser.add_argument(
            "--docs_dir",
            type=str | None,
            default="docs/pretrain",
            help="per-class report and confusion matrix of the val split, and the run's config "
            "(run_config.yaml; one of an earlier run is removed where none is found) (null: none)",
        )
        parser.link_arguments("data.encoder", "model.encoder")
        parser.link_arguments("data.encoder_mode", "model.encoder_mode")
        parser.link_arguments(
            "data.alignments", "model.use_alignment", compute_fn=lambda path: path is not None
        )
        parser.link_arguments(
            "data.tokens", "model.use_tokens", compute_fn=lambda path: path is not None
        )
        parser.link_arguments("data.feature_names", "model.feature_names", apply_on="instantiate")

    def instantiate_trainer(self, **kwargs):
        problem = outputs_problem(
            *(self._get(self.config, name) for name in ("export_dir", "docs_dir", "log_dir"))
        )
        if problem:  # found now, not after the training
            raise ConfigError(problem)
        kwargs["logger"] = make_logger(
            self._get(self.config, "logger"),
            self._get(self.config, "log_dir"),
            self._get(self.config, "run_name"),
        )
        return super().instantiate_trainer(**kwargs)

    def after_fit(self) -> None:
        """Reload the best weights, report on val, export the checkpoint (rank zero only)."""
        run_dir = self.trainer.log_dir  # a broadcast under DDP: every process must ask for it
        if not self.trainer.is_global_zero:
            return
        callback = self.trainer.checkpoint_callback
        best = callback.best_model_path if isinstance(callback, ModelCheckpoint) else ""
        if best:
            state = torch.load(best, map_location=self.model.device, weights_only=True)
            self.model.load_state_dict(state["state_dict"])
        self.report_and_export(best, run_dir)

    def after_validate(self) -> None:
        """Report on val and export the weights ``validate --ckpt_path`` loaded (to
        ``--export_dir``: pass it, or the config's default, the shipped base, is replaced)."""
        if not self.trainer.is_global_zero:
            return
        best = Path(self._get(self.config, "ckpt_path"))
        # runs/<name>/version_N/checkpoints/best-*.ckpt: the run's config.yaml is two levels up
        # (a checkpoint kept elsewhere names no run)
        folder = best.parent
        in_run = folder.name == "checkpoints" and folder.parent.name.startswith("version_")
        self.report_and_export(str(best), str(folder.parent) if in_run else None)

    def report_and_export(self, best: str, run_dir: str | None) -> None:
        """save_pretrained of the module's weights, then the per-class report of the val split
        (in this order: a run whose export fails leaves the earlier report alone)."""
        module, data = self.model, self.datamodule
        labels, predictions = predict_val(module, data)
        docs_dir = self._get(self.config, "docs_dir")
        metrics = summary(labels, predictions)
        export_dir = self._get(self.config, "export_dir")
        run_config = Path(run_dir) / "config.yaml" if run_dir else None
        if run_config is not None and not run_config.is_file():
            run_config = None  # a run folder whose config.yaml is gone
        if export_dir:
            training = {
                **data.describe(),
                "best checkpoint": Path(best).name if best else "last epoch",
                **({"run config": str(run_config)} if run_config else {}),
            }
            save_pretrained(
                module.model,
                export_dir,
                scaler=data.scaler,
                training=training,
                metrics=metrics,
                num_layers=data.feature_layers,
            )
        if docs_dir:
            title = f"{self._get(self.config, 'run_name')}: val split"
            write_report(labels, predictions, docs_dir, title)
            # the whole recipe beside its figures, as docs/pretrain has; none found: no copy
            # of an earlier run's left beside these figures
            copy = Path(docs_dir) / "run_config.yaml"
            if run_config is not None:
                write_text_atomic(copy, run_config.read_text())
            else:
                copy.unlink(missing_ok=True)
        written = [f"exported to {export_dir}"] if export_dir else []
        written += [f"report in {docs_dir}"] if docs_dir else []
        print("; ".join([f"val accuracy {metrics['val_accuracy']:.4f}", *written]))
        if export_dir:
            print(f"signature {folder_signature(export_dir)}")


def settings_problem(settings, subcommand: str | None) -> str | None:
    """What in the parsed settings Lightning would refuse only with a traceback, or after the
    training (zero epochs exported untrained weights), or None."""
    if subcommand == "validate":
        problem = run_checkpoint_problem(settings.get("ckpt_path"))
        if problem:
            return problem
    seed = settings.get("seed_everything")
    if not isinstance(seed, bool) and isinstance(seed, int):
        try:
            check_seed(seed, "seed_everything")
        except ValueError as error:
            return str(error)
    problem = monitor_problem(settings, LOGGED_METRICS)
    if problem:
        return problem
    data = settings.get("data") or {}
    if data.get("encoder_mode") == "trainable":
        frozen = [f"data.{key}" for key in ("alignments", "tokens") if data.get(key)]
        if frozen:  # MismatchConfig would name its use_alignment / use_tokens, not these keys
            return (
                f"{' and '.join(frozen)} read the frozen encoder's token states: with "
                "data.encoder_mode trainable set them null"
            )
    if isinstance(data.get("num_workers"), int) and data["num_workers"] < 0:
        return f"data.num_workers must be 0 or more, got {data['num_workers']}"
    trainer = settings.get("trainer", {})
    epochs, steps = trainer.get("max_epochs"), trainer.get("max_steps")
    ended = (isinstance(steps, int) and steps > 0) or bool(trainer.get("max_time"))
    unlimited = epochs == -1 and ended  # -1: no epoch limit; max_steps or max_time ends the run
    if epochs is not None and not unlimited and (not isinstance(epochs, int) or epochs < 1):
        return (
            f"trainer.max_epochs must be a positive number of epochs (or -1 with "
            f"trainer.max_steps or trainer.max_time), got {epochs}"
        )
    return None


def run_checkpoint_problem(path: str | None) -> str | None:
    """Why ``validate --ckpt_path`` cannot read the run's weights, or None."""
    if not path:
        return "validate exports a finished run's weights: pass --ckpt_path"
    if not Path(path).is_file():
        return f"--ckpt_path {path} cannot be read: no such file"
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # not a torch file, a damaged one
        return f"--ckpt_path {path} cannot be read: not a PyTorch checkpoint ({type(error).__name__})"
    if not isinstance(state, dict) or "state_dict" not in state:
        return f"--ckpt_path {path} is not a Lightning checkpoint (no state_dict)"
    return None


def outputs_problem(export_dir: str | None, docs_dir: str | None, log_dir: str) -> str | None:
    """Why the run could not write its checkpoint, report or logs, or None."""
    problems = {
        "--export_dir": export_problem(Path(export_dir)) if export_dir else None,
        "--docs_dir": output_problem(Path(docs_dir), "directory") if docs_dir else None,
        "--log_dir": output_problem(Path(log_dir), "directory"),
    }
    return next((f"{flag}: {problem}" for flag, problem in problems.items() if problem), None)


def predict_val(module: MismatchModule, data: MismatchDataModule) -> tuple[np.ndarray, np.ndarray]:
    """True labels and argmax predictions of ``module`` on the val split."""
    module.eval()
    labels, predictions = [], []
    with torch.no_grad():
        for batch in data.val_dataloader():
            batch = module.transfer_batch_to_device(batch, module.device, 0)
            predictions.append(module(batch).argmax(dim=-1).cpu())
            labels.append(batch["labels"].cpu())
    return torch.cat(labels).numpy(), torch.cat(predictions).numpy()


def main(
    args: list[str] | None = None, exit_on_error: bool = True, prog: str | None = None
) -> None:
    """Run the CLI; ``args`` None reads sys.argv (e.g. ``fit --config configs/pretrain.yaml``).
    ``exit_on_error`` False: a bad option or config key raises ConfigError (one line: the
    arguments, then what is wrong) instead of LightningCLI's usage text and exit. ``prog``:
    the command its usage names (None: the program's file name)."""
    torch.set_flush_denormal(True)  # tiny activations otherwise slow CPU training several-fold
    parser_kwargs: dict[str, object] = {"exit_on_error": exit_on_error}
    parser_kwargs |= {name: {"exit_on_error": exit_on_error} for name in LightningCLI.subcommands()}
    if prog is not None:
        parser_kwargs["prog"] = prog
    noted = InterruptNoted()
    try:
        with interrupt_kept(noted):
            PretrainCLI(
                MismatchModule,
                MismatchDataModule,
                seed_everything_default=13,
                save_config_kwargs={"overwrite": True},
                trainer_defaults={"callbacks": [noted]},
                args=args,
                parser_kwargs=parser_kwargs,
            )
    except (ArgumentError, ConfigError, MisconfigurationException) as error:
        given = " ".join(sys.argv[1:] if args is None else args)
        raise ConfigError(f"{given}: {one_line(error)}" if given else one_line(error)) from None
    leave_process_group()  # a DDP run's processes exit cleanly
