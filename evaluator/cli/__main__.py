"""`python -m evaluator.cli`: the `mismatch` console script."""

import sys

from evaluator.cli import main

sys.exit(main())
