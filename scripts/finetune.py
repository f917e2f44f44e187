"""Fine-tune on a task's human ratings: python scripts/finetune.py fit --config configs/finetune/<task>.yaml
(your own: --config configs/finetune/ratings.yaml --data.ratings FILE)."""

import sys

from mismatch_core.resources import configure_offline_mode

if __name__ == "__main__":
    configure_offline_mode()  # before the Hugging Face libraries are imported
    from evaluator.cli import run_reporting_errors
    from evaluator.finetune.lightning_cli import main

    sys.exit(run_reporting_errors("scripts/finetune.py", main))
