"""The series of a watch, read from its store alone: each check, the test's state, what moved.

:func:`build_watch` turns a watch store into one document (a JSON-able dict) that the report
renders and the command line summarises:

- ``null``: the rerun pairs (where from), their differing share and its upper bound ``U``;
- ``checks``: per check, its anchors, their verdicts by status, ``k`` of ``n`` compared anchors
  whose decision differs from the audited one, the drift test's state after it
  (:func:`~judgeprobe.stats.drift.drift_looks`, at ``alpha / 2``: the null's bound spends the
  other half) and what changed in the judge's identity since the check before (the audit, for
  the first);
- ``state``: drift detected or not (and at which check, since which), the anytime p-value, the
  disagreement so far with its anytime-valid upper bound, and a sentence that says it;
- ``moved``: the anchors whose decision differed at some check, which way and how often, and
  whether they already moved in the audit's own reruns (noise, not drift);
- ``power``: the anchors per check, the power they give for the stated change, and the smallest
  change they detect in time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.stats.drift import (
    DRIFT_METHOD,
    DriftLook,
    detectable_change,
    detection_power,
    disagreement_bound,
    drift_looks,
    drift_prior,
    rerun_null_bound,
)
from judgeprobe.stats.sequential import BetaPrior
from judgeprobe.watch.anchors import Anchor, NullPair, decision
from judgeprobe.watch.identity import audited_identity, identity_changes
from judgeprobe.watch.store import ANCHOR, CheckRow, WatchStore

ARROW = " → "


def build_watch(store: WatchStore) -> dict[str, Any]:
    """The watch document of ``store`` (see the module); no judge call."""
    settings = store.settings()
    if settings is None:
        raise ValueError(f"{store.path}: the watch has no check yet")
    rubrics = store.rubrics()
    audited_rubric = rubrics[str(settings["rubric"])]
    anchors = {a.item_id: a for a in store.anchors()}
    null = store.null_pairs()
    alpha = float(settings["alpha"])
    null_doc, bound, prior = _null(null, settings)
    audited = audited_identity(
        str(settings["judge_fingerprint"]),
        settings.get("judge") or {},
        audited_rubric,
        settings.get("served_models") or [],
        settings.get("audit_version"),
    )
    rows: list[dict[str, Any]] = []
    moves: dict[str, list[tuple[int, str]]] = {}
    drawn: Counter[str] = Counter()
    counts: list[tuple[int, int]] = []
    previous: Mapping[str, Any] = audited
    for row in store.checks():
        rubric = rubrics.get(str((row.identity.get("rubric") or {}).get("hash")), audited_rubric)
        compared = _compare(store, row, rubric, anchors, moves, drawn)
        changes = identity_changes(previous, row.identity) if row.identity else []
        if row.identity:
            previous = row.identity
        rows.append(
            {**compared, "identity_changes": changes, "identity": row.identity, "look": None}
        )
        if row.status == "complete":
            counts.append((compared["k"], compared["n"]))
    looks = (
        drift_looks(counts, null_bound=bound, alpha=alpha / 2.0, prior=prior)
        if prior is not None
        else []
    )
    for row_doc, look in zip((r for r in rows if r["status"] == "complete"), looks, strict=False):
        row_doc["look"] = look.to_dict()
    noisy = {p.item_id for p in null if p.differs}
    return {
        "audit": {
            "store": settings.get("audit_store"),
            "run": settings.get("audit_run"),
            "judge": audited,
            "anchors": len(anchors),
            "left_out": settings.get("left_out") or {},
        },
        "settings": {
            name: settings.get(name)
            for name in ("alpha", "change", "within", "start", "power", "seed", "anchors")
        },
        "method": DRIFT_METHOD,
        "null": null_doc,
        "power": _power(settings, null_doc, len(anchors)),
        "checks": rows,
        "state": _state(looks, rows, bound, alpha, prior, previous, audited),
        "moved": _moved(moves, anchors, drawn, noisy),
        "directions": dict(
            Counter(f"{anchors[i].decision}{ARROW}{d}" for i, ms in moves.items() for _, d in ms)
        ),
    }


def _compare(
    store: WatchStore,
    row: CheckRow,
    rubric: Any,
    anchors: Mapping[str, Anchor],
    moves: dict[str, list[tuple[int, str]]],
    drawn: Counter[str],
) -> dict[str, Any]:
    """One check's row: its verdicts by status and its ``k`` of ``n`` differing decisions."""
    requests = [(item, key) for item, role, key in store.requests(row.check) if role == ANCHOR]
    verdicts = store.get_many([key for _, key in requests])
    statuses: Counter[str] = Counter()
    k = n = 0
    for item, key in requests:
        verdict = verdicts.get(key)
        statuses["missing" if verdict is None else verdict.status.value] += 1
        now = decision(rubric, verdict)
        if now is None or item not in anchors:
            continue
        n += 1
        drawn[item] += 1
        if now != anchors[item].decision:
            k += 1
            moves.setdefault(item, []).append((row.check, now))
    return {
        "check": row.check,
        "status": row.status,
        "started": row.started,
        "finished": row.finished,
        "note": row.note,
        "anchors": row.anchors,
        "statuses": dict(sorted(statuses.items())),
        "k": k,
        "n": n,
    }


