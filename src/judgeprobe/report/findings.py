"""The card's entry for one finding: what the audit decided, how sure it is, and one sentence.

The status, the threshold behind it and where that threshold came from were decided by the audit
and stored with the finding (:mod:`judgeprobe.report.stored`); this module only says whether the
confidence interval falls on one side of the threshold (the finding's *certainty*) and words it
for a reader.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from judgeprobe.core.evidence import SHOWN
from judgeprobe.probes.base import Threshold, ThresholdSource
from judgeprobe.report.statuses import SEVERITY
from judgeprobe.report.stored import StoredFinding
from judgeprobe.report.text import fmt_number, humanize
from judgeprobe.stats.resampling import MIN_BOOTSTRAP_CLUSTERS

__all__ = ["ThresholdSource", "certainty_phrase", "finding_entry", "finding_sentence"]


def finding_entry(stored: StoredFinding, *, evidence_cap: int = SHOWN) -> dict[str, Any]:
    """The card's entry for one stored finding: what the audit decided, and how sure it is,
    and the first ``evidence_cap`` items behind it (``evidence``, null when none were kept)."""
    threshold = None if stored.threshold is None else stored.threshold.model_dump()
    ci = stored.ci.model_dump()
    finding = {
        "name": stored.name,
        "description": stored.description,
        "labels": dict(stored.labels),
        "estimate": stored.estimate,
        "ci": ci,
        "n": stored.n,
        "counts": dict(stored.counts),
        "reason": stored.reason,
        "threshold": threshold,
        "threshold_source": None if threshold is None else stored.threshold_source,
        "status": stored.status,
        "headline": threshold is not None,
        "certainty": _certainty(stored.status, ci, threshold),
        "needed_n": stored.needed_n,
        "test": None if stored.test is None else stored.test.model_dump(),
        "family": None if stored.family is None else stored.family.model_dump(),
        "evidence": None if stored.evidence is None else stored.evidence.card_entry(evidence_cap),
    }
    finding["sentence"] = finding_sentence(finding)
    return finding


def finding_sentence(finding: Mapping[str, Any]) -> str:
    """One sentence a reader understands: estimate, CI, n, status and the threshold behind it.

    Examples
    --------
    >>> finding_sentence({"name": "position_bias", "labels": {}, "estimate": 0.18,
    ...     "ci": {"low": 0.12, "high": 0.25, "level": 0.95}, "n": 120, "status": "fail",
    ...     "threshold": {"warn": None, "fail": 0.1, "higher_is_worse": True},
    ...     "certainty": "clear"})
    'Position bias 0.18 [0.12, 0.25], n=120 — fails (fail >= 0.1); the whole 95% CI is in fail'
    """
    labels = finding.get("labels") or {}
    label = humanize(str(finding.get("name", "")))
    if labels:
        label += " (" + ", ".join(f"{k}={v}" for k, v in labels.items()) + ")"
    ci = finding.get("ci") or {}
    status = finding.get("status")
    if status == "n/a":
        reason = finding.get("reason") or "no data"
        return f"{label}: not assessable, n={finding.get('n', 0)} ({reason})"
    numbers = (
        f"{label} {fmt_number(finding.get('estimate'))} "
        f"[{fmt_number(ci.get('low'))}, {fmt_number(ci.get('high'))}], n={finding.get('n', 0)}"
    )
    threshold = finding.get("threshold")
    if status == "info" or threshold is None:
        return f"{numbers} (no threshold; for information)"
    if status == "inconclusive":
        described = _as_threshold(threshold).describe()
        needed = finding.get("needed_n")
        more = (
            f"; roughly {needed} more would likely decide it"
            if isinstance(needed, int) and needed > 0
            else ""
        )
        return f"{numbers} — inconclusive ({described}); {certainty_phrase(finding)}{more}"
    verb = {"pass": "passes", "warn": "warns", "fail": "fails"}[str(status)]
    described = _as_threshold(threshold).describe()
    return f"{numbers} — {verb} ({described}); {certainty_phrase(finding)}"


def certainty_phrase(finding: Mapping[str, Any]) -> str:
    """How sure the status is: whether the whole CI falls on the same side of the thresholds."""
    ci = finding.get("ci") or {}
    level = f"{round(float(ci.get('level') or 0.95) * 100):d}%"
    certainty = finding.get("certainty")
    family = finding.get("family") or {}
    adjusted_away = family.get("unadjusted_status") in ("warn", "fail")
    if finding.get("status") == "inconclusive" and adjusted_away:
        return (
            f"its own evidence says {family['unadjusted_status']}, but not once the "
            f"{family.get('family_size')} gated findings are decided together "
            f"({family.get('method')}: adjusted p = {fmt_number(family.get('adjusted_pvalue'))})"
        )
    method = str(ci.get("method") or "")
    units = finding.get("n")
    few = isinstance(units, int) and 0 < units < MIN_BOOTSTRAP_CLUSTERS and "bootstrap" in method
    few = few and certainty != "unknown"  # without an interval, say that instead
    if finding.get("status") == "inconclusive" and few:
        return (
            f"its {level} CI is a {method} over {units} units (at least"
            f" {MIN_BOOTSTRAP_CLUSTERS} needed to resample), which decides nothing"
        )
    if finding.get("status") == "inconclusive" and certainty == "clear":
        return f"the {level} CI is decided, but the probe's own test does not reject its null"
    if certainty == "clear":
        return f"the whole {level} CI is in {finding.get('status')}"
    if certainty == "borderline":
        threshold = _as_threshold(finding["threshold"])
        ends = {threshold.status(float(ci["low"])), threshold.status(float(ci["high"]))}
        status = str(finding["status"])
        ordered = sorted(ends | ({status} & set(SEVERITY)), key=SEVERITY.__getitem__)
        return f"borderline: the {level} CI spans {ordered[0]} to {ordered[-1]}"
    why = str(ci.get("method") or "").strip()
    named = f" ({why})" if why else ""
    if finding.get("status") == "inconclusive":
        return f"no confidence interval{named}: a point estimate alone decides nothing"
    return f"no confidence interval{named}"


def _certainty(
    status: str, ci: Mapping[str, Any], threshold: Mapping[str, Any] | None
) -> str | None:
    """``clear`` when both ends of the CI fall in one band, ``borderline`` when the CI crosses
    a threshold (a warn beyond warn that reaches into fail, or an inconclusive finding),
    ``unknown`` without a CI; None for findings without a threshold."""
    if threshold is None or status not in (*SEVERITY, "inconclusive"):
        return None
    low, high = _number(ci.get("low")), _number(ci.get("high"))
    if low is None or high is None:
        return "unknown"
    rule = _as_threshold(threshold)
    return "clear" if rule.status(low) == rule.status(high) else "borderline"


def _as_threshold(threshold: Mapping[str, Any]) -> Threshold:
    return Threshold.from_dict(threshold)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number
