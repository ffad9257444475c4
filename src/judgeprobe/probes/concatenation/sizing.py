"""How many concatenations a concatenation probe draws: sized by its question, capped by items.

The paper's protocol (arXiv 2408.12259) draws 1,000 concatenations per cluster and k, k up to
16. Once the interval of a finding counts the items the concatenations are made of
(:mod:`judgeprobe.stats.shared_items`), concatenations beyond a few per item add cost and no
precision: when the judge's failures follow items, the effective sample is about ``items / k``
however many concatenations are drawn. A probe's default design is therefore the smaller of:

- **the question's size**: the units at which a rate at the fail line has a 95% interval of
  half-width ``(fail - warn) / 2``, so that a rate at either line can be told from the other
  (``z**2 * f (1 - f) / ((f - w) / 2)**2``: 554 for a flip rate gated at 0.05 / 0.10, 246 for a
  departure rate gated at 0.10 / 0.20);
- **what the items can carry**: :data:`PER_ITEM` concatenations per item, ``ceil(2 items / k)``:
  with no departure seen, an interval can rest on no more than ``items / k`` disjoint
  concatenations, however many are drawn.

Short concatenations come first (k = 2 and 4 for cluster, 4 and 8 for permutation, counts up to 4
for repetition): they are the cheapest and, per call, the most informative. ``design: paper`` in a
probe's parameters restores the paper's sizes for those who reproduce it (every size left at its
default takes the paper's).
"""

from __future__ import annotations

import math
from typing import Literal, TypeVar

from scipy import stats as sps

from judgeprobe.probes.base import Threshold

T = TypeVar("T")
Design = Literal["sized", "paper"]
DESIGNS: tuple[Design, ...] = ("sized", "paper")
PER_ITEM = 2
"""Concatenations per item a sized design draws at most (for each cluster and k)."""


def question_size(threshold: Threshold, confidence_level: float = 0.95) -> int:
    """Units for a rate at ``threshold``'s fail line to get an interval of half-width
    ``(fail - warn) / 2``.

    >>> from judgeprobe.probes.decisions import DEPARTURE_THRESHOLD, FLIP_THRESHOLD
    >>> question_size(FLIP_THRESHOLD), question_size(DEPARTURE_THRESHOLD)
    (554, 246)
    """
    z = float(sps.norm.ppf(0.5 + confidence_level / 2))
    fail, warn = threshold.fail, threshold.warn
    if fail is None or warn is None or not 0 < fail < 1 or fail == warn:
        return 1
    half = abs(fail - warn) / 2
    return math.ceil(z * z * fail * (1 - fail) / (half * half))


def items_for_power(
    threshold: Threshold,
    k: int,
    *,
    effect: float = 1.5,
    power: float = 0.8,
    confidence_level: float = 0.95,
) -> int:
    """Items a k-part design needs to fail a rate of ``effect`` times the fail line with
    ``power`` when the judge's failures follow items.

    The effective sample of such a rate is about ``items / k`` (each item's effect is shared by
    the units it is in), so the items needed are ``k`` times the units a rate ``p = effect *
    fail`` needs for its interval's lower bound to clear the fail line with that power:
    ``(z + z_power)**2 p (1 - p) / (p - fail)**2``. The rounds cannot buy items: below this many,
    a defect at 1.5 times the fail line is more likely than not to be caught only when its items
    happen to show it (the card reads it inconclusive, never pass).

    >>> from judgeprobe.probes.decisions import DEPARTURE_THRESHOLD, FLIP_THRESHOLD
    >>> items_for_power(FLIP_THRESHOLD, 2), items_for_power(DEPARTURE_THRESHOLD, 2)
    (802, 330)
    """
    fail = threshold.fail
    if fail is None or not 0 < fail < 1:
        return 1
    p = min(effect * fail, 1 - 1e-9) if threshold.higher_is_worse else max(fail / effect, 1e-9)
    z = float(sps.norm.ppf(0.5 + confidence_level / 2)) + float(sps.norm.ppf(power))
    units = math.ceil(round(z * z * p * (1 - p) / (p - fail) ** 2, 6))
    return max(k, 1) * units


def sized_count(
    threshold: Threshold, items: int, k: int, *, per_item: int = PER_ITEM, level: float = 0.95
) -> int:
    """The concatenations of ``k`` parts a sized design draws from ``items`` items: the
    question's size, capped at ``per_item`` per item (at least 1).

    >>> from judgeprobe.probes.decisions import FLIP_THRESHOLD
    >>> sized_count(FLIP_THRESHOLD, 40, 2), sized_count(FLIP_THRESHOLD, 1000, 2)
    (40, 554)
    """
    carried = math.ceil(per_item * items / max(k, 1))
    return max(1, min(question_size(threshold, level), carried))


def by_design(design: Design, value: T, sized: T, paper: T) -> T:
    """``paper`` in place of a parameter left at its sized default ``sized`` when the design is
    the paper's; ``value`` otherwise (a size the user set is kept)."""
    return paper if design == "paper" and value == sized else value
