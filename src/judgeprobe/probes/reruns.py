"""The rerun null of the invariance probes: what the judge's own noise flips.

A judge sampled at a temperature above 0 gives a different decision to the same request now and
then. Its flip rate under repetition, concatenation, reordering or a swap of two responses then
counts that noise as an effect: a keyword judge that ignores repetition but flips 5 % of its calls
at random flips about 9.5 % of items between ``S(P, R)`` and ``S(P, R*2)`` (two independent
calls), and the raw rate warns. Each concatenation probe, and the position probe of a pairwise
judge, therefore reruns a seeded sample of its own requests (trial 1 of
the same request, as policy invariance asks for its reruns) and gates the *excess* of each rate
over the share of reruns whose decision differs from trial 0 (:func:`read_against_null`).

The sample (:func:`rerun_sample`): up to :data:`BASE_RERUNS` of the probe's base requests and as
many of its other requests (repetitions, concatenations, orders), each drawn from its own seeded
stream and interleaved, so any prefix holds both kinds. The stages (:func:`next_reruns`):

1. the first :data:`FIRST_RERUNS` of the sample, in the stage that plans the probe's last
   requests (:func:`with_first_reruns`);
2. the rest, in a stage of their own, only when a first rerun differs from its trial 0
   (another status or another score), or when a gated rate already reaches its warn line on
   the probe's own units (then the null decides the status, and a null of 0 out of 10 is too
   wide to decide it);
3. up to :data:`WIDE_RERUNS` of each kind, in a last stage, only when the null's own width
   keeps a rate from a status its interval has cleared (:func:`null_decides`): a rate of 0.15
   on 400 items clears the fail line of 0.10, while its excess over 0 flips of 80 reruns (up to
   0.046) does not. Without it a judge whose effect is 1.5 times the fail line could not fail.

A deterministic judge without an effect pays :data:`FIRST_RERUNS` calls per probe.

Roles: ``("rerun", *role)`` is the rerun of the request of ``role``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.plan import Plan, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.probes.base import Finding, Threshold
from judgeprobe.probes.decisions import is_flip
from judgeprobe.probes.units import FindingKey, UnitValues
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import Estimate, proportion
from judgeprobe.stats.excess import beyond_null, excess_over

RERUN = "rerun"
RERUN_TRIAL = 1
FIRST_RERUNS = 10
"""Reruns asked first; more only when one of them differs or a rate needs the null."""
BASE_RERUNS = 40
"""At most this many base requests are rerun, and as many of the probe's other requests."""
WIDE_RERUNS = 160
"""The most of each kind rerun when the null decides a status (:func:`null_decides`)."""
NULL_LEVEL = 0.95
"""The level :func:`null_decides` reads a rate and its excess at (a probe's own, by default)."""
STREAM = 7
"""A part of the seeded hash that ranks the rerun sample's roles (one stream per kind)."""

Kind = str
FLIP, CHANGE = "flip", "change"
"""The two nulls: a move between the rule's two classes, and any change of decision (neutral
included), matching flip rates and departure rates."""


@dataclass(frozen=True, slots=True)
class Excess:
    """How a raw rate is read against the null: the excess finding's name and which null."""

    name: str
    null: Kind


EXCESS_UNPAIRED = (
    "a rate's excess over the rerun null, a probe-wide rate over a separate sample of calls; "
    "its raw rate is paired"
)
"""Why an ``*_excess`` finding is compared unpaired."""


def excess_names(excess: Mapping[str, Excess]) -> dict[str, str]:
    """Per raw rate of ``excess``, its excess finding's name (a probe's ``excess_findings``)."""
    return {raw: spec.name for raw, spec in excess.items()}


def rerun_role(role: Role) -> Role:
    """The role of the rerun (trial 1) of ``role``'s request."""
    return (RERUN, *role)


def rerun_sample(plan: Plan[Any], name: str, per_kind: int = BASE_RERUNS) -> list[Role]:
    """The seeded sample of ``plan``'s roles to rerun, in the order they are asked (see the
    module): independent of the order of the items, one role per distinct request.

    Each stream's roles are ranked by a seeded hash of their request's key and the first
    ``per_kind`` taken (a bottom-k sample: uniform, like a seeded permutation, and
    nested: a role sampled from a plan stays sampled from a larger plan unless a new role ranks
    before it). An audit in rounds plans each round on more items, so most of a round's reruns
    are the ones the round before made, answered from the store.
    """
    ctx = plan.context
    seen: set[str] = set()
    base: list[Role] = []
    other: list[Role] = []
    for role in sorted((r for r in plan.requests if r[0] != RERUN), key=repr):
        key = plan.requests[role].key
        if key in seen or plan.requests[role].trial != 0:
            continue
        seen.add(key)
        (base if role[0] == "base" else other).append(role)
    picked = []
    for stream, roles in enumerate((base, other)):
        rank = {
            r: content_hash([ctx.seed, name, STREAM, stream, plan.requests[r].key]) for r in roles
        }
        picked.append(sorted(roles, key=rank.__getitem__)[:per_kind])
    out: list[Role] = []
    for i in range(max(len(p) for p in picked)):
        out += [p[i] for p in picked if i < len(p)]
    return out


