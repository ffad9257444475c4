"""The items behind a finding: their ids, the verdicts the finding compares, and the text judged.

A finding is one number over many items; a reader who doubts it wants to see the items that made
it (the items whose decision flipped, moved or disagrees with the humans). A probe's ``analyze``
keeps them as an :class:`Evidence`: how many items are behind the finding (``total``, always
all of them) and, most informative first, up to :data:`KEPT` of them, each with a plain-text
excerpt of what was judged and one :class:`EvidenceVerdict` per role the finding compares (the
label, the score and the judge's raw answer, as the run store keeps it). The card shows the
first :data:`SHOWN` of them (:meth:`Evidence.capped`).

Evidence is built from the plan and its verdicts only (:func:`judged`, :func:`collect`), so an
analysis again from the run store, without a judge call, gives the same evidence. Text here is
plain; every renderer escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe.core.plan import Role, Verdicts
from judgeprobe.data.items import Item, PointwiseItem

EXCERPT_CHARS = 240
"""The longest excerpt of an item's text, ellipsis included."""

RAW_CHARS = 2000
"""The longest raw answer kept per verdict (a reasoning judge may write pages)."""

KEPT = 100
"""How many items a finding's evidence keeps in the run store (``total`` counts all)."""

SHOWN = 10
"""How many items the card shows by default (the rest are counted)."""

ELLIPSIS = "…"


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` with its whitespace collapsed, cut to at most ``limit`` characters on a word
    boundary and ended with an ellipsis when it was cut.

    Examples
    --------
    >>> excerpt("a  short\\ntext")
    'a short text'
    >>> excerpt("one two three four", limit=12)
    'one two…'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    room = flat[: max(limit - len(ELLIPSIS), 0)]
    cut = room.rsplit(" ", 1)[0] if " " in room else room
    return cut.rstrip(" ,.;:") + ELLIPSIS


@dataclass(frozen=True, slots=True)
class EvidenceVerdict:
    """One verdict on an item under one role the finding compares (``original``, ``edited``,
    ``judge``, ``human``, ...). ``raw`` is the judge's raw answer, None when none was kept."""

    role: str
    label: str | None = None
    score: float | None = None
    raw: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "label": self.label, "score": self.score, "raw": self.raw}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvidenceVerdict:
        score = data.get("score")
        return cls(
            role=str(data["role"]),
            label=None if data.get("label") is None else str(data["label"]),
            score=None if score is None else float(score),
            raw=None if data.get("raw") is None else str(data["raw"]),
        )


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One item behind a finding: its id, an excerpt of its text and the verdicts compared."""

    item_id: str
    excerpt: str
    verdicts: tuple[EvidenceVerdict, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "excerpt": self.excerpt,
            "verdicts": [v.to_dict() for v in self.verdicts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvidenceItem:
        return cls(
            item_id=str(data["item_id"]),
            excerpt=str(data.get("excerpt", "")),
            verdicts=tuple(EvidenceVerdict.from_dict(v) for v in data.get("verdicts", ())),
        )


@dataclass(frozen=True, slots=True)
class Evidence:
    """The items behind a finding: ``total`` of them, ``items`` the ones kept, most
    informative first."""

    total: int
    items: tuple[EvidenceItem, ...] = ()

    def __post_init__(self) -> None:
        if self.total < len(self.items):
            raise ValueError(f"evidence keeps {len(self.items)} items of a total of {self.total}")

    @property
    def shown(self) -> int:
        return len(self.items)

    @property
    def item_ids(self) -> list[str]:
        return [item.item_id for item in self.items]

    def capped(self, cap: int = SHOWN) -> Evidence:
        """The first ``cap`` items, the total unchanged."""
        return Evidence(self.total, self.items[: max(cap, 0)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "shown": self.shown,
            "items": [item.to_dict() for item in self.items],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(
            total=int(data["total"]),
            items=tuple(EvidenceItem.from_dict(item) for item in data.get("items", ())),
        )


def judged(verdicts: Verdicts, role: Role, name: str) -> EvidenceVerdict:
    """The verdict of plan role ``role`` as evidence under the name ``name``: its label (the
    judge's, else the rubric's decision), its score when ok, and its raw answer."""
    verdict = verdicts.get(role)
    if verdict is None:
        return EvidenceVerdict(name)
    raw = verdict.raw_text or verdict.error or None
    label = verdict.label or verdicts.decision(role)
    return EvidenceVerdict(
        name,
        label=label if label is not None else verdict.status.value,
        score=verdicts.score(role),
        raw=None if raw is None else excerpt_raw(raw),
    )


def excerpt_raw(raw: str, limit: int = RAW_CHARS) -> str:
    """A raw answer as kept: whole up to ``limit`` characters, cut with an ellipsis beyond."""
    return raw if len(raw) <= limit else raw[: limit - len(ELLIPSIS)] + ELLIPSIS


Entry = tuple[str, str, Sequence[EvidenceVerdict]]
"""One item behind a finding: its id, the text judged, the verdicts compared."""


def collect(entries: Iterable[Entry], *, kept: int = KEPT) -> Evidence:
    """The evidence of ``entries`` (every item behind the finding, most informative first):
    all of them counted, the first ``kept`` kept with an excerpt of their text."""
    items: list[EvidenceItem] = []
    total = 0
    for item_id, text, found in entries:
        total += 1
        if len(items) < kept:
            items.append(EvidenceItem(item_id, excerpt(text), tuple(found)))
    return Evidence(total, tuple(items))


PROMPT_CHARS = 80
"""The most of an excerpt the prompt takes when a response follows it."""


def item_text(prompt: str, response: str) -> str:
    """The text of a (prompt, response) an excerpt is cut from: the start of the prompt
    (:data:`PROMPT_CHARS`), then the response, which is what a judge mostly judges."""
    if not prompt or not response:
        return prompt or response
    return f"{excerpt(prompt, PROMPT_CHARS)} → {response}"


def text_of(item: Item) -> str:
    """The text an excerpt of ``item`` is cut from: (prompt, response) for a pointwise item
    (:func:`item_text`), the prompt for a pairwise one."""
    if isinstance(item, PointwiseItem):
        return item_text(item.prompt, item.response)
    return item.prompt


def request_text(verdicts: Verdicts, role: Role) -> str:
    """The text the request of ``role`` showed the judge (:func:`item_text` of its prompt and
    response, else its fields joined)."""
    fields = verdicts.request(role).field_map
    text = item_text(fields.get("prompt", ""), fields.get("response", ""))
    return text or " ".join(fields.values())


def parts_id(parts: Iterable[str]) -> str:
    """The unit id of a concatenation of items: their ids joined with ``+``."""
    return "+".join(parts)


__all__ = [
    "EXCERPT_CHARS",
    "KEPT",
    "SHOWN",
    "Evidence",
    "EvidenceItem",
    "EvidenceVerdict",
    "collect",
    "excerpt",
    "item_text",
    "judged",
    "parts_id",
    "request_text",
    "text_of",
]
