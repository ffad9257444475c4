"""The Judge Card document: what was tested, what each probe found, and a one-minute summary.

:func:`build_card` reads one run of a run store (no judge call) and returns a plain JSON document
(validated by ``card.schema.json``); the Markdown and HTML renderers only format it. The card
reads, it does not judge: each finding's threshold (the probe's default, or the one configured for
the run, which the audit resolved and checked) and its status were decided by the audit and stored
with the finding (:mod:`judgeprobe.report.stored`); the card shows and counts those. A *headline*
finding is one with a threshold; the overall verdict is decided or says it is not
(:func:`~judgeprobe.report.gate.overall_status`): fail or warn when one of them is, pass only
when every one is shown to pass, else ``inconclusive`` (with what would decide it) or ``n/a``.

This module assembles the card; its parts are built elsewhere: the run's ``tested`` section and
state (:mod:`~judgeprobe.report.tested`), one section per probe (:mod:`~judgeprobe.report.sections`)
and its findings (:mod:`~judgeprobe.report.findings`), the usage tallies
(:mod:`~judgeprobe.report.usage`), the repaired judges' before and after
(:mod:`~judgeprobe.report.repair`), the humans' rate where the data has labels
(:mod:`~judgeprobe.report.estimate`), the summary (:mod:`~judgeprobe.report.summary`) and the gate
(:mod:`~judgeprobe.report.gate`). Their public names stay importable from here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgeprobe._version import __version__
from judgeprobe.engine.store import RunStore
from judgeprobe.engine.store_meta import REPAIR
from judgeprobe.errors import StoreError
from judgeprobe.report.estimate import estimate_section
from judgeprobe.report.findings import ThresholdSource, certainty_phrase, finding_sentence
from judgeprobe.report.gate import (
    NOTHING_ASSESSED_EXIT,
    exit_code,
    nothing_assessed,
    overall_status,
)
from judgeprobe.report.redact import redact
from judgeprobe.report.repair import repair_section
from judgeprobe.report.rounds import card_rounds
from judgeprobe.report.schema import CARD_VERSION
from judgeprobe.report.sections import KIND_QUESTIONS, probe_section, unique_figure_files
from judgeprobe.report.statuses import KIND_ORDER, SEVERITY, kind_rank
from judgeprobe.report.stored import read_result
from judgeprobe.report.summary import EVIDENCE_ORDER, STATUS_ORDER, build_summary
from judgeprobe.report.tested import (
    COMPLETE_STATES,
    DECODING_KEYS,
    SKIPPED_ROWS_SHOWN,
    configured_thresholds,
    iso_time,
    judge_name,
    run_state,
    skipped_rows,
    tested_section,
)
from judgeprobe.report.usage import USAGE_KEYS, card_usage
from judgeprobe.report.vacuous import read_against_sensitivity

__all__ = [
    "COMPLETE_STATES",
    "DECODING_KEYS",
    "EVIDENCE_ORDER",
    "KIND_ORDER",
    "KIND_QUESTIONS",
    "NOTHING_ASSESSED_EXIT",
    "SEVERITY",
    "SKIPPED_ROWS_SHOWN",
    "STATUS_ORDER",
    "USAGE_KEYS",
    "ThresholdSource",
    "build_card",
    "certainty_phrase",
    "exit_code",
    "finding_sentence",
    "nothing_assessed",
    "open_existing_store",
    "overall_status",
]


def build_card(
    store: RunStore | str | os.PathLike[str],
    *,
    run_id: int | None = None,
    secrets: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The Judge Card of run ``run_id`` (the latest run by default) of ``store``.

    Parameters
    ----------
    store
        A :class:`RunStore` or the path of a run store file (opened read-only in spirit: nothing
        is written but SQLite's own bookkeeping).
    run_id
        Which run; None takes the latest.
    secrets
        Strings to redact; None takes the values of secret-looking environment variables.

    Returns
    -------
    dict
        The card (``card_version`` |CARD_VERSION|), JSON-serializable.
    """
    if isinstance(store, RunStore):
        return _build_checked(store, run_id, secrets)
    with open_existing_store(store) as opened:
        return _build_checked(opened, run_id, secrets)


def open_existing_store(path: str | os.PathLike[str]) -> RunStore:
    """The run store at ``path``; an error (rather than a new empty store) when there is none."""
    if not Path(path).is_file():
        raise StoreError(f"{os.fspath(path)}: no such run store; run an audit first")
    return RunStore(Path(path))


# -- building -------------------------------------------------------------------------------------
def _build_checked(
    store: RunStore, run_id: int | None, secrets: Iterable[str] | None
) -> dict[str, Any]:
    """:func:`_build`; a result whose JSON has the wrong shape (an altered store) is a StoreError.

    Everything in a run store was written by an audit, so a value of the wrong type means the file
    was altered or damaged; the error names the run instead of failing deep inside the card.
    """
    which = "the latest run" if run_id is None else f"run {run_id}"
    try:
        return _build(store, run_id, secrets)
    except ValidationError as exc:
        problem = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()[:3]
        )
        raise StoreError(
            f"{store.path}: the results of {which} are damaged ({problem}); "
            "rerun the audit into another --out"
        ) from exc
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise StoreError(
            f"{store.path}: the results of {which} are damaged ({type(exc).__name__}: {exc}); "
            "rerun the audit into another --out"
        ) from exc


def _build(store: RunStore, run_id: int | None, secrets: Iterable[str] | None) -> dict[str, Any]:
    if run_id is None:
        latest = store.latest_run()
        if latest is None:
            raise StoreError(f"{store.path}: the run store holds no audit run; run an audit first")
        run_id = latest[0]
    run = store.run(run_id)
    if run is None:
        known = ", ".join(str(i) for i in store.run_ids()) or "none"
        raise StoreError(f"{store.path}: no run {run_id} in this run store (its runs: {known})")
    config: dict[str, Any] = run["config"] if isinstance(run["config"], dict) else {}
    meta = store.run_meta(run_id)
    configured = configured_thresholds(config.get("thresholds"))
    bodies = [(name, read_result(body)) for name, body in store.results(run_id).items()]
    bodies.sort(key=lambda entry: kind_rank(entry[1].kind))
    probes = [probe_section(name, body, index) for index, (name, body) in enumerate(bodies)]
    unique_figure_files(probes)
    read_against_sensitivity(probes)
    state, reason = run_state(run, meta)
    card: dict[str, Any] = {
        "card_version": CARD_VERSION,
        "generator": {"tool": "judgeprobe", "version": __version__},
        "title": f"Judge Card: {judge_name(config, store)}",
        "run": {
            "id": run_id,
            "store": Path(store.path).name,
            "started_at": str(config.get("started_at") or iso_time(run["started"])),
            "finished_at": None if run["finished"] is None else iso_time(run["finished"]),
            "state": state,
            "reason": reason,
        },
        "summary": {},
        "tested": tested_section(config, store, probes, configured),
        "probes": probes,
        "usage": card_usage(meta, probes),
    }
    rounds = card_rounds(meta)
    if rounds is not None:
        card["rounds"] = rounds
    repair = repair_section(meta.get(REPAIR))
    if repair is not None:
        card["repair"] = repair
    estimate = estimate_section(probes)
    if estimate is not None:
        card["estimate"] = estimate
    card["tested"]["skipped_rows"] = skipped_rows(store, run_id)
    card["summary"] = build_summary(card)
    redacted: dict[str, Any] = redact(card, secrets)
    return redacted
