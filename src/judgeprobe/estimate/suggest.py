"""Which items to label next: a stratified draw that spends labels where the judge is in doubt.

The items are split into strata by what the judge said: the items an audit found unstable (their
verdict flipped when only the wording, a repetition or the position changed), the items the judge
is unsure of (a probability of the positive class between 0.2 and 0.8, a neutral decision, a
tie), and the rest by the judge's decision. Each stratum gets labels in proportion to its size,
the unstable and unsure ones at :data:`OVERSAMPLE` times the rate of the others (there the judge's
verdict says least about the label, so a label there removes the most doubt: Neyman's allocation
when their spread is about twice the others'), at least two per stratum (its variance needs two),
and the labelled items of each stratum are drawn at random. Each item's chance of being labelled
is therefore known (``n_h / M_h``) and the estimate weighs each stratum by its size
(:func:`judgeprobe.stats.stratified_difference.difference_mean`): the selection leans towards
doubtful items and the estimate stays unbiased.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import Item, PairwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.estimate.sheet import SheetRow
from judgeprobe.probes.agreement.corrected.design import LabelDesign
from judgeprobe.probes.agreement.corrected.population import Population

OVERSAMPLE = 2.0
"""How many times more often an unstable or unsure item is labelled than a decided one."""
UNSURE = (0.2, 0.8)
"""A probability of the positive class in this closed range is a verdict the judge is unsure of."""
UNSTABLE = "unstable"
UNSURE_STRATUM = "unsure"
MIN_PER_STRATUM = 2


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The items to label (the sheet's rows) and the design they are drawn by."""

    rows: tuple[SheetRow, ...]
    design: LabelDesign
    allocation: Mapping[str, int]
    """Labels per stratum."""


def strata_of(
    population: Population, unstable: Mapping[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """The stratum of every item and why an item of it is worth a label."""
    flagged = unstable or {}
    strata: list[str] = []
    reasons: list[str] = []
    for k, (item, verdict) in enumerate(zip(population.items, population.verdicts, strict=True)):
        decision = _decision(population, verdict)
        chance = population.predictor[k] if population.predictor_name == "probability" else None
        if item.id in flagged:
            strata.append(UNSTABLE)
            reasons.append(f"the audit found its verdict unstable: {flagged[item.id]}")
        elif chance is not None and UNSURE[0] <= chance <= UNSURE[1]:
            strata.append(UNSURE_STRATUM)
            reasons.append(f"the judge is unsure: probability {chance:.2f} of the positive class")
        elif decision in ("neutral", "tie"):
            strata.append(UNSURE_STRATUM)
            reasons.append(f"the judge's decision is {decision}")
        else:
            strata.append(f"judge {decision}")
            reasons.append(f"drawn at random from the items the judge calls {decision}")
    return strata, reasons


def suggest(
    population: Population,
    labels: int,
    *,
    seed: int = 0,
    unstable: Mapping[str, str] | None = None,
) -> Suggestion:
    """``labels`` items to label, drawn by strata (see the module docstring), seeded."""
    if labels < 1:
        raise ConfigError(f"--suggest needs a positive number of labels, got {labels}")
    if labels > population.size:
        raise ConfigError(f"--suggest {labels}: the judge scored only {population.size} items")
    strata, reasons = strata_of(population, unstable)
    sizes = Counter(strata)
    weights = {
        h: m * (OVERSAMPLE if h in (UNSTABLE, UNSURE_STRATUM) else 1.0) for h, m in sizes.items()
    }
    allocation = allocate(labels, weights, sizes)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for stratum in sorted(sizes):
        members = [k for k, h in enumerate(strata) if h == stratum]
        drawn = rng.choice(members, size=allocation[stratum], replace=False)
        chosen.extend(int(k) for k in drawn)
    order = [chosen[k] for k in rng.permutation(len(chosen))]  # strata mixed on the sheet
    rows = tuple(
        _row(population, k, strata[k], reasons[k], sizes[strata[k]], allocation[strata[k]])
        for k in order
    )
    design = LabelDesign(
        tuple(order),
        tuple(strata[k] for k in order),
        dict(sizes),
        f"{labels} labels drawn by {len(sizes)} strata (seed {seed})",
    )
    return Suggestion(rows, design, allocation)


def allocate(total: int, weights: Mapping[str, float], sizes: Mapping[str, int]) -> dict[str, int]:
    """``total`` labels over the strata: at least two each (all of a smaller stratum), then one
    at a time to the stratum furthest below its share of ``weights``, never more than its size.

    >>> allocate(10, {"a": 2.0, "b": 1.0, "c": 1.0}, {"a": 50, "b": 50, "c": 1})
    {'a': 6, 'b': 3, 'c': 1}
    """
    floor = {h: min(MIN_PER_STRATUM, sizes[h]) for h in sizes}
    if sum(floor.values()) > total:
        raise ConfigError(
            f"{total} labels are too few for the {len(sizes)} strata of these verdicts "
            f"({', '.join(sorted(sizes))}): each needs {MIN_PER_STRATUM}, so at least "
            f"{sum(floor.values())}"
        )
    given = dict(floor)
    whole = sum(weights.values())
    for _ in range(total - sum(given.values())):
        room = [h for h in sizes if given[h] < sizes[h]]
        pick = max(room, key=lambda h: (total * weights[h] / whole - given[h], h))
        given[pick] += 1
    return given


def _decision(population: Population, verdict: Verdict) -> str:
    rubric = population.rubric
    if verdict.score is None or (rubric.kind != "pairwise" and rubric.decision is None):
        return "scored"
    return rubric.decision_of(verdict.score, verdict.label)


def _row(population: Population, k: int, stratum: str, why: str, size: int, drawn: int) -> SheetRow:
    item: Item = population.items[k]
    verdict = population.verdicts[k]
    if isinstance(item, PairwiseItem):
        response = f"[response A]\n{item.response_a}\n\n[response B]\n{item.response_b}"
    else:
        response = item.response
    return SheetRow(
        id=item.id,
        prompt=item.prompt,
        response=response,
        judge_verdict=_decision(population, verdict),
        judge_score=float(verdict.score if verdict.score is not None else float("nan")),
        why=f"{why} (stratum of {size} items, {drawn} labelled)",
        stratum=stratum,
        stratum_items=size,
        inclusion_probability=drawn / size,
    )
