"""Multiple testing across the gated findings of one audit (Holm's step-down procedure).

Each gated finding claims that its true value lies beyond a threshold (a fail: beyond ``fail``;
a warn: beyond ``warn``). Decided one by one at 95%, an audit with 40 such findings fails on
noise; the family's claims are therefore decided together so that the chance of *any* false
warn or fail stays at ``1 - level``.

The one-sided p-value of a claim is that of "the true value is not beyond the bound". Where the
finding has only a confidence interval, it is read from the interval by a normal approximation:
the standard error is the interval's reach on the bound's side of the estimate divided by the
normal quantile of its level (intervals near 0 or 1 are lopsided, so the side facing the bound
is the one that speaks), and ``p = P(Z >= distance / se)``. For a percentile bootstrap or a
Wilson interval this is an approximation; it agrees with the interval itself at its edge (an
interval whose end sits on the bound gives ``p = (1 - level) / 2``).

Holm's procedure (Holm 1979, "A simple sequentially rejective multiple test procedure", Scand.
J. Statist. 6:65-70) controls the family-wise error rate under any dependence between the
claims, which findings of one audit on one judge have.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scipy.stats import norm

MultiplicityMethod = Literal["holm"]
PvalueSource = Literal["ci", "test"]


@dataclass(frozen=True, slots=True)
class FamilyAdjustment:
    """How one finding fared in its audit's family of gated findings.

    ``bound`` is the threshold its claim was tested against (``warn`` or ``fail``: the one its
    unadjusted status reached, else the nearer bad-side threshold); ``pvalue`` its one-sided
    p-value (from the probe's ``test`` or from the CI, per ``source``) and ``adjusted_pvalue``
    Holm's. A warn or fail stands only when ``adjusted_pvalue < alpha``.
    """

    method: MultiplicityMethod
    family_size: int
    bound: Literal["warn", "fail"]
    pvalue: float
    adjusted_pvalue: float
    alpha: float
    source: PvalueSource

    @property
    def clears(self) -> bool:
        """Whether the claim survives the family's adjustment."""
        return self.adjusted_pvalue < self.alpha

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def pvalue_from_ci(
    estimate: float,
    low: float,
    high: float,
    *,
    bound: float,
    level: float,
    higher_is_worse: bool,
) -> float:
    """One-sided p-value of "the true value is not beyond ``bound``" from a two-sided CI.

    Beyond means at or above ``bound`` when ``higher_is_worse``, else at or below it. Normal
    approximation (see the module docstring); a zero-width side gives 0 or 1.

    Examples
    --------
    >>> round(pvalue_from_ci(0.3, 0.2, 0.4, bound=0.2, level=0.95, higher_is_worse=True), 3)
    0.025
    """
    sign = 1.0 if higher_is_worse else -1.0
    distance = sign * (estimate - bound)
    lo, hi = sorted((low, high))
    reach = estimate - lo if bound <= estimate else hi - estimate  # the side facing the bound
    z = float(norm.ppf(0.5 + level / 2.0))
    if reach <= 0 or not math.isfinite(reach) or z <= 0:
        return 0.0 if distance > 0 else 1.0
    return float(norm.sf(distance / (reach / z)))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order of ``pvalues``.

    Sorted ascending, the k-th smallest (from 0) is multiplied by ``m - k``, capped at 1, and
    made non-decreasing along the order (Holm 1979).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted
