"""A finding's evidence as the renderers show it: the items behind it, read from the card's JSON.

A finding of the card may carry ``evidence`` (``total``, ``shown``, ``items``: each with an
``item_id``, a plain-text ``excerpt`` and one verdict per role it compares, with ``label``,
``score`` and the judge's ``raw`` answer); absent or null when its probe keeps none. This module
turns it into plain text rows, shortened, for Markdown and HTML alike (both escape afterwards), and
counts the items not shown. A value of the wrong type shows as text; it never breaks the card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe.report.text import display_text, fmt_number

EXCERPT_LENGTH = 240
RAW_LENGTH = 400
NO_ITEMS = "no items kept"


@dataclass(frozen=True)
class VerdictView:
    """One role's verdict on an item: the label, the score and the raw answer, as text."""

    role: str
    label: str
    score: str
    raw: str


@dataclass(frozen=True)
class ItemView:
    """One item behind a finding: its id, an excerpt of its text and the verdicts compared."""

    item_id: str
    excerpt: str
    verdicts: tuple[VerdictView, ...]


@dataclass(frozen=True)
class EvidenceView:
    """The items behind a finding, as shown: how many there are, and those the card kept."""

    total: int
    items: tuple[ItemView, ...]

    @property
    def rest(self) -> int:
        """How many items are behind the finding but not shown."""
        return max(0, self.total - len(self.items))

    @property
    def summary(self) -> str:
        """``3 of 37 items``, ``1 item``, or :data:`NO_ITEMS`."""
        if not self.items:
            return NO_ITEMS if not self.total else f"{self.total} items, none kept"
        shown = len(self.items)
        noun = "item" if self.total == 1 else "items"
        return f"{shown} of {self.total} {noun}" if self.rest else f"{shown} {noun}"


def evidence_view(finding: Mapping[str, Any]) -> EvidenceView | None:
    """``finding``'s evidence ready to show; None when the finding carries none."""
    evidence = finding.get("evidence")
    if not isinstance(evidence, Mapping):
        return None
    raw_items = evidence.get("items")
    entries: Sequence[Any] = raw_items if isinstance(raw_items, list) else []
    items = tuple(_item(entry) for entry in entries if isinstance(entry, Mapping))
    total = evidence.get("total")
    counted = total if isinstance(total, int) and not isinstance(total, bool) else len(items)
    return EvidenceView(total=max(counted, len(items)), items=items)


def _item(entry: Mapping[str, Any]) -> ItemView:
    verdicts = entry.get("verdicts")
    return ItemView(
        item_id=_text(entry.get("item_id"), 120),
        excerpt=_text(entry.get("excerpt"), EXCERPT_LENGTH),
        verdicts=tuple(
            VerdictView(
                role=_text(v.get("role"), 60),
                label=_text(v.get("label"), 60),
                score=_score(v.get("score")),
                raw=_text(v.get("raw"), RAW_LENGTH),
            )
            for v in (verdicts if isinstance(verdicts, list) else [])
            if isinstance(v, Mapping)
        ),
    )


def _score(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt_number(value)
    return _text(value, 40)


def _text(value: Any, length: int) -> str:
    """Untrusted ``value`` on one line, cut to ``length`` on a word boundary with an ellipsis."""
    if value is None:
        return ""
    text = display_text(value)
    if len(text) <= length:
        return text
    cut = text[: length - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > length // 2 else cut).rstrip() + "…"
