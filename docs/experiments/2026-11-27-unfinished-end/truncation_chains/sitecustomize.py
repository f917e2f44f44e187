"""Experiment only: put this folder on PYTHONPATH and every fine-tuning run in that process
builds its MissInfo contrast chains from truncate_tail alone, so each chain cuts more of the
output (graded truncation copies, the stress test's edit). Nothing else changes."""

import sys

import evaluator.finetune.contrast as contrast
from synth.perturb.omission import truncate_tail
from synth.rules import RuleSet, load_rules

_rules = RuleSet({**load_rules(), "MissInfo": [truncate_tail]})
contrast.shared_rules = lambda: _rules
print("truncation_chains: MissInfo contrast chains use truncate_tail alone", file=sys.stderr)
