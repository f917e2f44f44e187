"""`mismatch pretrain ...`: forwards its arguments to the pretraining LightningCLI."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cli_args",
        nargs=argparse.REMAINDER,
        help="LightningCLI arguments, e.g. fit --config configs/pretrain.yaml",
    )


def run(args: argparse.Namespace) -> int:
    from evaluator.training.pretrain import main

    main(args.cli_args)
    return 0
