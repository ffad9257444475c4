"""The items behind the flip findings, and each item's flip counts (the unit of ``flip_delta``).

A wording's flip is its single run's decision opposite to the anchor (the majority of the base
reruns). The evidence of a variant's or class's ``flip_rate`` and ``flip_delta`` is the items
that flipped under one of its wordings *beyond the reruns*: whose base single run agrees with
the anchor, so the flip is not rerun noise. :func:`flip_rows` gives each item's flip counts
and null counts, whose pooled ratio difference is ``flip_delta``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe.core.evidence import Evidence, EvidenceVerdict, collect, judged, text_of
from judgeprobe.core.plan import Verdicts
from judgeprobe.probes.base import Finding
from judgeprobe.rubrics import Rubric
from judgeprobe.stats.flips import discordant_pairs

from .design import Unit, flip, role
from .wordings import BASE, Wording, transform_groups

FLIP_FINDINGS = ("flip_rate", "flip_delta")
"""The findings whose evidence is the items that flipped under their wordings."""


def members_of(labels: Mapping[str, str], variants: Sequence[Wording]) -> list[Wording]:
    """The wordings a flip finding pools: its variant, or every variant of its class."""
    if "variant" in labels:
        return [w for w in variants if w.name == labels["variant"]]
    for cls, members in transform_groups(tuple(variants)):
        if cls == labels.get("class"):
            return members
    return []


def flip_evidence(
    rubric: Rubric, units: Sequence[Unit], members: Sequence[Wording], verdicts: Verdicts
) -> Evidence:
    """The items whose single run flipped under one of ``members`` while the base single run
    kept the anchor: the anchor, the base run and each flipped wording's run."""
    found = []
    for unit in units:
        if flip(rubric, unit.single.get(BASE), unit.anchor) is not False:
            continue
        flipped = [w for w in members if flip(rubric, unit.single.get(w.name), unit.anchor)]
        if not flipped:
            continue
        item_id = unit.item.id
        shown = [
            EvidenceVerdict("base majority", label=unit.anchor),
            judged(verdicts, role(BASE, item_id, 0), "base"),
            *(judged(verdicts, role(w.name, item_id, 0), w.name) for w in flipped),
        ]
        found.append((item_id, text_of(unit.item), shown))
    return collect(found)


def with_flip_evidence(
    findings: Sequence[Finding],
    rubric: Rubric,
    units: Sequence[Unit],
    variants: Sequence[Wording],
    verdicts: Verdicts,
) -> list[Finding]:
    """``findings``, each flip finding naming the items that flipped beyond the reruns."""
    out = []
    for finding in findings:
        if finding.name in FLIP_FINDINGS:
            members = members_of(finding.labels, variants)
            finding = finding.with_evidence(flip_evidence(rubric, units, members, verdicts))
        out.append(finding)
    return out


def flip_rows(
    rubric: Rubric, units: Sequence[Unit], members: Sequence[Wording], null: str
) -> dict[str, tuple[float, float, float, float]]:
    """Per item: the flips and comparisons of ``members``' single runs, then the null's flips
    and comparisons (the base single run against the anchor for the ``matched`` null, the
    discordant rerun pairs for ``pairwise``), as :func:`~judgeprobe.stats.flip_rate_excess`
    pools them; items with neither are left out."""
    rows: dict[str, tuple[float, float, float, float]] = {}
    for unit in units:
        found = [flip(rubric, unit.single.get(w.name), unit.anchor) for w in members]
        f = sum(1 for x in found if x)
        m = sum(1 for x in found if x is not None)
        if null == "matched":
            base = flip(rubric, unit.single.get(BASE), unit.anchor)
            a, b = float(bool(base)), float(base is not None)
        else:
            discordant, pairs = discordant_pairs(unit.base[1:])
            a, b = float(discordant), float(pairs)
        if m or b:
            rows[unit.item.id] = (float(f), float(m), a, b)
    return rows
