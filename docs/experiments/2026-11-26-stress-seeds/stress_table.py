"""Pass count and failed tests of every stress report under DIR/stress_*/.

python stress_table.py DIR
"""

import glob
import json
import os
import sys

for path in sorted(glob.glob(os.path.join(sys.argv[1], "stress_*", "report.json"))):
    name = os.path.basename(os.path.dirname(path))[len("stress_") :]
    metric = next(iter(json.load(open(path))["metrics"].values()))
    failed = sorted(test for test, verdict in metric["tests"].items() if not verdict["pass"])
    print(f"{name:14s} {metric['passed']:2d}  {' '.join(failed)}")
