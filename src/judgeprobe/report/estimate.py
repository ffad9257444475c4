"""The card's ``estimate`` section: the judge's raw rate, the humans' rate and the correction.

Where an audit's agreement probe judged items with human labels, it stored the rate of the
rubric's positive class three ways (:mod:`judgeprobe.probes.agreement.rate`): the judge alone
(``naive``), the labels alone (``labels_only``) and prediction-powered (``corrected``), every
label used. The card moves that table out of the probe's tables into a section of its own, and
the renderers show it as a short table; a card without labels has no such section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.probes.agreement.rate import ESTIMATE_TABLE, SHOWN
from judgeprobe.report.text import fmt_number

ESTIMATE_COLUMNS = ("Estimate", "Rate", "CI", "n", "What it is")
ESTIMATE_WORDS = {
    "naive": "the judge alone over every item",
    "labels_only": "the human labels alone",
    "corrected": "the judge's verdicts corrected by the labels",
}
ESTIMATE_KINDS = frozenset({"agreement"})


def estimate_section(probes: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The first agreement probe's stored estimate, taken out of its tables, with the probe's
    name; None when no agreement probe stored one (no labels, or a run stored before it)."""
    for probe in probes:
        if probe["kind"] not in ESTIMATE_KINDS:
            continue
        table = probe["tables"].pop(ESTIMATE_TABLE, None)
        if isinstance(table, Mapping):
            return {"probe": probe["name"], "probe_id": probe["id"], **table}
    return None


def estimate_rows(section: Mapping[str, Any]) -> list[tuple[str, str, str, Any, str]]:
    """One row per estimate: its name, the rate, its interval, its n and what it is."""
    return [
        (
            name,
            fmt_number(section[name]["estimate"]),
            f"[{fmt_number(section[name]['low'])}, {fmt_number(section[name]['high'])}]",
            section[name]["n"],
            ESTIMATE_WORDS[name],
        )
        for name in SHOWN
    ]


def estimate_sentence(section: Mapping[str, Any]) -> str:
    """What the section says, in one sentence: the judge's rate, the humans', the labels used."""
    naive, corrected = section["naive"]["estimate"], section["corrected"]["estimate"]
    bias = ""
    if naive is not None and corrected is not None:
        bias = f" (the judge's bias: {fmt_number(naive - corrected)})"
    level = f"{round(float(section['level']) * 100):d}%"
    return (
        f"The {section['what']} over the {section['items']} items the {section['probe']} probe"
        f" judged: the judge says {fmt_number(naive)}, corrected with {section['labels']} human"
        f" labels {fmt_number(corrected)}{bias}; intervals at {level}."
    )
