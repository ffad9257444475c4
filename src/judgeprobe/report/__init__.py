"""The Judge Card: what a judge is, how it was audited, and how far its numbers can be trusted.

Built from a run store alone (no judge call) as a JSON document checked against a versioned JSON
Schema shipped with the package, and rendered as Markdown and as one self-contained HTML file.

Examples
--------
>>> from judgeprobe.report import build_card, render_markdown  # doctest: +SKIP
>>> card = build_card("runs/audit.sqlite")  # doctest: +SKIP
>>> print(render_markdown(card))  # doctest: +SKIP
"""

from judgeprobe.report.card import build_card
from judgeprobe.report.gate import (
    NOTHING_ASSESSED_EXIT,
    exit_code,
    nothing_assessed,
    overall_status,
)
from judgeprobe.report.html import render_html
from judgeprobe.report.markdown import render_markdown
from judgeprobe.report.schema import (
    CARD_VERSION,
    CardValidationError,
    card_schema,
    validate_card,
)
from judgeprobe.report.text import escape_markdown
from judgeprobe.report.write import write_card

__all__ = [
    "CARD_VERSION",
    "NOTHING_ASSESSED_EXIT",
    "CardValidationError",
    "build_card",
    "card_schema",
    "escape_markdown",
    "exit_code",
    "nothing_assessed",
    "overall_status",
    "render_html",
    "render_markdown",
    "validate_card",
    "write_card",
]
