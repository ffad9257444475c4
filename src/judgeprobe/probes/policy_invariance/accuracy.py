"""Accuracy against human labels per wording (and MAE on numeric scales), and its spread.

A pointwise call is positive when its score, rescaled to [0, 1] over the rubric's scale, is at
least ``human_threshold``; the humans' mean label, rescaled by the label scale, is compared the
same way. A pairwise call is compared with the strict human majority, ties included. The spread
across the wordings of the same policy (the base, meaning-preserving and supplementary rewrites)
is compared with the spread across the base's own runs, which is noise alone. That range is biased
upward by rerun noise (the largest of several noisy accuracies minus the smallest), so it is only
judged together with a paired permutation test that the wordings differ beyond the items' own
noise (wordings permuted within each item): without it a noisy judge would fail on noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from judgeprobe.data.items import Item, PairwiseItem
from judgeprobe.probes.base import FigureSpec, Finding, Threshold
from judgeprobe.rubrics import Decision, Rubric
from judgeprobe.rubrics.variants import INVARIANT_TRANSFORMS
from judgeprobe.stats import Estimate, TestResult, mean, proportion
from judgeprobe.stats.flips import spread_of_means, spread_test

from .design import Unit
from .section import Section, Settings, num
from .wordings import BASE, Wording

SPREAD_THRESHOLD = Threshold(warn=0.05, fail=0.10)
"""Accuracy (or MAE) spread across wordings of the same policy."""

Call = tuple[str, float | None]
"""A decision on the humans' terms (positive / negative, or A / B / tie) and a score on [0, 1]."""


def accuracy(
    rubric: Rubric,
    units: Sequence[Unit],
    wordings: Sequence[Wording],
    scale: tuple[float, float],
    settings: Settings,
) -> Section:
    """Accuracy (and MAE) per wording, the spreads, the figure; the table is the rows."""
    truth = [human_call(u.item, scale, settings.human_threshold) for u in units]
    out = Section(table=[])
    if all(t is None for t in truth):
        out.notes.append("no human labels: accuracy per wording is not reported")
        return out
    numeric = rubric.kind in ("scale", "continuous") and _span(rubric) is not None
    correct_cols: dict[str, list[float]] = {}
    error_cols: dict[str, list[float]] = {}
    for wording in wordings:
        correct: list[float] = []
        errors: list[float] = []
        for unit, human in zip(units, truth, strict=True):
            judged = judge_call(
                rubric,
                unit.single.get(wording.name),
                unit.scores.get(wording.name),
                settings.human_threshold,
            )
            if human is None or judged is None:
                correct.append(np.nan)
                errors.append(np.nan)
                continue
            correct.append(1.0 if judged[0] == human[0] else 0.0)
            errors.append(
                abs(judged[1] - human[1])
                if judged[1] is not None and human[1] is not None
                else np.nan
            )
        correct_cols[wording.name] = correct
        error_cols[wording.name] = errors
        hits = [c for c in correct if not math.isnan(c)]
        rate = proportion(int(sum(hits)), len(hits), confidence_level=settings.confidence_level)
        labels = {"wording": wording.name, "class": wording.transform}
        out.findings.append(
            Finding("accuracy", rate, f"agreement with humans under {wording.name!r}", labels)
        )
        row: dict[str, Any] = {
            "wording": wording.name,
            "class": wording.transform,
            "accuracy": num(rate.estimate),
            "low": num(rate.ci.low),
            "high": num(rate.ci.high),
            "n": rate.n,
        }
        if numeric:
            errs = [e for e in errors if not math.isnan(e)]
            mae = (
                mean(errs, confidence_level=settings.confidence_level)
                if errs
                else Estimate.undefined(0)
            )
            out.findings.append(
                Finding(
                    "mae",
                    mae,
                    f"mean absolute error against the human mean (both on [0, 1]) under "
                    f"{wording.name!r}",
                    labels,
                )
            )
            row["mae"] = num(mae.estimate)
        out.table.append(row)
    same_policy = [
        w.name for w in wordings if w.transform == BASE or w.transform in INVARIANT_TRANSFORMS
    ]
    spreads = [("accuracy_spread", correct_cols, "accuracy")]
    if numeric:
        spreads.append(("mae_spread", error_cols, "MAE"))
    for name, cols, what in spreads:
        columns = [cols[n] for n in same_policy]
        test = spread_test(columns, n_resamples=settings.n_resamples, seed=settings.seed)
        spread = spread_of_means(columns, **settings.resampling)
        out.findings.append(
            Finding(
                name,
                _tested_spread(spread, test),
                f"largest minus smallest {what} across the base and its meaning-preserving "
                "and supplementary rewordings (the same policy), on the items judged under "
                f"every one of them{_dropped(spread)}; a warn or fail needs the test to show "
                "the wordings differ beyond the items' rerun noise",
                {"wordings": str(len(same_policy))},
                threshold=SPREAD_THRESHOLD,
                test=test,
            )
        )
        if spread.counts.get("dropped"):
            out.notes.append(
                f"{name}: the wordings are compared on the {int(spread.counts['rows'])} items "
                f"judged under every one of them; {int(spread.counts['dropped'])} items with a "
                "failed or missing call under some wording are left out of every wording"
            )
    out.findings.append(
        Finding(
            "accuracy_spread_reruns",
            _rerun_spread(rubric, units, truth, settings),
            f"largest minus smallest accuracy across the {settings.reruns + 1} base runs "
            "(noise alone; fewer runs than wordings, so a lower bound on the noise spread)",
            {"wordings": "base runs"},
        )
    )
    out.findings.append(
        Finding(
            "accuracy_spread",
            spread_of_means([correct_cols[w.name] for w in wordings], **settings.resampling),
            "largest minus smallest accuracy across every wording, threshold shifts included",
            {"wordings": "all"},
        )
    )
    out.figures.append(_figure(out.table))
    return out


