"""Simulated watches of a judge, for the drift test's tests and benchmark.

A pool of anchors, each with its own rerun rate ``q_i`` (the chance that a fresh verdict differs
from its audited one: Beta with mean ``rerun_rate`` and Jeffreys' first shape, so a few anchors
are very noisy and most are not); the null measured as an audit measures it (one rerun of each of
a uniform sample of ``null_pairs`` anchors) and bounded at ``alpha / 2``; at ``change_at`` a
share ``change`` of the anchors flips (``q_i`` becomes ``1 - q_i``); each check draws ``anchors``
anchors without replacement and the detector (:func:`judgeprobe.stats.drift.drift_looks`) looks
after every check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgeprobe.stats.drift import drift_looks, drift_prior, rerun_null_bound


@dataclass(frozen=True, slots=True)
class SimulatedSeries:
    detected_at: int | None
    null_bound: float


def simulate_series(
    *,
    series: int,
    checks: int,
    anchors: int,
    rerun_rate: float,
    change: float,
    change_at: int | None,
    alpha: float,
    seed: int,
    pool: int = 200,
    null_pairs: int = 100,
    known_null: bool = False,
) -> list[SimulatedSeries]:
    """``series`` simulated watches of ``checks`` checks each (see the module)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(series):
        if rerun_rate > 0:
            rates = rng.beta(0.5, 0.5 * (1 - rerun_rate) / rerun_rate, pool)
        else:
            rates = np.zeros(pool)
        if known_null:
            differing, pairs, bound = 0, 0, float(rates.mean())
        else:
            sampled = rng.permutation(pool)[:null_pairs]
            differing = int(rng.binomial(1, rates[sampled]).sum())
            pairs = null_pairs
            bound = rerun_null_bound(differing, pairs, alpha / 2)
        rate = float(rates.mean()) if known_null else differing / pairs
        flipped = rng.permutation(pool)[: round(change * pool)]
        counts = []
        for check in range(1, checks + 1):
            now = rates.copy()
            if change_at is not None and check >= change_at:
                now[flipped] = 1 - now[flipped]
            drawn = rng.permutation(pool)[:anchors]
            counts.append((int(rng.binomial(1, now[drawn]).sum()), anchors))
        prior = drift_prior(rate, 0.1, bound=bound)
        looks = drift_looks(counts, null_bound=bound, alpha=alpha / 2, prior=prior)
        first = next((look.check for look in looks if look.detected), None)
        out.append(SimulatedSeries(first, bound))
    return out
