"""The adversarial probes per item: the units two runs of the same items are paired on.

Each item's outcome (:class:`~judgeprobe.probes.adversarial.outcomes.AttackOutcome`) gives its
row of each finding, over the items the attack can win:

- ``excess_success_rate``: whether any form won and whether any placebo did (the mean of the
  first minus the mean of the second); per form (``slice``), whether that form and its placebo
  did;
- ``attack_success_rate``, ``placebo_success_rate``: any form's, any placebo's win (0/1); per
  form, that form's win;
- ``mean_form_success_rate``: the share of the item's forms that won.

A repaired judge is audited on the same items: pairing on them is what makes the repair's
difference a paired one (``compare``, ``--repair``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe.probes.adversarial.outcomes import ATTACK_FINDINGS, AttackOutcome
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    finding_key,
    first_mean,
    mean_difference,
)


def unit_kinds(kind: UnitKind) -> Mapping[str, UnitKind]:
    """Every adversarial finding on units of ``kind``."""
    return dict.fromkeys(ATTACK_FINDINGS, kind)


def attack_units(
    outcomes: Sequence[AttackOutcome], forms: Sequence[str]
) -> dict[FindingKey, UnitValues]:
    """The findings' rows per item of ``outcomes``, over all forms and per form."""
    risk = [o for o in outcomes if o.can_win]
    found: dict[FindingKey, UnitValues] = {
        finding_key("excess_success_rate", {}): UnitValues(
            {o.case.item_id: (float(o.any_won()), float(o.any_won(placebo=True))) for o in risk},
            mean_difference,
        ),
        finding_key("attack_success_rate", {}): binary_units(
            {o.case.item_id: o.any_won() for o in risk}
        ),
        finding_key("placebo_success_rate", {}): binary_units(
            {o.case.item_id: o.any_won(placebo=True) for o in risk}
        ),
        finding_key("mean_form_success_rate", {}): UnitValues(
            {o.case.item_id: (o.share_won,) for o in risk}, first_mean
        ),
    }
    for form in forms:
        tried = [(o, one) for o in risk if (one := o.try_of(form)) is not None]
        labels = {"slice": form}
        found[finding_key("excess_success_rate", labels)] = UnitValues(
            {
                o.case.item_id: (float(o.won(one)), float(o.won(one, placebo=True)))
                for o, one in tried
            },
            mean_difference,
        )
        found[finding_key("attack_success_rate", labels)] = binary_units(
            {o.case.item_id: o.won(one) for o, one in tried}
        )
    return found
