"""The humans' rate behind the agreement probe: the judge's raw rate, corrected with every label.

The agreement probe judged every labelled item, so it holds what ``judgeprobe estimate``
needs: the judge's verdict and the human labels of each item. :func:`rate_estimate` gives the
rate of the rubric's positive class three ways over those items (the judge alone, the labels
alone and the two together,
:func:`~judgeprobe.probes.agreement.corrected.estimates.estimate_population`), every label
used; the audit stores it as the probe's ``estimate`` table and the card shows it as its
``estimate`` section. The human labels are read through the probe's own scale mapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgeprobe.core.plan import Verdicts
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import PointwiseItem
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.probes.agreement.data import ScaleMap
from judgeprobe.probes.decisions import base_role
from judgeprobe.rubrics import Rubric

ESTIMATE_TABLE = "estimate"
"""The agreement probe's table that holds the estimate (moved to the card's own section)."""
SHOWN = ("naive", "labels_only", "corrected")


def rate_estimate(
    items: Sequence[PointwiseItem],
    mapping: ScaleMap,
    rubric: Rubric,
    verdicts: Verdicts,
    *,
    confidence_level: float = 0.95,
) -> dict[str, Any] | None:
    """The rate of ``rubric``'s positive class over the judged ``items``, every label used.

    None where there is no rate to estimate: a rubric without a decision rule, or no item with
    an ok verdict.
    """
    # imported here: the estimate package reads the agreement probe's data helpers
    from judgeprobe.probes.agreement.corrected.design import uniform_design
    from judgeprobe.probes.agreement.corrected.estimates import estimate_population
    from judgeprobe.probes.agreement.corrected.population import build_population

    if rubric.decision is None or rubric.kind == "pairwise":
        return None
    judged: dict[str, Verdict] = {
        item.id: verdict for item in items if (verdict := verdicts.get(base_role(item))) is not None
    }
    try:
        population = build_population(items, judged, rubric, "rate", mapping)
    except ConfigError:
        return None
    labelled = population.labelled
    if not population.size or not len(labelled):
        return None
    design = uniform_design(labelled, population.size, None, 0)
    try:
        result = estimate_population(population, design, confidence_level=confidence_level)
    except DataError:
        return None
    full = result.to_dict()
    table: dict[str, Any] = {
        name: {key: full[name][key] for key in ("estimate", "low", "high", "n")} for name in SHOWN
    }
    table["corrected"]["lambda"] = full["corrected"]["lambda"]
    table |= {
        "what": result.what,
        "level": confidence_level,
        "items": result.items,
        "labels": result.labels,
        "left_out": result.left_out,
        "predictor": result.predictor,
        "interval": full["corrected"]["method"],
        "design": result.design,
        "notes": list(result.notes),
    }
    return table
