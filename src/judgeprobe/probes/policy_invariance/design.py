"""The plan of a policy-invariance audit: its design, its roles, and each item's decisions.

Roles (trial indices are the engine's):

- ``("base", item_id)``: the base rubric's single run (trial 0), the request every probe makes;
- ``("wording", "base", item_id, t)``: base rerun ``t`` (1..N anchor runs, N+1..N+R fresh runs
  for reproduction);
- ``("wording", variant, item_id, t)``: a variant's single run (``t = 0``) and its fresh runs
  for reproduction (1..R).

Every decision is read through :meth:`~judgeprobe.core.plan.Verdicts.decision`, the rubric's one
rule; a flip is a single run's decision opposite to the anchor (the strict majority of the N base
reruns): for scale, binary and continuous rubrics a move between the rule's two classes (a move
into or out of ``neutral`` is not a flip), for pairwise rubrics any change of A / B / tie.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgeprobe.core.plan import ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem, item_fields
from judgeprobe.probes.decisions import base_request, unique_ids
from judgeprobe.rubrics import NEUTRAL, Decision, Rubric
from judgeprobe.rubrics.validation import ValidationReport
from judgeprobe.stats import majority

from .wordings import BASE, Wording


@dataclass(frozen=True, slots=True)
class PolicyDesign:
    """Everything the analysis reads besides the verdicts.

    ``items`` are the items the rubric can be asked about (``dropped`` others were left out);
    ``wordings`` the base and the validated variants, ``reports`` every validation report.
    ``flipped`` is None until the reproduction stage is planned, then the (item id, variant)
    pairs whose single run flipped, each given fresh runs.
    """

    items: tuple[Item, ...]
    wordings: tuple[Wording, ...]
    reports: tuple[ValidationReport, ...]
    dropped: int = 0
    flipped: tuple[tuple[str, str], ...] | None = None

    @property
    def base(self) -> Wording:
        return self.wordings[0]

    @property
    def variants(self) -> tuple[Wording, ...]:
        return self.wordings[1:]


@dataclass(frozen=True, slots=True)
class Unit:
    """One item's decisions: base runs (trial 0 first), its anchor, every wording's single run."""

    item: Item
    base: tuple[Decision | None, ...]
    base_scores: tuple[float | None, ...]
    anchor: Decision | None
    anchor_reason: str
    single: Mapping[str, Decision | None]
    """Trial-0 decision of every wording (``base`` included)."""
    scores: Mapping[str, float | None]
    """Trial-0 score of every wording."""


def role(wording: str, item_id: str, trial: int) -> Role:
    """The role of ``wording``'s run ``trial`` on item ``item_id``."""
    if wording == BASE and trial == 0:
        return ("base", item_id)  # as _decisions.base_role: shared with every other probe
    return ("wording", wording, item_id, trial)


def usable_items(items: Sequence[Item], rubric: Rubric) -> list[Item]:
    """The items ``rubric`` can be asked about, in input order; duplicate ids are a data error."""
    unique_ids(items)
    return [item for item in items if rubric_fields(item, rubric) is not None]


def rubric_fields(item: Item, rubric: Rubric) -> dict[str, str] | None:
    """The fields of ``item`` that ``rubric`` reads; None when it is of the other item kind or
    lacks one."""
    if isinstance(item, PairwiseItem) != (rubric.kind == "pairwise"):
        return None
    fields = item_fields(item)
    if any(name not in fields for name in rubric.inputs):
        return None
    return {name: fields[name] for name in rubric.inputs}


def run_request(ctx: ProbeContext, item: Item, wording: Wording, trial: int) -> Request:
    """The request of :func:`role` ``(wording, item, trial)``; the base single run of a
    pointwise item is :func:`~judgeprobe.probes.decisions.base_request`."""
    if wording.name == BASE and trial == 0 and isinstance(item, PointwiseItem):
        return base_request(ctx, item)
    fields = rubric_fields(item, wording.rubric)
    assert fields is not None, "only usable items are planned"
    return ctx.request(fields, trial=trial, rubric=wording.rubric)


def first_stage(ctx: ProbeContext, design: PolicyDesign, reruns: int) -> dict[Role, Request]:
    """Per wording, per item: the base's single run and ``reruns`` reruns, a variant's single
    run."""
    requests: dict[Role, Request] = {}
    for wording in design.wordings:
        for item in design.items:
            for trial in first_stage_trials(wording, reruns):
                requests[role(wording.name, item.id, trial)] = run_request(
                    ctx, item, wording, trial
                )
    return requests


def first_stage_trials(wording: Wording, reruns: int) -> range:
    """The trials of ``wording`` in the first stage: 0..N for the base, 0 for a variant."""
    return range(reruns + 1) if wording.name == BASE else range(1)


def units(design: PolicyDesign, verdicts: Verdicts, reruns: int) -> list[Unit]:
    """Every item's decisions from the first stage's verdicts."""
    out: list[Unit] = []
    for item in design.items:
        runs = [role(BASE, item.id, t) for t in range(reruns + 1)]
        decisions = tuple(verdicts.decision(r) for r in runs)
        anchor = majority(list(decisions[1:]))
        reason = "ok"
        if anchor is None:
            reason = "failed runs" if any(d is None for d in decisions[1:]) else "no majority"
        singles = {w.name: role(w.name, item.id, 0) for w in design.wordings}
        out.append(
            Unit(
                item,
                decisions,
                tuple(verdicts.score(r) for r in runs),
                anchor,
                reason,
                {name: verdicts.decision(r) for name, r in singles.items()},
                {name: verdicts.score(r) for name, r in singles.items()},
            )
        )
    return out


def is_flip(rubric: Rubric, a: Decision, b: Decision) -> bool:
    """True when ``a`` and ``b`` are opposite decisions (any change, for pairwise rubrics)."""
    if rubric.kind == "pairwise" or rubric.decision is None:
        return a != b
    return rubric.decision.is_flip(a, b)


def flip(rubric: Rubric, single: Decision | None, anchor: Decision | None) -> bool | None:
    """Whether ``single`` flips against ``anchor``; None when either is missing."""
    if single is None or anchor is None:
        return None
    return is_flip(rubric, anchor, single)


def flipped(rubric: Rubric, unit: Unit, name: str) -> bool:
    """Whether wording ``name``'s single run on ``unit`` flipped against its anchor."""
    return bool(flip(rubric, unit.single.get(name), unit.anchor))


def neutral_move(rubric: Rubric, anchor: Decision | None, single: Decision | None) -> bool:
    """A move into or out of ``neutral`` against the anchor (counted, never a flip)."""
    if rubric.kind == "pairwise" or anchor is None or single is None or anchor == single:
        return False
    return NEUTRAL in (anchor, single)
