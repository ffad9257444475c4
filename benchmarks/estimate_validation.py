"""Does the corrected estimate cover the rate the humans give? ``judgeprobe estimate`` validated.

On data where every item is labelled, the rate over all labels is known. For each judge and
label budget N, the labels are hidden but N, drawn at random (one seeded draw per repetition,
as ``--label-budget N --seed S`` draws them), and the rate over all items is estimated three
ways. Over the draws:

- the coverage of the all-label rate by the ``labels_only`` and ``corrected`` 95 % intervals
  (goal 95 +- 2 pp);
- the ``naive`` estimate's bias (the judge's rate minus the all-label rate: a number, not an
  interval that can cover);
- the mean width of ``corrected`` against ``labels_only`` at equal N (PPI++ is never wider, up
  to noise; much narrower only where the judge predicts the labels);
- the same for the labels ``--suggest N`` would have asked for (stratified, unsure items first),
  against the uniform draw at equal N.

The judge scores once per case (in a run store of its own, under a temporary folder); every
draw then re-uses its verdicts. A case is ``JUDGE RUBRIC DATA``; a slow judge is recorded once
with ``judgeprobe score ... -o FILE`` and given as ``recorded:FILE``.

Run from the repository root (``JUDGEPROBE_DATA`` pointing at the datasets)::

    PYTHONPATH=src .venv/bin/python benchmarks/estimate_validation.py --draws 500 \\
        --case "profanity toxicity pyrit:harm" --case "profanity toxicity pyrit:refusal"
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judgeprobe.errors import ConfigError
from judgeprobe.estimate import (
    JudgeEstimates,
    Population,
    estimate_population,
    judge_population,
    suggest,
    uniform_design,
)

BUDGETS = (20, 50, 100, 200)
DEFAULT_CASES = ("profanity toxicity pyrit:harm", "profanity toxicity pyrit:refusal")


@dataclass(frozen=True, slots=True)
class Row:
    """One case at one label budget, over its draws."""

    case: str
    budget: int
    draws: int
    truth: float
    naive_bias: float
    cover_labels: float
    cover_corrected: float
    width_labels: float
    width_corrected: float
    mean_lambda: float
    cover_suggest: float | None
    width_suggest: float | None


def run_case(spec: str, budgets: tuple[int, ...], draws: int, store: Path) -> list[Row]:
    """Every budget of one case (``JUDGE RUBRIC DATA``)."""
    judge, rubric, data = spec.split()
    population = judge_population(judge, rubric, data, store=store).population
    if len(population.labelled) != population.size:
        raise SystemExit(f"{spec}: not every item is labelled; the all-label rate is unknown")
    every = estimate_population(
        population, uniform_design(population.labelled, population.size, None, 0)
    )
    truth = every.corrected.estimate
    rows = []
    for budget in budgets:
        if budget >= population.size:
            continue
        uniform = [_uniform(population, budget, seed) for seed in range(draws)]
        suggested = _suggested(population, budget, draws)
        rows.append(
            Row(
                case=spec,
                budget=budget,
                draws=draws,
                truth=truth,
                naive_bias=every.naive.estimate - truth,
                cover_labels=_cover(uniform, "labels_only", truth),
                cover_corrected=_cover(uniform, "corrected", truth),
                width_labels=_width(uniform, "labels_only"),
                width_corrected=_width(uniform, "corrected"),
                mean_lambda=float(np.mean([r.lam for r in uniform])),
                cover_suggest=None if suggested is None else _cover(suggested, "corrected", truth),
                width_suggest=None if suggested is None else _width(suggested, "corrected"),
            )
        )
    return rows


def _uniform(population: Population, budget: int, seed: int) -> JudgeEstimates:
    design = uniform_design(population.labelled, population.size, budget, seed)
    return estimate_population(population, design)


def _suggested(population: Population, budget: int, draws: int) -> list[JudgeEstimates] | None:
    try:
        return [
            estimate_population(population, suggest(population, budget, seed=seed).design)
            for seed in range(draws)
        ]
    except ConfigError:  # too few labels for the strata
        return None


def _cover(results: list[JudgeEstimates], name: str, truth: float) -> float:
    return float(np.mean([getattr(r, name).ci.contains(truth) for r in results]))


def _width(results: list[JudgeEstimates], name: str) -> float:
    return float(np.mean([getattr(r, name).ci.width for r in results]))


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    head = (
        "| judge, rubric, data | N | all-label rate | naive bias | coverage labels_only | "
        "coverage corrected | width labels_only | width corrected | corrected / labels_only | "
        "mean lambda | coverage suggest | width suggest |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    )
    lines = []
    for r in rows:
        suggest_cover = "-" if r.cover_suggest is None else f"{r.cover_suggest:.1%}"
        suggest_width = "-" if r.width_suggest is None else f"{r.width_suggest:.3f}"
        lines.append(
            f"| {r.case} | {r.budget} | {r.truth:.3f} | {r.naive_bias:+.3f} | "
            f"{r.cover_labels:.1%} | {r.cover_corrected:.1%} | {r.width_labels:.3f} | "
            f"{r.width_corrected:.3f} | {r.width_corrected / r.width_labels:.2f} | "
            f"{r.mean_lambda:.2f} | {suggest_cover} | {suggest_width} |"
        )
    return head + "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="JUDGE RUBRIC DATA (repeatable)")
    parser.add_argument("--draws", type=int, default=500, help="seeded label draws per N")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    args = parser.parse_args()
    budgets = tuple(int(b) for b in args.budgets.split(","))
    rows: list[Row] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for k, spec in enumerate(args.case or DEFAULT_CASES):
            rows += run_case(spec, budgets, args.draws, Path(folder) / f"case{k}.sqlite")
    print(table(rows))
    print(f"\n{args.draws} draws per N; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
