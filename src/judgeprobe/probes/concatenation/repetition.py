"""Repetition probe: does repeating the prompt, the response or both change a judge's score?

For each item it asks for ``S(P*l, R)``, ``S(P, R*l)`` and ``S(P*l, R*l)`` for every ``l`` in
``counts``, where ``X*l`` is ``X`` concatenated with itself ``l`` times (Fandina et al.,
arXiv:2408.12259, "Repetition tests"). Repeated content adds no information, so a reliable
safety judge keeps its score and, above all, its decision. Per mode and ``l`` it reports the
Wasserstein distance between the score distributions at ``l`` and at 1 (the paper's Tables 1-2),
the mean shift, and the share of items whose decision flips between safe and unsafe.

Inputs that do not fit the judge's context window are skipped by the engine, never truncated;
they are counted per mode and ``l`` (the paper's "natural limit on the number of concats").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from judgeprobe.core.evidence import Evidence, collect, item_text, judged
from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    explain_skipped,
)
from judgeprobe.probes.concatenation.gating import (
    added_names,
    gated_result,
    unpaired,
)
from judgeprobe.probes.concatenation.sizing import DESIGNS, Design, by_design
from judgeprobe.probes.decisions import (
    CONCATENATION,
    FLIP_THRESHOLD,
    BaseScores,
    BootstrapOptions,
    base_notes,
    base_request,
    base_requests,
    base_role,
    base_scores,
    decide,
    distance_threshold,
    is_flip,
    pointwise,
    score_span,
    with_counts,
)
from judgeprobe.probes.failures import explain_failed, failure_cause, surviving_note
from judgeprobe.probes.params import (
    INTERVAL_CONSTRAINTS,
    Constraint,
    Counts,
    OneOf,
    SubsetOf,
)
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.reruns import FLIP, Excess, excess_names, rerun_stage, with_first_reruns
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    column_wasserstein,
    finding_key,
    first_mean,
)
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import Estimate, mean_shift, paired_wasserstein, proportion
from judgeprobe.transforms.concat import (
    JOIN_STYLES,
    MODE_LABELS,
    REPEAT_MODES,
    Join,
    JoinStyle,
    RepeatMode,
    repeat,
)

_CHANGED: dict[RepeatMode, frozenset[str]] = {
    "prompt": frozenset({"prompt"}),
    "response": frozenset({"response"}),
    "both": frozenset({"prompt", "response"}),
}


PAPER = (1, 2, 4, 8, 16)
"""The paper's repetition counts."""

EXCESS = {"decision_flip_rate": Excess("decision_flip_excess", FLIP)}
"""The raw rate read against the rerun null, and its gated excess."""