def _requests(plan: Plan[Any], roles: Sequence[Role]) -> dict[Role, Request]:
    return {rerun_role(r): plan.requests[r].with_trial(RERUN_TRIAL) for r in roles}


def differs(verdicts: Verdicts, role: Role) -> bool:
    """Whether the rerun of ``role`` came back otherwise than trial 0: another status or score."""
    first, again = verdicts.get(role), verdicts.get(rerun_role(role))
    if first is None or again is None:
        return True
    return first.status is not again.status or first.score != again.score


def with_first_reruns(plan: Plan[Any], name: str) -> Plan[Any]:
    """``plan`` with the first :data:`FIRST_RERUNS` reruns of its sample added to its own stage:
    they need no verdict to be asked, so a judge whose reruns all match needs no later stage."""
    first = rerun_sample(plan, name)[:FIRST_RERUNS]
    return dataclasses.replace(plan, requests={**plan.requests, **_requests(plan, first)})


def next_reruns(
    plan: Plan[Any],
    verdicts: Verdicts,
    name: str,
    needs_null: Callable[[], bool],
    decides: Callable[[RerunNull], bool] | None = None,
) -> Plan[Any] | None:
    """The next rerun stage of ``plan`` (see the module), or None when it is complete.

    ``needs_null`` says whether a gated rate reaches its warn line (asked only when the first
    reruns all agree); ``decides`` whether the null, as the reruns asked so far give it, decides
    a status that a larger sample could change (asked once the sample is complete: the sample
    then grows to :data:`WIDE_RERUNS` of each kind).
    """
    sample = rerun_sample(plan, name)
    asked = [r for r in sample if rerun_role(r) in plan.requests]
    if sample and len(asked) == len(sample):
        if decides is None or not verdicts.complete(rerun_role(r) for r in asked):
            return None
        rest = [
            r for r in rerun_sample(plan, name, WIDE_RERUNS) if rerun_role(r) not in plan.requests
        ]
        null = rerun_null(plan, verdicts, plan.context.rubric, NULL_LEVEL)
        return plan.extend(_requests(plan, rest)) if rest and decides(null) else None
    if not sample or len(asked) == len(sample):
        return None
    if not asked:
        first = sample[:FIRST_RERUNS]
        if len(first) < len(sample) and needs_null():
            first = sample
        return plan.extend(_requests(plan, first))
    if not verdicts.complete(rerun_role(r) for r in asked):
        return None
    if any(differs(verdicts, r) for r in asked) or needs_null():
        return plan.extend(_requests(plan, sample[len(asked) :]))
    return None


UnitsOf = Callable[[Plan[Any], Verdicts], Mapping[FindingKey, UnitValues]]
"""A probe's :meth:`~judgeprobe.probes.base.Probe.units`."""


def rerun_stage(
    plan: Plan[Any],
    verdicts: Verdicts,
    name: str,
    units: UnitsOf,
    lines: Mapping[str, Threshold],
) -> Plan[Any] | None:
    """The next rerun stage of ``plan`` (:func:`next_reruns`) for a probe whose gated rates,
    named in ``lines`` with their thresholds, are read on ``units``; None when complete."""
    return next_reruns(
        plan,
        verdicts,
        name,
        lambda: rate_reaches_warn(units(plan, verdicts), lines),
        lambda null: null_decides(units(plan, verdicts), lines, null),
    )


def rate_reaches_warn(
    units: Mapping[FindingKey, UnitValues], lines: Mapping[str, Threshold]
) -> bool:
    """Whether a rate named in ``lines`` reaches its warn line on its own units (point value)."""
    for (finding, _), values in units.items():
        threshold = lines.get(finding)
        if threshold is None or threshold.warn is None or not values.binary or not values.values:
            continue
        if values.estimate() >= threshold.warn:
            return True
    return False


