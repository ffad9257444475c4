"""Anytime-valid decisions of one round of an audit sampled until decided.

A round's findings come in two kinds (:mod:`judgeprobe.sequential` runs the rounds):

- a probe's *stream findings* (:attr:`~judgeprobe.probes.base.Probe.stream_findings`) are rates
  over the items, one outcome per item, that a longer prefix of the items only appends to. They
  get the confidence sequence of :func:`~judgeprobe.stats.sequential.proportion_sequence` at the
  audit's own level ``1 - alpha``: it holds at every round at once, so looking costs nothing;
- every other finding is computed by its probe at the round's spending level
  (:func:`~judgeprobe.stats.sequential.look_alpha`), whose shares over the planned rounds sum
  to at most ``alpha``.

The family is then adjusted (Holm, :func:`judgeprobe.family.adjust_family`) on anytime-valid
p-values at ``alpha``: a stream finding's ``1 / M_n(bound)``, and any other finding's fixed-n
p-value divided by its round's share of ``alpha`` (``p * alpha / alpha_r``: Bonferroni over the
rounds). Each is at most ``a`` at some round with probability at most ``a`` under its null, so
on the event that no true null's p-value ever falls below ``alpha / m0`` (probability at most
``alpha``) Holm rejects no true null at any round: the family keeps its error rate whatever
round the audit stops at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, MutableMapping

from judgeprobe.family import adjust_family
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Finding, Probe, Threshold
from judgeprobe.stats.multiplicity import holm
from judgeprobe.stats.sequential import (
    SEQUENCE_METHOD,
    proportion_sequence,
    sequence_pvalue,
    threshold_prior,
)

RATE_METHODS = frozenset({"wilson", "clopper-pearson", "wilson-cc"})
"""The interval methods of :func:`judgeprobe.stats.proportion`: a rate with counts k and n."""


def as_sequence(finding: Finding, alpha: float) -> Finding:
    """``finding``, a rate of k of n, with its confidence sequence at ``1 - alpha`` (the prior on
    its thresholds); its fixed-n test, if any, no longer applies and is dropped."""
    est = finding.estimate
    k, n = int(est.counts["k"]), int(est.counts["n"])
    sequence = proportion_sequence(k, n, confidence_level=1.0 - alpha, prior=_prior(finding))
    sequence = dataclasses.replace(sequence, counts={**est.counts, **sequence.counts})
    return dataclasses.replace(finding, estimate=sequence, test=None)


def is_stream(finding: Finding, probe: Probe) -> bool:
    """Whether ``finding`` is one of ``probe``'s stream findings, a rate with its counts."""
    est = finding.estimate
    return (
        finding.name in probe.stream_findings
        and est.defined
        and est.ci.method in RATE_METHODS
        and "k" in est.counts
        and "n" in est.counts
    )


def decide_round(
    results: MutableMapping[str, ProbeResult],
    probes: Mapping[str, Probe],
    *,
    alpha: float,
    spent: Mapping[str, float],
) -> None:
    """Decide a round's ``results`` in place (see the module).

    ``probes`` are the audit's probes by result name, ``spent`` the share of ``alpha`` each
    probe's fixed-n intervals were computed at this round. The results' thresholds must be set.
    """
    for name, result in results.items():
        probe = probes[name]
        result.findings = [
            as_sequence(f, alpha) if is_stream(f, probe) else f for f in result.findings
        ]
    adjust_family(results.values())
    members: list[tuple[ProbeResult, int, float]] = []
    for name, result in results.items():
        for index, finding in enumerate(result.findings):
            if finding.family is not None and finding.threshold is not None:
                members.append((result, index, _anytime_pvalue(finding, alpha / spent[name])))
    adjusted = holm([p for *_, p in members])
    for (result, index, pvalue), adjusted_p in zip(members, adjusted, strict=True):
        finding = result.findings[index]
        assert finding.family is not None
        family = dataclasses.replace(
            finding.family, pvalue=pvalue, adjusted_pvalue=adjusted_p, alpha=alpha
        )
        result.findings[index] = dataclasses.replace(finding, family=family)


def _anytime_pvalue(finding: Finding, looks: float) -> float:
    """A family member's anytime-valid p-value: the sequence's, or ``looks`` times its own."""
    family, threshold = finding.family, finding.threshold
    assert family is not None and threshold is not None
    if finding.estimate.ci.method != SEQUENCE_METHOD:
        return min(1.0, family.pvalue * looks)
    bound = threshold.fail if family.bound == "fail" else threshold.warn
    assert bound is not None
    counts = finding.estimate.counts
    return sequence_pvalue(
        int(counts["k"]),
        int(counts["n"]),
        bound,
        higher_is_worse=threshold.higher_is_worse,
        prior=_prior(finding),
    )


def _prior(finding: Finding) -> tuple[tuple[float, float, float], ...]:
    threshold: Threshold | None = finding.threshold
    return threshold_prior([] if threshold is None else [threshold.warn, threshold.fail])
