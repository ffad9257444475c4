"""The watch report: ``watch.json``, ``watch.md`` and ``watch.html`` beside the audit.

Every string from the store (item ids, decisions, the judge's description, a check's note) is
untrusted: Markdown goes through the card's :func:`~judgeprobe.report.text.escape_markdown`,
HTML is rendered by jinja2 with autoescaping on and nothing marked safe, under the card's
Content-Security-Policy; the figure (:mod:`judgeprobe.watch.figure`) is embedded in the HTML as
a ``data:`` image and written as ``watch.svg``.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from judgeprobe._util.atomic import write_atomic
from judgeprobe.report.html import CONTENT_SECURITY_POLICY, page_environment
from judgeprobe.report.text import display_text, escape_markdown, fmt_number
from judgeprobe.watch.figure import series_svg
from judgeprobe.watch.store import WatchStore

CELL_LENGTH = 200
MOVED_ROWS = 50
"""The most moved anchors listed (the rest are counted)."""


def write_watch(document: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``document`` as ``watch.json``, ``watch.md``, ``watch.svg`` (when there is a
    complete check) and ``watch.html`` in ``out_dir``; returns their paths by kind."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / "watch.json", "md": folder / "watch.md"}
    write_atomic(paths["json"], (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
    write_atomic(paths["md"], render_markdown(document).encode("utf-8"))
    svg = series_svg(document)
    if svg is not None:
        paths["svg"] = folder / "watch.svg"
        write_atomic(paths["svg"], svg)
    paths["html"] = folder / "watch.html"
    write_atomic(paths["html"], render_html(document, svg).encode("utf-8"))
    return paths


def report_watch(store_path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Path]]:
    """Build the document of the watch store at ``store_path`` and write its report beside it."""
    from judgeprobe.watch.series import build_watch

    with WatchStore(store_path) as store:
        document = build_watch(store)
    return document, write_watch(document, Path(store_path).parent)


def verdict_line(document: Mapping[str, Any]) -> str:
    """The one-line state: ``DRIFT DETECTED`` or ``no drift detected``, with the sentence."""
    state = document["state"]
    word = "DRIFT DETECTED" if state["detected"] else "no drift detected"
    return f"{word}: {state['sentence']}"


def render_markdown(document: Mapping[str, Any]) -> str:
    """The watch as Markdown: state, null and power, the checks, the anchors that moved."""

    def md(value: object) -> str:
        return escape_markdown(value, max_len=CELL_LENGTH)

    state, null, power, settings = (
        document["state"],
        document["null"],
        document["power"],
        document["settings"],
    )
    judge = document["audit"]["judge"]
    lines = [
        "# Judge watch",
        "",
        f"**{'Drift detected' if state['detected'] else 'No drift detected'}.** "
        + escape_markdown(state["sentence"]),
        "",
        f"Audit: {md(document['audit']['store'])}, run {md(document['audit']['run'])}; judge "
        f"{md((judge.get('judge') or {}).get('model') or judge.get('fingerprint'))} "
        f"(fingerprint {md(judge.get('fingerprint'))}), rubric "
        f"{md((judge.get('rubric') or {}).get('name'))}; {document['audit']['anchors']} anchors.",
        "",
        "## The test",
        "",
        f"- Method: {md(document['method'])}; false-alarm level "
        f"{fmt_number(100 * settings['alpha'])}% over every check, however many.",
        f"- Rerun noise (the null): {null['differing']} of {null['pairs']} reruns changed "
        f"decision ({_sources(null)}); upper bound {fmt_number(null['bound'])} at "
        f"{fmt_number(100 * null['level'])}%.",
        f"- Anchors per check: {md(power['anchors'])} of {power['pool']}; power to detect "
        f"{fmt_number(100 * settings['change'])}% of the anchors flipping within "
        f"{settings['within']} checks of a start at check {settings['start']}: at least "
        f"{fmt_number(power['power'])}; smallest change detected so (power "
        f"{fmt_number(settings['power'])}): {_share(power['detectable'])}.",
        f"- State: {state['checks']} complete checks, {state['k']} of {state['n']} anchors "
        f"differing, anytime p = {fmt_number(state['pvalue'])}"
        + (f", upper bound {fmt_number(state['upper'])}" if state["upper"] is not None else "")
        + ".",
        "",
        "![the series of checks](watch.svg)"
        if any(r.get("look") for r in document["checks"])
        else "",
        "",
        "## Checks",
        "",
        "| check | finished | state | anchors | statuses | differing | log E | anytime p | "
        "identity changes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in document["checks"]:
        look = row.get("look") or {}
        statuses = ", ".join(f"{k} {v}" for k, v in row["statuses"].items())
        lines.append(
            f"| {row['check']} | {_when(row['finished'])} | {md(row['status'])}"
            f"{' (' + md(row['note']) + ')' if row['note'] else ''} | {row['anchors']} | "
            f"{md(statuses)} | {row['k']} / {row['n']} | {fmt_number(look.get('log_evidence'))} "
            f"| {fmt_number(look.get('pvalue'))} | "
            f"{md('; '.join(row['identity_changes'])) or '-'} |"
        )
    lines += ["", "## Anchors that moved", ""]
    moved = document["moved"]
    if not moved:
        lines.append("No anchor's decision has differed from the audited one.")
    else:
        directions = ", ".join(
            f"{md(way)}: {count}" for way, count in sorted(document["directions"].items())
        )
        lines += [
            f"{len(moved)} anchors moved at least once ({directions}). An anchor that already "
            "moved in the audit's own reruns is marked noisy: its moves are noise as likely as "
            "drift.",
            "",
            "| item | audited | now | moved / compared | at checks | noisy at the audit |",
            "|---|---|---|---|---|---|",
        ]
        for m in moved[:MOVED_ROWS]:
            now = ", ".join(f"{md(d)} x{c}" for d, c in sorted(m["now"].items()))
            lines.append(
                f"| {md(m['item_id'])} | {md(m['anchor'])} | {now} | {m['moved']} / "
                f"{m['compared']} | {', '.join(str(c) for c in m['checks'][:20])} | "
                f"{'yes' if m['noisy_at_audit'] else 'no'} |"
            )
        if len(moved) > MOVED_ROWS:
            lines += ["", f"... and {len(moved) - MOVED_ROWS} more (watch.json lists them all)."]
    return "\n".join(lines) + "\n"


def render_html(document: Mapping[str, Any], svg: bytes | None) -> str:
    """The watch as one self-contained HTML page (no script, no network)."""
    figure = None if svg is None else "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    return (
        _environment()
        .get_template("watch.html.j2")
        .render(
            doc=document,
            csp=CONTENT_SECURITY_POLICY,
            figure=figure,
            moved=document["moved"][:MOVED_ROWS],
            sources=_sources(document["null"]),
            detectable=_share(document["power"]["detectable"]),
        )
    )


@cache
def _environment() -> jinja2.Environment:
    env = page_environment("judgeprobe.watch", ".")
    env.filters.update(
        text=lambda value: display_text("" if value is None else value, CELL_LENGTH),
        num=fmt_number,
        when=_when,
    )
    return env


def _sources(null: Mapping[str, Any]) -> str:
    words = {"audit": "from the audit's reruns", "check 1": "measured at check 1"}
    found = [f"{count} {words.get(where, where)}" for where, count in null["sources"].items()]
    return ", ".join(found) or "none"


def _share(value: Any) -> str:
    return "none up to 100%" if value is None else f"{fmt_number(100 * float(value))}%"


def _when(stamp: Any) -> str:
    if stamp is None:
        return "-"
    moment = datetime.datetime.fromtimestamp(float(stamp), tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")
