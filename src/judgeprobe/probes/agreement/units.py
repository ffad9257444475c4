"""Per-item rows of the agreement probe's findings: the units two runs are paired on.

The agreement probe's findings are statistics over items (an AUC, a kappa, a correlation, a
margin over a trivial baseline), not means of one 0/1 outcome per item. Each is paired as it is
computed: the rows of an item are the values the finding reads of it (the human majority
decision, the judge's decision or ranking score, a baseline's out-of-fold decision or score),
and the statistic is the probe's own function of those rows (:mod:`judgeprobe.stats.
classification`, :mod:`judgeprobe.probes.agreement.findings`, :mod:`judgeprobe.probes.
agreement.baselines`), applied to each bootstrap resample of the items the runs share. The rows
are built as the probe builds them (:meth:`~judgeprobe.probes.agreement.probe.AgreementProbe.
data`), so on the same items the paired estimate is the difference of the two reported
findings.

A margin over the best baseline carries the baseline's values in its rows, so each run's margin
is recomputed whole on every resample; the baseline depends on the data, the seed and the human
decisions alone, so between two runs of the same items whose rubrics decide the human labels
alike it is the same in both and cancels from the difference, and the difference is the two
judges'. Each baseline's margin is keyed by its name; a finding is paired when both runs chose
the same baseline (the finding's ``baseline`` label), otherwise the two findings do not match.
The statistic is the baseline run's, applied to both runs' rows: its settings (the calibration
bins, the level of Krippendorff's alpha) are probe parameters, equal in runs that may be
compared, and its grid of human label values is that of the baseline run's scored items (the
same when both runs score every item).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.core.plan import Plan, Verdicts
from judgeprobe.probes.agreement.baselines import (
    GATED_METRICS,
    METRICS,
    Baseline,
    baseline_set,
    judge_values,
)
from judgeprobe.probes.agreement.data import AgreementData, Binary, Pair
from judgeprobe.probes.agreement.findings import (
    BINARY_METRICS,
    category_rows,
    mean_absolute_error,
    rater_votes,
    root_mean_squared_error,
    stratum_rows,
)
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    finding_key,
    first_mean,
    of_columns,
    pooled_ratio,
)
from judgeprobe.stats import classification as cls


def _margin(fn: Pair) -> Callable[[NDArray[Any], NDArray[Any], NDArray[Any]], float]:
    """``fn`` of the judge minus ``fn`` of a baseline, rows ``(truth, judge, baseline)``."""
    return lambda truth, judge, baseline: fn(truth, judge) - fn(truth, baseline)


def _rows(ids: Sequence[str], *columns: NDArray[Any]) -> dict[str, tuple[float, ...]]:
    return {unit: tuple(float(c[k]) for c in columns) for k, unit in enumerate(ids)}


def scale_units(data: AgreementData, alpha_level: str) -> dict[FindingKey, UnitValues]:
    """MAE, RMSE, Spearman, quadratic weighted kappa and Krippendorff's alpha per scored item:
    the mapped judge score and the mean human label (alpha: every rater's label)."""
    ids = [item.id for item in data.items]
    clusters = dict(zip(ids, data.clusters, strict=True))
    rows = _rows(ids, data.judge_human, data.human_mean)
    grid = data.grid
    level: Any = alpha_level
    found = {
        finding_key(name, {}): UnitValues(rows, of_columns(fn), clusters=clusters)
        for name, fn in (
            ("mae", mean_absolute_error),
            ("rmse", root_mean_squared_error),
            ("spearman", cls.spearman),
        )
    }
    found[finding_key("quadratic_weighted_kappa", {})] = UnitValues(
        rows,
        of_columns(lambda judge, human: cls.quadratic_weighted_kappa(judge, human, grid)),
        clusters=clusters,
    )
    ratings = _rows(ids, *data.ratings)  # one column per rater, the judge first
    for raters, first in (("judge+humans", 0), ("humans", 1)):
        found[finding_key("krippendorff_alpha", {"raters": raters})] = UnitValues(
            ratings,
            of_columns(
                lambda *columns, first=first: cls.alpha(np.stack(columns[first:]), level, grid)
            ),
            clusters=clusters,
        )
    return found


def _hits(b: Binary, rows: Sequence[int]) -> dict[str, tuple[float, ...]]:
    return {b.ids[k]: (float(b.truth[k] == b.judge[k]),) for k in rows}


def decision_units(
    b: Binary, *, calibration_bins: int, min_slice_items: int
) -> dict[FindingKey, UnitValues]:
    """The binary metrics, AUCs and calibration per item with a human decision (the human
    decision beside the judge's decision, score or probability); accuracy per category and per
    rater stratum as 0/1 hits."""
    clusters = dict(zip(b.ids, b.clusters, strict=True))
    decided = _rows(b.ids, b.truth, b.judge)
    every = range(len(b.ids))
    found = {
        finding_key(name, {}): UnitValues(decided, of_columns(fn), clusters=clusters)
        for name, fn in BINARY_METRICS.items()
        if name != "accuracy"
    }
    found[finding_key("accuracy", {})] = UnitValues(
        _hits(b, every), first_mean, binary=True, clusters=clusters
    )
    ranked = _rows(b.ids, b.truth, b.score)
    for name, fn in (("roc_auc", cls.roc_auc), ("pr_auc", cls.pr_auc)):
        found[finding_key(name, {})] = UnitValues(ranked, of_columns(fn), clusters=clusters)
    if b.probability is not None:
        found[finding_key("expected_calibration_error", {})] = UnitValues(
            _rows(b.ids, b.truth, b.probability),
            of_columns(lambda truth, p: cls.expected_calibration_error(truth, p, calibration_bins)),
            clusters=clusters,
        )
    for name, labels, chosen in [
        *(("category_accuracy", "category", r) for r in category_rows(b, min_slice_items).items()),
        *(("stratum_accuracy", "stratum", r) for r in stratum_rows(b).items()),
    ]:
        value, rows = chosen
        found[finding_key(name, {labels: value})] = UnitValues(
            _hits(b, rows), first_mean, binary=True, clusters=clusters
        )
    return found


def baseline_units(b: Binary, baselines: Sequence[Baseline]) -> dict[FindingKey, UnitValues]:
    """The judge's margin over each baseline per gated metric, per item with a human decision
    (the probe reports the margin over the best one; the finding's label names it)."""
    clusters = dict(zip(b.ids, b.clusters, strict=True))
    found: dict[FindingKey, UnitValues] = {}
    for base in baselines:
        for name, (metric, _) in GATED_METRICS.items():
            rows = _rows(b.ids, b.truth, judge_values(b, metric), base.values(metric))
            found[finding_key(name, {"baseline": base.name})] = UnitValues(
                rows, of_columns(_margin(METRICS[metric])), clusters=clusters
            )
    return found


def rater_units(data: AgreementData) -> dict[FindingKey, UnitValues]:
    """The judge against every vote, and the leave-one-rater-out accuracies, per item: its
    votes that match and its votes (pooled, as the probe pools them over votes)."""
    votes = rater_votes(data)
    ids = [item.id for item in data.items]
    clusters = dict(zip(ids, data.clusters, strict=True))

    def pooled(items: Sequence[int], hits: Sequence[bool]) -> UnitValues:
        counts: dict[str, tuple[float, float]] = {}
        for i, hit in zip(items, hits, strict=True):
            matched, of = counts.get(ids[i], (0.0, 0.0))
            counts[ids[i]] = (matched + float(hit), of + 1.0)
        return UnitValues(counts, pooled_ratio, clusters=clusters)

    vote_hits = [j == h for j, h in zip(votes.vote_judge, votes.vote_human, strict=True)]
    return {
        finding_key("judge_vote_accuracy", {}): pooled(votes.vote_item, vote_hits),
        finding_key("human_loo_accuracy", {}): pooled(votes.loo_item, votes.loo_human),
        finding_key("judge_loo_accuracy", {}): pooled(votes.loo_item, votes.loo_judge),
    }


def agreement_units(
    probe: Any, plan: Plan[Any], verdicts: Verdicts
) -> dict[FindingKey, UnitValues]:
    """Every finding of :data:`AGREEMENT_UNITS` per item, from the probe (its parameters), its
    plan and verdicts."""
    _, data = probe.data(plan, verdicts)
    found = {**scale_units(data, probe.alpha_level), **rater_units(data)}
    b = data.binary()
    if len(b.truth):
        ctx = plan.context
        baselines, _ = baseline_set(b, ctx.rubric, probe.keywords, ctx.seed)
        found.update(
            decision_units(
                b, calibration_bins=probe.calibration_bins, min_slice_items=probe.min_slice_items
            )
        )
        found.update(baseline_units(b, baselines))
    return found


AGREEMENT_UNITS: Mapping[str, UnitKind] = {
    name: "item"
    for name in (
        "mae",
        "rmse",
        "spearman",
        "quadratic_weighted_kappa",
        "krippendorff_alpha",
        *BINARY_METRICS,
        "roc_auc",
        "pr_auc",
        "expected_calibration_error",
        "category_accuracy",
        "stratum_accuracy",
        *GATED_METRICS,
        "judge_vote_accuracy",
        "human_loo_accuracy",
        "judge_loo_accuracy",
    )
}
"""The agreement probe's findings paired by item (the baselines' own metrics are not)."""
