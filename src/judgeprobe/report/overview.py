"""The card at a glance: the verdict in one sentence and the findings that matter most.

Both renderers open the card with the same three things: the overview figure of every gated
finding (:mod:`~judgeprobe.report.overview_figure`), :func:`verdict_sentence`, and the
:func:`top_findings`. They read the statuses the audit stored; nothing here decides one.

Which findings *matter most* (:func:`top_findings`), in order:

1. decided fails, the one whose CI clears its fail threshold by the widest margin first;
2. then warns, by how far the CI clears the warn threshold;
3. then inconclusive findings, the one nearest to being decided first (the smallest
   ``needed_n``, the rough count of further items that would likely decide it; one without it
   last).

A margin is the distance from the CI's nearer end to the threshold, in units of the gap between
the finding's warn and fail thresholds (in the finding's own units when it has only one), so a
flip rate and a kappa compare on one scale. Passes, information and findings that could not be
assessed are never among them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.report.statuses import kind_rank

TOP_COUNT = 3
_RANK = {"fail": 0, "warn": 1, "inconclusive": 2}


def gated_findings(card: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Every (probe, finding) with a threshold, grouped by probe kind in the card's order."""
    pairs = [
        (probe, finding)
        for probe in card["probes"]
        for finding in probe["findings"]
        if finding.get("headline")
    ]
    return sorted(pairs, key=lambda pair: kind_rank(str(pair[0]["kind"])))


def margin(finding: Mapping[str, Any]) -> float:
    """How far the CI's nearer end lies beyond the threshold its status crossed (0 when unknown).

    For a fail it is the fail threshold, for a warn the warn threshold; the distance is divided by
    the gap between warn and fail when the finding has both.
    """
    threshold = finding.get("threshold") or {}
    ci = finding.get("ci") or {}
    low, high = _number(ci.get("low")), _number(ci.get("high"))
    bound = _number(threshold.get(str(finding.get("status"))))
    if low is None or high is None or bound is None:
        return 0.0
    worse_high = bool(threshold.get("higher_is_worse", True))
    distance = low - bound if worse_high else bound - high
    warn, fail = _number(threshold.get("warn")), _number(threshold.get("fail"))
    gap = abs(fail - warn) if warn is not None and fail is not None else 0.0
    return distance / gap if gap > 0 else distance


def top_findings(
    card: Mapping[str, Any], count: int = TOP_COUNT
) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """The ``count`` gated (probe, finding) pairs that matter most, in the module docstring's
    order."""

    def key(pair: tuple[Mapping[str, Any], Mapping[str, Any]]) -> tuple[int, float]:
        finding = pair[1]
        status = str(finding["status"])
        if status == "inconclusive":
            needed = finding.get("needed_n")
            return _RANK[status], float(needed) if isinstance(needed, int) else math.inf
        return _RANK[status], -margin(finding)

    ranked = [pair for pair in gated_findings(card) if pair[1]["status"] in _RANK]
    return sorted(ranked, key=key)[:count]


def verdict_sentence(card: Mapping[str, Any]) -> str:
    """The card's verdict in one sentence: the overall status and what the gated findings say.

    The card's headline (``summary.headline``), the overview figure and the command line's
    summary open with the same words (:func:`verdict_words`).

    Examples
    --------
    >>> card = {"summary": {"overall": "fail"}, "run": {"state": "complete"}, "probes": [
    ...     {"kind": "invariance", "findings": [{"headline": True, "status": "fail"},
    ...      {"headline": True, "status": "pass"}, {"headline": False, "status": "info"}]}]}
    >>> verdict_sentence(card)
    'FAIL: of 2 findings with a threshold, 1 fails and 1 passes.'
    """
    findings = [finding for _, finding in gated_findings(card)]
    text = verdict_words(str(card["summary"]["overall"]), findings)
    if card["run"]["state"] != "complete":
        text += "; the run is incomplete, so they cover only what was judged"
    return text + "."


def verdict_words(overall: str, findings: Sequence[Mapping[str, Any]]) -> str:
    """The verdict ``overall`` and the tally of the gated ``findings``, without a full stop.

    An ``inconclusive`` verdict also says what would decide it: how many more units (each
    finding's own, the unit its ``n`` counts) would likely decide how many of the undecided
    findings, from their ``needed_n`` (:func:`to_decide`).

    Examples
    --------
    >>> undecided = [{"status": "inconclusive", "needed_n": n} for n in (100, 240, 3000)]
    >>> verdict_words("inconclusive", [{"status": "pass"}, *undecided])
    'INCONCLUSIVE: of 4 findings with a threshold, 1 passes and 3 are undecided; about 240 more units would likely decide 2 of them'
    """  # noqa: E501
    statuses = [str(finding["status"]) for finding in findings]
    word = "N/A" if overall == "n/a" else overall.upper()
    if not statuses:
        return f"{word}: no finding has a threshold"
    parts = []
    for status, one, many in _WORDS:
        number = statuses.count(status)
        if number:
            parts.append(f"{number} {one if number == 1 else many}")
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    plural = "s" if len(statuses) != 1 else ""
    text = f"{word}: of {len(statuses)} finding{plural} with a threshold, {said}"
    if overall == "inconclusive":
        text += "; " + to_decide(findings)
    return text


_WORDS = (
    ("fail", "fails", "fail"),
    ("warn", "warns", "warn"),
    ("pass", "passes", "pass"),
    ("inconclusive", "is undecided", "are undecided"),
    ("n/a", "could not be assessed", "could not be assessed"),
)


def to_decide(findings: Sequence[Mapping[str, Any]]) -> str:
    """What would decide the undecided ones among ``findings``, roughly, in a clause.

    The median of their ``needed_n`` (rounded up to two figures), and how many of them that many
    more units would likely decide. Without any ``needed_n`` (no interval, or an estimate on a
    threshold) it says that the count is unknown; without undecided findings (passes beside
    findings that could not be assessed) that a pass needs every one shown to pass.

    Examples
    --------
    >>> to_decide([{"status": "inconclusive", "needed_n": 812}])
    'about 820 more units would likely decide it'
    >>> to_decide([{"status": "inconclusive", "needed_n": None}])
    'how many more units would decide it is not known'
    """
    undecided = [f for f in findings if f.get("status") == "inconclusive"]
    if not undecided:
        return "a pass needs every one of them shown to pass"
    them = "it" if len(undecided) == 1 else "them"
    needed = sorted(
        int(n)
        for f in undecided
        if isinstance(n := f.get("needed_n"), int) and not isinstance(n, bool) and n > 0
    )
    if not needed:
        return f"how many more units would decide {them} is not known"
    median = _two_figures(needed[(len(needed) - 1) // 2])
    decided = sum(n <= median for n in needed)
    which = them if decided == len(undecided) else f"{decided} of {them}"
    units = "unit" if median == 1 else "units"
    return f"about {median:,} more {units} would likely decide {which}"


def _two_figures(number: int) -> int:
    """``number`` rounded up to two significant figures (812 -> 820, 12345 -> 13000)."""
    scale: int = 10 ** max(0, len(str(number)) - 2)
    return -(-number // scale) * scale  # ceiling division, in integers


def finding_index(probe: Mapping[str, Any], finding: Mapping[str, Any]) -> int:
    """Where ``finding`` stands among ``probe``'s findings (by identity)."""
    findings: Sequence[Mapping[str, Any]] = probe["findings"]
    return next(i for i, f in enumerate(findings) if f is finding)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number
