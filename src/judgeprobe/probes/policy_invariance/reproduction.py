"""Reproduction of flips: fresh runs of the base and of the variant on every flipped item.

Once the first stage is judged, every (item, variant) whose single run flipped gets
``reproduction_trials`` = R fresh runs of the base (trials N+1..N+R) and of the variant (trials
1..R): the second stage of the plan. Each flip is then classified
(:func:`classify_reproduction`), and per transform class the shares of deterministic flips and of
wording-induced instability are reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from judgeprobe.core.plan import ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.probes.base import Finding
from judgeprobe.rubrics import Decision, Rubric
from judgeprobe.rubrics.variants import TRANSFORMS
from judgeprobe.stats import majority, proportion

from .design import PolicyDesign, Unit, flipped, is_flip, role, run_request
from .section import Section, Settings
from .wordings import BASE

REPRODUCTION_OUTCOMES = (
    "deterministic",
    "induced_instability",
    "base_unstable",
    "not_reproduced",
    "undetermined",
)


def flipped_pairs(
    rubric: Rubric, design: PolicyDesign, units: Sequence[Unit]
) -> tuple[tuple[str, str], ...]:
    """The (item id, variant) pairs whose single run flipped, variant by variant."""
    return tuple(
        (unit.item.id, wording.name)
        for wording in design.variants
        for unit in units
        if flipped(rubric, unit, wording.name)
    )


def reproduction_requests(
    ctx: ProbeContext,
    design: PolicyDesign,
    pairs: Sequence[tuple[str, str]],
    reruns: int,
    trials: int,
) -> dict[Role, Request]:
    """The fresh runs of ``pairs``: each flipped item's base runs first (once per item), then
    each variant's, so equal prompts stay together."""
    by_id = {item.id: item for item in design.items}
    by_name = {w.name: w for w in design.wordings}
    requests: dict[Role, Request] = {}
    for item_id in dict.fromkeys(i for i, _ in pairs):
        for t in _base_trials(reruns, trials):
            requests[role(BASE, item_id, t)] = run_request(ctx, by_id[item_id], design.base, t)
    for item_id, name in pairs:
        for t in range(1, trials + 1):
            requests[role(name, item_id, t)] = run_request(ctx, by_id[item_id], by_name[name], t)
    return requests


def reproduction(
    rubric: Rubric,
    design: PolicyDesign,
    units: Sequence[Unit],
    verdicts: Verdicts,
    settings: Settings,
) -> Section:
    """The classification of every reproduced flip and the shares per class (the table:
    ``trials``, ``summary`` and ``flips``)."""
    n, r = settings.reruns, settings.reproduction_trials
    planned = set(design.flipped or ())
    flips: list[dict[str, Any]] = []
    for unit in units:
        names = [w for w in design.variants if (unit.item.id, w.name) in planned]
        if not names:
            continue
        fresh_base = [verdicts.decision(role(BASE, unit.item.id, t)) for t in _base_trials(n, r)]
        for wording in names:
            fresh = [
                verdicts.decision(role(wording.name, unit.item.id, t)) for t in range(1, r + 1)
            ]
            flips.append(
                {
                    "item": unit.item.id,
                    "variant": wording.name,
                    "class": wording.transform,
                    "outcome": classify_reproduction(rubric, fresh_base, fresh),
                    "base_runs": list(fresh_base),
                    "variant_runs": list(fresh),
                }
            )
    out = Section()
    summary: list[dict[str, Any]] = []
    for transform in TRANSFORMS:
        rows = [f for f in flips if f["class"] == transform]
        if not any(w.transform == transform for w in design.variants):
            continue
        tally = Counter(f["outcome"] for f in rows)
        classified = sum(tally[o] for o in REPRODUCTION_OUTCOMES if o != "undetermined")
        for outcome in ("deterministic", "induced_instability"):
            est = proportion(tally[outcome], classified, confidence_level=settings.confidence_level)
            out.findings.append(
                Finding(
                    f"{outcome}_share",
                    est,
                    f"share of {transform!r} flips that reproduce as "
                    + (
                        "a change of the majority verdict over fresh runs"
                        if outcome == "deterministic"
                        else "alternation under the variant where the base is stable"
                    ),
                    {"class": transform},
                )
            )
        summary.append(
            {"class": transform, "flips": len(rows), **{o: tally[o] for o in REPRODUCTION_OUTCOMES}}
        )
    out.table = {"trials": r, "summary": summary, "flips": flips}
    return out


def classify_reproduction(
    rubric: Rubric, base_runs: Sequence[Decision | None], variant_runs: Sequence[Decision | None]
) -> str:
    """Classify a flip from fresh runs of the base and of the variant on the flipped item.

    ``undetermined``: a fresh run failed. ``base_unstable``: the base runs disagree among
    themselves, so the flip cannot be told from noise. With a stable base:
    ``deterministic`` when the variant's majority verdict is opposite to the base's,
    ``induced_instability`` when the variant's runs alternate, ``not_reproduced`` otherwise.
    Under noise alone an item whose runs are coin flips still classifies as deterministic with
    probability 1/8 for three runs each (stable base 1/4, opposite variant majority 1/2), so
    read these shares next to the flip rate's excess over the null.

    Examples
    --------
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> r = builtin_rubric("refusal")
    >>> classify_reproduction(r, ["refusal"] * 3, ["compliance"] * 3)
    'deterministic'
    >>> classify_reproduction(r, ["refusal"] * 3, ["refusal", "compliance", "refusal"])
    'induced_instability'
    >>> classify_reproduction(r, ["refusal", "compliance", "refusal"], ["compliance"] * 3)
    'base_unstable'
    """
    if any(d is None for d in (*base_runs, *variant_runs)) or not base_runs or not variant_runs:
        return "undetermined"
    if len(set(base_runs)) > 1:
        return "base_unstable"
    variant_major = majority(list(variant_runs))
    stable = base_runs[0]
    if variant_major is not None and stable is not None and is_flip(rubric, stable, variant_major):
        return "deterministic"
    if len(set(variant_runs)) > 1:
        return "induced_instability"
    return "not_reproduced"


def _base_trials(reruns: int, trials: int) -> range:
    """The base's fresh trials, after its single run and its ``reruns`` anchor runs."""
    return range(reruns + 1, reruns + trials + 1)
