"""Rates and means over units that share items: the interval counts items, not units.

Specified three ways: against independent code (a brute-force delete-one-item loop, statsmodels'
Wilson interval), on the cases that motivated it (a 4-item cluster behind 1,000 concatenations),
and in simulation, with failures planted three ways: items that derail every unit containing
them, an item that derails a unit only in the first position, and independent per-request flips.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from judgeprobe.stats.shared_items import (
    design_effect,
    shared_item_mean,
    shared_item_proportion,
    shared_item_variance,
    wilson,
)

DEPARTURE_WARN, DEPARTURE_FAIL = 0.10, 0.20


def brute_force_jackknife(y: Sequence[float], members: Sequence[Sequence[str]]) -> float:
    """Delete each item in turn and take the mean of the units left, written plainly."""
    items = sorted({i for m in members for i in m})
    means = []
    for item in items:
        kept = [v for v, m in zip(y, members, strict=True) if item not in m]
        if kept:
            means.append(sum(kept) / len(kept))
    g = len(means)
    centre = sum(means) / g
    return (g - 1) / g * sum((x - centre) ** 2 for x in means)


def test_units_that_are_their_own_items_get_wilsons_interval_over_the_units() -> None:
    y = [1] * 7 + [0] * 33
    est = shared_item_proportion(y, [[f"i{j}"] for j in range(40)])
    expected = sps.binomtest(7, 40).proportion_ci(method="wilson")
    assert est.n == 40
    assert est.counts["units"] == 40
    assert (est.ci.low, est.ci.high) == pytest.approx((expected.low, expected.high), abs=1e-12)


@pytest.mark.parametrize(("p", "n"), [(0.0, 3.5), (0.12, 17.25), (0.5, 2.0), (0.97, 140.8)])
def test_wilson_at_a_fractional_n_is_statsmodels_wilson(p: float, n: float) -> None:
    low, high = wilson(p, n, 0.95)
    ref_low, ref_high = proportion_confint(p * n, n, alpha=0.05, method="wilson")
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)


def test_wilson_at_a_whole_n_is_scipys() -> None:
    ci = sps.binomtest(3, 25).proportion_ci(confidence_level=0.9, method="wilson")
    assert wilson(3 / 25, 25, 0.9) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_the_jackknife_is_the_plain_delete_one_item_loop_when_units_share_nothing_but_items() -> (
    None
):
    rng = np.random.default_rng(3)
    members = [tuple(rng.choice(list("abcdefghij"), size=3, replace=False)) for _ in range(30)]
    # an outcome driven entirely by one item, so the residual correction takes nothing back
    y = [1.0 if "a" in m else 0.0 for m in members]
    shared = shared_item_variance(y, members)
    jack = brute_force_jackknife(y, members)
    assert shared.variance <= jack + 1e-12
    assert shared.variance >= np.var(y, ddof=1) / len(y) - 1e-12
    assert shared.items == 10
    assert shared.parts == 3.0


def test_a_four_item_cluster_behind_a_thousand_concatenations_cannot_pass() -> None:
    rng = np.random.default_rng(0)
    members = [tuple(rng.choice(list("abcd"), size=8, replace=True)) for _ in range(1000)]
    est = shared_item_proportion([0] * 1000, members)
    assert est.n == 4
    assert est.counts["units"] == 1000
    assert est.ci.high > DEPARTURE_FAIL  # far from a pass below the warn line


def test_four_items_in_every_concatenation_of_sixteen_cannot_pass_on_a_few_that_miss_one() -> None:
    """Sixteen parts drawn from four items: nearly every concatenation holds all four, so
    deleting an item leaves a handful, and the jackknife would read the spread off them."""
    rng = np.random.default_rng(4)
    members = [tuple(rng.choice(list("abcd"), size=16, replace=True)) for _ in range(199)]
    departed = [i < 5 for i in range(199)]  # 5 of 199 (0.025) depart
    est = shared_item_proportion(departed, members)
    assert est.n == 4
    assert est.ci.high > DEPARTURE_FAIL  # four items decide nothing


def test_twelve_pairs_of_four_items_are_four_items_of_evidence() -> None:
    members = list(itertools.combinations("abcd", 2)) * 2
    est = shared_item_proportion([0] * len(members), members)
    assert est.n == 4
    assert est.ci.high > DEPARTURE_WARN


def test_no_departure_over_many_items_can_pass() -> None:
    rng = np.random.default_rng(1)
    items = [f"i{j}" for j in range(400)]
    members = [tuple(rng.choice(items, size=2, replace=False)) for _ in range(400)]
    est = shared_item_proportion([0] * 400, members)
    assert est.ci.high < DEPARTURE_WARN


def test_the_mean_over_shared_items_is_wider_than_over_independent_units() -> None:
    rng = np.random.default_rng(2)
    effect = {f"i{j}": rng.normal() for j in range(20)}
    members = [tuple(rng.choice(list(effect), size=4, replace=False)) for _ in range(300)]
    y = [sum(effect[i] for i in m) + rng.normal(0, 0.1) for m in members]
    shared = shared_item_mean(y, members)
    naive = sps.sem(y) * sps.t.ppf(0.975, len(y) - 1)
    assert shared.n == 20
    assert (shared.ci.high - shared.ci.low) / 2 > 3 * naive
    assert design_effect(y, members) > 9


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="every unit"):
        shared_item_variance([1.0, 0.0], [["a"]])
    with pytest.raises(ValueError, match="True/False"):
        shared_item_proportion([0.5], [["a"]])
    assert not shared_item_proportion([], []).defined


# -- simulation: coverage of the item-population rate, power, and no pass above the warn line ----

Planted = Callable[
    [np.random.Generator, int, int, int], tuple[list[float], list[tuple[int, ...]], float]
]


def item_driven(q: float) -> Planted:
    """A share ``q`` of the population's items derails every unit that contains one."""

    def draw(
        rng: np.random.Generator, m: int, k: int, n: int
    ) -> tuple[list[float], list[tuple[int, ...]], float]:
        bad = rng.random(m) < q
        members = [tuple(rng.choice(m, size=k, replace=False)) for _ in range(n)]
        return [float(bad[list(s)].any()) for s in members], members, 1 - (1 - q) ** k

    return draw


