"""Rerun noise: the base reruns' pairwise jitter and the matched null flip rate.

``p_jitter`` is the share of discordant decision pairs among the N base reruns (the paper's
convention); the matched null is the base single run flipping against the same majority-of-N
anchor the variants are compared with (see :mod:`judgeprobe.stats.flips`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from judgeprobe.probes.base import Finding
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import discordant_pair_rate, proportion
from judgeprobe.stats.flips import MATCHED_NULL, single_vs_majority_disagreement

from .design import Unit, flip
from .section import Section, Settings, pct
from .wordings import BASE

PAIRWISE_NULL = (
    "exact one-sided binomial test of the flip count against p_jitter, the paper's convention; "
    "pooled over variants it treats their runs as independent"
)


def null_flips(rubric: Rubric, units: Sequence[Unit]) -> list[bool | None]:
    """Per item: did the base single run flip against the anchor (None: not comparable)."""
    return [flip(rubric, u.single.get(BASE), u.anchor) for u in units]


def noise(rubric: Rubric, units: Sequence[Unit], settings: Settings) -> Section:
    """``p_jitter`` and ``null_flip_rate``, the ``noise`` table, and notes on the null used and
    the items without an anchor."""
    jitter = discordant_pair_rate(
        [u.base[1:] for u in units], confidence_level=settings.confidence_level, seed=settings.seed
    )
    flips = null_flips(rubric, units)
    k0 = sum(1 for f in flips if f)
    n0 = sum(1 for f in flips if f is not None)
    matched = proportion(k0, n0, confidence_level=settings.confidence_level)
    closed = (
        single_vs_majority_disagreement(jitter.estimate, settings.reruns)
        if jitter.defined
        else float("nan")
    )
    out = Section()
    out.findings.append(
        Finding(
            "p_jitter",
            jitter,
            f"share of discordant decision pairs among the {settings.reruns} base reruns",
            labels={"reruns": str(settings.reruns)},
        )
    )
    out.findings.append(
        Finding(
            "null_flip_rate",
            matched,
            "matched null: the base rubric's single run flipping against the majority of "
            f"{settings.reruns} base reruns",
            labels={"null": "matched"},
        )
    )
    anchors = Counter(u.anchor_reason for u in units)
    out.table = {
        "null_used": settings.null,
        "p_jitter": jitter.to_dict(),
        "matched_null": matched.to_dict(),
        "closed_form_binary_homogeneous": None if closed != closed else closed,
        "anchor": dict(anchors),
    }
    out.notes.append(
        f"test null: {settings.null} ("
        + (MATCHED_NULL if settings.null == "matched" else PAIRWISE_NULL)
        + f"); matched null {pct(matched)}, pairwise jitter {pct(jitter)}"
    )
    if anchors.get("no majority") or anchors.get("failed runs"):
        out.notes.append(
            f"{anchors.get('no majority', 0)} item(s) have no strict base majority and "
            f"{anchors.get('failed runs', 0)} lack one because base runs failed; they are "
            "excluded from flip counts"
        )
    return out
