"""The length-matched control of the length-only null: the items where judge, null and humans can
be compared, and agreement with humans on one bin of length gaps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgeprobe.data.items import PairwiseItem
from judgeprobe.probes.pairwise.length import (
    LengthBin,
    LengthUnit,
    OnEqual,
    item_gap,
    length_null_choice,
)
from judgeprobe.probes.pairwise.votes import (
    ClusterBy,
    JudgeVotes,
    MajorityTies,
    cluster_of,
    comparable,
    human_majority,
)
from judgeprobe.stats import Estimate, bootstrap, clustered_proportion
from judgeprobe.stats.resampling import mean_difference


@dataclass(frozen=True, slots=True)
class MatchedRow:
    """One item of the length-matched control: its gap and whether judge and null agree with
    the human majority (None when the null's comparison is dropped for a tie)."""

    gap: float
    judge_hit: bool
    null_hit: bool | None
    cluster: str
    item_id: str = ""


@dataclass(frozen=True, slots=True)
class BinResult:
    """The control on one bin: judge and null agreement, and their paired difference."""

    bin: LengthBin
    judge: Estimate
    null: Estimate
    difference: Estimate

    def metric(self, name: str) -> Estimate:
        return {
            "judge_agreement": self.judge,
            "null_agreement": self.null,
            "judge_minus_null": self.difference,
        }[name]


def matched_rows(
    items: Sequence[PairwiseItem],
    judge: JudgeVotes,
    *,
    unit: LengthUnit,
    on_equal: OnEqual,
    include_ties: bool,
    cluster: ClusterBy,
    seed: int,
    majority_ties: MajorityTies = "count",
) -> list[MatchedRow]:
    """Items where the judge's vote and the human majority can be compared."""
    rows: list[MatchedRow] = []
    for item in items:
        vote = judge.votes.get(item.id)
        majority = human_majority(item, majority_ties)
        if vote is None or majority is None or not comparable(vote.choice, majority, include_ties):
            continue
        null = length_null_choice(item, unit, on_equal=on_equal, seed=seed)
        null_hit = null == majority if comparable(null, majority, include_ties) else None
        rows.append(
            MatchedRow(
                item_gap(item, unit),
                vote.choice == majority,
                null_hit,
                cluster_of(item, cluster),
                item.id,
            )
        )
    return rows


def bin_result(
    rows: Sequence[MatchedRow], length_bin: LengthBin, *, level: float, seed: int, n_resamples: int
) -> BinResult:
    """Judge and null agreement with humans on the rows of ``length_bin``, and judge - null."""
    inside = [r for r in rows if length_bin.contains(r.gap)]
    judge = clustered_proportion(
        [r.judge_hit for r in inside],
        [r.cluster for r in inside],
        confidence_level=level,
        seed=seed,
        n_resamples=n_resamples,
    )
    with_null = [r for r in inside if r.null_hit is not None]
    null = clustered_proportion(
        [bool(r.null_hit) for r in with_null],
        [r.cluster for r in with_null],
        confidence_level=level,
        seed=seed,
        n_resamples=n_resamples,
    )
    difference = bootstrap(
        (
            np.array([float(r.judge_hit) for r in with_null]),
            np.array([float(bool(r.null_hit)) for r in with_null]),
        ),
        mean_difference,
        clusters=[r.cluster for r in with_null],
        confidence_level=level,
        seed=seed,
        n_resamples=n_resamples,
    )
    return BinResult(length_bin, judge, null, difference)
