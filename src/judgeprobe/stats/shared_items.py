"""Rates and means over units that share items: concatenations, tuples, pairs of parts.

The concatenation probes judge requests made of several items: a cluster concatenation of k
parts, a permutation tuple, a bypass concatenation of one flagged part among fillers. An item
takes part in many of them, and a judge's failures follow items: one long, odd or borderline
response derails every request that contains it. The units are then not independent, and an
interval that counts them as if they were (a Wilson interval over 1,000 concatenations drawn from
four items) is far too narrow. What carries the evidence is the items.

The construction here, for the mean of one outcome ``y_j`` per unit ``j`` over the items
``M_j`` that unit is made of:

1. **Delete-one-item jackknife.** ``theta_(-i)`` is the mean over the units that do not contain
   item ``i``; ``v_J = (m - 1) / m * sum_i (theta_(-i) - mean_i theta_(-i))**2`` over the ``m``
   items whose deletion leaves some unit. This is the jackknife of a U-statistic (Arvesen 1969),
   consistent for the variance its shared items cause, and biased upward (Efron and Stein
   1981): alone, an interval built from it errs on the wide side, most of all in the sparse
   designs the probes draw (step 2 takes that bias back).
2. **Each unit counted once.** The jackknife is ``sum_i S_i**2 / N**2`` to first order, with
   ``S_i`` the sum of the centred outcomes of item ``i``'s units: a pair of units that share an
   item enters once per shared item, as it should, but a unit enters with itself once for each
   of its ``k`` items. Its own variance, ``s**2`` (its items' effects and its noise, whatever
   position carries them), is so counted ``k - 1`` times too often: a bias of
   ``(k - 1) s**2 / N``, taken back. What is left is, for units sharing at most one item, the
   multiway cluster-robust variance (Cameron, Gelbach and Miller 2011; Aronow, Samii and
   Assenova 2015: every pair of units that share an item contributes its cross-product once).
   It is never below ``s**2 / N``, the variance of independent units.
3. **An interval that holds at the edges.** A rate's interval is Wilson's score interval at the
   effective sample size ``n* = p (1 - p) / v`` (Korn and Graubard 1998), at most the number of
   units. When a few items carry the variance (three derailing items among forty), ``v`` rests
   on them alone and errs short: as Korn and Graubard do, ``n*`` is scaled by
   ``(z / t_df)**2``, with ``df`` Satterthwaite's (1946) degrees of freedom of the jackknife's
   sum of squares, ``(sum_i d_i**2)**2 / sum_i d_i**4`` over the items' deviations ``d_i``
   (about the number of items that move the rate). When no unit (or every unit) departs there is
   no variance to estimate; ``n*`` is then ``m / k``, the number of disjoint units the items can
   make: with no item seen to derail, an item-driven rate of up to about ``3.84 k / m`` is still
   possible, and the interval says so. A 4-item cluster cannot pass on 1,000 concatenations of
   its items.

``n`` of each estimate is the number of distinct items behind it; the number of units is in its
counts (``units``), beside ``n_effective``.

In simulation (``tests/test_shared_items.py``, 1,000 draws a case), with items derailing every
unit that contains them, a first-position effect, or independent per-request flips, 40 to 169
items and k from 2 to 8, the 95% interval covers the item-population rate in 94 to 99% of draws
(the most in small, dense designs: 60 items in units of 8, where the jackknife still counts a
pair of units once per item they share); in the sparse designs of the concatenation probes (each
item in two to four units, hundreds of items) in 94 to 96%, where the jackknife alone gave 98%.

References
----------
P. M. Aronow, C. Samii and V. A. Assenova (2015), "Cluster-robust variance estimation for dyadic
data", Political Analysis 23:564-577. J. N. Arvesen (1969), "Jackknifing U-statistics", Ann.
Math. Statist. 40:2076-2100. A. C. Cameron, J. B. Gelbach and D. L. Miller (2011), "Robust
inference with multiway clustering", J. Bus. Econ. Stat. 29:238-249. B. Efron and C. Stein
(1981), "The jackknife estimate of variance", Ann. Statist. 9:586-596. E. L. Korn and B. I.
Graubard (1998), "Confidence intervals for proportions with small expected number of positive
counts estimated from survey data", Survey Methodology 24:193-201. F. E. Satterthwaite (1946),
"An approximate distribution of estimates of variance components", Biometrics Bulletin 2:110-114.
E. B. Wilson (1927), JASA 22:209-212.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import InvalidParameterError, check_level, finite_array
from judgeprobe.stats.result import ConfidenceInterval, Estimate

Members = Sequence[Sequence[Hashable]]
"""Per unit, the items it is made of (an item may repeat within a unit)."""


@dataclass(frozen=True, slots=True)
class SharedItemVariance:
    """The variance of a mean over units that share items, and what it rests on."""

    variance: float
    """Estimated variance of the mean (NaN when it cannot be estimated)."""
    items: int
    """Distinct items behind the units."""
    units: int
    parts: float
    """Mean number of distinct items per unit (k)."""
    df: float = float("inf")
    """Satterthwaite's degrees of freedom of the variance over items (infinite when the
    variance is that of independent units)."""

    @property
    def disjoint_units(self) -> float:
        """How many units without a shared item the items can make: ``items / parts``."""
        return self.items / self.parts if self.parts else 0.0


def shared_item_variance(values: ArrayLike, members: Members) -> SharedItemVariance:
    """Variance of ``mean(values)`` when unit ``j`` is made of the items ``members[j]``.

    Parameters
    ----------
    values : array_like of float
        One outcome per unit.
    members : sequence of sequences of hashable
        Per unit, the items it is made of.

    Returns
    -------
    SharedItemVariance
        The variance (the module's steps 1 and 2), the distinct items, the units, the mean
        number of distinct items per unit and the variance's degrees of freedom. NaN variance
        with fewer than two units, with fewer than twice as many items as a unit holds (deleting
        one item would delete most units), or when fewer than two items can be deleted without
        deleting every unit.

    Examples
    --------
    Units that are their own items: the jackknife of a mean, ``s**2 / N``.

    >>> v = shared_item_variance([1.0, 0.0, 0.0, 1.0], [["a"], ["b"], ["c"], ["d"]])
    >>> round(v.variance, 6), v.items, v.parts
    (0.083333, 4, 1.0)
    """
    y = finite_array("values", values)
    if len(members) != y.size:
        raise InvalidParameterError(
            f"members must name the items of every unit: {len(members)} for {y.size} values"
        )
    sets = [frozenset(m) for m in members]
    if any(not s for s in sets):
        raise InvalidParameterError("every unit must be made of at least one item")
    items = sorted({i for s in sets for i in s}, key=repr)
    units = int(y.size)
    parts = float(np.mean([len(s) for s in sets])) if sets else 0.0
    if units < 2 or len(items) < 2 * parts:
        # with fewer than twice as many items as a unit holds, deleting one item deletes most
        # units: the jackknife reads the spread off the few left, and says nothing
        return SharedItemVariance(float("nan"), len(items), units, parts)
    incidence = _incidence(sets, items)
    deviations = _jackknife_deviations(y, incidence)
    if deviations is None:
        return SharedItemVariance(float("nan"), len(items), units, parts)
    m = deviations.size
    jackknife = float((m - 1) / m * np.sum(deviations**2))
    independent = float(y.var(ddof=1)) / units
    variance = jackknife - (parts - 1.0) * independent
    if variance <= independent:
        return SharedItemVariance(independent, len(items), units, parts)
    return SharedItemVariance(variance, len(items), units, parts, _satterthwaite(deviations))


def shared_item_proportion(
    successes: ArrayLike,
    members: Members,
    *,
    confidence_level: float = 0.95,
) -> Estimate:
    """The share of units that succeed, with an interval over the items they share.

    Parameters
    ----------
    successes : array_like of bool
        One entry per unit (0/1 or bool).
    members : sequence of sequences of hashable
        Per unit, the items it is made of.
    confidence_level : float, default 0.95

    Returns
    -------
    Estimate
        ``n`` is the number of distinct items; counts ``{"k", "units", "items",
        "n_effective"}``. Wilson's interval at the effective sample size (see the module). When
        the units are their own items this is Wilson's interval over them. Undefined when empty.

    Examples
    --------
    One thousand concatenations of four items, none departing, decide nothing:

    >>> import itertools
    >>> members = [p for p in itertools.product("abcd", repeat=2)][:12]
    >>> est = shared_item_proportion([0] * 12, members)
    >>> est.n, est.counts["units"], est.ci.high > 0.5
    (4, 12, True)
    """
    y = finite_array("successes", successes)
    if not np.all((y == 0) | (y == 1)):
        raise InvalidParameterError("successes must hold only True/False (or 1/0) values")
    level = check_level(confidence_level)
    if y.size == 0:
        return Estimate.undefined(0, reason="no units")
    shared = shared_item_variance(y, members)
    k = int(y.sum())
    p = k / y.size
    n_eff = _effective_n(p, shared, level)
    low, high = wilson(p, n_eff, level)
    counts = {"k": k, "units": shared.units, "items": shared.items, "n_effective": n_eff}
    method = "wilson at the effective n over shared items"
    return Estimate(p, ConfidenceInterval(low, high, level, method), shared.items, counts)


def shared_item_mean(
    values: ArrayLike,
    members: Members,
    *,
    confidence_level: float = 0.95,
) -> Estimate:
    """The mean of the units' values, with a t interval over the items they share.

    The standard error is the square root of :func:`shared_item_variance`; the t quantile has
    its Satterthwaite degrees of freedom (``units - 1`` when the units vary as if independent).
    ``n`` is the number of distinct items.

    Examples
    --------
    >>> ring = [["a", "b"], ["b", "c"], ["c", "d"], ["d", "a"]]
    >>> est = shared_item_mean([0.5, -0.5, 0.25, 0.0], ring)
    >>> est.n, est.counts["units"]
    (4, 4)
    """
    y = finite_array("values", values)
    level = check_level(confidence_level)
    if y.size == 0:
        return Estimate.undefined(0, reason="no units")
    shared = shared_item_variance(y, members)
    counts = {"units": shared.units, "items": shared.items}
    mean = float(y.mean())
    if not np.isfinite(shared.variance) or shared.items < 2:
        return Estimate.undefined(
            shared.items,
            reason=f"{shared.items} item(s) behind {shared.units} unit(s): too few to estimate "
            "the variance over items",
        )
    df = shared.df if np.isfinite(shared.df) else shared.units - 1
    half = float(sps.t.ppf(0.5 + level / 2, df)) * float(np.sqrt(shared.variance))
    method = "t over shared items"
    return Estimate(
        mean, ConfidenceInterval(mean - half, mean + half, level, method), shared.items, counts
    )


def design_effect(values: ArrayLike, members: Members) -> float:
    """How many times the variance of ``mean(values)`` exceeds that of independent units
    (at least 1); NaN when it cannot be estimated. Used to widen an interval computed as if the
    units were independent (a bootstrap over concatenations of a distance between
    distributions) to the items they share."""
    y = finite_array("values", values)
    shared = shared_item_variance(y, members)
    if y.size < 2 or not np.isfinite(shared.variance):
        return float("nan")
    independent = float(y.var(ddof=1)) / y.size
    if independent <= 0:
        return float(max(1.0, shared.units / max(shared.disjoint_units, 1.0)))
    return max(1.0, shared.variance / independent)


def wilson(p: float, n: float, confidence_level: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``p`` observed on ``n`` (> 0, not necessarily
    whole) trials: the closed form, which at whole ``n`` is SciPy's and statsmodels'."""
    if n <= 0:
        return 0.0, 1.0
    z = float(sps.norm.ppf(0.5 + confidence_level / 2))
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half = z * float(np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))) / denominator
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return low, high


