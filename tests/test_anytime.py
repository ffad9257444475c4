"""Anytime-valid rounds: the confidence sequence of a rate's pass side, and a round's decisions.

The streams here are Bernoulli draws: a longer prefix only appends outcomes, as a per-item rate
over a growing prefix of the items does in an audit sampled until decided.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.special import betaln

from judgeprobe.audit.anytime import as_sequence, decide_round
from judgeprobe.audit.sequential import UntilDecided, settled
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Finding, Threshold
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.stats import InvalidParameterError, proportion, proportion_above
from judgeprobe.stats.multiplicity import pvalue_from_ci
from judgeprobe.stats.result import ConfidenceInterval, Estimate
from judgeprobe.stats.sequential import (
    SEQUENCE_METHOD,
    log_mixture_martingale,
    look_level,
    pass_prior,
    sequence_bound,
    sequence_pvalue,
)

FLIPS = Threshold(warn=0.05, fail=0.10)
SIZES = UntilDecided(max_calls=1).sizes(852)
"""The default round schedule on 852 items: 20, 30, 45, 68, 102, ... (11 rounds)."""


@pytest.mark.parametrize("true", [0.05, 0.3])
def test_the_pass_side_bound_holds_at_every_n_at_once(true: float) -> None:
    """Looked at after every item of 300, the sequence's upper bound at alpha = 0.025 falls below
    the true rate in at most 2.5 % of streams (up to the simulation's error); the Wilson bound at
    the same level (a 95 % interval's upper end) does far more often: it holds at one n only."""
    rng = np.random.default_rng(7)
    sims, longest = 2000, 300
    counts = np.cumsum(rng.random((sims, longest)) < true, axis=1)
    n = np.arange(1, longest + 1)
    prior = pass_prior(0.05, higher_is_worse=True)
    ((_, a, b),) = prior
    # the bound lies below the true rate exactly when M_n(true) >= 1 / alpha (and k / n < true)
    log_m = (
        betaln(a + counts, b + n - counts)
        - betaln(a, b)
        - counts * np.log(true)
        - (n - counts) * np.log1p(-true)
    )
    below = counts / n < true
    sequence_misses = int(((log_m >= np.log(1 / 0.025)) & below).any(axis=1).sum())
    z = 1.959964
    rate = counts / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    wilson_misses = int((centre + half < true).any(axis=1).sum())
    assert proportion(sequence_misses, sims, confidence_level=0.99).ci.low <= 0.025
    assert wilson_misses / sims > 3 * 0.025
    # the closed form is the package's bound
    k = int(counts[0, -1])
    assert (sequence_bound(k, longest, 0.025, upper=True, prior=prior) < true) == bool(
        log_m[0, -1] >= np.log(1 / 0.025) and below[0, -1]
    )


def test_the_mixture_is_the_closed_form_and_its_pvalue_its_inverse() -> None:
    prior = ((1.0, 1.0, 1.0),)  # uniform: M_n(1/2) for 0 of n is 2**n / (n + 1)
    assert log_mixture_martingale(0, 10, 0.5, prior) == pytest.approx(np.log(2**10 / 11))
    prior = pass_prior(0.05, higher_is_worse=True)
    p = sequence_pvalue(0, 150, 0.05, below=True, prior=prior)
    assert p == pytest.approx(np.exp(-log_mixture_martingale(0, 150, 0.05, prior)))
    assert sequence_bound(0, 150, p * 1.01, upper=True, prior=prior) < 0.05
    assert sequence_bound(0, 150, p * 0.99, upper=True, prior=prior) > 0.05
    assert sequence_pvalue(20, 100, 0.05, below=True, prior=prior) == 1.0
    with pytest.raises(InvalidParameterError, match=r"p must lie in \(0, 1\), got 0.0"):
        log_mixture_martingale(1, 2, 0.0, prior)


@functools.cache
def _round_status(k: int, n: int, look: int) -> tuple[str, bool]:
    level = look_level(0.95, look, looks=len(SIZES))
    finding = Finding("decision_flip_rate", proportion(k, n, confidence_level=level), "flips",
                      threshold=FLIPS)  # fmt: skip
    finding = as_sequence(finding, 0.05)
    return finding.status, settled(finding)


def test_a_rate_of_zero_passes_after_102_items_where_the_rounds_share_alone_needs_153() -> None:
    passes = [n for look, n in enumerate(SIZES, start=1) if _round_status(0, n, look)[0] == "pass"]
    assert passes[0] == 102
    spent_only = [
        n
        for look, n in enumerate(SIZES, start=1)
        if proportion(0, n, confidence_level=look_level(0.95, look, looks=len(SIZES))).ci.high
        < 0.05
    ]
    assert spent_only[0] == 153


def test_a_rate_on_its_fail_threshold_fails_in_at_most_half_alpha_of_monitored_audits() -> None:
    """The worst case of a sound judge: its true flip rate sits on the fail threshold (0.10).
    Decided after every round of the default schedule, it fails in at most 2.5 % of audits (the
    bad side's half of alpha), where the fixed 95 % interval at every round fails far more."""
    rng = np.random.default_rng(12)
    sims = 3000
    flips = np.cumsum(rng.random((sims, SIZES[-1])) < 0.10, axis=1)
    failed = np.zeros(sims, dtype=bool)
    fixed = np.zeros(sims, dtype=bool)
    for look, n in enumerate(SIZES, start=1):
        for k in np.unique(flips[:, n - 1]):
            at_k = flips[:, n - 1] == k
            failed |= at_k & (_round_status(int(k), n, look)[0] == "fail")
            fixed |= at_k & (proportion(int(k), n).ci.low >= 0.10)
    assert float(failed.mean()) <= 0.025
    assert float(fixed.mean()) > 2 * 0.025


def test_a_round_decides_its_family_on_anytime_pvalues() -> None:
    """A stream finding's claim is tested by the exact binomial test at the round's share (both
    tails' halves), any other finding's by its own p-value over the round's share; Holm at
    alpha decides them together."""
    spend = 0.05 / 11
    level = 1 - spend
    flips = Finding("decision_flip_rate", proportion(30, 100, confidence_level=level), "flips",
                    threshold=FLIPS)  # fmt: skip
    distance = Finding(
        "wasserstein_to_l1",
        Estimate(0.5, ConfidenceInterval(0.3, 0.7, level, "basic bootstrap"), 100),
        "distance",
        threshold=Threshold(warn=0.1, fail=0.2),
    )
    result = ProbeResult("repetition", "invariance", {}, [flips, distance])
    decided = decide_round({"repetition": result}, {"repetition": RepetitionProbe()}, alpha=0.05,
                           spent={"repetition": spend})  # fmt: skip
    stream, other = decided["repetition"].findings
    assert (stream.estimate.ci.method, stream.estimate.ci.level) == (SEQUENCE_METHOD, 0.95)
    assert stream.estimate.ci.low == pytest.approx(
        proportion(30, 100, confidence_level=level, method="exact").ci.low
    )
    assert stream.family is not None and other.family is not None
    exact = proportion_above(30, 100, 0.10).pvalue
    assert stream.family.pvalue == pytest.approx(min(1.0, 2 * 11 * exact))
    assert other.family.alpha == stream.family.alpha == 0.05
    fixed = pvalue_from_ci(0.5, 0.3, 0.7, bound=0.2, level=level, higher_is_worse=True)
    assert other.family.pvalue == pytest.approx(min(1.0, 11 * fixed))
    assert (stream.status, other.status) == ("fail", "fail")
