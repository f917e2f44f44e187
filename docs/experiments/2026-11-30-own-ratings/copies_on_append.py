"""How many contrast-copy pairs of ratings.yaml are new after one output is appended to a
user's file: the copies are drawn afresh, so their cache rows are computed again.
Usage: python copies_on_append.py webnlg2017_ratings.jsonl.gz (of make_files.py)."""

import gzip
import json
import sys
from pathlib import Path

from evaluator.features import pair_key
from evaluator.finetune.contrast import contrast_records, reference_triples
from evaluator.human_data import parse_records

SEED = 13  # evaluator.finetune.datamodule.CONTRAST_SEED
path = Path(sys.argv[1])
rows = [json.loads(line) for line in gzip.open(path)]


def copy_pairs(rows: list[dict]) -> tuple[set[str], set[str]]:
    """The cache keys of the contrast copies and of the reference triples ratings.yaml asks
    for (2,000 each); triples are built on each record's first reference here, where a fit
    takes the one closest by the base: an approximation of which pairs are new."""
    records = parse_records(((i + 1, r) for i, r in enumerate(rows)), path)
    made, _, _ = contrast_records(records, 2000, seed=SEED)
    triples, _, _ = reference_triples(records, [0] * len(records), 2000, seed=SEED)
    return (
        {pair_key(ref, c.gen) for c in made for ref in c.refs},
        {pair_key(ref, c.gen) for c in triples for ref in c.refs},
    )


before = copy_pairs(rows)
after = copy_pairs([*rows, {**rows[0], "gen": "A new system output."}])
for kind, old, new in zip(("contrast copies", "reference triples"), before, after, strict=True):
    print(f"{len(rows)} records; {kind}: {len(old)} pairs before, {len(new)} after, {len(new - old)} new")
