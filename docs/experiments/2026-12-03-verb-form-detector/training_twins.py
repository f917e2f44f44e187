"""How many of the detector's training twins are wrong verb forms, by kind, drawn as
scripts/train_disfluency.py draws them with --verb-form-share 0 and 0.3 (its default texts and
seed).

    python docs/experiments/2026-12-03-verb-form-detector/training_twins.py TRAIN_PAIRS...
"""

import collections
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from verb_form_kinds import kind  # noqa: E402

spec = importlib.util.spec_from_file_location("train_disfluency", "scripts/train_disfluency.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
texts = script.clean_texts(sys.argv[1:], 12000, 13)
for share in (0.0, 0.3):
    twins = script.twins(texts, 13, share)
    verb_forms = [
        (clean, broken) for clean, broken, rule, _ in twins if rule == "GramErr/verb_form"
    ]
    kinds = collections.Counter(kind(clean, broken) for clean, broken in verb_forms)
    print(
        f"share {share}: {len(verb_forms)} of {len(twins)} twins are wrong verb forms; {dict(kinds.most_common())}"
    )
