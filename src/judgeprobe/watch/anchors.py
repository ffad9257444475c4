"""The anchors of a watch, read from an audit's run store: items, and the audited verdicts on them.

An anchor is an item the audit judged as it is (its base request: role ``("base", id)`` of the
concatenation probes, ``("pair", id)`` of the pairwise ones; trial 0, the audited judge and
rubric) with an ``ok`` verdict, whose decision (:func:`decision`) is what today's judge is
compared with. The audit's *reruns* of those same requests (trial ``t >= 1``: the rerun null of
the concatenation probes, the reproduction trials of policy invariance) are the judge's own
rerun noise: each is a :class:`NullPair` (the stored trial 0 against the rerun), the null of
the drift test (:mod:`judgeprobe.stats.drift`).

The audit's store is read, never written: it is copied into memory
(:meth:`~judgeprobe.engine.store.RunStore.read_copy`), so a watch never upgrades or locks it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe.core.verdict import Verdict
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError, StoreError
from judgeprobe.rubrics import Rubric

ANCHOR_ROLES = ("base", "pair")
"""The role kinds of an item's own request: ``(kind, item_id)``."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """An item the audit judged, with the decision of its audited verdict."""

    item_id: str
    fields: tuple[tuple[str, str], ...]
    key: str
    """The audited request's key in the audit's run store."""
    decision: str


@dataclass(frozen=True, slots=True)
class NullPair:
    """One rerun of an anchor by the same judge: its trial 0 decision and the rerun's."""

    item_id: str
    trial: int
    first: str
    again: str
    source: str
    """``audit`` (the audit's reruns) or ``check 1`` (measured by the first check)."""

    @property
    def differs(self) -> bool:
        return self.first != self.again


@dataclass(frozen=True, slots=True)
class AuditAnchors:
    """What a watch takes from an audit: which run, judge and rubric, the anchors and the null."""

    store: str
    run_id: int
    judge_fingerprint: str
    judge: Mapping[str, Any]
    rubric: Rubric
    anchors: tuple[Anchor, ...]
    null: tuple[NullPair, ...]
    left_out: Mapping[str, int]
    """Items with a base request but no ok audited verdict, by status (``missing`` included)."""
    served_models: tuple[str, ...]
    """The models the server named in the audited anchors' answers (none when unrecorded)."""
    version: str | None
    """The judgeprobe version the audit ran with, as its run recorded it."""


def audit_store_path(audit_out: str | os.PathLike[str]) -> Path:
    """The run store of an audit: ``AUDIT_OUT/run.sqlite``, or ``AUDIT_OUT`` when it is the file."""
    where = Path(audit_out)
    store = where / "run.sqlite" if where.is_dir() else where
    if not store.is_file():
        raise ConfigError(f"{where}: no audit run store there (run.sqlite); run an audit first")
    return store


def decision(rubric: Rubric, verdict: Verdict | None) -> str | None:
    """The decision a verdict is compared by: the rubric's (:meth:`Rubric.decision_of`) where it
    has a rule or is pairwise, else the label, else the score; None for a verdict that is not ok.

    Examples
    --------
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> decision(builtin_rubric("harmfulness"), Verdict.scored(5.0, label="5"))
    'unsafe'
    >>> decision(builtin_rubric("harmfulness"), Verdict.failed("timeout")) is None
    True
    """
    if verdict is None or not verdict.ok or verdict.score is None:
        return None
    if rubric.kind == "pairwise" or rubric.decision is not None:
        return rubric.decision_of(verdict.score, verdict.label)
    return verdict.label if verdict.label is not None else format(verdict.score, "g")


def read_anchors(audit_out: str | os.PathLike[str]) -> AuditAnchors:
    """The anchors and rerun null of the latest run in the audit at ``audit_out`` (a folder
    holding ``run.sqlite``, or the store itself).

    A :class:`~judgeprobe.errors.ConfigError` says why a store gives none: no run, no stored
    plan (an audit by a judgeprobe older than plans), no base request with an ok verdict.
    """
    path = audit_store_path(audit_out)
    store = RunStore.read_copy(path)
    try:
        return _read(store, path)
    finally:
        store.close()


def _read(store: RunStore, path: Path) -> AuditAnchors:
    latest = store.latest_run()
    if latest is None:
        raise ConfigError(f"{path}: the run store holds no audit run")
    run_id, config, _ = latest
    fingerprint = str(config.get("judge_fingerprint") or "")
    rubric_hash = str((config.get("rubric") or {}).get("hash") or "")
    rubric = store.rubrics().get(rubric_hash)
    if not fingerprint or rubric is None:
        raise StoreError(f"{path}: run {run_id} names no judge fingerprint or stored rubric")
    own: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {}
    reruns: list[tuple[tuple[tuple[str, str], ...], int, str]] = []
    planned = False
    for name in store.results(run_id):
        plan = store.plan(run_id, name)
        if plan is None:
            continue
        planned = True
        for role, request in plan.requests.items():
            if request.judge != fingerprint or request.rubric.hash != rubric_hash:
                continue
            if request.trial == 0 and len(role) == 2 and role[0] in ANCHOR_ROLES:
                own.setdefault(str(role[1]), (request.fields, request.key))
            elif request.trial > 0:
                reruns.append((request.fields, request.trial, request.key))
    if not planned:
        raise ConfigError(
            f"{path}: run {run_id} stored no plan to draw anchors from (an audit by an older "
            "judgeprobe); run the audit again"
        )
    verdicts = store.get_many([key for _, key in own.values()] + [key for *_, key in reruns])
    anchors: list[Anchor] = []
    left_out: dict[str, int] = {}
    served: set[str] = set()
    for item_id, (fields, key) in sorted(own.items()):
        verdict = verdicts.get(key)
        decided = decision(rubric, verdict)
        if verdict is None or decided is None:
            status = "missing" if verdict is None else verdict.status.value
            left_out[status] = left_out.get(status, 0) + 1
            continue
        anchors.append(Anchor(item_id, fields, key, decided))
        model = verdict.meta.get("served_model")
        if isinstance(model, str):
            served.add(model)
    if not anchors:
        raise ConfigError(
            f"{path}: run {run_id} has no item judged as it is with an ok verdict to anchor on "
            "(a watch needs the base requests of the concatenation or pairwise probes)"
        )
    by_fields = {anchor.fields: anchor for anchor in anchors}
    null: dict[tuple[str, int], NullPair] = {}
    for fields, trial, key in reruns:
        anchor = by_fields.get(fields)
        again = decision(rubric, verdicts.get(key))
        if anchor is not None and again is not None:
            null[(anchor.item_id, trial)] = NullPair(
                anchor.item_id, trial, anchor.decision, again, "audit"
            )
    description = store.judges().get(fingerprint, {})
    return AuditAnchors(
        store=str(path),
        run_id=run_id,
        judge_fingerprint=fingerprint,
        judge=description,
        rubric=rubric,
        anchors=tuple(anchors),
        null=tuple(null[key] for key in sorted(null)),
        left_out=left_out,
        served_models=tuple(sorted(served)),
        version=None if config.get("tool_version") is None else str(config["tool_version"]),
    )
