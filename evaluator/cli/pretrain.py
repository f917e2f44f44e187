"""`mismatch pretrain ...`: every argument, ``--help`` and a leading ``-c`` too, goes to the
pretraining LightningCLI (``mismatch pretrain fit --config configs/pretrain.yaml``)."""

from __future__ import annotations

import warnings

FORWARDS_ARGUMENTS = True


def run(arguments: list[str]) -> int:
    from evaluator.training.pretrain import main

    with warnings.catch_warnings():  # LightningCLI warns when args are given beside sys.argv
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
        main(arguments, exit_on_error=False, prog="mismatch pretrain")
    return 0
