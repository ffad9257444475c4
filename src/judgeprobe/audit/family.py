"""The audit's family of gated findings: which findings decide the verdict, and together how.

Headline findings (those with a threshold) form the audit's family. Slices of a measure (one
category, turn or stratum: a finding whose labels hold one of
:data:`~judgeprobe.probes.base.SLICE_LABELS`) are information: the probes report them without a
threshold, and a plugin's default threshold on one is not applied, so 40 per-category numbers
cannot fail an audit whose overall number passes. So are the findings a probe declares derived
from its others (:attr:`~judgeprobe.probes.base.Probe.derived_findings`: the position probe's
consistency is one minus its flip rate, and its first- and second-position biases are the flip
rate's two parts): one gated finding per question, so the family's error rate is not spent
twice on one question. A threshold the config names explicitly (``finding`` or
``probe.finding``) gates every finding of that name, slices and derived findings included.

Once every probe has run, the family's warn and fail claims are decided together by Holm's
step-down procedure (:mod:`judgeprobe.stats.multiplicity`): a warn or fail whose adjusted
p-value does not clear ``1 - level`` becomes ``inconclusive``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Literal

from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import Finding, ProbeResult, Threshold, is_slice
from judgeprobe.probes.registry import get_probe_class
from judgeprobe.stats.multiplicity import FamilyAdjustment, PvalueSource, holm, pvalue_from_ci

METHOD: Literal["holm"] = "holm"


def headline_thresholds(result: ProbeResult, configured: Mapping[str, Threshold]) -> ProbeResult:
    """``result`` with each finding's threshold as the audit judges it.

    A configured threshold (key ``probe.finding`` beats ``finding``) replaces the probe's
    default on every finding of that name; without one, a slice or a finding its probe
    declares derived (:func:`derived_findings`) keeps no threshold (it is information) and any
    other finding keeps its probe's default.
    """
    derived = derived_findings(result.probe)
    findings = []
    for finding in result.findings:
        # the more specific key wins
        option = configured.get(f"{result.probe}.{finding.name}") or configured.get(finding.name)
        if option is not None:
            finding = finding.with_threshold(option, source="config")
        elif (is_slice(finding) or finding.name in derived) and finding.threshold is not None:
            finding = finding.with_threshold(None)
        findings.append(finding)
    return dataclasses.replace(result, findings=findings)


def derived_findings(probe: str) -> Mapping[str, str]:
    """The findings the probe named ``probe`` declares derived from its others (name to what
    it is derived from); none for a probe the registry does not know."""
    try:
        return get_probe_class(probe).derived_findings
    except ConfigError:
        return {}


def adjust_family(results: Iterable[ProbeResult]) -> list[ProbeResult]:
    """Decide the warn and fail claims of every gated finding of ``results`` together (Holm).

    Returns ``results``, in order, each with its findings carrying their
    :class:`FamilyAdjustment` (the family's size is every adjustment's ``family_size``). A
    finding is in the family when it has a threshold and a defined estimate; its claim is tested
    against the threshold its own evidence reached (fail, else warn), or the nearer bad-side
    threshold when it reached none. The family's level is the lowest CI level among its members.
    """
    results = list(results)
    members: list[tuple[int, int, Literal["warn", "fail"], float, PvalueSource]] = []
    for which, result in enumerate(results):
        for index, finding in enumerate(result.findings):
            claim = _claim(finding)
            if claim is not None:
                members.append((which, index, *claim))
    if not members:
        return results
    findings = [list(result.findings) for result in results]
    alpha = round(1.0 - min(findings[r][i].estimate.ci.level for r, i, *_ in members), 12)
    adjusted = holm([p for *_, p, _ in members])
    for (which, index, bound, pvalue, source), adjusted_p in zip(members, adjusted, strict=True):
        family = FamilyAdjustment(
            method=METHOD,
            family_size=len(members),
            bound=bound,
            pvalue=pvalue,
            adjusted_pvalue=adjusted_p,
            alpha=alpha,
            source=source,
        )
        findings[which][index] = dataclasses.replace(findings[which][index], family=family)
    return [
        dataclasses.replace(result, findings=found)
        for result, found in zip(results, findings, strict=True)
    ]


def _claim(finding: Finding) -> tuple[Literal["warn", "fail"], float, PvalueSource] | None:
    """The bound a gated finding's claim is tested against, its one-sided p-value and source.

    The p-value is read from the CI (normal approximation); when the probe's own test points to
    the bad side, its p-value is used instead if it is larger, since the unadjusted status
    already needs both to support a warn or fail.
    """
    threshold = finding.threshold
    if threshold is None or not finding.estimate.defined:
        return None
    status = finding.unadjusted_status
    bound: Literal["warn", "fail"] = (
        "fail" if status == "fail" or threshold.warn is None else "warn"
    )
    value = threshold.fail if bound == "fail" else threshold.warn
    if value is None:
        return None
    est, ci = finding.estimate.estimate, finding.estimate.ci
    if math.isnan(ci.low) or math.isnan(ci.high):
        # no interval: the finding is undecided, and there is nothing to adjust
        return None
    pvalue = pvalue_from_ci(
        est,
        ci.low,
        ci.high,
        bound=value,
        level=ci.level,
        higher_is_worse=threshold.higher_is_worse,
    )
    source: PvalueSource = "ci"
    test = finding.test
    wanted = "greater" if threshold.higher_is_worse else "less"
    bad_side = test is not None and test.alternative == wanted and math.isfinite(test.pvalue)
    if test is not None and bad_side and test.pvalue > pvalue:
        pvalue, source = float(test.pvalue), "test"
    return bound, pvalue, source
