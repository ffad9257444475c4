"""``judgeprobe estimate`` in one call: judge the data, then estimate the humans' rate three ways.

The judge scores every item through the engine (cached in a run store, as ``judgeprobe score``
does, and sharing its store by default, so a scored dataset costs no call), its verdicts and the
human labels become a
:class:`~judgeprobe.probes.agreement.corrected.population.Population`, the labels used are
drawn by a :class:`~judgeprobe.probes.agreement.corrected.design.LabelDesign`, and
:func:`~judgeprobe.probes.agreement.corrected.estimates.estimate_population` gives the naive,
labels-only and corrected estimates.

Examples
--------
::

    from judgeprobe.estimate import estimate

    result = estimate("profanity", "toxicity", "pyrit:harm", label_budget=100, seed=1)
    print(result.corrected)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe.core.judge import Judge
from judgeprobe.core.verdict import Verdict
from judgeprobe.data import Dataset, load_dataset
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.engine import Engine, EngineConfig, RunStore, run_blocking
from judgeprobe.errors import ConfigError
from judgeprobe.estimate.sheet import read_labels, write_sheet
from judgeprobe.estimate.suggest import Suggestion, suggest
from judgeprobe.estimate.unstable import unstable_items
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.probes.agreement.corrected.design import LabelDesign, parse_budget, uniform_design
from judgeprobe.probes.agreement.corrected.estimates import JudgeEstimates, estimate_population
from judgeprobe.probes.agreement.corrected.population import Population, Quantity, build_population
from judgeprobe.probes.agreement.data import ScaleMap, scale_map
from judgeprobe.rubrics import Rubric, get_rubric
from judgeprobe.runs.scoring import score_items

DEFAULT_SHEET = Path("labelling-sheet.csv")
"""Where ``--suggest`` writes the sheet (and its ``.jsonl`` twin)."""
DEFAULT_STORE = Path("judgeprobe-score.sqlite")
"""The run store ``judgeprobe score`` caches its verdicts in: shared, so a scored dataset
is estimated with no judge call."""


@dataclass(frozen=True, slots=True)
class Judged:
    """The judge's verdicts on a dataset, as an estimate reads them."""

    dataset: Dataset
    rubric: Rubric
    population: Population
    stopped: str | None
    """Why the engine stopped before judging every item (a budget), None when it did not."""


def judge_population(
    judge: str | Judge,
    rubric: str | Path | Rubric,
    data: str | Path | Dataset,
    *,
    quantity: Quantity | None = None,
    judge_options: Mapping[str, Any] | None = None,
    loader: str | None = None,
    store: str | Path = DEFAULT_STORE,
    limit: int | None = None,
) -> Judged:
    """Judge every item of ``data`` with ``rubric`` (trial 0) and build its population."""
    dataset = _dataset(data, loader)
    items = list(dataset.items[:limit] if limit else dataset.items)
    the_rubric = get_rubric(rubric)
    built = isinstance(judge, str)
    the_judge = build_judge(judge, **dict(judge_options or {})) if isinstance(judge, str) else judge
    if isinstance(the_judge, RecordedJudge):
        the_judge.bind(items)

    async def go() -> Any:
        try:
            with RunStore(store) as run_store:
                engine = Engine(the_judge, run_store, EngineConfig())
                return await score_items(items, engine, the_rubric)
        finally:
            if built:
                await the_judge.aclose()

    result = run_blocking(go())
    verdicts: dict[str, Verdict] = {row.item.id: row.verdict for row in result.rows}
    chosen = quantity or default_quantity(the_rubric)
    population = build_population(
        items, verdicts, the_rubric, chosen, _mapping(the_rubric, dataset, items)
    )
    return Judged(dataset, the_rubric, population, result.stopped)