def _dropped(spread: Estimate) -> str:
    """ " (12 items left out: a call failed under some wording)", or nothing when none was."""
    dropped = int(spread.counts.get("dropped", 0))
    if not dropped:
        return ""
    return f" ({dropped} items left out: a call failed or is missing under some wording)"


def _tested_spread(spread: Estimate, test: TestResult) -> Estimate:
    """The spread, or n/a where too few items have a verdict under every wording for its test:
    the range of noisy means is judged only with the test that tells it from noise."""
    if not spread.defined or test.n >= 2:
        return spread
    return Estimate.undefined(
        spread.n,
        reason=f"too few items for a test: {test.n} with a verdict under every wording of the "
        "policy, at least 2 needed",
    )


def _rerun_spread(
    rubric: Rubric, units: Sequence[Unit], truth: Sequence[Call | None], settings: Settings
) -> Estimate:
    """Accuracy spread across the base runs (trial 0 and the reruns)."""
    columns: list[list[float]] = []
    for t in range(settings.reruns + 1):
        column: list[float] = []
        for unit, human in zip(units, truth, strict=True):
            judged = judge_call(rubric, unit.base[t], unit.base_scores[t], settings.human_threshold)
            if human is None or judged is None:
                column.append(np.nan)
                continue
            column.append(1.0 if judged[0] == human[0] else 0.0)
        columns.append(column)
    return spread_of_means(columns, **settings.resampling)


def human_call(item: Item, scale: tuple[float, float], threshold: float) -> Call | None:
    """The human decision (and the rescaled human mean for pointwise items); None unlabelled."""
    if isinstance(item, PairwiseItem):
        choice = item.human_majority(include_ties=True)
        return None if choice is None else (choice, None)
    if item.human_mean is None:
        return None
    low, high = scale
    value = (item.human_mean - low) / (high - low)
    return ("positive" if value >= threshold else "negative", value)


def judge_call(
    rubric: Rubric, decision: Decision | None, score: float | None, threshold: float
) -> Call | None:
    """A verdict on the humans' terms: positive/negative (or A/B/tie), and the score on [0, 1].

    Pointwise: positive when the score, rescaled to [0, 1] over the rubric's scale, is at least
    ``threshold`` (the rule's positive class where the scale is unknown).
    """
    if decision is None or score is None:
        return None
    if rubric.kind == "pairwise":
        return (decision, None)
    value = _rescaled(rubric, score)
    if value is None:
        assert rubric.decision is not None
        return ("positive" if decision == rubric.decision.positive else "negative", None)
    return ("positive" if value >= threshold else "negative", value)


def _span(rubric: Rubric) -> tuple[float, float] | None:
    if rubric.values:
        values = [float(v) for v in rubric.values.values()]
        return (min(values), max(values)) if max(values) > min(values) else None
    return rubric.range


def _rescaled(rubric: Rubric, score: float) -> float | None:
    """``score`` on [0, 1] over the rubric's scale, 1 at the positive end (None if unknown)."""
    span = _span(rubric)
    if span is None or rubric.decision is None:
        return None
    value = (score - span[0]) / (span[1] - span[0])
    return value if rubric.decision.higher_is_positive else 1.0 - value


def _figure(rows: Sequence[dict[str, Any]]) -> FigureSpec:
    return FigureSpec(
        "policy_invariance_accuracy",
        "intervals",
        "Accuracy against human labels, by wording",
        {
            "rows": [
                {
                    "label": r["wording"],
                    "estimate": r["accuracy"],
                    "low": r["low"],
                    "high": r["high"],
                }
                for r in rows
            ],
            "reference": None,
        },
        x_label="accuracy",
    )
