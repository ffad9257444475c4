"""Specifications of interval Krippendorff's alpha: the library's value, in linear memory.

A classifier's probabilities are nearly all distinct, where ``krippendorff.alpha`` builds a
values x values coincidence matrix per item (gigabytes for a thousand items, again in every
bootstrap resample). :func:`~judgeprobe.stats.classification.interval_alpha` computes the same
number from sums of squares.
"""

from __future__ import annotations

import math
import tracemalloc

import krippendorff
import numpy as np
import pytest

from judgeprobe.stats import classification as cls


@pytest.mark.parametrize("seed", range(20))
def test_interval_alpha_is_krippendorffs_on_random_data(seed: int) -> None:
    # unequal numbers of raters per unit, missing values, units with a single rating, ties
    rng = np.random.default_rng(seed)
    raters, items = int(rng.integers(2, 6)), int(rng.integers(3, 40))
    ratings = rng.normal(size=(raters, items)).round(int(rng.integers(0, 3)))
    ratings[rng.random((raters, items)) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=ratings, level_of_measurement="interval")
    assert math.isclose(cls.interval_alpha(ratings), float(expected), abs_tol=1e-12)


def test_interval_alpha_memory_is_linear_in_items_on_distinct_scores() -> None:
    # a classifier's probabilities are all distinct: no values x values matrix per unit
    rng = np.random.default_rng(0)
    ratings = rng.random((2, 150))
    tracemalloc.start()
    try:
        cls.alpha(ratings, "interval")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_interval_alpha_is_undefined_without_two_pairable_values_or_any_spread() -> None:
    assert math.isnan(cls.interval_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])))
    assert math.isnan(cls.interval_alpha(np.array([[3.0, 3.0], [3.0, 3.0]])))