def _null(
    null: Sequence[NullPair], settings: Mapping[str, Any]
) -> tuple[dict[str, Any], float, BetaPrior | None]:
    """The null's document, its bound ``U`` and the test's prior (None when ``U`` is 1)."""
    alpha = float(settings["alpha"])
    differing = sum(p.differs for p in null)
    bound = rerun_null_bound(differing, len(null), alpha / 2.0)
    rate = differing / len(null) if null else None
    prior = (
        drift_prior(rate or 0.0, float(settings["change"]), bound=bound) if bound < 1.0 else None
    )
    sources = Counter(p.source for p in null)
    return (
        {
            "pairs": len(null),
            "differing": differing,
            "rate": rate,
            "bound": bound,
            "level": 1.0 - alpha / 2.0,
            "sources": dict(sorted(sources.items())),
            "items": len({p.item_id for p in null}),
        },
        bound,
        prior,
    )


def _power(settings: Mapping[str, Any], null: Mapping[str, Any], pool: int) -> dict[str, Any]:
    """What the anchors per check can detect: the power for the stated change (a lower bound:
    see :func:`~judgeprobe.stats.drift.detection_power`) and the smallest change detected in
    time with the stated power."""
    anchors = settings.get("anchors")
    doc: dict[str, Any] = {"anchors": anchors, "pool": pool, "power": None, "detectable": None}
    if anchors is None or null["bound"] >= 1.0:
        return doc
    rate, bound = float(null["rate"] or 0.0), float(null["bound"])
    alpha = float(settings["alpha"]) / 2.0
    change = float(settings["change"])
    within, start = int(settings["within"]), int(settings["start"])
    doc["power"] = detection_power(
        int(anchors),
        null_rate=rate,
        null_bound=bound,
        change=change,
        within=within,
        start=start,
        alpha=alpha,
        prior=drift_prior(rate, change, bound=bound),
    )
    doc["detectable"] = detectable_change(
        int(anchors),
        null_rate=rate,
        null_bound=bound,
        within=within,
        start=start,
        alpha=alpha,
        power=float(settings["power"]),
    )
    return doc


def _state(
    looks: Sequence[DriftLook],
    rows: Sequence[Mapping[str, Any]],
    bound: float,
    alpha: float,
    prior: BetaPrior | None,
    latest: Mapping[str, Any],
    audited: Mapping[str, Any],
) -> dict[str, Any]:
    """The test's state after the latest complete check, with the sentence that says it."""
    since_audit = identity_changes(audited, latest) if latest is not audited else []
    changed_at = [r["check"] for r in rows if r["identity_changes"]]
    state: dict[str, Any] = {
        "checks": len(looks),
        "detected": False,
        "at": None,
        "start": None,
        "pvalue": 1.0,
        "k": 0,
        "n": 0,
        "rate": None,
        "upper": None,
        "identity_changed": since_audit,
        "identity_changed_at": changed_at,
        "incomplete": [r["check"] for r in rows if r["status"] != "complete"],
    }
    if prior is None:
        state["sentence"] = (
            "No test: the rerun null has no pair to bound the judge's own noise with; run a "
            "check to measure it."
        )
        return state
    if not looks:
        state["sentence"] = "No complete check yet."
        return state
    last = looks[-1]
    first = next((look for look in looks if look.detected), None)
    upper = disagreement_bound(last.total_k, last.total_n, alpha, prior=prior)
    state.update(
        detected=last.detected,
        at=None if first is None else first.check,
        start=None if first is None else first.start,
        pvalue=last.pvalue,
        k=last.total_k,
        n=last.total_n,
        rate=last.total_k / last.total_n if last.total_n else None,
        upper=upper,
    )
    if first is not None:
        k, n = first.since
        state["sentence"] = (
            f"Drift detected at check {first.check}: since check {first.start} the judge's "
            f"decisions differ from its audited ones on {k} of {n} anchors, more than its own "
            f"rerun noise (at most {_pct(bound)}) explains (anytime p = {last.pvalue:.2g})."
        )
    else:
        state["sentence"] = (
            f"No drift detected over {len(looks)} check{'s' if len(looks) != 1 else ''} "
            f"(anytime p = {last.pvalue:.2g}): the judge's decisions differ from its audited "
            f"ones on {last.total_k} of {last.total_n} anchors, at most {_pct(upper)} "
            f"(anytime {_pct(1 - alpha)} bound, its rerun noise included). A headline share "
            f"that moved by more than that moved with the system judged, not with the judge."
        )
    if since_audit:
        state["sentence"] += " The judge's identity changed since the audit: " + "; ".join(
            since_audit
        )
    return state


def _moved(
    moves: Mapping[str, Sequence[tuple[int, str]]],
    anchors: Mapping[str, Anchor],
    drawn: Mapping[str, int],
    noisy: set[str],
) -> list[dict[str, Any]]:
    """The anchors that moved, most often first: which way, at which checks, how often drawn."""
    found = []
    for item, ms in moves.items():
        found.append(
            {
                "item_id": item,
                "anchor": anchors[item].decision,
                "now": dict(Counter(d for _, d in ms)),
                "checks": [c for c, _ in ms],
                "moved": len(ms),
                "compared": drawn.get(item, 0),
                "noisy_at_audit": item in noisy,
            }
        )
    return sorted(found, key=lambda m: (-m["moved"] / max(1, m["compared"]), m["item_id"]))


def _pct(value: float) -> str:
    return f"{100.0 * value:.3g}%"
