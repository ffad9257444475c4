"""Probes: one reliability test each, as pure halves around the engine.

``plan(items, ctx)`` returns a :class:`~judgeprobe.core.plan.Plan`: the probe's frozen design and
the requests it needs, keyed by role. A multi-stage probe (the cluster test needs base scores
before it can draw clusters) refines it: ``refine(plan, verdicts)`` returns the next stage's
plan, or None when it is complete. ``analyze(plan, verdicts)`` turns the verdicts, read
through the roles of the plan (:class:`~judgeprobe.core.plan.Verdicts`), into findings. None of
them calls a judge; :func:`judgeprobe.runs.stages.stage_flow` drives the stages (the one loop
every caller shares), and :mod:`judgeprobe.runs.probe` runs it through the engine.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from judgeprobe.core.evidence import Evidence
from judgeprobe.core.judge import JudgeCapabilities
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.params import Constraint, check_parameters
from judgeprobe.probes.requirements import ItemKind, Requirements, not_applicable
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues
from judgeprobe.stats.multiplicity import FamilyAdjustment
from judgeprobe.stats.resampling import MIN_BOOTSTRAP_CLUSTERS
from judgeprobe.stats.result import Estimate, TestResult

ProbeKind = Literal["invariance", "directional", "agreement", "null"]
"""CheckList-style question a probe asks: is the verdict *invariant* under a change that should
not matter; does it move in the *directional* way a change should move it; does it *agree* with
humans; how much of it does a trivial *null* rule explain."""

Status = Literal["pass", "warn", "fail", "inconclusive", "info", "n/a"]


@dataclass(frozen=True, slots=True)
class Threshold:
    """When a finding passes, warns or fails.

    With ``higher_is_worse`` (flip rates, distances, bias), the estimate fails at or above ``fail``
    and warns at or above ``warn``; otherwise (agreement, accuracy) it fails at or below ``fail``
    and warns at or below ``warn``. :meth:`status` places one value; :meth:`decide` gives a
    finding's status from its whole CI, which is what the card reports.
    """

    warn: float | None = None
    fail: float | None = None
    higher_is_worse: bool = True

    def status(self, value: float) -> Status:
        if math.isnan(value):
            return "n/a"
        sign = 1.0 if self.higher_is_worse else -1.0
        if self.fail is not None and sign * value >= sign * self.fail:
            return "fail"
        if self.warn is not None and sign * value >= sign * self.warn:
            return "warn"
        return "pass"

    def decide(
        self,
        estimate: float,
        low: float | None,
        high: float | None,
        *,
        test: TestResult | Mapping[str, Any] | None = None,
        level: float = 0.95,
    ) -> Status:
        """The status the evidence supports: the CI ``[low, high]`` against the thresholds.

        ``fail`` needs the whole CI on the fail side of ``fail``; ``warn`` needs the whole CI on
        the fail side of ``warn`` (short of a decided fail); ``pass`` needs the whole CI on the
        pass side of ``warn`` (of ``fail`` when there is no warn threshold). A CI that straddles
        a threshold decides nothing: ``inconclusive``. So does a point estimate without a CI
        (either end missing or NaN): one unit, or a statistic with no interval, shows nothing
        at any level, so no status rests on it.

        A probe's own ``test`` whose alternative points to the bad side (``greater`` when higher
        is worse, ``less`` otherwise) must also reject its null at ``level`` for a warn or fail:
        an exact test that finds no excess outranks an approximate interval that does.
        """
        if math.isnan(estimate):
            return "n/a"
        if low is None or high is None or math.isnan(low) or math.isnan(high):
            return "inconclusive"
        status = self._decide_ci(low, high)
        if status in ("warn", "fail") and not self._test_supports(test, level):
            return "inconclusive"
        return status

    def _test_supports(self, test: TestResult | Mapping[str, Any] | None, level: float) -> bool:
        if test is None:
            return True
        if isinstance(test, TestResult):
            pvalue: Any = test.pvalue
            alternative: Any = test.alternative
        else:
            pvalue, alternative = test.get("pvalue"), test.get("alternative")
        if alternative != ("greater" if self.higher_is_worse else "less"):
            return True
        if isinstance(pvalue, bool) or not isinstance(pvalue, int | float) or math.isnan(pvalue):
            return True
        return float(pvalue) < 1.0 - level

    def _decide_ci(self, low: float, high: float) -> Status:
        sign = 1.0 if self.higher_is_worse else -1.0
        best, worst = sorted((sign * low, sign * high))
        if self.fail is not None and best >= sign * self.fail:
            return "fail"
        if self.warn is not None and best >= sign * self.warn:
            return "warn"
        pass_side = self.warn if self.warn is not None else self.fail
        if pass_side is None or worst < sign * pass_side:
            return "pass"
        return "inconclusive"

    def needed_n(self, estimate: float, low: float, high: float, n: int) -> int | None:
        """A rough count of further units that would likely decide an inconclusive finding.

        The CI's half-width shrinks about as ``1/sqrt(n)``; it decides once it is narrower than
        the distance from the estimate to the nearest threshold inside the CI, so about
        ``n * (halfwidth / distance)**2 - n`` more units. The half-width taken is the CI's reach
        on that threshold's side of the estimate (intervals near 0 or 1 are lopsided). A rough
        estimate: it assumes the estimate stays where it is. None when the estimate sits on a
        threshold (no sample size is expected to decide it) or nothing is known of ``n``.
        """
        if n <= 0 or math.isnan(estimate):
            return None
        lo, hi = sorted((low, high))
        inside = [t for t in (self.warn, self.fail) if t is not None and lo <= t <= hi]
        if not inside:
            return None
        nearest = min(inside, key=lambda t: abs(estimate - t))
        distance = abs(estimate - nearest)
        halfwidth = hi - estimate if nearest >= estimate else estimate - lo
        if distance <= 0 or halfwidth <= 0:
            return None
        return max(1, round(n * (halfwidth / distance) ** 2 - n))

    def describe(self) -> str:
        op = ">=" if self.higher_is_worse else "<="
        parts = []
        if self.fail is not None:
            parts.append(f"fail {op} {self.fail:g}")
        if self.warn is not None:
            parts.append(f"warn {op} {self.warn:g}")
        return ", ".join(parts) or "none"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Threshold:
        """The threshold :meth:`to_dict` wrote (a stored finding's, or a card's)."""
        return cls(
            warn=_bound(data.get("warn")),
            fail=_bound(data.get("fail")),
            higher_is_worse=bool(data.get("higher_is_worse", True)),
        )


ThresholdSource = Literal["probe", "config"]
"""Where a finding's threshold came from: its probe's default, or the audit's config."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One number a probe reports, with its CI, n and the threshold it is judged against.

    ``name`` is stable across runs (thresholds are configured by it); ``labels`` say which slice
    the number is for (e.g. ``{"mode": "P*l,R*l", "l": "4"}``). ``family`` is set by the audit
    once every probe has run: how the finding's claim fared among all the audit's gated findings
    (:mod:`judgeprobe.stats.multiplicity`); None when no adjustment was made.
    """

    name: str
    estimate: Estimate
    description: str
    labels: Mapping[str, str] = field(default_factory=dict)
    threshold: Threshold | None = None
    test: TestResult | None = None
    family: FamilyAdjustment | None = None
    evidence: Evidence | None = None
    """The items behind the finding (:mod:`judgeprobe.core.evidence`); None when the probe keeps
    none."""
    threshold_source: ThresholdSource = "probe"
    """Who set ``threshold``: the probe (its default) or the audit's config
    (:func:`judgeprobe.audit.family.headline_thresholds`); stored with the finding, so the card
    reads it instead of working it out again."""

    @property
    def status(self) -> Status:
        """pass, warn, fail or inconclusive from the CI against the threshold (see
        :meth:`Threshold.decide`); ``info`` without a threshold, ``n/a`` without an estimate.

        A probe's own test that points to the bad side and does not reject its null at the
        CI's level cannot support a warn or fail: the finding is then inconclusive. So is a warn
        or fail whose claim does not survive the audit's family adjustment (``family``), and any
        finding whose interval is a bootstrap over too few units (:func:`resampled_too_few`).
        """
        status = self.unadjusted_status
        if status in ("warn", "fail") and self.family is not None and not self.family.clears:
            return "inconclusive"
        return status

    @property
    def unadjusted_status(self) -> Status:
        """The status the finding's own evidence decides, before any family adjustment."""
        if not self.estimate.defined:
            return "n/a"
        if self.threshold is None:
            return "info"
        if resampled_too_few(self.estimate):
            return "inconclusive"
        ci = self.estimate.ci
        return self.threshold.decide(
            self.estimate.estimate, ci.low, ci.high, test=self.test, level=ci.level
        )

    @property
    def needed_n(self) -> int | None:
        """For an inconclusive finding, a rough count of further units that would likely
        decide it (:meth:`Threshold.needed_n`); None otherwise."""
        if self.status != "inconclusive" or self.threshold is None:
            return None
        ci = self.estimate.ci
        return self.threshold.needed_n(self.estimate.estimate, ci.low, ci.high, self.estimate.n)

    def with_threshold(
        self, threshold: Threshold | None, *, source: ThresholdSource = "probe"
    ) -> Finding:
        """This finding judged against ``threshold``, set by ``source``."""
        return dataclasses.replace(self, threshold=threshold, threshold_source=source)

    def to_dict(self) -> dict[str, Any]:
        """The finding as the run store holds it; :func:`judgeprobe.report.stored.read_finding`
        is its one reader (the card's and the comparison's)."""
        return {
            "name": self.name,
            "description": self.description,
            "labels": dict(self.labels),
            **self.estimate.to_dict(),
            "threshold": None if self.threshold is None else self.threshold.to_dict(),
            "threshold_source": None if self.threshold is None else self.threshold_source,
            "status": self.status,
            "needed_n": self.needed_n,
            "test": None if self.test is None else self.test.to_dict(),
            "family": None
            if self.family is None
            else {**self.family.to_dict(), "unadjusted_status": self.unadjusted_status},
            **({} if self.evidence is None else {"evidence": self.evidence.to_dict()}),
        }

    def with_evidence(self, evidence: Evidence | None) -> Finding:
        return dataclasses.replace(self, evidence=evidence)


