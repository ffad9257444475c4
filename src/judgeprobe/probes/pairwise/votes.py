"""Shared machinery of the pairwise probes: where the judge's votes come from, ties, slices.

Judge votes come from one of two sources (the probes' ``judge_source`` parameter):

- ``"live"``: the judge under audit, through the engine, with a pairwise rubric whose fields are
  ``prompt``, ``response_a`` and ``response_b``. The vote is the verdict's decision under the
  rubric's one rule (:meth:`~judgeprobe.rubrics.Rubric.decision_of`: the ``A``/``B``/``tie``
  label, else the score); a swapped request (A and B exchanged) has its decision mapped back
  before any comparison (:func:`pair_choice`). Requests are planned under the roles
  ``("pair", item_id)`` and ``("swapped", item_id)`` (:func:`pair_role`).
- the name of a recorded judge in ``item.judge_votes`` (``"gpt-4"``, ``"gpt-3.5-turbo"``): votes
  shipped with the dataset; no judge call is made.

Ties follow FastChat's MT-Bench agreement script (``fastchat/llm_judge/compute_agreement.py``):
any vote whose text contains "tie", ``tie (inconsistent)`` included, is a tie; two ties agree;
with ties excluded, a comparison is dropped when *either* side is a tie.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.plan import ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import (
    PAIRWISE_CHOICES,
    PairwiseChoice,
    PairwiseItem,
    Vote,
    item_fields,
    strict_majority,
)
from judgeprobe.errors import ConfigError
from judgeprobe.probes.decisions import unique_ids
from judgeprobe.probes.params import Constraint, Interval, OneOf, SubsetOf, Text
from judgeprobe.probes.requirements import Requirements
from judgeprobe.stats import Estimate, agreement, cohen_kappa
from judgeprobe.transforms.swap import swap_choice, swap_positions

LIVE = "live"
"""``judge_source`` value for the judge under audit (judged through the engine)."""

ClusterBy = Literal["question", "prompt", "item"]
"""What confidence intervals cluster on: ``question`` is ``item.cluster`` (the question id when
the data has one, else the item); ``prompt`` is the question id, else the prompt text (pairs that
share a prompt, as LLMBar's MT-Bench subset, are one cluster); ``item`` treats items as
independent."""

Orders = Literal["original", "both"]
"""Which orders a live judge sees a pair in: as given, or also with A and B swapped."""

CLUSTER_CHOICES: tuple[ClusterBy, ...] = ("question", "prompt", "item")
SLICE_KEYS = ("category", "turn")
PAIRWISE_FIELDS = ("prompt", "response_a", "response_b")


def pairwise_fields(item: PairwiseItem, *, swapped: bool = False) -> dict[str, str]:
    """The rubric fields of ``item``, or of its position-swapped copy."""
    return item_fields(swap_positions(item) if swapped else item)


def live_request(item: PairwiseItem, ctx: ProbeContext, *, swapped: bool = False) -> Request:
    """The request that asks the judge under audit about ``item`` (in one order)."""
    return ctx.request(pairwise_fields(item, swapped=swapped))


def pair_role(item: PairwiseItem, *, swapped: bool = False) -> Role:
    """The role of ``item``'s live request in the original order, or in the swapped one.

    Every pairwise probe plans its live requests under these roles, so the position probe and
    the agreement probes ask for the same requests (the engine judges each once).
    """
    return ("swapped" if swapped else "pair", item.id)


def live_requests(
    ctx: ProbeContext, items: Sequence[PairwiseItem], *, orders: Orders = "original"
) -> dict[Role, Request]:
    """The live request of each item by :func:`pair_role`, in both orders with ``"both"``."""
    requests: dict[Role, Request] = {}
    for item in items:
        requests[pair_role(item)] = live_request(item, ctx)
        if orders == "both":
            requests[pair_role(item, swapped=True)] = live_request(item, ctx, swapped=True)
    return requests


def pair_choice(
    verdicts: Verdicts, item: PairwiseItem, *, swapped: bool = False
) -> PairwiseChoice | None:
    """The judge's choice on ``item`` in the original order's terms; None without a decision.

    The choice is the verdict's decision under its rubric's one rule
    (:meth:`~judgeprobe.core.plan.Verdicts.decision`); the swapped request's decision is mapped
    back (A <-> B), since its ``A`` is the original ``B``.
    """
    decision = verdicts.decision(pair_role(item, swapped=swapped))
    choice = _as_choice(decision)
    if choice is None:
        return None
    return swap_choice(choice) if swapped else choice


def _as_choice(decision: str | None) -> PairwiseChoice | None:
    for choice in PAIRWISE_CHOICES:
        if decision == choice:
            return choice
    return None


def verdict_problem(verdicts: Verdicts, role: Role) -> str:
    """Why ``role``'s verdict gives no vote (for the exclusion counts)."""
    status = verdicts.status(role)
    if status == "missing":
        return "not judged"
    if status == "ok":
        return "no pairwise label"
    return status


@dataclass(frozen=True, slots=True)
class PairwiseDesign:
    """What a pairwise probe analyses: its items (human votes filtered by rater) and the ids of
    those the judge votes on (the items asked live, or every item for recorded votes)."""

    items: tuple[PairwiseItem, ...]
    judged: tuple[str, ...]

    def judged_items(self) -> list[PairwiseItem]:
        wanted = set(self.judged)
        return [item for item in self.items if item.id in wanted]


def pairwise_design(
    items: Sequence[PairwiseItem], source: str, *, live_only_voted: bool
) -> PairwiseDesign:
    """The design of a pairwise probe on ``items``; duplicate ids and an unknown recorded
    ``source`` are refused.

    ``live_only_voted``: a live judge is asked only about items with a human vote (the
    agreement probes); otherwise about every item (the position probe).
    """
    unique_ids(items)
    check_source(items, source)
    judged = live_items(items) if source == LIVE and live_only_voted else list(items)
    return PairwiseDesign(tuple(items), tuple(item.id for item in judged))


PAIRWISE = Requirements(
    rubric_kinds=("pairwise",),
    items="pairwise",
    inputs_among=PAIRWISE_FIELDS,
    does="shows the judge a prompt and two responses",
)
"""What a pairwise probe needs: pairwise items and a pairwise rubric that reads only the pair's
fields (e.g. ``builtin_rubric('preference')``)."""


@dataclass(frozen=True, slots=True)
class JudgeVotes:
    """The judge's vote per item id, and how many items have none, by reason."""

    source: str
    votes: Mapping[str, Vote]
    excluded: Mapping[str, int] = field(default_factory=dict)


def check_source(items: Sequence[PairwiseItem], source: str) -> None:
    """A recorded ``source`` must occur in the items' ``judge_votes``."""
    if source == LIVE or any(source in item.judge_votes for item in items):
        return
    recorded = sorted({name for item in items for name in item.judge_votes})
    listing = ", ".join(repr(name) for name in recorded) or "none"
    raise ConfigError(
        f"judge_source {source!r}: no item has recorded votes of that judge (recorded judges: "
        f"{listing}); pass one of them, or 'live' to judge with the judge under audit"
    )


def collect_judge_votes(
    items: Sequence[PairwiseItem],
    ctx: ProbeContext,
    verdicts: Verdicts,
    *,
    source: str,
    orders: Orders = "original",
) -> JudgeVotes:
    """The judge's vote on each item; items without one are counted by reason.

    A recorded source with several votes on an item uses their strict majority (items without
    one are excluded). A live source with ``orders="both"`` follows MT-Bench's protocol: the
    vote is the judge's choice when both orders agree (after mapping the swapped one back) and
    ``tie (inconsistent)`` when they do not.
    """
    votes: dict[str, Vote] = {}
    excluded: Counter[str] = Counter()
    for item in items:
        if source == LIVE:
            vote, problem = _live_vote(item, ctx, verdicts, orders)
        else:
            vote, problem = _recorded_vote(item, source)
        if vote is None:
            excluded[problem] += 1
        else:
            votes[item.id] = vote
    return JudgeVotes(source, votes, dict(excluded))


def _live_vote(
    item: PairwiseItem, ctx: ProbeContext, verdicts: Verdicts, orders: Orders
) -> tuple[Vote | None, str]:
    rater = ctx.judge_name or "judge"
    choice = pair_choice(verdicts, item)
    if choice is None:
        return None, verdict_problem(verdicts, pair_role(item))
    if orders == "original":
        return Vote(choice, rater=rater), ""
    back = pair_choice(verdicts, item, swapped=True)
    if back is None:
        return None, f"swapped: {verdict_problem(verdicts, pair_role(item, swapped=True))}"
    if back == choice:
        return Vote(choice, rater=rater), ""
    return Vote("tie", rater=rater, inconsistent=True), ""


def _recorded_vote(item: PairwiseItem, source: str) -> tuple[Vote | None, str]:
    recorded = item.judge_votes.get(source)
    if recorded is None:
        return None, "not recorded"
    if not recorded:
        return None, "recorded without a vote (unparsed in the source)"
    if len(recorded) == 1:
        return recorded[0], ""
    choice = strict_majority(recorded)
    if choice is None:
        return None, "recorded votes without a majority"
    inconsistent = all(v.inconsistent for v in recorded if v.choice == choice)
    return Vote(choice, rater=source, inconsistent=inconsistent and choice == "tie"), ""


def keep_raters(items: Sequence[PairwiseItem], prefixes: Sequence[str]) -> list[PairwiseItem]:
    """``items`` with only the human votes whose rater starts with one of ``prefixes``.

    No prefixes keeps every vote. FastChat's MT-Bench agreement counts expert votes only
    (``("expert",)``); the published split also holds the authors' votes (``author_*``).
    """
    if not prefixes:
        return list(items)
    wanted = tuple(prefixes)
    return [
        dataclasses.replace(
            item,
            human_votes=tuple(
                v for v in item.human_votes if v.rater is not None and v.rater.startswith(wanted)
            ),
        )
        for item in items
    ]


def live_items(items: Sequence[PairwiseItem]) -> list[PairwiseItem]:
    """Items a live agreement probe needs judged: those with at least one human vote."""
    return [item for item in items if item.human_votes]


def comparable(x: PairwiseChoice, y: PairwiseChoice, include_ties: bool) -> bool:
    """FastChat's rule: with ties excluded, a comparison with a tie on either side is dropped."""
    return include_ties or (x != "tie" and y != "tie")


def cluster_of(item: PairwiseItem, how: ClusterBy) -> str:
    """The cluster label of ``item`` (see :data:`ClusterBy`)."""
    if how == "item":
        return item.id
    if how == "prompt" and item.question_id is None:
        return "p" + content_hash(item.prompt)
    return item.cluster


PAIRWISE_CONSTRAINTS: Mapping[str, Constraint] = {
    "judge_source": Text("'live' or the name of a recorded judge"),
    "cluster": OneOf(CLUSTER_CHOICES),
    "by": SubsetOf(SLICE_KEYS, canonical=False, empty=True),
    "min_slice_items": Interval(int, 1),
}
"""The parameters every pairwise probe shares, declared once."""


def slices(
    items: Sequence[PairwiseItem], by: Sequence[str], *, min_items: int = 1
) -> list[tuple[dict[str, str], list[PairwiseItem]]]:
    """All items (labels ``{}``), then one slice per value of each key in ``by``.

    A key is sliced only when the items hold at least two distinct values of it; slices with
    fewer than ``min_items`` items are left out (too small for a useful interval).
    """
    out: list[tuple[dict[str, str], list[PairwiseItem]]] = [({}, list(items))]
    for key in by:
        values = sorted({str(v) for v in (getattr(i, key) for i in items) if v is not None})
        if len(values) < 2:
            continue
        for value in values:
            chosen = [
                i for i in items if getattr(i, key) is not None and str(getattr(i, key)) == value
            ]
            if len(chosen) >= min_items:
                out.append(({key: value}, chosen))
    return out


def length_tie_break(item: PairwiseItem, seed: int) -> PairwiseChoice:
    """A reproducible coin flip for ``item`` (used where a rule has no preference)."""
    return "A" if random.Random(content_hash([seed, item.id])).random() < 0.5 else "B"


@dataclass(slots=True)
class Comparisons:
    """Paired labels of two raters, with one cluster label per comparison."""

    a: list[PairwiseChoice] = field(default_factory=list)
    b: list[PairwiseChoice] = field(default_factory=list)
    clusters: list[Hashable] = field(default_factory=list)
    dropped_ties: int = 0

    def add(
        self, x: PairwiseChoice, y: PairwiseChoice, cluster: Hashable, include_ties: bool
    ) -> None:
        if not comparable(x, y, include_ties):
            self.dropped_ties += 1
            return
        self.a.append(x)
        self.b.append(y)
        self.clusters.append(cluster)

    @property
    def hits(self) -> list[bool]:
        return [x == y for x, y in zip(self.a, self.b, strict=True)]

    def agreement(self, *, level: float, seed: int, n_resamples: int) -> Estimate:
        return agreement(
            self.a,
            self.b,
            clusters=self.clusters,
            confidence_level=level,
            seed=seed,
            n_resamples=n_resamples,
        )

    def kappa(self, *, level: float, seed: int, include_ties: bool, n_resamples: int) -> Estimate:
        """Cohen's kappa; not assessable when one side gave the same answer to every pair.

        A constant rater (a judge that always answers "A") has kappa 0 with a zero-width
        interval in every resample: that is the formula's construction, not evidence of chance
        agreement, so the estimate is undefined and says why.
        """
        for rater in (self.a, self.b):
            if len(rater) > 1 and len(set(rater)) == 1:
                return Estimate.undefined(
                    len(rater),
                    reason=f"one side answered {rater[0]!r} to every pair: kappa is 0 by "
                    "construction, not by evidence",
                )
        labels = ("A", "B", "tie") if include_ties else ("A", "B")
        return cohen_kappa(
            self.a,
            self.b,
            labels=labels,
            clusters=self.clusters,
            confidence_level=level,
            seed=seed,
            n_resamples=n_resamples,
        )


def finite(value: float | None) -> float | None:
    """``value``, or None when it is missing, NaN or infinite (tables must be plain JSON)."""
    return None if value is None or not math.isfinite(value) else float(value)


def interval_row(est: Estimate) -> dict[str, float | int | None]:
    """An estimate as a JSON-safe table cell: estimate, CI bounds and n (NaN -> None)."""
    return {
        "estimate": finite(est.estimate),
        "low": finite(est.ci.low),
        "high": finite(est.ci.high),
        "n": est.n,
    }


def interval_rows(labelled: Sequence[tuple[str, Estimate]]) -> list[dict[str, Any]]:
    """Rows of an ``intervals`` figure; undefined estimates are left out."""
    return [
        {"label": label, "estimate": est.estimate, "low": est.ci.low, "high": est.ci.high}
        for label, est in labelled
        if est.defined
    ]


MajorityTies = Literal["count", "drop"]
"""How the human majority treats tie votes. ``count``: a tie is a choice like A and B, the
majority is that of all votes, computed the same way whether ties are included or not (with ties
excluded, an item whose majority is a tie is then dropped by :func:`comparable`). ``drop``: tie
votes are removed first and the majority is that of the decisive votes (the length-null post's
"strict majority, ties dropped"); an item with only tie votes has none."""

MAJORITY_TIES: tuple[MajorityTies, ...] = ("count", "drop")


def human_majority(item: PairwiseItem, ties: MajorityTies = "count") -> PairwiseChoice | None:
    """The strict majority of the human votes (None without one); ``ties`` as in
    :data:`MajorityTies`."""
    return strict_majority(item.human_votes, include_ties=ties == "count")
