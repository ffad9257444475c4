"""Comparing two judges audited with different rubrics on the same items.

Two judges of different kinds (an LLM scoring harm on a 1-5 scale, a classifier giving a
probability of toxicity) can be audited on the same items, each with the rubric it fits. Their
rates (flip rates, departure rates, agreement with the human labels) are shares of items and
compare as they are; the findings in the rubric's *score units* (Wasserstein distances and mean
shifts, each probe's ``score_unit_findings``) do not: 0.2 on a 1-5 scale is a quarter of what
0.2 is on [0, 1]. (The agreement probe's MAE and RMSE are not in score units: they are on the
human labels' scale, which the two runs share when their ``human_scale`` is the same.) The
probes' own thresholds for those findings are shares of the score span (5% warn, 10% fail), so
:func:`on_common_scale` divides each run's score-unit findings (estimate, interval, threshold
and per-unit values) by its rubric's span: both are then shares of their own scale, the unit
their thresholds already use. A run whose rubric span is unknown (a card file, a rubric without
values or range) gets those findings as not assessable.

:func:`rubric_note` is what the comparison says about it: which rubrics, that the items are the
same, and which findings were rescaled.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from judgeprobe.compare.item_units import score_unit_findings
from judgeprobe.compare.runs import LoadedRun
from judgeprobe.probes.units import FindingKey, UnitValues
from judgeprobe.report.card import open_existing_store


def rubrics_differ(baseline: LoadedRun, candidate: LoadedRun) -> bool:
    """True when the two runs' main rubrics differ (by hash, else by name)."""
    a = baseline.tested.get("rubric", {})
    b = candidate.tested.get("rubric", {})
    if a.get("hash") and b.get("hash"):
        return bool(a["hash"] != b["hash"])
    return bool(a.get("name") != b.get("name") or a.get("kind") != b.get("kind"))


def rubric_note(baseline: LoadedRun, candidate: LoadedRun) -> list[str]:
    """What the comparison says of two runs whose rubrics differ: ``rubrics differ: A (kind,
    span) vs B (kind, span); items are the same``, then how their findings are compared."""
    parts = []
    for run in (baseline, candidate):
        rubric = run.tested.get("rubric", {})
        span = score_span(run)
        scale = f", score span {span:g}" if span is not None else ", score span unknown"
        parts.append(f"{rubric.get('name', '?')} ({rubric.get('kind', '?')}{scale})")
    return [
        f"{candidate.source}: rubrics differ: {parts[0]} vs {parts[1]}; items are the same",
        "findings in score units (Wasserstein distances, mean shifts) are compared as shares "
        "of each rubric's score span, the others as they are; paired by item where per-item "
        "outcomes are known",
    ]


def score_span(run: LoadedRun) -> float | None:
    """The width of the run's rubric scale (label values, else declared range), from its run
    store; None for a card file or a rubric that declares neither."""
    if run.kind != "store":
        return None
    rubric_hash = str(run.tested.get("rubric", {}).get("hash", ""))
    with open_existing_store(run.source) as store:
        rubric = store.rubrics().get(rubric_hash)
    if rubric is None:
        return None
    if rubric.values:
        values = [float(v) for v in rubric.values.values()]
        span = max(values) - min(values)
    elif rubric.range is not None:
        span = float(rubric.range[1] - rubric.range[0])
    else:
        return None
    return span if span > 0 else None


def on_common_scale(run: LoadedRun) -> LoadedRun:
    """``run`` with its score-unit findings divided by its rubric's score span (not assessable
    when the span is unknown); every other finding as it is."""
    span = score_span(run)
    card = copy.deepcopy(dict(run.card))
    for section in card.get("probes", []):
        names = score_unit_findings(str(section.get("name", "")))
        for finding in section.get("findings", []):
            if finding.get("name") in names:
                _rescale_finding(finding, span)
    units: dict[str, dict[FindingKey, UnitValues]] = {}
    for probe, found in run.units.items():
        names = score_unit_findings(probe)
        units[probe] = {key: values for key, values in found.items() if key[0] not in names}
        if span is not None:
            units[probe].update(
                {key: _divided(values, span) for key, values in found.items() if key[0] in names}
            )
    return dataclasses.replace(run, card=card, units=units)


def _divide(value: Any, span: float) -> Any:
    return value / span if isinstance(value, int | float) and not isinstance(value, bool) else value


def _rescale_finding(finding: dict[str, Any], span: float | None) -> None:
    if span is None:
        finding["estimate"] = None
        finding["ci"] = {**finding.get("ci", {}), "low": None, "high": None}
        finding["status"] = "n/a"
        finding["reason"] = "in score units of a rubric whose score span is unknown"
        return
    finding["estimate"] = _divide(finding.get("estimate"), span)
    ci = dict(finding.get("ci", {}))
    ci["low"], ci["high"] = _divide(ci.get("low"), span), _divide(ci.get("high"), span)
    finding["ci"] = ci
    threshold = finding.get("threshold")
    if isinstance(threshold, dict):
        finding["threshold"] = {
            **threshold,
            "warn": _divide(threshold.get("warn"), span),
            "fail": _divide(threshold.get("fail"), span),
        }


def _divided(values: UnitValues, span: float) -> UnitValues:
    scaled = {unit: tuple(v / span for v in row) for unit, row in values.values.items()}
    return dataclasses.replace(values, values=scaled)
