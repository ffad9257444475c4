"""Plans and the verdicts they get: the value a probe's two halves share.

A probe's :meth:`~judgeprobe.probes.Probe.plan` returns a :class:`Plan`: the probe's *design*
(a frozen, probe-specific value: the items, the clusters drawn, the variants validated) and the
requests it needs, each under a *role* that says what the request is for::

    ("base", item_id)                     the item as it is, S(P, R)
    ("concat", cluster, k, i)             the i-th concatenation of k parts of a cluster
    ("wording", name, item_id, trial)     a rubric wording on an item, rerun ``trial``

``analyze(plan, verdicts)`` reads the verdicts through the same roles, so it never rebuilds a
request to find its verdict, and a multi-stage probe (the cluster test needs base scores before
it can draw clusters) says so with an explicit ``refine(plan, verdicts)`` that returns the next
stage's plan, or None when the plan is complete (one loop drives the stages for every caller:
:func:`judgeprobe.runs.stages.stage_flow`).

:class:`Verdicts` is the one read-only view every probe uses: the verdict of a role, its score
when ok, its decision under the rubric's one rule (:meth:`~judgeprobe.rubrics.Rubric.decision_of`)
and tallies of statuses, ``missing`` included. Plans are stored with the run (their design and
roles), so a run can be analysed again from its store without a judge call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.rubrics import Decision, Rubric

RolePart = str | int
Role = tuple[RolePart, ...]
"""What a request is for in a plan: a kind first (``"base"``, ``"concat"``, ...), then keys."""

DesignT = TypeVar("DesignT")


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """What a probe needs to make requests: the judge's fingerprint, the rubric, a seed, and
    whether the judge can write answers (``generates``, from its declared capabilities)."""

    judge: str
    rubric: Rubric
    seed: int = 0
    judge_name: str = ""
    generates: bool = False

    def request(
        self, fields: Mapping[str, str], *, trial: int = 0, rubric: Rubric | None = None
    ) -> Request:
        return Request.make(self.judge, rubric or self.rubric, fields, trial=trial)


@dataclass(frozen=True, slots=True)
class Plan(Generic[DesignT]):
    """A probe's design and the requests it needs, keyed by role.

    ``stage`` counts the rounds: 1 for the first plan, one more for each :meth:`extend`. Two
    roles may share a request (the same input asked for two reasons); the engine judges it once.
    """

    probe: str
    context: ProbeContext
    design: DesignT
    requests: Mapping[Role, Request] = field(default_factory=dict)
    stage: int = 1

    def __post_init__(self) -> None:
        for role in self.requests:
            check_role(role)
        object.__setattr__(self, "requests", MappingProxyType(dict(self.requests)))

    @property
    def keys(self) -> frozenset[str]:
        """The distinct request keys of the plan."""
        return frozenset(r.key for r in self.requests.values())

    def roles(self, kind: str) -> list[Role]:
        """The roles whose first part is ``kind``, in plan order."""
        return [role for role in self.requests if role[0] == kind]

    def extend(
        self, requests: Mapping[Role, Request], *, design: DesignT | None = None
    ) -> Plan[DesignT]:
        """The next stage: these requests added (a role planned before is an error), the design
        replaced when one is given."""
        again = [role for role in requests if role in self.requests]
        if again:
            raise ValueError(f"roles planned twice: {again[:3]}")
        return dataclasses.replace(
            self,
            design=self.design if design is None else design,
            requests={**self.requests, **requests},
            stage=self.stage + 1,
        )

    def __repr__(self) -> str:
        return f"Plan({self.probe!r}, stage={self.stage}, requests={len(self.requests)})"


def check_role(role: Role) -> None:
    """Raise ValueError unless ``role`` is a non-empty tuple of str and int, kind first."""
    if not isinstance(role, tuple) or not role or not isinstance(role[0], str):
        raise ValueError(f"a role is a tuple that starts with its kind (a str), got {role!r}")
    bad = [p for p in role if isinstance(p, bool) or not isinstance(p, str | int)]
    if bad:
        raise ValueError(f"role parts must be str or int, got {bad!r} in {role!r}")


def empty_tally() -> dict[str, int]:
    """Zero counts of every verdict status and ``missing`` (not judged)."""
    counts = {status.value: 0 for status in VerdictStatus}
    counts["missing"] = 0
    return counts


class Verdicts:
    """Read-only view of the verdicts a plan's requests got, by role.

    A role with no verdict yet is *missing*; only ok verdicts have a score, and a decision comes
    from the rubric's one rule (:meth:`Rubric.decision_of`), the rubric being the one the
    role's request was judged with.
    """

    __slots__ = ("_known", "_plan")

    def __init__(self, plan: Plan[Any], known: Mapping[str, Verdict]) -> None:
        self._plan = plan
        self._known = known

    @property
    def plan(self) -> Plan[Any]:
        return self._plan

    def request(self, role: Role) -> Request:
        """The request of ``role``; KeyError names a role the plan does not have."""
        try:
            return self._plan.requests[role]
        except KeyError:
            raise KeyError(f"plan {self._plan.probe!r} has no role {role!r}") from None

    def get(self, role: Role) -> Verdict | None:
        """The verdict of ``role``, None while it has none."""
        return self._known.get(self.request(role).key)

    def status(self, role: Role) -> str:
        """The verdict status of ``role`` (``ok``, ``unparseable``, ...) or ``missing``."""
        verdict = self.get(role)
        return "missing" if verdict is None else verdict.status.value

    def score(self, role: Role) -> float | None:
        """The score of ``role`` when its verdict is ok; None when missing, failed or skipped."""
        verdict = self.get(role)
        if verdict is None or verdict.status is not VerdictStatus.OK:
            return None
        return verdict.score

    def decision(self, role: Role) -> Decision | None:
        """The decision class of an ok verdict under its rubric's rule; None otherwise."""
        verdict = self.get(role)
        if verdict is None or verdict.status is not VerdictStatus.OK or verdict.score is None:
            return None
        return self.request(role).rubric.decision_of(verdict.score, verdict.label)

    def complete(self, roles: Iterable[Role]) -> bool:
        """True when every one of ``roles`` has a verdict (of any status)."""
        return all(self.get(role) is not None for role in roles)

    def tally(self, roles: Iterable[Role]) -> dict[str, int]:
        """How many of ``roles`` ended in each status, ``missing`` included (a role counts
        once, whichever requests it shares)."""
        counts = empty_tally()
        for role in roles:
            counts[self.status(role)] += 1
        return counts

    def usage(self) -> dict[str, int]:
        """The plan's distinct requests by verdict status, ``missing`` included."""
        counts = empty_tally()
        for key in self._plan.keys:
            verdict = self._known.get(key)
            counts["missing" if verdict is None else verdict.status.value] += 1
        return counts

    def __iter__(self) -> Iterator[Role]:
        return iter(self._plan.requests)

    def __len__(self) -> int:
        return len(self._plan.requests)