def resampled_too_few(estimate: Estimate) -> bool:
    """Whether ``estimate``'s interval is a bootstrap over fewer than
    :data:`~judgeprobe.stats.resampling.MIN_BOOTSTRAP_CLUSTERS` units (its ``n``, the unit the
    interval resamples). Resamples of a handful of units only recombine their values (over two
    items that agree, every resample is the estimate), so such an interval decides no status.
    """
    method = estimate.ci.method.lower()
    return "bootstrap" in method and 0 < estimate.n < MIN_BOOTSTRAP_CLUSTERS


SLICE_LABELS = ("category", "turn", "stratum", "slice")
"""Label keys that mark a finding as one slice of a measure (per category, turn, stratum)."""


def is_slice(finding: Finding) -> bool:
    """Whether ``finding`` is one slice of a measure rather than the measure itself."""
    return any(key in finding.labels for key in SLICE_LABELS)


def slices_as_information(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` with every slice's threshold removed: a slice informs, it does not gate.

    Forty per-category numbers judged against the headline threshold would fail an audit on
    noise; only the measure over all items decides (an audit config may still gate a slice
    by naming its finding, see :mod:`judgeprobe.audit.family`).
    """
    return [f.with_threshold(None) if is_slice(f) and f.threshold else f for f in findings]


FigureKind = Literal["distributions", "scatter", "counts", "heatmap", "intervals"]


@dataclass(frozen=True, slots=True)
class FigureSpec:
    """Data for one figure; the report draws it (PNG, SVG, embedded in HTML).

    ``data`` by kind:
    - ``distributions``: ``{"series": {name: [values...]}}`` (score histograms per group)
    - ``scatter``: ``{"series": {name: {"x": [...], "y": [...]}}, "diagonal": bool}``, optionally
      ``"limits": [low, high]`` for both axes (the diagonal then spans them)
    - ``counts``: ``{"rows": [row names], "columns": [column names], "values": [[...]]}``
    - ``heatmap``: ``{"names": [...], "values": [[...]]}``
    - ``intervals``: ``{"rows": [{"label", "estimate", "low", "high"}...], "reference": x}``
    """

    name: str
    kind: FigureKind
    title: str
    data: Mapping[str, Any]
    x_label: str = ""
    y_label: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """Everything a probe found: findings, figure data, tables and notes, plus the calls it used.

    Frozen: what changes a result after its probe analysed it (the runner's usage and plan, the
    audit's thresholds and family adjustment) makes a new one (``dataclasses.replace``).
    """

    probe: str
    kind: ProbeKind
    params: Mapping[str, Any]
    findings: list[Finding]
    figures: list[FigureSpec] = field(default_factory=list)
    tables: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    """Verdicts of this probe's requests by status, plus engine counts (filled by the runner)."""
    plan: Plan[Any] | None = field(default=None, repr=False, compare=False)
    """The complete plan the result was analysed from (filled by the runner; not in the card)."""

    def finding(self, name: str, **labels: str) -> Finding:
        """The finding named ``name`` whose labels include ``labels``."""
        for item in self.findings:
            if item.name == name and all(item.labels.get(k) == v for k, v in labels.items()):
                return item
        raise KeyError(f"{self.probe} has no finding {name!r} with labels {labels}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "kind": self.kind,
            "params": dict(self.params),
            "findings": [f.to_dict() for f in self.findings],
            "figures": [f.to_dict() for f in self.figures],
            "tables": self.tables,
            "notes": list(self.notes),
            "usage": dict(self.usage),
        }


class Probe:
    """Base class of probes. Subclasses are dataclasses whose fields are the probe's parameters."""

    name: ClassVar[str]
    kind: ClassVar[ProbeKind]
    requirements: ClassVar[Requirements] = Requirements()
    """What the probe needs of the rubric, the items and the judge, declared once
    (:mod:`judgeprobe.probes.requirements`); :meth:`check` checks it first."""
    item_kind: ClassVar[ItemKind] = "pointwise"
    """The kind of item the probe audits (``requirements.items``, set for each subclass)."""
    rubric_kinds: ClassVar[tuple[str, ...]] = requirements.rubric_kinds
    """Rubric kinds this probe can audit (``requirements.rubric_kinds``, set for each
    subclass)."""
    finding_names: ClassVar[tuple[str, ...] | None] = None
    """The names of every finding this probe can report, so an audit config can check its
    threshold keys before the run (None: not declared, such keys go unchecked)."""
    nested_design: ClassVar[bool] = True
    """Whether the probe's design on a prefix of the items is part of its design on a longer
    prefix (its requests follow the items one by one). An audit in rounds re-plans such a probe
    on each longer prefix and pays only for the new items; a probe that draws its requests from
    the whole item set (concatenations, tuples) would draw anew each round, so the rounds run it
    once, on every item, at the audit's whole error level."""
    stream_findings: ClassVar[frozenset[str]] = frozenset()
    """Findings that are rates over the items, one outcome per item, which more items only
    append to: an audit sampled until decided gives them confidence sequences
    (:mod:`judgeprobe.audit.anytime`)."""
    trial_findings: ClassVar[frozenset[str]] = frozenset()
    """Findings that more ``reproduction_trials`` can decide: the rounds of an audit sampled
    until decided add trials while one of them is undecided (:mod:`judgeprobe.audit.sequential`)."""

    derived_findings: ClassVar[Mapping[str, str]] = {}
    """Per finding name that is a function of the probe's other findings, what it is derived
    from. It answers no question of its own, so an audit reports it as information and leaves it
    out of the family of gated findings (:mod:`judgeprobe.audit.family`): a second test of the
    same question would only spend the family's error rate, unless the config gates it by name.
    """

    finding_units: ClassVar[Mapping[str, UnitKind]] = {}
    """Per finding name, the unit :meth:`units` gives its values on (an item, a pair, a drawn
    tuple or concatenation): two runs of the same items are compared paired on it."""
    unpaired_findings: ClassVar[Mapping[str, str]] = {}
    """Per finding name with no per-unit values, why it cannot be paired (compared unpaired,
    from the two intervals). Every gated finding is named here or in :attr:`finding_units`."""
    excess_findings: ClassVar[Mapping[str, str]] = {}
    """Per raw rate read against the judge's rerun null, the name of its gated excess
    (:mod:`judgeprobe.probes.reruns`). The raw rate is information on the card, but it is the one
    of the two with per-unit values: a comparison pairs the raw rate and reads it in the
    excess's direction, as information (:mod:`judgeprobe.compare.build`)."""
    score_unit_findings: ClassVar[frozenset[str]] = frozenset()
    """Findings measured in the rubric's score units (distances, mean shifts), whose thresholds
    are shares of the score span: two runs with rubrics of different scales compare them as
    shares of each rubric's span."""

    named_only: ClassVar[str] = ""
    """Why the probe runs only when an audit names it (``""``: it joins the default probe set
    wherever it applies). An audit that names no probe lists it with this reason
    (:mod:`judgeprobe.audit.applicable`)."""

    constraints: ClassVar[Mapping[str, Constraint]] = {}
    """What each parameter must be (:mod:`judgeprobe.probes.params`), checked when the probe
    is made: one declaration per parameter, one checker for every probe."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.item_kind = cls.requirements.items
        cls.rubric_kinds = cls.requirements.rubric_kinds

    def __post_init__(self) -> None:
        check_parameters(self, self.constraints)
        self.check_parameters()

    def check_parameters(self) -> None:
        """Checks no single parameter's constraint can make (e.g. two thresholds in order)."""

    def params(self) -> dict[str, Any]:
        if dataclasses.is_dataclass(self):
            return {
                f.name: _jsonable(getattr(self, f.name))
                for f in dataclasses.fields(self)
                if not f.name.startswith("_")
            }
        return {}

    def check(self, items: Sequence[Item], ctx: ProbeContext) -> None:
        """Raise unless the probe can run on ``items`` with ``ctx``; no judge is called.

        An audit checks every selected probe before its first judge call, so a probe that cannot
        run (a rubric without a decision rule, items without human labels, a rubric without a
        variant set, duplicate item ids) stops the audit before the other probes have spent
        their calls. First the probe's :attr:`requirements` (a :class:`ConfigError` naming the
        probe and what is missing), then the first plan, which raises whatever planning would
        raise; a probe overrides it when a cheaper check says the same.
        """
        judge = JudgeCapabilities(generates=ctx.generates)  # all a probe is told of its judge
        why = not_applicable(self, ctx.rubric, items, judge)
        if why is not None:
            raise ConfigError(why)
        self.plan(items, ctx)

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[Any]:
        """The first stage: the design and the requests it needs, keyed by role."""
        raise NotImplementedError

    def refine(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        """The next stage once ``plan``'s requests are judged, or None when it is complete.

        Single-stage probes keep this default. A multi-stage probe returns
        ``plan.extend(new_requests, design=...)``; it is called again after those are judged.
        """
        return None

    def analyze(self, plan: Plan[Any], verdicts: Verdicts) -> ProbeResult:
        """The findings of the complete ``plan``, from its ``verdicts``."""
        raise NotImplementedError

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Each finding's value per unit (:mod:`judgeprobe.probes.units`), from the complete
        ``plan`` and its ``verdicts``, for the findings named in :attr:`finding_units`: their
        statistic over every unit is the finding's estimate. None by default."""
        return {}


def explain_skipped(findings: Sequence[Finding], *, skipped: int, total: int) -> list[Finding]:
    """``findings``, each one that could not be assessed saying how many inputs were skipped.

    When the inputs of a condition exceed the judge's context window (the concatenation paper's
    natural limit on concatenation), a finding has nothing to count; its reason then names that
    cause, not only "no trials".
    """
    if skipped == 0:
        return list(findings)
    cause = f"{skipped} of {total} inputs exceed the judge's context window (not truncated)"
    explained = []
    for finding in findings:
        if not finding.estimate.defined:
            reason = f"{finding.estimate.reason or 'no data'}; {cause}"
            finding = dataclasses.replace(
                finding, estimate=Estimate.undefined(finding.estimate.n, reason=reason)
            )
        explained.append(finding)
    return explained


def class_too_small(name: str, size: int, *, minimum: int = 2, kind: str = "class") -> str | None:
    """Why the findings of class ``name`` cannot be assessed, when it holds fewer than
    ``minimum`` items (None otherwise): one item cannot stand for a class, and none gives
    nothing to count, so a rate of 0 would read as a pass the data cannot support."""
    if size >= minimum:
        return None
    return f"{kind} {name!r} has {size} item{'' if size == 1 else 's'} (at least {minimum} needed)"


def not_assessable(
    findings: Sequence[Finding], reason: str, only: Collection[str] | None = None
) -> list[Finding]:
    """``findings`` with every estimate (those named in ``only``, given) undefined for
    ``reason``, n kept: their status is n/a."""
    return [
        dataclasses.replace(f, estimate=Estimate.undefined(f.estimate.n, reason=reason))
        if only is None or f.name in only
        else f
        for f in findings
    ]


def first_too_small(classes: Iterable[tuple[str, int]], *, kind: str = "class") -> str | None:
    """:func:`class_too_small` of the first of ``classes`` (name, size) too small, or None."""
    return next(
        (why for name, size in classes if (why := class_too_small(name, size, kind=kind))), None
    )


def pointwise_items(items: Sequence[Item]) -> list[PointwiseItem]:
    return [i for i in items if isinstance(i, PointwiseItem)]


def pairwise_items(items: Sequence[Item]) -> list[PairwiseItem]:
    return [i for i in items if isinstance(i, PairwiseItem)]


def _bound(value: Any) -> float | None:
    return None if value is None else float(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
