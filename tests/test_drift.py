"""The drift test of a watched judge (judgeprobe.stats.drift): its null bound, its e-detector,
its sizing, and, on simulated series, its false alarms and its delay.

The simulations draw a pool of anchors with their own rerun rates (a stationary judge flips
each anchor at its own rate from check to check), measure the null as an audit would (one rerun
of a uniform sample of anchors), and run the detector over 100 checks of a seeded draw of
anchors each. ``benchmarks/watch_drift.py`` runs the same simulation with more series and prints
the numbers docs/watch.md quotes.
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

from drift_simulation import simulate_series
from judgeprobe.stats import InvalidParameterError
from judgeprobe.stats.drift import (
    alternative_rate,
    anchors_for_power,
    detection_power,
    disagreement_bound,
    drift_looks,
    drift_prior,
    log_mixture,
    rerun_null_bound,
    start_weight,
)
from judgeprobe.stats.sequential import log_mixture_martingale

ALPHA = 0.05


def test_the_null_bound_is_the_exact_one_sided_bound() -> None:
    # 0 of n: the bound solves (1 - U)**n = a, so U = 1 - a**(1/n) (hand arithmetic)
    assert rerun_null_bound(0, 100, 0.025) == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-9)
    # R: qbeta(0.975, 6, 95) = 0.1128349, the upper end binom.test(5, 100) prints as 0.11283
    # (two-sided 95%: one side at 2.5%)
    assert rerun_null_bound(5, 100, 0.025) == pytest.approx(0.1128349, abs=1e-6)
    assert rerun_null_bound(0, 0, 0.025) == 1.0 and rerun_null_bound(7, 7, 0.025) == 1.0


def test_the_vector_mixture_is_the_scalar_one_of_the_sequential_module() -> None:
    prior = ((0.3, 2.0, 18.0), (0.7, 1.0, 3.0))
    k, n = np.array([0, 3, 17, 40]), np.array([20, 20, 60, 40])
    got = log_mixture(k, n, 0.07, prior)
    want = [log_mixture_martingale(int(a), int(b), 0.07, prior) for a, b in zip(k, n, strict=True)]
    assert got == pytest.approx(want, rel=1e-12)


def test_a_flip_turns_the_rerun_rate_into_its_complement() -> None:
    assert alternative_rate(0.0, 0.1) == pytest.approx(0.1)
    assert alternative_rate(0.2, 0.5) == pytest.approx(0.2 + 0.5 * 0.6)
    assert sum(start_weight(s) for s in range(1, 100_000)) == pytest.approx(1.0, abs=1e-4)


def test_a_judge_that_agrees_with_its_anchors_gives_no_evidence_at_all() -> None:
    prior = drift_prior(0.0, 0.1, bound=0.05)
    looks = drift_looks([(0, 30)] * 50, null_bound=0.05, alpha=0.025, prior=prior)
    assert all(look.log_evidence == -math.inf and look.pvalue == 1.0 for look in looks)
    assert not any(look.detected for look in looks) and looks[-1].total_n == 1500


def test_a_detection_stays_and_the_anytime_pvalue_never_rises() -> None:
    prior = drift_prior(0.0, 0.1, bound=0.04)
    counts = [(0, 20)] * 10 + [(6, 20)] * 3 + [(0, 20)] * 20
    looks = drift_looks(counts, null_bound=0.04, alpha=0.025, prior=prior)
    detected = [look.check for look in looks if look.detected]
    assert detected and detected[0] <= 13 and detected == list(range(detected[0], 34))
    pvalues = [look.pvalue for look in looks]
    assert all(b <= a for a, b in itertools.pairwise(pvalues))
    assert looks[12].start == 11  # the change began at check 11: that start carries it


def test_the_detector_sees_a_late_change_within_a_few_checks_of_an_early_one() -> None:
    """The mixture over starts: 60 quiet checks before a change cost a few checks (the weight
    of a late start), where a test pooling every check from the first would need more than 20
    before its pooled rate (3 t of 1200 + 20 t anchors) even passed the null's bound of 0.04."""
    prior = drift_prior(0.0, 0.1, bound=0.04)

    def delay(quiet: int) -> int:
        counts = [(0, 20)] * quiet + [(3, 20)] * 40
        looks = drift_looks(counts, null_bound=0.04, alpha=0.025, prior=prior)
        return next(look.check for look in looks if look.detected) - quiet

    assert delay(0) <= delay(60) <= delay(0) + 5 < 22


def test_sizing_gives_the_fewest_anchors_with_the_stated_power() -> None:
    options = {
        "null_rate": 0.0,
        "null_bound": 0.036,
        "change": 0.1,
        "within": 10,
        "start": 20,
        "alpha": 0.025,
        "prior": drift_prior(0.0, 0.1, bound=0.036),
    }
    n = anchors_for_power(**options, power=0.8, most=500)  # type: ignore[arg-type]
    assert n is not None
    assert detection_power(n, **options) >= 0.8 > detection_power(n - 1, **options)  # type: ignore[arg-type]
    hidden = {**options, "null_bound": 0.3}
    assert anchors_for_power(**hidden, power=0.8, most=500) is None  # type: ignore[arg-type]


def test_the_upper_bound_of_the_disagreement_covers_the_rate() -> None:
    prior = drift_prior(0.0, 0.1, bound=0.04)
    assert 0.1 < disagreement_bound(20, 200, 0.05, prior=prior) < 0.2
    with pytest.raises(InvalidParameterError):
        drift_looks([(1, 10)], null_bound=0.0, alpha=0.025, prior=prior)


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.2])
def test_a_stationary_judge_keeps_its_false_alarms_under_the_level_over_100_checks(
    rate: float,
) -> None:
    """300 series of 100 checks each: the share with any alarm is at most alpha (with a
    binomial margin of three standard errors)."""
    alarms = [
        s.detected_at is not None
        for s in simulate_series(
            series=300,
            checks=100,
            anchors=20,
            rerun_rate=rate,
            change=0.0,
            change_at=None,
            alpha=ALPHA,
            seed=11,
        )
    ]
    share = sum(alarms) / len(alarms)
    assert share <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / len(alarms))


def test_with_a_known_null_rate_the_detector_alone_keeps_its_level() -> None:
    """No slack from the null's bound: the e-detector at the true rate still alarms in at most
    alpha / 2 of the series (with the same margin)."""
    alarms = [
        s.detected_at is not None
        for s in simulate_series(
            series=300,
            checks=100,
            anchors=20,
            rerun_rate=0.1,
            change=0.0,
            change_at=None,
            alpha=ALPHA,
            seed=5,
            known_null=True,
        )
    ]
    level = ALPHA / 2
    assert sum(alarms) / len(alarms) <= level + 3 * math.sqrt(level * (1 - level) / len(alarms))


def test_a_judge_that_flips_a_tenth_of_its_anchors_at_check_20_is_detected() -> None:
    series = simulate_series(
        series=100,
        checks=100,
        anchors=40,
        rerun_rate=0.0,
        change=0.1,
        change_at=20,
        alpha=ALPHA,
        seed=3,
    )
    delays = [s.detected_at - 20 + 1 for s in series if s.detected_at is not None]
    early = [s for s in series if s.detected_at is not None and s.detected_at < 20]
    assert len(delays) >= 95 and len(early) <= 5
    assert statistics.median(delays) <= 10  # the stated horizon: detected within 10 checks