def first_position(q: float) -> Planted:
    """A share ``q`` of items derails a unit only when it comes first."""

    def draw(
        rng: np.random.Generator, m: int, k: int, n: int
    ) -> tuple[list[float], list[tuple[int, ...]], float]:
        bad = rng.random(m) < q
        members = [tuple(rng.choice(m, size=k, replace=False)) for _ in range(n)]
        return [float(bad[s[0]]) for s in members], members, q

    return draw


def per_request(p: float) -> Planted:
    """Every unit departs on its own with probability ``p``, whatever its items."""

    def draw(
        rng: np.random.Generator, m: int, k: int, n: int
    ) -> tuple[list[float], list[tuple[int, ...]], float]:
        members = [tuple(rng.choice(m, size=k, replace=False)) for _ in range(n)]
        return [float(rng.random() < p) for _ in members], members, p

    return draw


def run(planted: Planted, m: int, k: int, n: int, reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    covered = passed = failed = 0
    for _ in range(reps):
        y, members, truth = planted(rng, m, k, n)
        est = shared_item_proportion(y, members)
        covered += est.ci.low <= truth <= est.ci.high
        passed += est.ci.high < DEPARTURE_WARN
        failed += est.ci.low > DEPARTURE_FAIL
    return {"coverage": covered / reps, "pass": passed / reps, "fail": failed / reps}


@pytest.mark.parametrize(
    ("planted", "m", "k"),
    [
        (item_driven(0.05), 40, 2),
        (item_driven(0.05), 169, 4),
        (item_driven(0.05), 60, 8),
        (first_position(0.08), 40, 4),
        (first_position(0.08), 169, 8),
        (per_request(0.1), 40, 4),
        (per_request(0.1), 169, 8),
    ],
)
def test_the_interval_covers_the_item_population_rate(planted: Planted, m: int, k: int) -> None:
    result = run(planted, m, k, n=5 * m // 2, reps=300, seed=m * k)
    # 300 draws: a Monte Carlo standard error of about 1.3 points around the ~95% reached
    assert 0.91 <= result["coverage"] <= 0.995, result


def each_item_in_two_units(q: float, harmful: int) -> Planted:
    """The bypass probe's design: every harmful item in two pairs, each with a harmless filler
    drawn from as many harmless items; a pair is missed when either of its items derails."""

    def draw(
        rng: np.random.Generator, m: int, k: int, n: int
    ) -> tuple[list[float], list[tuple[int, ...]], float]:
        bad = rng.random(2 * harmful) < q
        members: list[tuple[int, ...]] = [
            (h, harmful + int(rng.integers(harmful))) for h in range(harmful) for _ in range(2)
        ]
        return [float(bad[list(s)].any()) for s in members], members, 1 - (1 - q) ** 2

    return draw


def test_a_sparse_design_is_not_made_wider_than_its_items_make_it() -> None:
    """Each unit counted once with itself: the plain jackknife, which counts a unit once per
    item it holds, covered this design's rate in 98 % of draws; the target is 95 %."""
    q = 1 - (1 - 1.5 * DEPARTURE_FAIL / 2) ** 0.5  # a population rate of 0.15
    result = run(each_item_in_two_units(q, 300), 0, 2, 0, reps=800, seed=11)
    # 800 draws: a Monte Carlo standard error of about 0.8 points
    assert 0.925 <= result["coverage"] <= 0.97, result


def test_the_degrees_of_freedom_count_the_items_that_move_the_rate() -> None:
    rng = np.random.default_rng(12)
    members = [tuple(rng.choice(200, size=2, replace=False)) for _ in range(400)]
    few = shared_item_variance([float(0 in m or 1 in m or 2 in m) for m in members], members)
    many = shared_item_variance([float(min(m) < 60) for m in members], members)
    assert 1 <= few.df <= 8  # three items carry the whole variance
    assert many.df > 40
    noise = shared_item_variance([float(rng.random() < 0.3) for _ in members], members)
    assert noise.df > 40  # infinite where the units vary as if independent


def test_an_item_driven_rate_above_the_warn_line_is_almost_never_passed() -> None:
    # 1 - (1 - 0.03)^4 = 0.115, above the 0.10 warn line
    result = run(item_driven(0.03), 169, 4, n=400, reps=300, seed=7)
    assert result["pass"] <= 0.05, result


def test_a_per_request_effect_at_one_and_a_half_times_the_fail_line_is_found() -> None:
    result = run(per_request(1.5 * DEPARTURE_FAIL), 169, 4, n=400, reps=200, seed=8)
    assert result["fail"] >= 0.8, result


def test_an_item_driven_effect_at_one_and_a_half_times_the_fail_line_is_found_on_enough_items() -> (
    None
):
    # 1 - (1 - q)^2 = 0.30 at q = 0.163
    result = run(item_driven(0.163), 400, 2, n=800, reps=200, seed=9)
    assert result["fail"] >= 0.8, result
