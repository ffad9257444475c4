"""Invariance read against sensitivity: a judge that does not move is not shown reliable.

An invariance check asks that a verdict stay put when something that should not matter changes. A
judge that answers "1" to everything passes every one of them, and says nothing about itself by
passing. CheckList reads invariance tests next to directional ones (a change that matters must move
the verdict the expected way); judgeprobe's directional probe is ``sensitivity``
(``sensitivity_pairwise`` for pairs).

The card reads the two together. When a directional probe of the audit decided that the judge
does not move as it should (it failed or warned), every invariance finding that passed is
*vacuous*: it is shown not assessable, with the reason, and its probe says why. A failing
invariance finding stays a failure (the judge moved where it should not have). When no
directional probe ran, or its verdict is undecided, the invariance findings stand as decided, and
the probe's notes say they were not read against sensitivity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.report.findings import finding_sentence
from judgeprobe.report.statuses import tally, verdict

VACUOUS = (
    "Vacuous: the judge was not shown to move when the meaning changes ({probes}); an invariant "
    "but insensitive judge has not been shown reliable"
)
UNREAD = (
    "Not read against sensitivity: no directional probe ({why}) showed that this judge moves when "
    "the meaning changes, so a pass here may be that of a judge that never moves"
)


def insensitive(probes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The directional probes that decided the judge does not move as it should
    (``name status``), in card order."""
    return [
        f"{p['name']} {p['status']}"
        for p in probes
        if p["kind"] == "directional" and p["status"] in ("fail", "warn")
    ]


def read_against_sensitivity(probes: list[dict[str, Any]]) -> None:
    """Mark the passing findings of every invariance probe vacuous when a directional probe
    failed or warned; otherwise note on each invariance probe whether sensitivity backs it."""
    failed = insensitive(probes)
    directional = [p for p in probes if p["kind"] == "directional"]
    for probe in probes:
        if probe["kind"] != "invariance":
            continue
        if failed:
            reason = VACUOUS.format(probes=", ".join(failed))
            for finding in probe["findings"]:
                if finding["headline"] and finding["status"] == "pass":
                    finding["status"] = "n/a"
                    finding["certainty"] = None
                    finding["reason"] = reason
                    finding["sentence"] = finding_sentence(finding)
            _restate(probe)
            probe["notes"] = [*probe["notes"], reason + "."]
        elif not any(p["status"] == "pass" for p in directional):
            why = (
                "none ran"
                if not directional
                else "its verdict is " + ", ".join(str(p["status"]) for p in directional)
            )
            probe["notes"] = [*probe["notes"], UNREAD.format(why=why) + "."]


def _restate(probe: dict[str, Any]) -> None:
    """The probe's status and counts again, from its findings as they now stand."""
    headline = [f["status"] for f in probe["findings"] if f["headline"]]
    probe["status"] = verdict(headline) if headline else "info"
    probe["counts"] = tally(f["status"] for f in probe["findings"])
