"""Specifications of the paired difference of proportions (Newcombe's method 10) and its test."""

from __future__ import annotations

import math

import pytest

from judgeprobe.errors import ConfigError
from judgeprobe.stats import InvalidParameterError
from judgeprobe.stats.paired import (
    paired_difference_of_proportions,
    paired_excess_test,
    paired_table,
)


def test_the_interval_reproduces_the_published_worked_example() -> None:
    # Altman et al. (2000), Statistics with Confidence, chapter 6: 14 / 5 / 0 / 22 pairs,
    # difference 5/41 = 0.122 with Newcombe's method 10 interval 0.011 to 0.226.
    estimate = paired_difference_of_proportions(14, 5, 0, 22)
    assert estimate.estimate == pytest.approx(5 / 41)
    assert (round(estimate.ci.low, 3), round(estimate.ci.high, 3)) == (0.011, 0.226)
    assert estimate.ci.method == "newcombe-paired"
    assert estimate.n == 41
    assert estimate.counts == {"both": 14, "first_only": 5, "second_only": 0, "neither": 22}


def test_the_interval_reproduces_the_second_published_worked_example() -> None:
    # Cavo et al. (2012) as in Fagerland, Lydersen and Laake (2014): 59 / 6 / 16 / 80 pairs,
    # difference -0.0621 with Newcombe's method 10 interval -0.1186 to -0.0046.
    x = [True] * 65 + [False] * 96
    y = [True] * 59 + [False] * 6 + [True] * 16 + [False] * 80
    cells = paired_table(x, y)
    assert cells == (59, 6, 16, 80)
    estimate = paired_difference_of_proportions(*cells)
    assert estimate.estimate == pytest.approx(-0.0621, abs=5e-5)
    assert estimate.ci.low == pytest.approx(-0.1186, abs=5e-5)
    assert estimate.ci.high == pytest.approx(-0.0046, abs=5e-5)
    assert estimate.n == 161


def test_the_table_refuses_outcomes_that_are_not_paired() -> None:
    assert paired_table([], []) == (0, 0, 0, 0)
    with pytest.raises(ConfigError, match="one entry per unit, got 2 and 1"):
        paired_table([True, False], [True])


def test_exchanging_the_two_outcomes_mirrors_the_interval() -> None:
    forward = paired_difference_of_proportions(14, 5, 0, 22)
    backward = paired_difference_of_proportions(14, 0, 5, 22)
    assert backward.estimate == pytest.approx(-forward.estimate)
    assert backward.ci.low == pytest.approx(-forward.ci.high)
    assert backward.ci.high == pytest.approx(-forward.ci.low)


def test_concordant_units_narrow_the_interval_around_zero() -> None:
    wide = paired_difference_of_proportions(0, 0, 0, 10)
    narrow = paired_difference_of_proportions(0, 0, 0, 100)
    assert wide.estimate == narrow.estimate == 0.0
    assert narrow.ci.low < 0 < narrow.ci.high
    assert narrow.ci.width < wide.ci.width


def test_the_interval_stays_in_minus_one_to_one_at_the_extremes() -> None:
    estimate = paired_difference_of_proportions(0, 12, 0, 0)
    assert estimate.estimate == 1.0
    assert -1.0 <= estimate.ci.low < 1.0
    assert estimate.ci.high == pytest.approx(1.0)


def test_an_empty_table_is_undefined_not_zero() -> None:
    estimate = paired_difference_of_proportions(0, 0, 0, 0)
    assert not estimate.defined
    assert estimate.reason == "no paired units (n = 0)"


def test_negative_cells_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="first_only"):
        paired_difference_of_proportions(1, -1, 0, 0)


def test_the_one_sided_test_counts_only_the_discordant_units() -> None:
    assert paired_excess_test(5, 0).pvalue == pytest.approx(1 / 32)
    assert paired_excess_test(0, 5).pvalue == pytest.approx(1.0)
    assert paired_excess_test(3, 1).pvalue == pytest.approx(5 / 16)  # P(X >= 3), X ~ Bin(4, 1/2)
    assert math.isnan(paired_excess_test(0, 0).pvalue)
    assert paired_excess_test(6, 1).pvalue == pytest.approx(8 / 128)  # P(Bin(7, 1/2) >= 6)
    assert paired_excess_test(6, 1).alternative == "greater"
