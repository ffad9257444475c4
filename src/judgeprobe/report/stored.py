"""A probe's result as the run store holds it (``ProbeResult.to_dict``), read into typed models.

The audit decides everything a finding says (its threshold, resolved from the probe's default and
the run's configured thresholds, its status and ``needed_n``) and stores it; the card reads these
models and shows what they hold, so a card never disagrees with the audit that wrote the store.
A body of the wrong shape (an altered or damaged store) fails validation here, before any of the
card is built.

Stores written before an undefined estimate had a ``reason`` of its own kept that reason in
``ci.method``; :class:`StoredFinding` moves it to ``reason`` when it reads them.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Status = Literal["pass", "warn", "fail", "inconclusive", "info", "n/a"]


class _Stored(BaseModel):
    """Read-only; keys a newer judgeprobe may add are ignored, a wrong type is an error."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class StoredInterval(_Stored):
    """A confidence interval; ``low`` and ``high`` are None where it could not be computed."""

    low: float | None = None
    high: float | None = None
    level: float = 0.95
    method: str = ""


class StoredThreshold(_Stored):
    """The threshold the audit judged a finding against (the probe's or the configured one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    warn: float | None = None
    fail: float | None = None
    higher_is_worse: bool = True


class StoredTest(_Stored):
    """A probe's own hypothesis test behind a finding."""

    statistic: float | None
    pvalue: float | None
    alternative: str
    null: str
    n: int


class StoredFamily(_Stored):
    """How a finding fared in its audit's family of gated findings (absent in older stores)."""

    method: str
    family_size: int
    bound: Literal["warn", "fail"]
    pvalue: float
    adjusted_pvalue: float
    alpha: float
    source: str
    unadjusted_status: Status


class StoredEvidenceVerdict(_Stored):
    """One verdict on an item behind a finding
    (:class:`judgeprobe.core.evidence.EvidenceVerdict`)."""

    role: str
    label: str | None = None
    score: float | None = None
    raw: str | None = None


class StoredEvidenceItem(_Stored):
    """One item behind a finding: id, plain-text excerpt, the verdicts compared."""

    item_id: str
    excerpt: str = ""
    verdicts: list[StoredEvidenceVerdict] = Field(default_factory=list)


class StoredEvidence(_Stored):
    """The items behind a finding: ``total`` of them, the first ones kept."""

    total: int = Field(ge=0)
    items: list[StoredEvidenceItem] = Field(default_factory=list)

    def card_entry(self, cap: int) -> dict[str, Any]:
        """The card's ``evidence``: the first ``cap`` items, with the total and how many are
        shown (the agreed shape of docs/judge-card.md)."""
        items = [item.model_dump() for item in self.items[: max(cap, 0)]]
        return {"total": self.total, "shown": len(items), "items": items}


class StoredFinding(_Stored):
    """One finding with the status the audit decided for it."""

    name: str
    description: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    estimate: float | None = None
    ci: StoredInterval = Field(default_factory=StoredInterval)
    n: int = 0
    counts: dict[str, float | None] = Field(default_factory=dict)
    reason: str | None = None
    threshold: StoredThreshold | None = None
    status: Status
    needed_n: int | None = None
    test: StoredTest | None = None
    family: StoredFamily | None = None
    """None in stores written before the family adjustment: no adjustment was made."""
    evidence: StoredEvidence | None = None
    """The items behind the finding; None when the probe keeps none (and in older stores)."""

    @model_validator(mode="before")
    @classmethod
    def _reason_of_an_older_store(cls, data: Any) -> Any:
        """An undefined estimate of an older store: its reason is its interval's ``method``."""
        if not isinstance(data, dict) or "reason" in data or data.get("estimate") is not None:
            return data
        ci = data.get("ci")
        if not isinstance(ci, dict) or not ci.get("method"):
            return data
        return {**data, "reason": ci["method"], "ci": {**ci, "method": ""}}


class StoredProbeResult(_Stored):
    """Everything one probe of a run found, as the card reads it."""

    probe: str | None = None
    kind: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    findings: list[StoredFinding] = Field(default_factory=list)
    figures: list[dict[str, Any]] = Field(default_factory=list)
    tables: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tables")
    @classmethod
    def _finite_cells(cls, tables: dict[str, Any]) -> dict[str, Any]:
        """A table cell that is not a finite number (NaN, infinity) is ``None`` (n/a), so the
        card stays valid JSON whatever a probe or plugin put in its tables."""
        return {name: _finite(table) for name, table in tables.items()}


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def read_result(body: Any) -> StoredProbeResult:
    """The typed result of one stored body; a pydantic ``ValidationError`` when it is malformed."""
    return StoredProbeResult.model_validate(body)
