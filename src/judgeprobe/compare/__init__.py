"""Comparing judges: the findings of two or more audit runs side by side, with their differences.

A user picks between judges, edits a rubric or upgrades a model and needs to know whether the
judge became more or less reliable. :func:`compare_runs` reads the runs (run stores or card
files; no judge call), pairs each finding's difference on the items the runs share where the
stores hold per-item outcomes, decides the family of differences together (Holm) and says per
difference: worse, better, changed, no evidence. :func:`write_comparison` writes
``compare.json`` (checked against ``compare.schema.json``), ``compare.md`` and ``compare.html``.
"""

from judgeprobe.compare import units_repair  # noqa: F401  (registers its extractors)
from judgeprobe.compare.build import COMPARE_VERSION, WORDS
from judgeprobe.compare.schema import ComparisonValidationError, compare_schema, validate_comparison
from judgeprobe.compare.write import compare_runs, exit_code, write_comparison

__all__ = [
    "COMPARE_VERSION",
    "WORDS",
    "ComparisonValidationError",
    "compare_runs",
    "compare_schema",
    "exit_code",
    "validate_comparison",
    "write_comparison",
]
