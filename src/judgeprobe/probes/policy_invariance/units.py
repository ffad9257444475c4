"""Policy invariance per item: the units two runs of the same items are paired on.

- ``flip_rate``: per item, a variant's flip (0/1), or a class's flips of its comparisons
  (pooled over the class's variants);
- ``flip_delta``: per item, the flips and comparisons of the variant or class and the null's
  (the pooled rate minus the pooled null rate, :func:`~judgeprobe.stats.flip_rate_excess`);
- ``accuracy_spread`` and ``mae_spread``: per item, its correctness (its absolute error) under
  each wording, NaN where a wording has none; the spread of the wordings' means;
- ``failed_call_rate``: per item, its failed first-stage calls and its calls (pooled).

``directional_ratio`` is a share of the flips alone, which differ between runs: it is not
paired.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.core.plan import Plan, Verdicts
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    finding_key,
    pooled_excess,
    pooled_ratio,
)
from judgeprobe.rubrics import Rubric
from judgeprobe.rubrics.variants import INVARIANT_TRANSFORMS

from .accuracy import human_call, judge_call
from .design import PolicyDesign, Unit, first_stage_trials, role
from .design import units as decisions_of
from .evidence import flip_rows
from .wordings import BASE, Wording, transform_groups

PAIRED = ("flip_rate", "flip_delta", "accuracy_spread", "mae_spread", "failed_call_rate")
"""The findings :func:`policy_units` gives per item."""

UNPAIRED: Mapping[str, str] = {
    "directional_ratio": "a share of the threshold-shift flips alone, which differ between runs",
}


def unit_kinds(kind: UnitKind) -> Mapping[str, UnitKind]:
    """:data:`PAIRED`, each on units of ``kind`` (items, or pairs for a pairwise judge)."""
    return dict.fromkeys(PAIRED, kind)


def policy_units(
    probe: Any, plan: Plan[PolicyDesign], verdicts: Verdicts
) -> dict[FindingKey, UnitValues]:
    """Every finding of :data:`PAIRED` per item, from the probe (its parameters), its plan and
    verdicts."""
    design, rubric = plan.design, plan.context.rubric
    found = decisions_of(design, verdicts, probe.reruns)
    out = flip_units(rubric, found, design.variants, probe.null)
    scale = probe.label_scale([u.item for u in found], rubric)
    out.update(spread_units(rubric, found, design.wordings, scale, probe.human_threshold))
    out[finding_key("failed_call_rate", {})] = failure_units(design, verdicts, probe.reruns)
    return out


def flip_units(
    rubric: Rubric, found: Sequence[Unit], variants: Sequence[Wording], null: str
) -> dict[FindingKey, UnitValues]:
    """A variant's flip (0/1), a class's flips of its comparisons (pooled), and ``flip_delta``'s
    flip and null counts, per item."""
    groups = [("variant", w.name, [w]) for w in variants]
    groups += [("class", cls, members) for cls, members in transform_groups(tuple(variants))]
    out: dict[FindingKey, UnitValues] = {}
    for level, label, members in groups:
        transform = members[0].transform
        labels = (
            {"class": transform} if level == "class" else {"variant": label, "class": transform}
        )
        rows = flip_rows(rubric, found, members, null)
        out[finding_key("flip_delta", {**labels, "null": null})] = UnitValues(rows, pooled_excess)
        compared = {u: (f, m) for u, (f, m, _, _) in rows.items() if m}
        if level == "variant":
            out[finding_key("flip_rate", labels)] = binary_units(
                {u: f > 0 for u, (f, _) in compared.items()}
            )
        else:
            out[finding_key("flip_rate", labels)] = UnitValues(compared, pooled_ratio)
    return out


def spread(rows: NDArray[np.float64]) -> Any:
    """Largest minus smallest column mean of rows ``(..., m, k)``, a NaN cell missing (the
    rows are complete ones, as :func:`judgeprobe.stats.flips.spread_of_means` compares)."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nansum(rows, axis=-2) / np.sum(~np.isnan(rows), axis=-2)
        return np.nanmax(means, axis=-1) - np.nanmin(means, axis=-1)


def spread_units(
    rubric: Rubric,
    found: Sequence[Unit],
    wordings: Sequence[Wording],
    scale: tuple[float, float],
    threshold: float,
) -> dict[FindingKey, UnitValues]:
    """Per item, its correctness (and absolute error) under each wording of the same policy
    and under every wording: the rows of ``accuracy_spread`` (and ``mae_spread``)."""
    correct: dict[str, dict[str, float]] = {}
    errors: dict[str, dict[str, float]] = {}
    for unit in found:
        human = human_call(unit.item, scale, threshold)
        if human is None:
            continue
        for wording in wordings:
            name = wording.name
            judged = judge_call(rubric, unit.single.get(name), unit.scores.get(name), threshold)
            if judged is None:
                continue
            correct.setdefault(unit.item.id, {})[name] = float(judged[0] == human[0])
            if judged[1] is not None and human[1] is not None:
                errors.setdefault(unit.item.id, {})[name] = abs(judged[1] - human[1])
    same = [w.name for w in wordings if w.transform == BASE or w.transform in INVARIANT_TRANSFORMS]
    every = [w.name for w in wordings]
    out: dict[FindingKey, UnitValues] = {}
    for names, label in ((same, str(len(same))), (every, "all")):
        key = {"wordings": label}
        out[finding_key("accuracy_spread", key)] = UnitValues(_columns(correct, names), spread)
        out[finding_key("mae_spread", key)] = UnitValues(_columns(errors, names), spread)
    return out


def _columns(
    cells: Mapping[str, Mapping[str, float]], names: Sequence[str]
) -> dict[str, tuple[float, ...]]:
    """Per item with a value under every one of ``names``, its value under each: the wordings
    are compared on the same items (:func:`judgeprobe.stats.flips.spread_of_means`)."""
    return {
        item: tuple(values[n] for n in names)
        for item, values in cells.items()
        if all(n in values for n in names)
    }


def failure_units(design: PolicyDesign, verdicts: Verdicts, reruns: int) -> UnitValues:
    """Per item, its first-stage calls that errored, were unparseable or skipped, and its
    calls (pooled: ``failed_call_rate``)."""
    rows: dict[str, tuple[float, ...]] = {}
    for item in design.items:
        roles = [
            role(wording.name, item.id, t)
            for wording in design.wordings
            for t in first_stage_trials(wording, reruns)
        ]
        counts = verdicts.tally(roles)
        failed = sum(v for k, v in counts.items() if k not in (VerdictStatus.OK.value, "missing"))
        rows[item.id] = (float(failed), float(len(roles)))
    return UnitValues(rows, pooled_ratio)