def estimate(
    judge: str | Judge,
    rubric: str | Path | Rubric,
    data: str | Path | Dataset,
    *,
    label_budget: int | str | None = "all",
    seed: int = 0,
    labels: str | Path | None = None,
    quantity: Quantity | None = None,
    target_width: float | None = None,
    confidence_level: float = 0.95,
    judge_options: Mapping[str, Any] | None = None,
    loader: str | None = None,
    store: str | Path = DEFAULT_STORE,
    limit: int | None = None,
) -> JudgeEstimates:
    """The humans' rate (or mean, or win rate) over ``data``: naive, labels only, corrected.

    Parameters
    ----------
    judge, rubric, data
        A judge spec (``profanity``, ``recorded:verdicts.jsonl``) or a judge; a rubric name,
        YAML path or rubric; a dataset spec or dataset.
    label_budget : int or "all", default "all"
        Use this many of the data's labelled items, drawn at random with ``seed``.
    seed : int, default 0
    labels : path, optional
        A filled labelling sheet (``--suggest``) or any CSV/JSONL of ``id`` and ``label``: its
        labels replace the data's, drawn as the sheet says (a file without strata is taken as
        a simple random sample).
    quantity : {"rate", "mean", "win_rate"}, optional
        Default: the win rate for a pairwise rubric, else the rate of the positive class (the
        mean score for a rubric without a decision rule).
    target_width : float, optional
        Also say how many labels would bring each interval to this half-width.
    """
    budget = parse_budget(label_budget)  # before any call: a bad budget costs no judging
    judged = judge_population(
        judge,
        rubric,
        data,
        quantity=quantity,
        judge_options=judge_options,
        loader=loader,
        store=store,
        limit=limit,
    )
    population, design = labelled(judged.population, labels, budget, seed)
    result = estimate_population(
        population, design, confidence_level=confidence_level, target_width=target_width
    )
    if judged.stopped:
        note = f"The engine stopped before judging every item ({judged.stopped})."
        result = _with_note(result, note)
    return result


def suggest_labels(
    judge: str | Judge,
    rubric: str | Path | Rubric,
    data: str | Path | Dataset,
    labels: int,
    *,
    sheet: str | Path = DEFAULT_SHEET,
    seed: int = 0,
    audit: str | Path | None = None,
    quantity: Quantity | None = None,
    judge_options: Mapping[str, Any] | None = None,
    loader: str | None = None,
    store: str | Path = DEFAULT_STORE,
    limit: int | None = None,
) -> tuple[Suggestion, tuple[Path, Path]]:
    """Choose ``labels`` items to label (:func:`~judgeprobe.estimate.suggest.suggest`), the
    items an audit's run store (``audit``) found unstable first, and write the labelling sheet
    as CSV and JSON lines; returns the suggestion and the two paths."""
    judged = judge_population(
        judge,
        rubric,
        data,
        quantity=quantity,
        judge_options=judge_options,
        loader=loader,
        store=store,
        limit=limit,
    )
    flagged = unstable_items(audit) if audit is not None else None
    chosen = suggest(judged.population, labels, seed=seed, unstable=flagged)
    return chosen, write_sheet(chosen.rows, sheet)


def labelled(
    population: Population, labels: str | Path | None, budget: int | None, seed: int
) -> tuple[Population, LabelDesign]:
    """The population with the labels used (a sheet's, else ``budget`` of the data's, all for
    None), and how they were drawn."""
    if labels is not None:
        sheet = read_labels(labels)
        with_sheet = population.with_labels(sheet.labels)
        return with_sheet, sheet.design(with_sheet)
    pool = population.labelled
    if not len(pool):
        raise ConfigError(
            "the data has no human labels: label some items first (--suggest N writes a "
            "labelling sheet; --labels FILE reads it back)"
        )
    return population, uniform_design(pool, population.size, budget, seed)


def default_quantity(rubric: Rubric) -> Quantity:
    """The win rate for a pairwise rubric; the rate of the positive class where the rubric has a
    decision rule; else the mean score."""
    if rubric.kind == "pairwise":
        return "win_rate"
    return "rate" if rubric.decision is not None else "mean"


def _mapping(rubric: Rubric, dataset: Dataset, items: Sequence[Item]) -> ScaleMap | None:
    """The judge's scale onto the human one: the data's label scale where it declares one, else
    the range of its labels, else the rubric's own range (a sheet's labels are then on it)."""
    pointwise = [item for item in items if isinstance(item, PointwiseItem)]
    if rubric.kind == "pairwise" or not pointwise:
        return None
    if dataset.scale:
        return scale_map(rubric, pointwise, (min(dataset.scale), max(dataset.scale)))
    if any(item.labels for item in pointwise):
        return scale_map(rubric, pointwise, None)
    own = rubric.score_range or (0.0, 1.0)
    return scale_map(rubric, pointwise, own)


def _dataset(data: str | Path | Dataset, loader: str | None) -> Dataset:
    if isinstance(data, Dataset):
        return data
    return load_dataset(data) if loader is None else load_dataset(data, loader=loader)


def _with_note(result: JudgeEstimates, note: str) -> JudgeEstimates:
    from dataclasses import replace

    return replace(result, notes=(*result.notes, note))
