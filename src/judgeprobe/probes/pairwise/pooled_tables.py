"""Per-pair contingency tables, pooled: the human-agreement probe's units.

The human-agreement probe's agreement and kappa are those of one contingency table (the
judge's choice against a human's, or two humans'), pooled over the pairs. Each pair's own
table (3 x 3 cells: A, B, tie) is its row of values; the statistics here pool a set of rows
back into one table and read its agreement or kappa, so that the paired difference of two runs
resamples pairs, as the probe's own interval does.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.data.items import PAIRWISE_CHOICES
from judgeprobe.probes.pairwise.votes import Comparisons
from judgeprobe.stats.agreement import kappa_from_tables

CELLS = tuple((x, y) for x in PAIRWISE_CHOICES for y in PAIRWISE_CHOICES)
"""The cells of a pairwise contingency table (one side's choice by the other's)."""


def table_row(comparisons: Comparisons) -> tuple[float, ...]:
    """The counts of ``comparisons`` in each of :data:`CELLS`."""
    counts = Counter(zip(comparisons.a, comparisons.b, strict=True))
    return tuple(float(counts[cell]) for cell in CELLS)


def _pooled_tables(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    width = len(PAIRWISE_CHOICES)
    tables: NDArray[np.float64] = rows.sum(axis=-2).reshape(*rows.shape[:-2], width, width)
    return tables


def pooled_agreement(rows: NDArray[np.float64]) -> Any:
    """Raw agreement of the pooled table of rows (one contingency table per pair)."""
    tables = _pooled_tables(rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.trace(tables, axis1=-2, axis2=-1) / tables.sum(axis=(-2, -1))


def pooled_kappa(rows: NDArray[np.float64]) -> Any:
    """Cohen's kappa of the pooled table of rows; NaN where one side gave one answer to every
    comparison (of two or more), as :meth:`~judgeprobe.probes.pairwise.votes.Comparisons.kappa`."""
    tables = _pooled_tables(rows)
    one_answer = ((tables.sum(axis=-1) > 0).sum(axis=-1) == 1) | (
        (tables.sum(axis=-2) > 0).sum(axis=-1) == 1
    )
    constant = one_answer & (tables.sum(axis=(-2, -1)) > 1)
    return np.where(constant, np.nan, kappa_from_tables(tables))
