"""The card's section for one probe: its question, status, findings, figures, tables and usage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgeprobe.report.findings import finding_entry
from judgeprobe.report.statuses import tally, verdict
from judgeprobe.report.stored import StoredProbeResult
from judgeprobe.report.text import slug
from judgeprobe.report.usage import probe_usage

KIND_QUESTIONS = {
    "invariance": "Does the verdict stay put when something that should not matter changes?",
    "directional": "Does the verdict move the way it should when something that matters changes?",
    "agreement": "Does the judge agree with human raters?",
    "null": "How much of the verdict does a trivial rule explain?",
}


def probe_section(name: str, body: StoredProbeResult, index: int) -> dict[str, Any]:
    """The card's section for the stored result ``body`` of probe ``name``, shown ``index``-th."""
    probe_name = body.probe or name
    kind = body.kind
    findings = [finding_entry(f) for f in body.findings]
    figures = []
    for spec in body.figures:
        figure = dict(spec)
        figure["file"] = f"figures/{slug(probe_name)}-{slug(str(spec.get('name', 'figure')))}"
        figures.append(figure)
    headline = [f["status"] for f in findings if f["headline"]]
    return {
        "name": probe_name,
        "id": f"probe-{index + 1}-{slug(probe_name)}",
        "kind": kind,
        "question": KIND_QUESTIONS.get(kind, ""),
        "status": verdict(headline) if headline else "info",
        "params": dict(body.params),
        "findings": findings,
        "counts": tally(f["status"] for f in findings),
        "figures": figures,
        "tables": dict(body.tables),
        "notes": list(body.notes),
        "usage": probe_usage(body.usage),
    }


def unique_figure_files(probes: Sequence[dict[str, Any]]) -> None:
    """Give each figure its own file stem: a repeated one gets ``-2``, ``-3``, ... in card order."""
    seen: dict[str, int] = {}
    for probe in probes:
        for figure in probe["figures"]:
            stem = figure["file"]
            seen[stem] = seen.get(stem, 0) + 1
            if seen[stem] > 1:
                figure["file"] = f"{stem}-{seen[stem]}"
