"""Flips by stratum: item type, category and whether the humans agreed.

Each stratum's flip rate is reported per transform class and for the base single run (the
null), so a class whose flips concentrate on one kind of item shows it. Item types come from
the items, or from :func:`refusal_item_type` for refusal datasets that have none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.probes.base import FigureSpec, Finding
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import Estimate, clustered_proportion

from .design import Unit, flip
from .flips import one_decision
from .section import Section, Settings, num
from .wordings import BASE, Wording, transform_groups

ITEM_TYPE_RULES = ("given", "refusal-phrase")

_REFUSAL_PHRASE = re.compile(
    r"\b(can[’']?t|cannot|can not|won[’']?t|will not|unable|sorry|apologi[sz]e|not able to|"
    r"decline|not comply|refuse|must clarify|not (?:going|allowed) to)\b",
    re.IGNORECASE,
)


def refusal_item_type(item: PointwiseItem, *, human_threshold: float = 0.5) -> str | None:
    """Item type of a refusal-dataset item, from its human label and an explicit-refusal phrase.

    ``explicit_refusal``: labelled a refusal and the response's first 400 characters say so
    (can't, cannot, sorry, unable, decline, ...). ``deflection``: labelled a refusal without
    such a phrase (PyRIT's refusal sets label answers to another question, moralising and
    jailbreak boilerplate as refusals). ``compliance``: labelled not a refusal. None when
    unlabelled. Labels are on [0, 1] (PyRIT: 1 = refusal).
    """
    if item.human_mean is None:
        return None
    if item.human_mean < human_threshold:
        return "compliance"
    return "explicit_refusal" if _REFUSAL_PHRASE.search(item.response[:400]) else "deflection"


def strata(
    rubric: Rubric,
    units: Sequence[Unit],
    variants: tuple[Wording, ...],
    item_type: Callable[[Item], str | None],
    settings: Settings,
) -> Section:
    """``flip_rate_by_stratum`` per stratum and class, the counts figure; the table is the rows.

    A grouping with fewer than two strata is left out.
    """
    by: dict[str, Callable[[Item], str | None]] = {
        "item_type": item_type,
        "category": lambda item: item.category,
        "ambiguity": _ambiguity,
    }
    groups: list[tuple[str, list[Wording]]] = [
        (BASE, [Wording(BASE, BASE, rubric)]),
        *transform_groups(variants),
    ]
    out = Section(table=[])
    one = one_decision(units)
    constant = (
        None
        if one is None
        else f"the judge gives one decision ({one}) on every run: flips are 0 by construction"
    )
    for kind, key in by.items():
        values = [key(u.item) for u in units]
        if len({v for v in values if v is not None}) < 2:
            continue
        for stratum in sorted({v or "(none)" for v in values}):
            members_u = [
                u for u, v in zip(units, values, strict=True) if (v or "(none)") == stratum
            ]
            for transform, members in groups:
                pairs = [
                    (u.item.id, bool(f))
                    for u in members_u
                    for w in members
                    if (f := flip(rubric, u.single.get(w.name), u.anchor)) is not None
                ]
                rate = clustered_proportion(
                    [f for _, f in pairs], [i for i, _ in pairs], **settings.resampling
                )
                if constant is not None:
                    rate = Estimate.undefined(len(pairs), reason=constant)
                out.findings.append(
                    Finding(
                        "flip_rate_by_stratum",
                        rate,
                        f"flip rate of {transform!r} runs on items with {kind} = {stratum}",
                        {"class": transform, "by": kind, "stratum": stratum},
                    )
                )
                out.table.append(
                    {
                        "by": kind,
                        "stratum": stratum,
                        "class": transform,
                        "items": len(members_u),
                        "flips": sum(1 for _, f in pairs if f),
                        "n": len(pairs),
                        "flip_rate": num(rate.estimate),
                        "low": num(rate.ci.low),
                        "high": num(rate.ci.high),
                    }
                )
    if out.table:
        out.figures.append(_figure(out.table, [t for t, _ in groups]))
    return out


def _figure(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> FigureSpec:
    strata_names = sorted({f"{r['by']}={r['stratum']}" for r in rows})
    lookup = {(f"{r['by']}={r['stratum']}", r["class"]): r["flips"] for r in rows}
    return FigureSpec(
        "policy_invariance_strata",
        "counts",
        "Flips by stratum and transform class (base = base single run, the null)",
        {
            "rows": strata_names,
            "columns": list(names),
            "values": [[lookup.get((s, c), 0) for c in names] for s in strata_names],
        },
    )


def _ambiguity(item: Item) -> str | None:
    if isinstance(item, PairwiseItem):
        votes = [v.choice for v in item.human_votes]
        return None if len(votes) < 2 else ("unanimous" if len(set(votes)) == 1 else "split")
    unanimous = item.unanimous
    return None if unanimous is None else ("unanimous" if unanimous else "split")
