"""Blind-spot stress tests (He et al. 2023) for any text-generation metric, ours included.

A gold hypothesis is perturbed at graded noise levels; a sound metric scores it lower as the
noise grows. ``run_stress`` runs the tests, ``write_report`` writes report.md/json and plots.
"""