def _effective_n(p: float, shared: SharedItemVariance, level: float) -> float:
    """``p (1 - p) / variance`` scaled by ``(z / t_df)**2`` (Korn and Graubard), at most the
    number of units; with no variance to read (every unit alike, or too few items to delete),
    the number of disjoint units the items make."""
    if shared.parts == 1.0 and shared.items == shared.units:
        return float(shared.units)  # the units are their own items: independent
    floor = max(shared.disjoint_units, 1e-9)
    if p in (0.0, 1.0) or not np.isfinite(shared.variance) or shared.variance <= 0:
        return min(floor, float(shared.units))
    n_star = p * (1.0 - p) / shared.variance
    if np.isfinite(shared.df):
        tail = 0.5 + level / 2
        n_star *= (float(sps.norm.ppf(tail)) / float(sps.t.ppf(tail, shared.df))) ** 2
    return float(min(float(shared.units), n_star))


def _incidence(sets: Sequence[frozenset[Hashable]], items: Sequence[Hashable]) -> NDArray[np.bool_]:
    """``(items, units)``: whether item ``i`` is part of unit ``j``."""
    position = {item: index for index, item in enumerate(items)}
    incidence = np.zeros((len(items), len(sets)), dtype=bool)
    for unit, members in enumerate(sets):
        for item in members:
            incidence[position[item], unit] = True
    return incidence