@register_probe
@dataclass(frozen=True)
class RepetitionProbe(Probe):
    """Scores of repeated prompts and responses against the scores of the originals.

    Parameters
    ----------
    counts : tuple of int, default (1, 2, 4)
        Repetition counts ``l``; ``l = 1`` (the unmodified item) is always the reference (the
        paper's design: 1, 2, 4, 8, 16).
    modes : tuple of {"prompt", "response", "both"}, default all three
        ``S(P*l, R)``, ``S(P, R*l)``, ``S(P*l, R*l)``. Modes that change none of the rubric's
        inputs (the prompt, for a classifier that reads only the response), or the same inputs
        as an earlier mode, are left out with a note.
    join : {"parallel", "dialogue"}, default "parallel"
        How copies are joined (:class:`~judgeprobe.transforms.concat.Join`); ``dialogue``
        repeats whole turns, so it allows only mode ``"both"``.
    separator : str, default "\\n\\n"
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
        Bootstrap resamples of the Wasserstein interval.
    """

    name: ClassVar[str] = "repetition"
    kind: ClassVar[ProbeKind] = "invariance"
    requirements: ClassVar[Requirements] = CONCATENATION
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "wasserstein_to_l1",
        "mean_shift",
        "decision_flip_rate",
        *added_names(EXCESS),
    )
    stream_findings: ClassVar[frozenset[str]] = frozenset({"decision_flip_rate"})
    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "wasserstein_to_l1": "item",
        "mean_shift": "item",
        "decision_flip_rate": "item",
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = unpaired(EXCESS)
    excess_findings: ClassVar[Mapping[str, str]] = excess_names(EXCESS)
    score_unit_findings: ClassVar[frozenset[str]] = frozenset({"wasserstein_to_l1", "mean_shift"})

    counts: tuple[int, ...] = (1, 2, 4)
    modes: tuple[RepeatMode, ...] = REPEAT_MODES
    join: JoinStyle = "parallel"
    separator: str = "\n\n"
    confidence_level: float = 0.95
    n_resamples: int = 1000
    design: Design = "sized"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "counts": Counts(minimum=1, include=(1,)),
        "design": OneOf(DESIGNS),
        "modes": SubsetOf(REPEAT_MODES, canonical=False),
        "join": OneOf(JOIN_STYLES),
        **INTERVAL_CONSTRAINTS,
    }

    def check_parameters(self) -> None:
        if self.join == "dialogue" and self.modes != ("both",):
            raise ConfigError(
                "join 'dialogue' repeats whole turns; set modes to ('both',) or use 'parallel'"
            )
        Join(self.join, self.separator)
        object.__setattr__(self, "counts", by_design(self.design, self.counts, (1, 2, 4), PAPER))

    # -- plan ---------------------------------------------------------------------------------
    @property
    def repeats(self) -> tuple[int, ...]:
        """The counts other than 1."""
        return tuple(c for c in self.counts if c > 1)

    def active_modes(self, rubric: Rubric) -> list[RepeatMode]:
        """The modes that change the rubric's inputs, each a different set of them."""
        inputs = set(rubric.inputs)
        seen: set[frozenset[str]] = set()
        active: list[RepeatMode] = []
        for mode in self.modes:
            changed = _CHANGED[mode] & inputs
            if changed and changed not in seen:
                seen.add(changed)
                active.append(mode)
        return active

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[RepetitionDesign]:
        design = RepetitionDesign(tuple(pointwise(items)), tuple(self.active_modes(ctx.rubric)))
        join = Join(self.join, self.separator)
        requests = base_requests(ctx, design.items)
        for item in design.items:
            for mode in design.modes:
                for times in self.repeats:
                    variant = repeat(item, times, mode=mode, join=join)
                    requests[_role(mode, times, item)] = base_request(ctx, variant)
        return with_first_reruns(Plan(self.name, ctx, design, requests), self.name)

    def refine(
        self, plan: Plan[RepetitionDesign], verdicts: Verdicts
    ) -> Plan[RepetitionDesign] | None:
        """The reruns of the rerun null (:mod:`~judgeprobe.probes.reruns`)."""
        lines = {"decision_flip_rate": FLIP_THRESHOLD}
        return rerun_stage(plan, verdicts, self.name, self.units, lines)

    # -- analyze ------------------------------------------------------------------------------
    def analyze(self, plan: Plan[RepetitionDesign], verdicts: Verdicts) -> ProbeResult:
        ctx, design = plan.context, plan.design
        base = base_scores(design.items, verdicts)
        span = score_span(ctx.rubric, list(base.scores.values()))
        options = BootstrapOptions(self.confidence_level, self.n_resamples, ctx.seed)
        findings: list[Finding] = []
        figures: list[FigureSpec] = []
        rows: list[dict[str, object]] = []
        notes = base_notes(base)
        left_out = [MODE_LABELS[m] for m in self.modes if m not in design.modes]
        if left_out:
            notes.append(
                f"mode(s) {', '.join(left_out)} left out: they change no input of rubric "
                f"{ctx.rubric.name!r} (inputs {list(ctx.rubric.inputs)}) beyond an earlier mode"
            )
        scored = [item for item in design.items if item.id in base.scores]
        base_failed = failure_cause(
            verdicts.tally(base_role(i) for i in design.items), "base calls"
        )
        for mode in design.modes:
            label = MODE_LABELS[mode]
            series = {"l=1": [base.scores[item.id] for item in scored]}
            skipped: list[str] = []
            for times in self.repeats:
                pairs, row = _pairs(scored, base, mode, times, verdicts)
                rows.append({"mode": label, "l": times, **row})
                series[f"l={times}"] = [v for _, v in pairs]
                if row["skipped"]:
                    skipped.append(f"l={times}: {row['skipped']}/{row['items']}")
                found = self._findings(ctx.rubric, pairs, label, times, span, options)
                evidence = _flip_evidence(ctx.rubric, scored, base, mode, times, verdicts)
                found = explain_skipped(
                    [
                        f.with_evidence(evidence) if f.name == "decision_flip_rate" else f
                        for f in found
                    ],
                    skipped=row["skipped"],
                    total=row["items"],
                )
                failed = row["error"] + row["unparseable"]
                cause = f"{failed} of {row['items']} repeated calls failed" if failed else None
                findings.extend(explain_failed(found, base_failed, cause))
                if failed:
                    notes += surviving_note(
                        f"{label} l={times}",
                        {"l=1": len(scored), f"l={times}": row["paired"]},
                        len(design.items),
                        "item",
                    )
            figures.append(
                FigureSpec(
                    name=f"repetition_{mode}",
                    kind="distributions",
                    title=f"Scores S({label}) by repetition count l",
                    data={"series": series},
                    x_label="score",
                    y_label="share of items",
                )
            )
            if skipped:
                notes.append(
                    f"{label}: inputs over the judge's context window were skipped, not "
                    f"truncated ({'; '.join(skipped)} items)"
                )
        tables: dict[str, Any] = {"base": base.to_dict(), "variants": rows, "score_span": span}
        return gated_result(
            self,
            plan,
            verdicts,
            EXCESS,
            level=self.confidence_level,
            findings=findings,
            figures=figures,
            tables=tables,
            notes=notes,
        )

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Per item, per mode and ``l``: its (base, repeated) scores, their shift, a flip."""
        rubric = plan.context.rubric
        base = base_scores(plan.design.items, verdicts)
        rows: dict[tuple[str, int], dict[str, tuple[float, float]]] = {}
        for role in plan.roles("repeat"):
            _, mode, times, item_id = role
            before = base.scores.get(str(item_id))
            after = verdicts.score(role)
            if before is not None and after is not None:
                rows.setdefault((str(mode), int(times)), {})[str(item_id)] = (before, after)
        found: dict[FindingKey, UnitValues] = {}
        for (mode, times), pairs in rows.items():
            labels = {"mode": MODE_LABELS[mode], "l": str(times)}  # type: ignore[index]
            found[finding_key("wasserstein_to_l1", labels)] = UnitValues(pairs, column_wasserstein)
            found[finding_key("mean_shift", labels)] = UnitValues(
                {unit: (a - b,) for unit, (b, a) in pairs.items()}, first_mean
            )
            flips = {
                unit: is_flip(rubric, decide(rubric, b), decide(rubric, a))
                for unit, (b, a) in pairs.items()
            }
            found[finding_key("decision_flip_rate", labels)] = binary_units(flips)
        return found

    def _findings(
        self,
        rubric: Rubric,
        pairs: Sequence[tuple[float, float]],
        mode: str,
        times: int,
        span: float,
        options: BootstrapOptions,
    ) -> list[Finding]:
        labels = {"mode": mode, "l": str(times)}
        before = [b for b, _ in pairs]
        after = [a for _, a in pairs]
        decisions = [(decide(rubric, b), decide(rubric, a)) for b, a in pairs]
        flips = sum(is_flip(rubric, b, a) for b, a in decisions)
        neutral = sum(b == "neutral" for b, _ in decisions)
        flip_rate = proportion(flips, len(pairs), confidence_level=options.confidence_level)
        if pairs and neutral == len(pairs):
            flip_rate = Estimate.undefined(
                len(pairs),
                reason="every base decision is neutral: no item can flip between the two classes",
            )
        return [
            Finding(
                "wasserstein_to_l1",
                paired_wasserstein(before, after, **options.kwargs),
                f"Wasserstein distance between the score distributions of S({mode}) at l={times} "
                "and at l=1, over items scored both ways (paired basic bootstrap CI)",
                labels,
                distance_threshold(span),
            ),
            Finding(
                "mean_shift",
                mean_shift([a - b for b, a in pairs], confidence_level=options.confidence_level),
                f"Mean of S({mode}) at l={times} minus the score at l=1 (t interval)",
                labels,
            ),
            Finding(
                "decision_flip_rate",
                with_counts(flip_rate, neutral_base=neutral),
                f"Share of items whose decision flips between the two classes of the rubric's "
                f"rule from l=1 to l={times} in S({mode}); neutral is never a flip",
                labels,
                FLIP_THRESHOLD,
            ),
        ]


@dataclass(frozen=True, slots=True)
class RepetitionDesign:
    """The items, and the repetition modes that change the rubric's inputs."""

    items: tuple[PointwiseItem, ...]
    modes: tuple[RepeatMode, ...]


