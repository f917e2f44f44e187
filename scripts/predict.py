"""Score generated texts against references: python scripts/predict.py --input pairs.jsonl

The same code as `mismatch predict`; see `python scripts/predict.py --help`.
"""

import sys

from evaluator.cli import main

if __name__ == "__main__":
    sys.exit(main(["predict", *sys.argv[1:]]))
