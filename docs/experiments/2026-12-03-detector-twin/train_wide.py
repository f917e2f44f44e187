"""scripts/train_disfluency.py with a wider detector, its width and kernel from the environment:

    HIDDEN=256 KERNEL=5 python docs/experiments/2026-12-03-detector-twin/train_wide.py \
        --pairs ... --val-pairs ... --out DIR

The script builds its detector as DisfluencyDetector(layer, dim=dim); this wraps the class so
that call gets HIDDEN and KERNEL. The saved config records them, so load_detector reads the
result unwrapped.
"""

import os
import runpy

import evaluator.features.disfluency as disfluency

HIDDEN, KERNEL = int(os.environ["HIDDEN"]), int(os.environ["KERNEL"])
build = disfluency.DisfluencyDetector.__init__


def wider(self, layer, dim=384, hidden=None, kernel=None, encoder=disfluency.DEFAULT_ENCODER):
    build(self, layer, dim, hidden or HIDDEN, kernel or KERNEL, encoder)


disfluency.DisfluencyDetector.__init__ = wider
runpy.run_path("scripts/train_disfluency.py", run_name="__main__")
