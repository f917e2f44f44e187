"""`mismatch pretrain ...`: forwards its arguments to the pretraining LightningCLI."""

from __future__ import annotations

import argparse
import warnings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cli_args",
        nargs=argparse.REMAINDER,
        help="LightningCLI arguments, e.g. fit --config configs/pretrain.yaml",
    )


def run(args: argparse.Namespace) -> int:
    from evaluator.training.pretrain import main

    with warnings.catch_warnings():  # LightningCLI warns when args are given beside sys.argv
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
        main(args.cli_args, exit_on_error=False)
    return 0
