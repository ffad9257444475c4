"""The Judge Card as one self-contained HTML file: figures embedded, no script, no network.

The template is rendered by jinja2 with autoescaping on for every value, and nothing is marked
safe: dataset and model text can only ever become text. A Content-Security-Policy meta tag
(``default-src 'none'; img-src data:; style-src 'unsafe-inline'``) is a second wall: even markup
that slipped through could neither run a script nor fetch anything. A print stylesheet keeps the
card readable on paper.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2

from judgeprobe.report.estimate import ESTIMATE_COLUMNS, estimate_rows, estimate_sentence
from judgeprobe.report.evidence_view import EvidenceView, evidence_view
from judgeprobe.report.figures import FigureDataError, figure_bytes, figure_stem
from judgeprobe.report.overview import finding_index, top_findings, verdict_sentence
from judgeprobe.report.overview_figure import OVERVIEW_STEM, overview_bytes
from judgeprobe.report.repair import REPAIR_COLUMNS, repair_rows
from judgeprobe.report.rounds import ROUND_COLUMNS, round_rows, rounds_sentence
from judgeprobe.report.text import clean_block, display_text, fmt_number, humanize, slug
from judgeprobe.report.view import (
    SKIPPED_COLUMNS,
    STATUS_WORDS,
    USAGE_ROWS,
    data_rows,
    descriptions,
    engine_rows,
    interval_text,
    labels_text,
    params_text,
    skipped_rows,
    status_text,
    tabulate,
    threshold_text,
    value_text,
)

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)
CELL_LENGTH = 1000
STATUS_CLASSES = {
    "pass": "pass",
    "warn": "warn",
    "fail": "fail",
    "inconclusive": "inconclusive",
    "info": "info",
    "n/a": "na",
}


def render_html(
    card: Mapping[str, Any],
    *,
    figures: Mapping[str, bytes] | None = None,
    figure_errors: Mapping[str, str] | None = None,
    overview: bytes | None = None,
) -> str:
    """The card as a self-contained HTML document.

    Parameters
    ----------
    card
        A card from :func:`~judgeprobe.report.build_card`.
    figures
        PNG bytes by figure file stem (as :func:`~judgeprobe.report.figures.write_figures`
        returns them); None draws every figure here.
    figure_errors
        Why a figure could not be drawn, by file stem (shown in its place).
    overview
        The overview figure's SVG bytes (as :func:`~judgeprobe.report.overview_figure.
        overview_bytes` draws them); None draws it here when ``figures`` is None too.
    """
    pngs = dict(figures or {})
    errors = dict(figure_errors or {})
    if figures is None:
        for probe in card["probes"]:
            for spec in probe["figures"]:
                stem = figure_stem(spec) or ""
                try:
                    pngs[stem] = figure_bytes(spec, "png")
                except FigureDataError as exc:
                    errors[stem] = str(exc)
    if overview is None and figures is None:
        overview = overview_bytes(card, "svg")
    images = {
        stem: "data:image/png;base64," + base64.b64encode(content).decode("ascii")
        for stem, content in pngs.items()
    }
    return (
        _environment()
        .get_template("card.html.j2")
        .render(
            card=card,
            images=images,
            figure_errors=errors,
            overview=(
                None
                if overview is None
                else "data:image/svg+xml;base64," + base64.b64encode(overview).decode("ascii")
            ),
            overview_stem=OVERVIEW_STEM,
            csp=CONTENT_SECURITY_POLICY,
            status_words=STATUS_WORDS,
            usage_rows=USAGE_ROWS,
            round_columns=ROUND_COLUMNS,
            round_rows=round_rows,
            rounds_sentence=rounds_sentence,
            repair_columns=REPAIR_COLUMNS,
            repair_rows=repair_rows,
            estimate_columns=ESTIMATE_COLUMNS,
            estimate_rows=estimate_rows,
            estimate_sentence=estimate_sentence,
        )
    )


def page_environment(package: str, folder: str) -> jinja2.Environment:
    """The Jinja environment of judgeprobe's HTML pages (the card, the comparison): templates of
    ``package``'s ``folder``, every value autoescaped and an undefined name an error, so text
    from data can never become markup and a template typo never renders as empty."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, folder),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@cache
def _environment() -> jinja2.Environment:
    env = page_environment("judgeprobe.report", "templates")
    env.filters.update(
        text=_text,
        block=clean_block,
        descriptions=descriptions,
        num=fmt_number,
        humanize=humanize,
        value=value_text,
        params=params_text,
        interval=interval_text,
        threshold=threshold_text,
        labels=labels_text,
        status_text=status_text,
        status_class=lambda status: STATUS_CLASSES.get(str(status), "info"),
        html_id=lambda value: slug(str(value)),
        figure_stem=lambda spec: figure_stem(spec) or "",
        percent=lambda level: f"{round(float(level or 0.95) * 100):d}%",
    )
    env.globals.update(
        tabulate=tabulate,
        data_rows=data_rows,
        engine_rows=engine_rows,
        skipped_rows=skipped_rows,
        skipped_columns=SKIPPED_COLUMNS,
        finding_rows=finding_rows,
        top_entries=top_entries,
        verdict_sentence=verdict_sentence,
    )
    return env


def finding_anchor(probe: Mapping[str, Any], index: int) -> str:
    """The HTML id of finding ``index`` of ``probe``: its row in the probe's table."""
    return f"{slug(str(probe['id']))}-finding-{index + 1}"


def finding_rows(
    probe: Mapping[str, Any], headline: bool
) -> list[tuple[str, Mapping[str, Any], EvidenceView | None]]:
    """(anchor, finding, evidence) of ``probe``'s gated findings, or of the others (its slices)."""
    return [
        (finding_anchor(probe, index), finding, evidence_view(finding))
        for index, finding in enumerate(probe["findings"])
        if bool(finding.get("headline")) == headline
    ]


def top_entries(card: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The findings that matter most, each with its probe, its row's anchor and its evidence."""
    return [
        {
            "probe": probe,
            "finding": finding,
            "anchor": finding_anchor(probe, finding_index(probe, finding)),
            "evidence": evidence_view(finding),
        }
        for probe, finding in top_findings(card)
    ]


def _text(value: Any, max_len: int | None = CELL_LENGTH) -> str:
    """Untrusted ``value`` on one line, shortened; autoescaping makes it inert afterwards."""
    return display_text("" if value is None else value, max_len)
