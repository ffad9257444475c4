"""The bias probes per item: the units two runs of the same items are paired on.

Each item's outcome (:class:`~judgeprobe.probes.bias.findings.Outcome`) gives its row of each
finding, over the items the finding is over (as :func:`~judgeprobe.probes.bias.findings.
bias_findings` chooses them):

- ``excess_move_rate``: per item that can move toward the edit's aim, whether the edit and
  whether the placebo moved it there (the mean of the first minus the mean of the second), over
  all items and per form (``slice``);
- ``edited_move_rate``, ``placebo_move_rate``: the same items' moves under one of them (0/1);
- ``excess_away_rate``: per item that can move away, its moves away under the edit and the
  placebo;
- ``mean_score_shift`` (pointwise): the item's favourable score shift, edited over placebo.

The items that can move depend on the run's own original verdicts, so two runs pair on the
items both can move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe.probes.bias.findings import ALL_FINDINGS, Outcome
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    finding_key,
    first_mean,
    mean_difference,
)


def unit_kinds(kind: UnitKind, *, scores: bool) -> Mapping[str, UnitKind]:
    """Every bias finding (``mean_score_shift`` only with ``scores``) on units of ``kind``."""
    names = ALL_FINDINGS if scores else tuple(n for n in ALL_FINDINGS if n != "mean_score_shift")
    return dict.fromkeys(names, kind)


def _excess(outcomes: Sequence[Outcome]) -> UnitValues:
    rows = {
        o.case.item_id: (float(o.toward(1)), float(o.toward(2)))
        for o in outcomes
        if o.can_move_toward
    }
    return UnitValues(rows, mean_difference)


def bias_units(
    outcomes: Sequence[Outcome], forms: Sequence[str], *, scores: bool
) -> dict[FindingKey, UnitValues]:
    """The findings' rows per item of ``outcomes``, over all items and per form."""
    risk = [o for o in outcomes if o.can_move_toward]
    found: dict[FindingKey, UnitValues] = {
        finding_key("excess_move_rate", {}): _excess(outcomes),
        finding_key("edited_move_rate", {}): binary_units(
            {o.case.item_id: o.toward(1) for o in risk}
        ),
        finding_key("placebo_move_rate", {}): binary_units(
            {o.case.item_id: o.toward(2) for o in risk}
        ),
        finding_key("excess_away_rate", {}): UnitValues(
            {
                o.case.item_id: (float(o.away(1)), float(o.away(2)))
                for o in outcomes
                if o.can_move_away
            },
            mean_difference,
        ),
    }
    if scores:
        shifts = {o.case.item_id: (o.shift,) for o in outcomes if o.shift is not None}
        found[finding_key("mean_score_shift", {})] = UnitValues(shifts, first_mean)
    for form in forms:
        mine = [o for o in outcomes if o.case.form == form]
        found[finding_key("excess_move_rate", {"slice": form})] = _excess(mine)
    return found
