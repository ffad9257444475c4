"""The estimators behind ``judgeprobe estimate``: PPI++ against its authors' package, and the
finite-population (stratified difference) estimator against exact enumeration of its design."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sps

from judgeprobe.stats import InvalidParameterError
from judgeprobe.stats.prediction_powered import power_tuned_lambda, ppi_mean
from judgeprobe.stats.stratified_difference import (
    difference_mean,
    labels_for_half_width,
    wilson,
)


def judged(seed: int, n: int, big_n: int, *, binary: bool) -> tuple[np.ndarray, ...]:
    """Labels, the judge's values on them, and the judge's values on other items: a judge that
    agrees with the label 80% of the time (binary) or is the label plus noise and a bias."""
    rng = np.random.default_rng(seed)
    if binary:
        y = (rng.random(n) < 0.4).astype(float)
        f = np.where(rng.random(n) < 0.8, y, 1 - y)
        unlabelled = (rng.random(big_n) < 0.35).astype(float)
    else:
        y = rng.normal(3.0, 1.0, n)
        f = 0.7 * y + 0.5 + rng.normal(0, 0.5, n)
        unlabelled = 0.7 * rng.normal(3.0, 1.0, big_n) + 0.5 + rng.normal(0, 0.5, big_n)
    return y, f, unlabelled


CASES = [
    (seed, n, big_n, binary)
    for seed in (0, 1)
    for n, big_n in ((30, 300), (200, 2000))
    for binary in (True, False)
]


@pytest.mark.parametrize(("seed", "n", "big_n", "binary"), CASES)
@pytest.mark.parametrize("lam", [None, 1.0, 0.3, 0.0])
def test_ppi_mean_is_the_authors_ppi_plus_plus(
    seed: int, n: int, big_n: int, binary: bool, lam: float | None
) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    y, f, unlabelled = judged(seed, n, big_n, binary=binary)
    ours = ppi_mean(y, f, unlabelled, lam=lam, confidence_level=0.9)
    point = ppi_py.ppi_mean_pointestimate(y, f, unlabelled, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, unlabelled, alpha=0.1, lam=lam)
    assert ours.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-12)
    assert ours.ci.low == pytest.approx(float(np.squeeze(low)), abs=1e-12)
    assert ours.ci.high == pytest.approx(float(np.squeeze(high)), abs=1e-12)
    assert ours.n == n


def test_the_tuned_lambda_is_zero_for_a_judge_unrelated_to_the_labels_and_one_at_most() -> None:
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    assert power_tuned_lambda(y, [1, 1, 0, 0, 1, 1], [0, 1] * 50) == 0.0  # cov 0
    assert power_tuned_lambda(y, 1 - y, [0, 1] * 50) == 0.0  # against the labels: clipped
    assert power_tuned_lambda(y, 3 * y, [0, 3] * 50) == pytest.approx(
        0.75 / ((1 + 6 / 100) * (9 * 0.25 * 106 / 105))  # cov / ((1 + n/N) var of all 106)
    )


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_with_one_stratum_the_point_estimate_is_ppi_with_every_item_as_unlabelled(
    lam: float,
) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    every = (rng.random(500) < 0.3).astype(float)
    drawn = rng.choice(500, 60, replace=False)
    y = np.where(rng.random(60) < 0.85, every[drawn], 1 - every[drawn])
    ours = difference_mean(y, every[drawn], every, lam=lam)
    theirs = ppi_py.ppi_mean_pointestimate(y, every[drawn], every, lam=lam)
    assert ours.estimate == pytest.approx(float(np.squeeze(theirs)), abs=1e-12)


POPULATION_Y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1], dtype=float)
POPULATION_F = np.array([1, 0, 1, 0, 0, 1, 1, 0, 0.5, 1], dtype=float)
STRATA = ["a", "a", "a", "a", "b", "b", "b", "b", "b", "b"]


def every_sample(sizes: dict[str, int]) -> list[list[int]]:
    """Every stratified sample: ``sizes[h]`` items of stratum ``h``, all combinations."""
    rows = {h: [k for k, s in enumerate(STRATA) if s == h] for h in sizes}
    per_stratum = [list(itertools.combinations(rows[h], m)) for h, m in sizes.items()]
    return [sorted(itertools.chain(*parts)) for parts in itertools.product(*per_stratum)]


@pytest.mark.parametrize(
    ("sizes", "stratified"),
    [({"a": 2, "b": 3}, True), ({"a": 4, "b": 2}, True), ({"a": 5}, False)],
)
@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_over_every_possible_sample_the_estimate_is_unbiased_and_its_variance_too(
    sizes: dict[str, int], stratified: bool, lam: float
) -> None:
    """Exact enumeration of the design: the mean of the estimates over all samples is the
    population's mean, and the mean of the estimated variance is the estimates' variance."""
    strata = STRATA if stratified else ["a"] * len(STRATA)
    samples = (
        every_sample(sizes)
        if stratified
        else [list(c) for c in itertools.combinations(range(10), sizes["a"])]
    )
    estimates, variances = [], []
    for rows in samples:
        est = difference_mean(
            POPULATION_Y[rows],
            POPULATION_F[rows],
            POPULATION_F,
            strata=[strata[k] for k in rows],
            stratum_sizes=Counter(strata),
            lam=lam,
            interval="t",
        )
        estimates.append(est.estimate)
        variances.append(est.counts["variance"])
    assert np.mean(estimates) == pytest.approx(POPULATION_Y.mean(), abs=1e-12)
    assert np.mean(variances) == pytest.approx(np.var(estimates), abs=1e-12)


def test_labelling_every_item_gives_the_all_label_rate_with_no_width() -> None:
    est = difference_mean(POPULATION_Y, POPULATION_F, POPULATION_F)
    assert est.estimate == pytest.approx(POPULATION_Y.mean())
    assert est.ci.low == est.ci.high == pytest.approx(POPULATION_Y.mean())
    assert math.isinf(est.counts["effective_n"])


def test_the_labels_alone_are_the_mean_of_the_labels_with_wilson_on_their_effective_size() -> None:
    y = np.array([1, 0, 1, 1, 0, 1, 0, 1], dtype=float)
    est = difference_mean(y, np.zeros(8), np.zeros(80), lam=0.0)
    assert est.estimate == pytest.approx(5 / 8)
    variance = (1 - 8 / 80) * y.var(ddof=1) / 8
    assert est.counts["variance"] == pytest.approx(variance)
    assert est.counts["effective_n"] == pytest.approx(5 / 8 * 3 / 8 / variance)
    assert (est.ci.low, est.ci.high) == pytest.approx(wilson(5 / 8, 5 / 8 * 3 / 8 / variance, 0.95))


def test_a_judge_that_matches_the_labels_gets_full_weight_and_narrows_the_interval() -> None:
    rng = np.random.default_rng(5)
    every = (rng.random(1000) < 0.3).astype(float)
    drawn = rng.choice(1000, 50, replace=False)
    y = np.where(rng.random(50) < 0.95, every[drawn], 1 - every[drawn])
    corrected = difference_mean(y, every[drawn], every)
    alone = difference_mean(y, every[drawn], every, lam=0.0)
    assert corrected.counts["lambda"] == pytest.approx(1.0, abs=0.15)
    assert corrected.ci.width < alone.ci.width / 2


def test_the_wilson_interval_on_an_integer_size_is_scipys() -> None:
    for k, n in ((0, 10), (3, 17), (50, 100), (20, 20)):
        expected = sps.binomtest(k, n).proportion_ci(confidence_level=0.9, method="wilson")
        assert wilson(k / n, n, 0.9) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_labels_needed_is_cochrans_sample_size_with_the_finite_population_correction() -> None:
    statsmodels = pytest.importorskip("statsmodels.stats.proportion")
    infinite = statsmodels.samplesize_confint_proportion(0.3, 0.04, alpha=0.05)
    assert labels_for_half_width(0.04, 0.3 * 0.7, 10**12) == math.ceil(infinite)
    first = infinite
    assert labels_for_half_width(0.04, 0.21, 800) == math.ceil(first / (1 + first / 800))
    assert labels_for_half_width(0.04, 0.0, 800) == 2


def test_a_stratum_without_labels_or_with_one_label_leaves_the_estimate_undefined() -> None:
    none = difference_mean(
        [1, 0], [1, 0], [1, 0, 1, 1], strata=["a", "a"], stratum_sizes={"a": 2, "b": 2}
    )
    assert not none.defined and "'b' (2 items) has no labelled item" in (none.reason or "")
    one = difference_mean(
        [1, 0, 1],
        [1, 0, 1],
        [1, 0, 1, 1],
        strata=["a", "a", "b"],
        stratum_sizes={"a": 2, "b": 2},
    )
    assert not one.defined and "a single labelled item" in (one.reason or "")


def test_bad_inputs_are_refused_saying_what_is_wrong() -> None:
    with pytest.raises(InvalidParameterError, match="same length"):
        difference_mean([1, 0], [1], [1, 0, 1])
    with pytest.raises(InvalidParameterError, match="only 2 items"):
        difference_mean([1, 0, 1], [1, 0, 1], [1, 0])
    with pytest.raises(InvalidParameterError, match="no item belongs to"):
        difference_mean([1, 0], [1, 0], [1, 0, 1], strata=["x", "x"])
    with pytest.raises(InvalidParameterError, match="the strata hold 2 items"):
        difference_mean([1, 0], [1, 0], [1, 0, 1], strata=["x", "x"], stratum_sizes={"x": 2})
    with pytest.raises(InvalidParameterError, match="interval"):
        difference_mean([1, 0], [1, 0], [1, 0, 1], interval="normal")
    assert not difference_mean([], [], [1, 0]).defined


def test_over_seeded_draws_the_corrected_interval_covers_the_all_label_rate() -> None:
    """500 simple random samples of 40 labels from 600 items, a judge right 75% of the time."""
    rng = np.random.default_rng(11)
    truth = (rng.random(600) < 0.45).astype(float)
    judge = np.where(rng.random(600) < 0.75, truth, 1 - truth)
    rate = truth.mean()
    hits = {"corrected": 0, "labels_only": 0}
    for _ in range(500):
        drawn = rng.choice(600, 40, replace=False)
        for name, lam in (("corrected", None), ("labels_only", 0.0)):
            est = difference_mean(truth[drawn], judge[drawn], judge, lam=lam)
            hits[name] += est.ci.contains(rate)
    assert 0.92 <= hits["corrected"] / 500 <= 0.98
    assert 0.92 <= hits["labels_only"] / 500 <= 0.98


def test_a_judge_against_the_labels_gets_no_weight_and_the_labels_own_interval() -> None:
    """``lam`` clipped to 0: the corrected estimate is the labels-only one, interval and all."""
    y = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 0], dtype=float)
    against = 1 - y
    every = np.concatenate([against, np.zeros(90)])
    corrected = difference_mean(y, against, every)
    alone = difference_mean(y, against, every, lam=0.0)
    assert corrected.counts["lambda"] == 0.0
    assert (corrected.estimate, corrected.ci.low, corrected.ci.high) == (
        alone.estimate,
        alone.ci.low,
        alone.ci.high,
    )
