"""Anytime-valid decisions of one round of an audit sampled until decided.

Every finding of a round is computed by its probe at the round's share ``alpha_r`` of the
error level (:func:`~judgeprobe.stats.sequential.look_alpha`; the shares over the planned
rounds sum to at most ``alpha``), with one exception. A probe's *stream findings*
(:attr:`~judgeprobe.probes.base.Probe.stream_findings`) are rates over the items, one outcome
per item, that a longer prefix only appends to; a gated one gets its bad-side end (the one a
warn or fail rests on) from the exact (Clopper-Pearson) interval at the round's share, which
spends at most ``alpha / 2`` on that side over all rounds (the Wilson interval the probe
computes can miss more often than its level on one side, and the looks would add that up), and
its pass-side end from the beta-binomial mixture's confidence sequence at
``alpha / 2`` (:func:`~judgeprobe.stats.sequential.sequence_bound`), which holds at every round
at once. The interval then misses the true rate at some round with probability at most
``alpha``: it is labelled with the level ``1 - alpha``.

The family is adjusted (Holm, :func:`judgeprobe.audit.family.adjust_family`) on anytime-valid
p-values at ``alpha``: a finding's fixed-n p-value times ``alpha / alpha_r`` (Bonferroni over
the rounds), and for a stream finding's claim the one-sided exact binomial test's p-value times
``2 alpha / alpha_r`` (the Clopper-Pearson interval at ``1 - alpha_r`` inverts that test, with
``alpha_r / 2`` per side). Each is at most ``a`` at some round with probability at most ``a``
under its null, so on the event that no true null's p-value ever falls below ``alpha / m0``
(probability at most ``alpha``) Holm rejects no true null at any round: the family keeps its
error rate whatever round the audit stops at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from judgeprobe.audit.family import adjust_family
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Finding, Probe, Threshold
from judgeprobe.stats import proportion, proportion_above
from judgeprobe.stats.multiplicity import holm
from judgeprobe.stats.result import ConfidenceInterval
from judgeprobe.stats.sequential import SEQUENCE_METHOD, BetaPrior, pass_prior, sequence_bound

RATE_METHODS = frozenset({"wilson", "clopper-pearson", "wilson-cc"})
"""The interval methods of :func:`judgeprobe.stats.proportion`: a rate with counts k and n."""


def as_sequence(finding: Finding, alpha: float) -> Finding:
    """``finding``, a gated rate of k of n computed at a round's share of ``alpha``, with its
    pass-side end from the confidence sequence at ``alpha / 2`` (see the module); its fixed-n
    test, if any, no longer applies and is dropped."""
    est, threshold = finding.estimate, finding.threshold
    assert threshold is not None
    k, n = int(est.counts["k"]), int(est.counts["n"])
    worse = threshold.higher_is_worse
    exact = proportion(k, n, confidence_level=est.ci.level, method="exact").ci
    end = sequence_bound(k, n, alpha / 2.0, upper=worse, prior=_prior(threshold))
    low, high = (exact.low, end) if worse else (end, exact.high)
    ci = ConfidenceInterval(low, high, round(1.0 - alpha, 12), SEQUENCE_METHOD)
    return dataclasses.replace(finding, estimate=dataclasses.replace(est, ci=ci), test=None)


def is_stream(finding: Finding, probe: Probe) -> bool:
    """Whether ``finding`` is one of ``probe``'s gated stream findings, a rate with counts and
    thresholds inside [0, 1] (a line outside it, such as ``warn: -1`` to warn on every rate, is
    decided as any other finding, at the round's share)."""
    est, threshold = finding.estimate, finding.threshold
    lines = [] if threshold is None else [threshold.warn, threshold.fail]
    return (
        finding.name in probe.stream_findings
        and threshold is not None
        and any(line is not None for line in lines)
        and all(line is None or 0.0 <= line <= 1.0 for line in lines)
        and est.defined
        and est.ci.method in RATE_METHODS
        and "k" in est.counts
        and "n" in est.counts
    )


def decide_round(
    results: Mapping[str, ProbeResult],
    probes: Mapping[str, Probe],
    *,
    alpha: float,
    spent: Mapping[str, float],
) -> dict[str, ProbeResult]:
    """A round's ``results`` decided (see the module), as new results by the same names.

    ``probes`` are the audit's probes by result name, ``spent`` the share of ``alpha`` each
    probe's fixed-n intervals were computed at this round. The results' thresholds must be set.
    """
    streamed = [
        dataclasses.replace(
            result,
            findings=[
                as_sequence(f, alpha) if is_stream(f, probes[name]) else f for f in result.findings
            ],
        )
        for name, result in results.items()
    ]
    names = list(results)
    adjusted_results = adjust_family(streamed)
    findings = [list(result.findings) for result in adjusted_results]
    members: list[tuple[int, int, float]] = []
    for which, name in enumerate(names):
        for index, finding in enumerate(findings[which]):
            if finding.family is not None and finding.threshold is not None:
                pvalue = _anytime_pvalue(finding, alpha / spent[name])
                members.append((which, index, pvalue))
    adjusted = holm([p for *_, p in members])
    for (which, index, pvalue), adjusted_p in zip(members, adjusted, strict=True):
        finding = findings[which][index]
        assert finding.family is not None
        family = dataclasses.replace(
            finding.family, pvalue=pvalue, adjusted_pvalue=adjusted_p, alpha=alpha
        )
        findings[which][index] = dataclasses.replace(finding, family=family)
    return {
        name: dataclasses.replace(result, findings=found)
        for name, result, found in zip(names, adjusted_results, findings, strict=True)
    }


def _anytime_pvalue(finding: Finding, looks: float) -> float:
    """A family member's anytime-valid p-value: ``looks`` times its fixed-n one (the score
    test's, one-sided, for a stream finding, whose claim side is at half the share)."""
    family, threshold = finding.family, finding.threshold
    assert family is not None and threshold is not None
    if finding.estimate.ci.method != SEQUENCE_METHOD:
        return min(1.0, family.pvalue * looks)
    bound = threshold.fail if family.bound == "fail" else threshold.warn
    assert bound is not None
    k, n = int(finding.estimate.counts["k"]), int(finding.estimate.counts["n"])
    alternative = "greater" if threshold.higher_is_worse else "less"
    exact = proportion_above(k, n, bound, alternative=alternative).pvalue
    return min(1.0, 2.0 * looks * float(exact))


def _prior(threshold: Threshold) -> BetaPrior:
    """The pass side's prior: centred on the warn threshold, else the fail threshold."""
    side = threshold.warn if threshold.warn is not None else threshold.fail
    assert side is not None
    return pass_prior(side, higher_is_worse=threshold.higher_is_worse)
