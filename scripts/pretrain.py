"""Pretrain the mismatch evaluator: python scripts/pretrain.py fit --config configs/pretrain.yaml

The same run as `mismatch pretrain fit ...`; a bad option, config key or data is one line.
"""

import sys

from mismatch_core.resources import configure_offline_mode

if __name__ == "__main__":
    configure_offline_mode()  # before the Hugging Face libraries are imported
    from evaluator.cli import run_reporting_errors
    from evaluator.training.pretrain import main

    sys.exit(run_reporting_errors("scripts/pretrain.py", lambda: main(exit_on_error=False)))
