"""Measurements of a checkpoint on real text, as `mismatch bench realtext` and `mismatch bench
spans` report them: ``realtext`` (SICK, real bases with errors applied, WMT19 DARR) and
``spans`` (where the error spans fall)."""
