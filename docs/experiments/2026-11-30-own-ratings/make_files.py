"""Write two shipped rating sets as a user's own files would be: no ids, groups or meta.

webnlg2017_ratings.jsonl.gz: WebNLG 2017 (ref list, gen, src = the triples, three 1-3 criteria);
summeval_first_ref.jsonl: SummEval with its first reference only (ref, gen, src = the article,
four 1-5 criteria). Usage: python make_files.py OUT_DIR
"""

import gzip
import json
import sys
from pathlib import Path

from mismatch_core.resources import data_dir


def records(name: str) -> list[dict]:
    with gzip.open(data_dir() / "human" / name, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
with gzip.open(out / "webnlg2017_ratings.jsonl.gz", "wt", encoding="utf-8") as handle:
    for r in records("data2text/webnlg2017.jsonl.gz"):
        keep = {"ref": r["ref"], "gen": r["gen"], "src": r["src"], "scores": r["scores"]}
        handle.write(json.dumps(keep) + "\n")
with open(out / "summeval_first_ref.jsonl", "w", encoding="utf-8") as handle:
    for r in records("summarization/summeval.jsonl.gz"):
        keep = {"ref": r["ref"][0], "gen": r["gen"], "src": r["src"], "scores": r["scores"]}
        handle.write(json.dumps(keep) + "\n")
