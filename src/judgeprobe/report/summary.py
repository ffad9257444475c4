"""The card's one-minute summary: the headline, the tallies, and a sentence per probe and kind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.report.gate import overall_status
from judgeprobe.report.overview import verdict_words
from judgeprobe.report.sections import KIND_QUESTIONS
from judgeprobe.report.statuses import kind_rank, tally, verdict

STATUS_ORDER = ("fail", "warn", "inconclusive", "n/a", "pass", "info")
_METHOD_NAMES = {"holm": "Holm's step-down"}
EVIDENCE_ORDER = ("fail", "warn", "inconclusive", "n/a", "pass", "info")
"""Which finding speaks for a probe in the summary: the one that sets the probe's status (a
fail, a warn, then what keeps it from passing: an undecided finding, one not assessable), a pass
only when every gated finding passes."""


def build_summary(card: Mapping[str, Any]) -> dict[str, Any]:
    """The summary of a card whose probes and run are built: headline, tallies, statements."""
    probes: Sequence[Mapping[str, Any]] = card["probes"]
    statements = [
        {
            "probe": probe["name"],
            "kind": probe["kind"],
            "finding": finding["name"],
            "labels": finding["labels"],
            "status": finding["status"],
            "certainty": finding["certainty"],
            "sentence": finding["sentence"],
        }
        for probe in probes
        for finding in probe["findings"]
        if finding["headline"]
    ]
    gated = [finding for probe in probes for finding in probe["findings"] if finding["headline"]]
    statements.sort(key=lambda s: (STATUS_ORDER.index(s["status"]), kind_rank(str(s["kind"]))))
    counts = tally(s["status"] for s in statements)
    counts["info"] = sum(p["counts"]["info"] for p in probes)
    overall = overall_status(card)
    family = multiplicity(probes)
    kinds = sorted({p["kind"] for p in probes}, key=kind_rank)
    return {
        "overall": overall,
        "headline": _headline(overall, gated, statements, card["run"], family),
        "multiplicity": family,
        "counts": counts,
        "probes": [
            {
                "name": p["name"],
                "id": p["id"],
                "kind": p["kind"],
                "status": p["status"],
                "sentence": _probe_sentence(p),
            }
            for p in probes
        ],
        "kinds": [
            {
                "kind": kind,
                "question": KIND_QUESTIONS.get(kind, ""),
                "probes": [p["name"] for p in probes if p["kind"] == kind],
                "status": verdict([p["status"] for p in probes if p["kind"] == kind]),
            }
            for kind in kinds
        ],
        "statements": statements,
    }


def multiplicity(probes: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """How the audit decided its gated findings together: method, family size and the
    family-wise error rate; None for a run stored before the adjustment (none was made)."""
    for probe in probes:
        for finding in probe["findings"]:
            family = finding.get("family")
            if family:
                return {
                    "method": family["method"],
                    "family_size": family["family_size"],
                    "alpha": family["alpha"],
                }
    return None


def _headline(
    overall: str,
    findings: Sequence[Mapping[str, Any]],
    statements: Sequence[Mapping[str, Any]],
    run: Any,
    family: Mapping[str, Any] | None = None,
) -> str:
    """The verdict (the words the overview opens with), then the borderline share of the
    flagged, how the family was decided and whether the run is incomplete."""
    text = verdict_words(overall, findings) + "."
    flagged = [s for s in statements if s["status"] in ("warn", "fail")]
    borderline = sum(s["certainty"] == "borderline" for s in flagged)
    if flagged:
        verb = "is" if borderline == 1 else "are"
        text += (
            f" {borderline} of the {len(flagged)} failing or warning checks {verb} borderline"
            " (the confidence interval crosses a threshold)."
        )
    if family is not None:
        text += (
            f" The {family['family_size']} gated findings are decided together"
            f" ({_METHOD_NAMES.get(family['method'], family['method'])}, family-wise error"
            f" {family['alpha']:.0%}); slices and derived findings are information."
        )
    if run["state"] != "complete":
        text += f" The run is incomplete ({run['reason']}): findings cover only what was judged."
    return text


def _probe_sentence(probe: Mapping[str, Any]) -> str:
    """The sentence of the finding that speaks for the probe, and how many more it has."""
    findings = probe["findings"]
    headline = [f for f in findings if f["headline"]]
    pool = headline or findings
    if not pool:
        return "No findings."
    worst = min(pool, key=lambda f: EVIDENCE_ORDER.index(f["status"]))
    rest = len(pool) - 1
    tail = f" (+{rest} more {'check' if headline else 'finding'}{'s' if rest != 1 else ''})"
    return str(worst["sentence"]) + (tail if rest else "")