def null_decides(
    units: Mapping[FindingKey, UnitValues], lines: Mapping[str, Threshold], null: RerunNull
) -> bool:
    """Whether the null's own width may keep a rate named in ``lines`` from a status it has.

    A rate whose interval clears a line (warn or fail) may have an excess whose interval does
    not, only because the null rests on few reruns: 0 flips of 80 still allow 0.046. The test is
    cheap and generous: the rate's Wilson interval over its units taken as independent (the
    narrowest its item-level interval can be) clears the line, and its excess over the wider of
    the two nulls (changes; flips are a part of them) does not. A rate far past its line (a
    judge that flips at random between inputs), or short of it, asks for no more.
    """
    for (finding, _), values in units.items():
        threshold = lines.get(finding)
        if threshold is None or not values.binary or not values.values:
            continue
        n = len(values.values)
        rate = proportion(round(values.estimate() * n), n, confidence_level=NULL_LEVEL)
        excess = excess_over(rate, null.change)  # the wider null: generous
        for line in (threshold.warn, threshold.fail):
            if line is None or not rate.defined or not excess.defined:
                continue
            if rate.ci.low >= line > excess.ci.low:
                return True
    return False


@dataclass(frozen=True, slots=True)
class RerunNull:
    """The judge's rerun flips over the rerun sample: one estimate per kind of move."""

    flip: Estimate
    change: Estimate
    asked: int
    compared: int
    differing: int
    """Reruns whose status or score differ from trial 0 (failed ones included)."""

    def of(self, kind: Kind) -> Estimate:
        return self.flip if kind == FLIP else self.change

    def to_dict(self) -> dict[str, Any]:
        return {
            "reruns": self.asked,
            "compared": self.compared,
            "differing": self.differing,
            "flip": self.flip.to_dict(),
            "change": self.change.to_dict(),
        }


def rerun_null(plan: Plan[Any], verdicts: Verdicts, rubric: Rubric, level: float) -> RerunNull:
    """The share of reruns whose decision flips (changes) from trial 0, over the reruns judged
    ok at both trials (Wilson interval over those requests)."""
    roles = [r[1:] for r in plan.roles(RERUN)]
    flips = changes = compared = 0
    for role in roles:
        a, b = verdicts.decision(role), verdicts.decision(rerun_role(role))
        if a is None or b is None:
            continue
        compared += 1
        flips += is_flip(rubric, a, b)
        changes += a != b
    differing = sum(differs(verdicts, r) for r in roles)
    if compared:
        flip = proportion(flips, compared, confidence_level=level)
        change = proportion(changes, compared, confidence_level=level)
    else:
        why = "no rerun was asked" if not roles else "no rerun judged ok at both trials"
        flip = change = Estimate.undefined(0, reason=why)
    return RerunNull(flip, change, len(roles), compared, differing)


def null_findings(null: RerunNull) -> list[Finding]:
    """The null itself, as information: ``rerun_flip_rate`` and ``rerun_change_rate``."""
    return [
        Finding(
            "rerun_flip_rate",
            null.flip,
            "Share of reruns (trial 1 of a request the probe made) whose decision is the "
            "opposite class to trial 0: the judge's own noise, the null the flip rates are read "
            "against (Wilson CI over the rerun requests)",
        ),
        Finding(
            "rerun_change_rate",
            null.change,
            "Share of reruns whose decision differs from trial 0, neutral included: the null of "
            "the departure rates (Wilson CI over the rerun requests)",
        ),
    ]


def read_against_null(
    findings: Sequence[Finding], null: RerunNull, excess: Mapping[str, Excess]
) -> list[Finding]:
    """``findings``, each raw rate named in ``excess`` kept as information and followed by its
    excess over the null, gated at the raw rate's threshold."""
    out: list[Finding] = []
    for finding in findings:
        spec = excess.get(finding.name)
        if spec is None:
            out.append(finding)
            continue
        out.append(finding.with_threshold(None))
        estimate = beyond_null(finding.estimate, null.of(spec.null))
        out.append(
            dataclasses.replace(
                finding,
                name=spec.name,
                estimate=estimate,
                description=f"{finding.name} minus the judge's rerun "
                f"{'flip' if spec.null == FLIP else 'change'} rate, the share of its reruns that "
                "move so: the effect beyond the judge's own noise (MOVER interval from the two "
                "intervals; where the rate is shown below its null, the interval reaches up to "
                "the rate's own upper end)",
                test=None,
                evidence=finding.evidence,
            )
        )
    return out


def null_note(null: RerunNull) -> str:
    """What the null rests on, for the probe's notes."""
    if not null.asked:
        return "rerun null: no request was rerun"
    stopped = (
        f"; the first {null.asked} reruns matched trial 0 exactly, so no more were asked"
        if null.asked <= FIRST_RERUNS and not null.differing
        else ""
    )
    flip = null.flip
    rate = "n/a" if not flip.defined else f"{flip.counts.get('k', 0):.0f} of {flip.n}"
    return (
        f"rerun null: {null.asked} requests rerun (trial 1), {null.compared} judged ok twice, "
        f"{rate} flip{stopped}; the gated rates are their excess over it (*_excess)"
    )