def _jackknife_deviations(
    y: NDArray[np.float64], incidence: NDArray[np.bool_]
) -> NDArray[np.float64] | None:
    """Delete-one-item means, centred, over the items whose deletion leaves at least one unit;
    None when fewer than two such items."""
    kept = y.size - incidence.sum(axis=1)
    removed = incidence.astype(np.float64) @ y
    usable = kept > 0
    if int(usable.sum()) < 2:
        return None
    leave_out = (float(y.sum()) - removed[usable]) / kept[usable]
    deviations: NDArray[np.float64] = leave_out - leave_out.mean()
    return deviations


def _satterthwaite(deviations: NDArray[np.float64]) -> float:
    """Degrees of freedom of ``sum(d**2)``: ``(sum d**2)**2 / sum d**4``, between 1 and the
    items less one. About the number of items whose deletion moves the mean."""
    squares = deviations**2
    fourth = float(np.sum(squares**2))
    if fourth <= 0:
        return float(deviations.size - 1)
    return float(min(max(float(np.sum(squares)) ** 2 / fourth, 1.0), deviations.size - 1))


def over_shared_items(estimate: Estimate, values: ArrayLike, members: Members) -> Estimate:
    """``estimate`` (its interval computed as if its units were independent) widened to the
    items the units share: each side of the interval is stretched by the square root of the
    :func:`design_effect` of ``values``, the per-unit quantities the statistic summarises (a
    unit's distance for a distance between distributions), and ``n`` becomes the number of
    distinct items. A lower bound of a non-negative statistic stays at or above 0.

    Examples
    --------
    >>> from judgeprobe.stats.result import ConfidenceInterval, Estimate
    >>> narrow = Estimate(0.2, ConfidenceInterval(0.15, 0.25, 0.95, "bootstrap"), 4)
    >>> ring = [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]
    >>> wide = over_shared_items(narrow, [1.0, 1.0, 0.0, 0.0], ring)
    >>> wide.n, wide.ci.low < 0.15, wide.ci.high > 0.25
    (4, True, True)
    """
    if not estimate.defined:
        return estimate
    shared = shared_item_variance(values, members)
    effect = design_effect(values, members)
    counts = {**estimate.counts, "units": shared.units, "items": shared.items}
    if not np.isfinite(effect):
        return Estimate.undefined(
            shared.items,
            reason=f"{shared.items} item(s) behind {shared.units} unit(s): too few to estimate "
            "the variance over items",
        )
    stretch = float(np.sqrt(effect))
    centre, ci = estimate.estimate, estimate.ci
    low = centre - (centre - ci.low) * stretch
    high = centre + (ci.high - centre) * stretch
    if ci.low >= 0:
        low = max(0.0, low)
    method = f"{ci.method}, widened to shared items (design effect {effect:.2g})"
    return Estimate(centre, ConfidenceInterval(low, high, ci.level, method), shared.items, counts)
