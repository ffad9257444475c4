"""The Judge Card's order of statuses and probe kinds, and the tallies built on it.

A status is one of pass, warn, fail (decided, ranked by :data:`SEVERITY`), inconclusive, n/a or
info; the card, its summary and its exit code all rank and count statuses the same way, so the
ranking lives here once. :func:`verdict` is how the card, each probe and each kind of probe
combine their gated findings: a pass only when every one is shown to pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

KIND_ORDER = ("agreement", "invariance", "directional", "null")
"""The order of probes in the card: whether the judge agrees with people (and beats a trivial
rule) is the first thing a reader needs, then the CheckList invariance and directional tests."""
SEVERITY = {"pass": 0, "warn": 1, "fail": 2}


def tally(statuses: Iterable[str]) -> dict[str, int]:
    """How many of ``statuses`` are each status; every status is counted, from 0."""
    counts = dict.fromkeys(("pass", "warn", "fail", "inconclusive", "n/a", "info"), 0)
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return counts


def verdict(statuses: Sequence[str]) -> str:
    """The verdict of gated findings with ``statuses``: decided, or saying that it is not.

    ``fail`` when one is decided fail, else ``warn`` when one is decided warn; ``pass`` only
    when every one is decided pass. Otherwise nothing is shown either way: ``inconclusive``
    when some were assessed (undecided, or passes beside findings that could not be assessed),
    ``n/a`` when none could be. ``info`` statuses (no threshold) take no part; only those give
    ``info``.

    Examples
    --------
    >>> verdict(["pass", "pass"]), verdict(["pass", "inconclusive"]), verdict(["pass", "fail"])
    ('pass', 'inconclusive', 'fail')
    >>> verdict(["pass", "n/a"]), verdict(["n/a"]), verdict([])
    ('inconclusive', 'n/a', 'n/a')
    """
    gated = [s for s in statuses if s != "info"]
    if not gated:
        return "info" if statuses else "n/a"
    for status in ("fail", "warn"):
        if status in gated:
            return status
    if all(s == "pass" for s in gated):
        return "pass"
    if any(s in ("pass", "inconclusive") for s in gated):
        return "inconclusive"
    return "n/a"


def worst(statuses: Sequence[str]) -> str:
    """The worst decided status; ``inconclusive``, ``n/a`` or ``info`` when none is decided."""
    ranked = [s for s in statuses if s in SEVERITY]
    if ranked:
        return max(ranked, key=SEVERITY.__getitem__)
    if "inconclusive" in statuses:
        return "inconclusive"
    return "n/a" if any(s == "n/a" for s in statuses) or not statuses else "info"


def kind_rank(kind: str) -> int:
    """Where a probe of ``kind`` stands in :data:`KIND_ORDER`; an unknown kind comes last."""
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
