"""The comparison as Markdown and as one self-contained HTML file (no script, no network).

Every string from the runs (sources, judge names, labels) is untrusted: Markdown goes through the
card's :func:`~judgeprobe.report.text.escape_markdown`; HTML is rendered by jinja2 with
autoescaping on and nothing marked safe, under the card's Content-Security-Policy
(:data:`~judgeprobe.report.html.CONTENT_SECURITY_POLICY`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2

from judgeprobe.compare.figure import differences_svg
from judgeprobe.report.html import CONTENT_SECURITY_POLICY, page_environment
from judgeprobe.report.text import display_text, escape_markdown, fmt_number
from judgeprobe.report.view import side_interval as interval

CELL_LENGTH = 300


def labels(difference: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(difference["labels"].items()))


def run_name(run: Mapping[str, Any]) -> str:
    judge = run["judge"]
    return f"{judge['model'] or judge['backend'] or 'judge'} ({run['source']})"


def render_markdown(document: Mapping[str, Any]) -> str:
    """The comparison as Markdown."""

    def md(value: object) -> str:
        return escape_markdown(value, max_len=CELL_LENGTH)

    runs = document["runs"]
    family = document["multiplicity"]
    lines = [
        "# Judge comparison",
        "",
        md(document["summary"]["headline"]),
        "",
        f"Baseline: run 0. Each difference is candidate minus baseline. The "
        f"{family['family_sizes']['gated']} differences of gated findings are decided together "
        f"(Holm's step-down, family-wise error {fmt_number(family['alpha'] * 100)}%), and so "
        f"are the {family['family_sizes']['information']} others, apart.",
        "",
        "## Runs",
        "",
        "| run | source | judge | fingerprint | rubric | data sha256 | n |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines.append(
            f"| {run['index']} | {md(run['source'])} | {md(run['judge']['model'])} | "
            f"{md(run['judge']['fingerprint'])} | {md(run['rubric']['name'])} "
            f"({md(run['rubric']['kind'])}) | {md(run['data']['sha256'])} | "
            f"{md(run['data']['n'])} |"
        )
    checks = document["checks"]
    if checks["problems"]:
        lines += ["", "**Compared although:** " + "; ".join(md(p) for p in checks["problems"])]
    if checks["notes"]:
        lines += ["", *(f"- {md(note)}" for note in checks["notes"])]
    for comparison in document["comparisons"]:
        candidate = runs[comparison["candidate"]]
        lines += [
            "",
            f"## {md(run_name(candidate))} against {md(run_name(runs[0]))}",
            "",
            "| word | probe | finding | labels | baseline | candidate | difference | method | "
            "adjusted p |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for d in comparison["differences"]:
            lines.append(
                f"| {'**' + d['word'] + '**' if d['word'] in ('worse', 'better') else d['word']} "
                f"| {md(d['probe'])} | {md(d['finding'])}{' (gated)' if d['gated'] else ''} | "
                f"{md(labels(d))} | {md(interval(d['baseline']))} | "
                f"{md(interval(d['candidate']))} | {md(interval(d['difference']))} | "
                f"{md(d['method'])} | {fmt_number(d['adjusted_pvalue'])} |"
            )
        if comparison["unmatched_probes"]:
            only = ", ".join(md(p) for p in comparison["unmatched_probes"])
            lines += ["", f"In one run only: {only}"]
        for side in ("baseline", "candidate"):
            findings = comparison.get("unmatched_findings", {}).get(side, [])
            if findings:
                run = comparison[side]
                listed = "; ".join(escape_markdown(f, max_len=None) for f in findings)
                lines += ["", f"Findings of run {run} ({side}) only: {listed}"]
    return "\n".join(lines) + "\n"


def render_html(document: Mapping[str, Any]) -> str:
    """The comparison as a self-contained HTML document: per candidate, the figure of its gated
    differences (an SVG ``data:`` image), their table, and the other differences folded."""
    figures = []
    for comparison in document["comparisons"]:
        svg = differences_svg(comparison)
        figures.append(
            None if svg is None else "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
        )
    return (
        _environment()
        .get_template("compare.html.j2")
        .render(doc=document, csp=CONTENT_SECURITY_POLICY, figures=figures)
    )


@cache
def _environment() -> jinja2.Environment:
    env = page_environment("judgeprobe.compare", ".")
    env.filters.update(
        text=lambda value: display_text("" if value is None else value, CELL_LENGTH),
        num=fmt_number,
        interval=interval,
        labels=labels,
        run_name=run_name,
        word_class=lambda word: str(word).replace(" ", "-").replace("/", ""),
    )
    return env
