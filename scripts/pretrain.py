"""Pretrain the mismatch evaluator: python scripts/pretrain.py fit --config configs/pretrain.yaml

The same code as `mismatch pretrain`; see `python scripts/pretrain.py --help`.
"""

import sys

from evaluator.cli import main

if __name__ == "__main__":
    sys.exit(main(["pretrain", *sys.argv[1:]]))