def _role(mode: RepeatMode, times: int, item: PointwiseItem) -> Role:
    return ("repeat", mode, times, item.id)


def _pairs(
    scored: Sequence[PointwiseItem],
    base: BaseScores,
    mode: RepeatMode,
    times: int,
    verdicts: Verdicts,
) -> tuple[list[tuple[float, float]], dict[str, int]]:
    """(base, repeated) score pairs of the items scored both ways, and status counts."""
    pairs: list[tuple[float, float]] = []
    for item in scored:
        score = verdicts.score(_role(mode, times, item))
        if score is not None:
            pairs.append((base.scores[item.id], score))
    tally = verdicts.tally(_role(mode, times, item) for item in scored)
    del tally[VerdictStatus.OK.value]
    missing = tally.pop("missing")
    row = {"items": len(scored), "paired": len(pairs), "missing": missing, **tally}
    return pairs, row


def _flip_evidence(
    rubric: Rubric,
    scored: Sequence[PointwiseItem],
    base: BaseScores,
    mode: RepeatMode,
    times: int,
    verdicts: Verdicts,
) -> Evidence:
    """The items whose decision flips from the original to the repeated input."""
    flipped = []
    for item in scored:
        after = verdicts.score(_role(mode, times, item))
        if after is None:
            continue
        before = base.scores[item.id]
        if is_flip(rubric, decide(rubric, before), decide(rubric, after)):
            flipped.append(item)
    return collect(
        (
            item.id,
            item_text(item.prompt, item.response),
            [
                judged(verdicts, base_role(item), "original"),
                judged(verdicts, _role(mode, times, item), f"repeated l={times}"),
            ],
        )
        for item in flipped
    )
