"""Length-controlled win rate: the preference a judge would show at equal response lengths.

For each candidate (a model, when the items name the two models; otherwise the response in
position A) the outcome is its win (1), tie (0.5) or loss (0) and the covariate is its length minus
the opponent's. A logistic model of the outcome on the standardized length difference, predicted
at zero difference, is the length-controlled win rate (Dubois et al. 2024, without AlpacaEval's
instruction-difficulty term and ``tanh``; see
:func:`judgeprobe.stats.logistic_length_controlled_rate`).
The raw win rate is reported beside it; where the two differ, length moved the preference. The
same is computed from the human majority on the same items, so a judge that leans on length more
than humans do shows it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from judgeprobe.core.evidence import Entry, Evidence, EvidenceVerdict, collect, judged
from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PairwiseChoice, PairwiseItem
from judgeprobe.probes.base import (
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    pairwise_items,
)
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.pairwise.length import (
    LENGTH_UNITS,
    LengthUnit,
    check_lengths,
    response_lengths,
)
from judgeprobe.probes.pairwise.votes import (
    LIVE,
    PAIRWISE,
    PAIRWISE_CONSTRAINTS,
    ClusterBy,
    JudgeVotes,
    PairwiseDesign,
    cluster_of,
    collect_judge_votes,
    finite,
    human_majority,
    interval_row,
    keep_raters,
    live_requests,
    pair_role,
    pairwise_design,
)
from judgeprobe.probes.params import INTERVAL_CONSTRAINTS, Constraint, Interval, OneOf, Texts
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues, finding_key, first_mean
from judgeprobe.stats import Estimate, bootstrap, logistic_length_controlled_rate
from judgeprobe.stats.resampling import sample_mean

Candidates = Literal["auto", "models", "position"]
RATERS = ("judge", "human")
_OUTCOME: dict[PairwiseChoice, float] = {"A": 1.0, "tie": 0.5, "B": 0.0}


@dataclass(slots=True)
class Outcomes:
    """Win/tie/loss outcomes of one candidate under one rater, with length differences."""

    y: list[float] = field(default_factory=list)
    x: list[float] = field(default_factory=list)
    clusters: list[Hashable] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    """The item id of each outcome (a candidate has at most one per item)."""


def outcome_rows(
    items: Sequence[PairwiseItem],
    choices: Mapping[str, PairwiseChoice],
    *,
    by_model: bool,
    unit: LengthUnit,
    cluster: ClusterBy,
) -> dict[str, Outcomes]:
    """Outcomes per candidate from a choice per item id."""
    out: dict[str, Outcomes] = defaultdict(Outcomes)
    for item in items:
        choice = choices.get(item.id)
        if choice is None:
            continue
        len_a, len_b = response_lengths(item, unit)
        diff = float(len_a - len_b)
        where = cluster_of(item, cluster)
        y_a = _OUTCOME[choice]
        if not by_model:
            sides = [("A", y_a, diff)]
        elif item.model_a and item.model_b and item.model_a != item.model_b:
            sides = [(item.model_a, y_a, diff), (item.model_b, 1.0 - y_a, -diff)]
        else:
            continue
        for name, y, x in sides:
            rows = out[name]
            rows.y.append(y)
            rows.x.append(x)
            rows.clusters.append(where)
            rows.items.append(item.id)
    return dict(out)


@register_probe
@dataclass(frozen=True)
class LengthControlledWinRateProbe(Probe):
    """Win rates with and without length control, for the judge and for humans.

    Parameters
    ----------
    judge_source : str, default "live"
        ``"live"`` or a recorded judge's name (see
        :mod:`judgeprobe.probes.pairwise.human_agreement`).
    unit : {"chars", "words", "tokens"}, default "chars"
    candidates : {"auto", "models", "position"}, default "auto"
        ``models``: each model named in ``model_a``/``model_b`` against the others;
        ``position``: the response shown as A; ``auto``: models when at least half of the items
        name two different models.
    human_raters : tuple of str, default ()
        Rater-name prefixes of the human votes to keep (all when empty).
    min_comparisons : int, default 20
        Candidates with fewer comparisons are listed in the notes, not estimated.
    cluster : {"question", "prompt", "item"}, default "question"
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
        Bootstrap refits per interval.

    Notes
    -----
    Judge and human outcomes are taken on the same items: those with a judge vote and a strict
    human majority (ties count 0.5 for both).
    """

    name: ClassVar[str] = "length_controlled_win_rate"
    kind: ClassVar[ProbeKind] = "null"
    requirements: ClassVar[Requirements] = PAIRWISE
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "lc_win_rate",
        "raw_win_rate",
        "failed_call_rate",
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = {"raw_win_rate": "pair"}
    unpaired_findings: ClassVar[Mapping[str, str]] = {
        "lc_win_rate": "a logistic fit over all comparisons of a candidate, no per-item unit",
        "failed_call_rate": UNPAIRED,
    }

    judge_source: str = LIVE
    human_raters: tuple[str, ...] = ()
    unit: LengthUnit = "chars"
    candidates: Candidates = "auto"
    min_comparisons: int = 20
    cluster: ClusterBy = "question"
    confidence_level: float = 0.95
    n_resamples: int = 1000

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "judge_source": PAIRWISE_CONSTRAINTS["judge_source"],
        "cluster": PAIRWISE_CONSTRAINTS["cluster"],
        "human_raters": Texts(),
        "unit": OneOf(LENGTH_UNITS),
        "candidates": OneOf(("auto", "models", "position")),
        "min_comparisons": Interval(int, 2),
        **INTERVAL_CONSTRAINTS,
    }

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PairwiseDesign]:
        pairs = keep_raters(pairwise_items(items), self.human_raters)
        design = pairwise_design(pairs, self.judge_source, live_only_voted=True)
        requests: dict[Role, Request] = {}
        if self.judge_source == LIVE:
            requests = live_requests(ctx, design.judged_items())
        check_lengths(pairs, [(f"unit={self.unit!r}", self.unit)])
        return Plan(self.name, ctx, design, requests)

    def rated_choices(
        self, plan: Plan[PairwiseDesign], verdicts: Verdicts
    ) -> tuple[JudgeVotes, dict[str, dict[str, PairwiseChoice]]]:
        """The judge's votes, and each rater's choice (``judge``, ``human``) per pair that has
        both a judge vote and a strict human majority: the pairs the raw win rates are over."""
        design = plan.design
        judge: JudgeVotes = collect_judge_votes(
            design.judged_items(), plan.context, verdicts, source=self.judge_source
        )
        both: dict[str, dict[str, PairwiseChoice]] = {"judge": {}, "human": {}}
        for item in design.items:
            vote, majority = judge.votes.get(item.id), human_majority(item)
            if vote is not None and majority is not None:
                both["judge"][item.id] = vote.choice
                both["human"][item.id] = majority
        return judge, both

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """The raw win of each candidate per pair (1, 0.5 for a tie, 0), for the judge and for
        the humans, over the pairs the raw win rates are over (:meth:`rated_choices`)."""
        pairs = list(plan.design.items)
        _, both = self.rated_choices(plan, verdicts)
        by_model = self._by_model(pairs)
        found: dict[FindingKey, UnitValues] = {}
        for rater, choices in both.items():
            outcomes = outcome_rows(
                pairs, choices, by_model=by_model, unit=self.unit, cluster=self.cluster
            )
            for candidate, data in outcomes.items():
                labels = {"candidate": candidate, "rater": rater, "unit": self.unit}
                values = {i: (y,) for i, y in zip(data.items, data.y, strict=True)}
                clusters = {i: str(c) for i, c in zip(data.items, data.clusters, strict=True)}
                found[finding_key("raw_win_rate", labels)] = UnitValues(
                    values, first_mean, clusters=clusters
                )
        return found

    def analyze(self, plan: Plan[PairwiseDesign], verdicts: Verdicts) -> ProbeResult:
        ctx, design = plan.context, plan.design
        pairs = list(design.items)
        judge, both = self.rated_choices(plan, verdicts)
        by_model = self._by_model(pairs)
        findings: list[Finding] = []
        rows: list[dict[str, Any]] = []
        too_few: list[str] = []
        for rater in RATERS:
            outcomes = outcome_rows(
                pairs, both[rater], by_model=by_model, unit=self.unit, cluster=self.cluster
            )
            for candidate in sorted(outcomes):
                data = outcomes[candidate]
                if len(data.y) < self.min_comparisons:
                    too_few.append(f"{candidate} ({rater}: {len(data.y)})")
                    continue
                lc, raw = self._estimates(data, ctx.seed)
                labels = {"candidate": candidate, "rater": rater, "unit": self.unit}
                findings.append(
                    Finding(
                        "lc_win_rate",
                        lc,
                        f"Win rate of {candidate} by the {rater} at equal length (logistic model "
                        "on the standardized length difference, predicted at 0).",
                        labels,
                    )
                )
                findings.append(
                    Finding("raw_win_rate", raw, f"Win rate of {candidate} by the {rater}.", labels)
                )
                rows.append(
                    {
                        "candidate": candidate,
                        "rater": rater,
                        "raw": interval_row(raw),
                        "lc": interval_row(lc),
                        "slope_per_sd": finite(lc.counts.get("slope")),
                        "sd_length_difference": finite(lc.counts.get("sd_x")),
                    }
                )
        findings = [
            f.with_evidence(self._evidence(pairs, both, f.labels["candidate"], verdicts))
            if f.labels.get("rater") == "judge"
            else f
            for f in findings
        ]
        notes = [
            f"Candidates: {'models' if by_model else 'the response in position A'}; length "
            f"difference in {self.unit}; judge and human outcomes on the same "
            f"{len(both['judge'])} items (judge vote and strict human majority present).",
        ]
        if too_few:
            notes.append(
                f"Not estimated (fewer than {self.min_comparisons} comparisons): "
                + ", ".join(too_few)
            )
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            tables={"win_rates": rows, "excluded": {"judge": dict(judge.excluded)}},
            notes=notes,
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)

    def _evidence(
        self,
        items: Sequence[PairwiseItem],
        both: Mapping[str, Mapping[str, PairwiseChoice]],
        candidate: str,
        verdicts: Verdicts,
    ) -> Evidence:
        """The pairs of ``candidate`` where the judge's vote differs from the human majority,
        those where the judge picked the longer response first."""
        longer_first: list[tuple[bool, Entry]] = []
        for item in items:
            vote, majority = both["judge"].get(item.id), both["human"].get(item.id)
            if vote is None or majority is None or vote == majority:
                continue
            if candidate not in ("A", item.model_a, item.model_b):
                continue
            len_a, len_b = response_lengths(item, self.unit)
            longer = "A" if len_a > len_b else "B" if len_b > len_a else "tie"
            own = (
                judged(verdicts, pair_role(item), "judge")
                if self.judge_source == LIVE
                else EvidenceVerdict("judge", label=vote)
            )
            shown = [
                EvidenceVerdict("human majority", label=majority),
                own,
                EvidenceVerdict("longer response", label=longer),
            ]
            longer_first.append((vote != longer, (item.id, item.prompt, shown)))
        longer_first.sort(key=lambda pair: pair[0])
        return collect(entry for _, entry in longer_first)

    def _by_model(self, items: Sequence[PairwiseItem]) -> bool:
        if self.candidates != "auto":
            return self.candidates == "models"
        named = sum(bool(i.model_a and i.model_b and i.model_a != i.model_b) for i in items)
        return bool(items) and 2 * named >= len(items)

    def _estimates(self, data: Outcomes, seed: int) -> tuple[Estimate, Estimate]:
        lc = logistic_length_controlled_rate(
            data.y,
            data.x,
            clusters=data.clusters,
            confidence_level=self.confidence_level,
            seed=seed,
            n_resamples=self.n_resamples,
        )
        raw = bootstrap(
            np.asarray(data.y),
            sample_mean,
            clusters=data.clusters,
            confidence_level=self.confidence_level,
            seed=seed,
            n_resamples=self.n_resamples,
        )
        return lc, raw
