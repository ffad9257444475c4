"""The Judge Card document: what was tested, what each probe found, and a one-minute summary.

:func:`build_card` reads one run of a run store (no judge call) and returns a plain JSON document
(validated by ``card.schema.json``); the Markdown and HTML renderers only format it. The card
reads, it does not judge: each finding's threshold (the probe's default, or the one configured for
the run, which the audit resolved and checked) and its status were decided by the audit and stored
with the finding (:mod:`judgeprobe.report.stored`); the card shows and counts those. A *headline*
finding is one with a threshold; the overall verdict is the worst *decided* status among them
(pass, warn, fail): an ``inconclusive`` finding, whose CI straddles a threshold, is shown as such
and never fails the gate.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from judgeprobe._version import __version__
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError, StoreError
from judgeprobe.probes.base import Threshold
from judgeprobe.report.redact import redact
from judgeprobe.report.schema import CARD_VERSION
from judgeprobe.report.stored import StoredFinding, StoredProbeResult, read_result
from judgeprobe.report.text import fmt_number, humanize, slug

KIND_ORDER = ("agreement", "invariance", "directional", "null")
"""The order of probes in the card: whether the judge agrees with people (and beats a trivial
rule) is the first thing a reader needs, then the CheckList invariance and directional tests."""
KIND_QUESTIONS = {
    "invariance": "Does the verdict stay put when something that should not matter changes?",
    "directional": "Does the verdict move the way it should when something that matters changes?",
    "agreement": "Does the judge agree with human raters?",
    "null": "How much of the verdict does a trivial rule explain?",
}
SEVERITY = {"pass": 0, "warn": 1, "fail": 2}
STATUS_ORDER = ("fail", "warn", "inconclusive", "n/a", "pass", "info")
EVIDENCE_ORDER = ("fail", "warn", "pass", "inconclusive", "n/a", "info")
"""Which finding speaks for a probe in the summary: the worst decided one (the probe's status),
an inconclusive one only when none is decided."""
DECODING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "max_tokens",
    "logprobs",
    "top_logprobs",
    "n",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "repeat_penalty",
    "extra_body",
)
USAGE_KEYS = (
    "requests",
    "calls",
    "cached",
    "ok",
    "error",
    "unparseable",
    "skipped",
    "missing",
    "retries",
    "prompt_tokens",
    "completion_tokens",
)
COMPLETE_STATES = ("complete", "completed", "done", "finished")
SKIPPED_ROWS_SHOWN = 100
"""How many of the data rows a run left out the card lists; the run store holds them all."""

ThresholdSource = Literal["probe", "config"]


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


def overall_status(card: Mapping[str, Any]) -> str:
    """The worst decided status among the card's headline findings: pass, warn or fail.

    Inconclusive findings do not count; ``inconclusive`` when every headline finding is, ``n/a``
    when there is none.

    Examples
    --------
    >>> card = {"probes": [{"findings": [{"headline": True, "status": "warn"},
    ...                                  {"headline": False, "status": "info"}]}]}
    >>> overall_status(card)
    'warn'
    """
    statuses = [
        str(finding["status"])
        for probe in card.get("probes", [])
        for finding in probe.get("findings", [])
        if finding.get("headline")
    ]
    return _worst(statuses)


def exit_code(card: Mapping[str, Any], fail_on: str = "fail") -> int:
    """The process exit code for CI: 1 when the overall status is ``fail_on`` or worse, else 0.

    ``fail_on="warn"`` makes warnings break the build too. A card that assessed nothing (see
    :func:`nothing_assessed`) gives :data:`NOTHING_ASSESSED_EXIT` (4): a gate must not pass on a
    run that measured nothing.

    Examples
    --------
    >>> card = {"probes": [{"findings": [{"headline": True, "status": "warn"}],
    ...                     "usage": {"requests": 1, "ok": 1}}]}
    >>> exit_code(card), exit_code(card, fail_on="warn")
    (0, 1)
    >>> exit_code({"probes": []})
    4
    """
    if fail_on not in ("warn", "fail"):
        raise ConfigError(f"fail_on must be 'warn' or 'fail', not {fail_on!r}")
    if nothing_assessed(card, fail_on=fail_on) is not None:
        return NOTHING_ASSESSED_EXIT
    status = overall_status(card)
    return int(status in SEVERITY and SEVERITY[status] >= SEVERITY[fail_on])


NOTHING_ASSESSED_EXIT = 4
"""The exit code of an audit (or ``judgeprobe card``) whose card assessed nothing."""


def nothing_assessed(card: Mapping[str, Any], *, fail_on: str = "never") -> str | None:
    """Why the card assessed nothing, in one line; None when it assessed something.

    A card assessed nothing when

    - no probe ran (the run holds no probe result), or
    - the probes' requests got no usable (``ok``) verdict: every call failed, every answer was
      unparseable, or every input was skipped for the judge's context window, or
    - no finding could be computed (every one is ``n/a``), or
    - with a gate (``fail_on`` ``"warn"`` or ``"fail"``), no headline finding is pass, warn,
      fail or inconclusive, so the gate would have nothing to judge (an inconclusive finding
      was measured: it passes the gate, and the card says what would decide it).

    Examples
    --------
    >>> nothing_assessed({"probes": []})
    'no probe ran'
    >>> failed = {"findings": [], "usage": {"requests": 3, "error": 3}}
    >>> nothing_assessed({"probes": [failed]})
    'no judge request got a usable verdict (error: 3)'
    """
    probes: Sequence[Mapping[str, Any]] = card.get("probes") or []
    if not probes:
        return "no probe ran"
    usage = {
        key: sum(int((p.get("usage") or {}).get(key, 0) or 0) for p in probes) for key in USAGE_KEYS
    }
    if usage["requests"] > 0 and usage["ok"] == 0:
        failures = {k: usage[k] for k in ("error", "unparseable", "skipped", "missing") if usage[k]}
        if set(failures) == {"skipped"}:
            return (
                f"every input was skipped ({usage['skipped']}): each exceeds the judge's "
                "context window, and inputs are never truncated"
            )
        named = ", ".join(f"{_USAGE_WORDS.get(k, k)}: {v}" for k, v in failures.items())
        return f"no judge request got a usable verdict ({named})"
    findings = [f for p in probes for f in p.get("findings") or []]
    if not findings:
        return "the probes reported no finding"
    if all(f.get("status") == "n/a" for f in findings):
        return f"no finding could be computed (all {len(findings)} are n/a)"
    if fail_on in SEVERITY and not any(
        f.get("headline") and f.get("status") in (*SEVERITY, "inconclusive") for f in findings
    ):
        return f"no headline finding could be assessed, so fail_on={fail_on} has nothing to judge"
    return None


_USAGE_WORDS = {"missing": "not judged"}


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
    results = store.results(run_id)
    configured = _configured_thresholds(config.get("thresholds"))
    bodies = [
        (name, read_result(body)) for name, body in results.items() if not name.startswith("_")
    ]
    bodies.sort(key=lambda entry: _kind_rank(entry[1].kind))
    probes = [_probe(name, body, configured, index) for index, (name, body) in enumerate(bodies)]
    _unique_figure_files(probes)
    state, reason = _state(run, results)
    card: dict[str, Any] = {
        "card_version": CARD_VERSION,
        "generator": {"tool": "judgeprobe", "version": __version__},
        "title": f"Judge Card: {_judge_name(config, store)}",
        "run": {
            "id": run_id,
            "store": Path(store.path).name,
            "started_at": str(config.get("started_at") or _iso(run["started"])),
            "finished_at": None if run["finished"] is None else _iso(run["finished"]),
            "state": state,
            "reason": reason,
        },
        "summary": {},
        "tested": _tested(config, store, probes, configured),
        "probes": probes,
        "usage": _usage(results, probes),
    }
    card["tested"]["skipped_rows"] = _skipped_rows(store, run_id)
    card["summary"] = _summary(card)
    redacted: dict[str, Any] = redact(card, secrets)
    return redacted


def _probe(
    name: str, body: StoredProbeResult, configured: Mapping[str, Any], index: int
) -> dict[str, Any]:
    probe_name = body.probe or name
    kind = body.kind
    findings = [_finding(probe_name, f, configured) for f in body.findings]
    figures = []
    for spec in body.figures:
        figure = dict(spec)
        figure["file"] = f"figures/{slug(probe_name)}-{slug(str(spec.get('name', 'figure')))}"
        figures.append(figure)
    headline = [f["status"] for f in findings if f["headline"]]
    return {
        "name": probe_name,
        "id": f"probe-{index + 1}-{slug(probe_name)}",
        "kind": kind,
        "question": KIND_QUESTIONS.get(kind, ""),
        "status": _worst(headline) if headline else "info",
        "params": dict(body.params),
        "findings": findings,
        "counts": _counts(f["status"] for f in findings),
        "figures": figures,
        "tables": dict(body.tables),
        "notes": list(body.notes),
        "usage": _probe_usage(body.usage),
    }


def _finding(probe: str, stored: StoredFinding, configured: Mapping[str, Any]) -> dict[str, Any]:
    """The card's entry for one stored finding: what the audit decided, and how sure it is."""
    threshold = None if stored.threshold is None else stored.threshold.model_dump()
    source: ThresholdSource | None = None
    if threshold is not None:
        # the audit applied the run's configured threshold in place of the probe's default
        aimed = f"{probe}.{stored.name}" in configured or stored.name in configured
        source = "config" if aimed else "probe"
    ci = stored.ci.model_dump()
    finding = {
        "name": stored.name,
        "description": stored.description,
        "labels": dict(stored.labels),
        "estimate": stored.estimate,
        "ci": ci,
        "n": stored.n,
        "counts": dict(stored.counts),
        "reason": stored.reason,
        "threshold": threshold,
        "threshold_source": source,
        "status": stored.status,
        "headline": threshold is not None,
        "certainty": _certainty(stored.status, ci, threshold),
        "needed_n": stored.needed_n,
        "test": None if stored.test is None else stored.test.model_dump(),
    }
    finding["sentence"] = finding_sentence(finding)
    return finding


def finding_sentence(finding: Mapping[str, Any]) -> str:
    """One sentence a reader understands: estimate, CI, n, status and the threshold behind it.

    Examples
    --------
    >>> finding_sentence({"name": "position_bias", "labels": {}, "estimate": 0.18,
    ...     "ci": {"low": 0.12, "high": 0.25, "level": 0.95}, "n": 120, "status": "fail",
    ...     "threshold": {"warn": None, "fail": 0.1, "higher_is_worse": True},
    ...     "certainty": "clear"})
    'Position bias 0.18 [0.12, 0.25], n=120 — fails (fail >= 0.1); the whole 95% CI is in fail'
    """
    labels = finding.get("labels") or {}
    label = humanize(str(finding.get("name", "")))
    if labels:
        label += " (" + ", ".join(f"{k}={v}" for k, v in labels.items()) + ")"
    ci = finding.get("ci") or {}
    status = finding.get("status")
    if status == "n/a":
        reason = finding.get("reason") or "no data"
        return f"{label}: not assessable, n={finding.get('n', 0)} ({reason})"
    numbers = (
        f"{label} {fmt_number(finding.get('estimate'))} "
        f"[{fmt_number(ci.get('low'))}, {fmt_number(ci.get('high'))}], n={finding.get('n', 0)}"
    )
    threshold = finding.get("threshold")
    if status == "info" or threshold is None:
        return f"{numbers} (no threshold; for information)"
    if status == "inconclusive":
        described = _as_threshold(threshold).describe()
        needed = finding.get("needed_n")
        more = (
            f"; roughly {needed} more would likely decide it"
            if isinstance(needed, int) and needed > 0
            else ""
        )
        return f"{numbers} — inconclusive ({described}); {certainty_phrase(finding)}{more}"
    verb = {"pass": "passes", "warn": "warns", "fail": "fails"}[str(status)]
    described = _as_threshold(threshold).describe()
    return f"{numbers} — {verb} ({described}); {certainty_phrase(finding)}"


def certainty_phrase(finding: Mapping[str, Any]) -> str:
    """How sure the status is: whether the whole CI falls on the same side of the thresholds."""
    ci = finding.get("ci") or {}
    level = f"{round(float(ci.get('level') or 0.95) * 100):d}%"
    certainty = finding.get("certainty")
    if finding.get("status") == "inconclusive" and certainty == "clear":
        return f"the {level} CI is decided, but the probe's own test does not reject its null"
    if certainty == "clear":
        return f"the whole {level} CI is in {finding.get('status')}"
    if certainty == "borderline":
        threshold = _as_threshold(finding["threshold"])
        ends = {threshold.status(float(ci["low"])), threshold.status(float(ci["high"]))}
        status = str(finding["status"])
        ordered = sorted(ends | ({status} & set(SEVERITY)), key=SEVERITY.__getitem__)
        return f"borderline: the {level} CI spans {ordered[0]} to {ordered[-1]}"
    return "no confidence interval"


def _certainty(
    status: str, ci: Mapping[str, Any], threshold: Mapping[str, Any] | None
) -> str | None:
    """``clear`` when both ends of the CI fall in one band, ``borderline`` when the CI crosses
    a threshold (a warn beyond warn that reaches into fail, or an inconclusive finding),
    ``unknown`` without a CI; None for findings without a threshold."""
    if threshold is None or status not in (*SEVERITY, "inconclusive"):
        return None
    low, high = _number(ci.get("low")), _number(ci.get("high"))
    if low is None or high is None:
        return "unknown"
    rule = _as_threshold(threshold)
    return "clear" if rule.status(low) == rule.status(high) else "borderline"


def _as_threshold(threshold: Mapping[str, Any]) -> Threshold:
    return Threshold(
        warn=_number(threshold.get("warn")),
        fail=_number(threshold.get("fail")),
        higher_is_worse=bool(threshold.get("higher_is_worse", True)),
    )


def _summary(card: Mapping[str, Any]) -> dict[str, Any]:
    probes: Sequence[Mapping[str, Any]] = card["probes"]
    statements = [
        {
            "probe": probe["name"],
            "kind": probe["kind"],
            "finding": finding["name"],
            "labels": finding["labels"],
            "status": finding["status"],
            "certainty": finding["certainty"],
            "sentence": finding["sentence"],
        }
        for probe in probes
        for finding in probe["findings"]
        if finding["headline"]
    ]
    statements.sort(key=lambda s: (STATUS_ORDER.index(s["status"]), _kind_rank(str(s["kind"]))))
    counts = _counts(s["status"] for s in statements)
    counts["info"] = sum(p["counts"]["info"] for p in probes)
    overall = overall_status(card)
    kinds = sorted({p["kind"] for p in probes}, key=_kind_rank)
    return {
        "overall": overall,
        "headline": _headline(overall, counts, statements, card["run"]),
        "counts": counts,
        "probes": [
            {
                "name": p["name"],
                "id": p["id"],
                "kind": p["kind"],
                "status": p["status"],
                "sentence": _probe_sentence(p),
            }
            for p in probes
        ],
        "kinds": [
            {
                "kind": kind,
                "question": KIND_QUESTIONS.get(kind, ""),
                "probes": [p["name"] for p in probes if p["kind"] == kind],
                "status": _worst([p["status"] for p in probes if p["kind"] == kind]),
            }
            for kind in kinds
        ],
        "statements": statements,
    }


def _headline(
    overall: str, counts: Mapping[str, int], statements: Sequence[Mapping[str, Any]], run: Any
) -> str:
    assessed = counts["pass"] + counts["warn"] + counts["fail"]
    if assessed == 0 and counts["inconclusive"]:
        text = "INCONCLUSIVE: no headline check is decided by its evidence"
    elif assessed == 0:
        text = "No headline finding could be assessed"
    else:
        parts = [f"{counts['fail']} of {assessed} checks fail"]
        if counts["warn"]:
            parts.append(f"{counts['warn']} warn")
        parts.append(f"{counts['pass']} pass")
        text = f"{overall.upper()}: " + ", ".join(parts)
    if counts["inconclusive"]:
        text += (
            f"; {counts['inconclusive']} inconclusive"
            " (the confidence interval straddles a threshold)"
        )
    if counts["n/a"]:
        text += f"; {counts['n/a']} could not be assessed"
    text += "."
    flagged = [s for s in statements if s["status"] in ("warn", "fail")]
    borderline = sum(s["certainty"] == "borderline" for s in flagged)
    if flagged:
        verb = "is" if borderline == 1 else "are"
        text += (
            f" {borderline} of the {len(flagged)} failing or warning checks {verb} borderline"
            " (the confidence interval crosses a threshold)."
        )
    if run["state"] != "complete":
        text += f" The run is incomplete ({run['reason']}): findings cover only what was judged."
    return text


def _probe_sentence(probe: Mapping[str, Any]) -> str:
    findings = probe["findings"]
    headline = [f for f in findings if f["headline"]]
    pool = headline or findings
    if not pool:
        return "No findings."
    worst = min(pool, key=lambda f: EVIDENCE_ORDER.index(f["status"]))
    rest = len(pool) - 1
    tail = f" (+{rest} more {'check' if headline else 'finding'}{'s' if rest != 1 else ''})"
    return str(worst["sentence"]) + (tail if rest else "")


def _tested(
    config: Mapping[str, Any],
    store: RunStore,
    probes: Sequence[Mapping[str, Any]],
    configured: Mapping[str, Any],
) -> dict[str, Any]:
    fingerprint = str(config.get("judge_fingerprint") or "")
    description = config.get("judge")
    if not isinstance(description, Mapping):
        description = store.judges().get(fingerprint, {})
    decoding: dict[str, Any] = {}
    if isinstance(description.get("decoding"), Mapping):
        decoding.update(description["decoding"])
    decoding.update({k: description[k] for k in DECODING_KEYS if k in description})
    rubric = dict(config.get("rubric") or {})
    stored = store.rubrics().get(str(rubric.get("hash", "")))
    if stored is not None:
        rubric.setdefault("name", stored.name)
        rubric.setdefault("kind", stored.kind)
        rubric.setdefault("template", stored.template)
        if stored.decision is not None:
            rubric.setdefault("decision", stored.decision.model_dump())
    configured_probes = config.get("probes")
    probe_params = (
        dict(configured_probes)
        if isinstance(configured_probes, Mapping)
        else {p["name"]: p["params"] for p in probes}
    )
    return {
        "judge": {
            "fingerprint": fingerprint,
            "backend": str(description.get("backend", "")),
            "model": _model(description),
            "revision": description.get("revision"),
            "decoding": decoding,
            "description": dict(description),
        },
        "rubric": rubric,
        "data": dict(config.get("data") or {}),
        "probes": probe_params,
        "seed": config.get("seed"),
        "thresholds": {
            str(name): {**dict(value), "source": "config"} for name, value in configured.items()
        },
        "tool_version": str(config.get("tool_version") or ""),
        "command": str(config.get("command") or ""),
    }


def _configured_thresholds(configured: Any) -> dict[str, Any]:
    """The thresholds the run's config set, as configured: the audit checked them and applied
    them to the findings before it stored them, so the card only lists them."""
    return dict(configured) if isinstance(configured, Mapping) else {}


def _skipped_rows(store: RunStore, run_id: int) -> dict[str, Any]:
    """The data rows the run's loaders left out: how many, the first ones, how many more."""
    count = store.count_skipped_rows(run_id)
    rows = store.skipped_rows(run_id, limit=SKIPPED_ROWS_SHOWN)
    return {"count": count, "rows": rows, "left_out": count - len(rows)}


def _usage(results: Mapping[str, Any], probes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    engine = results.get("_engine")
    totals = None
    if isinstance(engine, Mapping):
        body = engine.get("totals", engine)
        if isinstance(body, Mapping):
            totals = {str(k): v for k, v in body.items() if isinstance(v, int | float)}
    summed = {key: sum(int(p["usage"].get(key, 0)) for p in probes) for key in USAGE_KEYS}
    return {"engine": totals, "probes": summed}


def _probe_usage(raw: Mapping[str, Any]) -> dict[str, int]:
    usage = {key: int(raw.get(key, 0) or 0) for key in USAGE_KEYS}
    usage.update(
        {
            str(k): v
            for k, v in raw.items()
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0 and k not in usage
        }
    )
    return usage


def _state(run: Mapping[str, Any], results: Mapping[str, Any]) -> tuple[str, str | None]:
    status = results.get("_status")
    if not isinstance(status, Mapping):
        engine = results.get("_engine")
        status = engine.get("_status") if isinstance(engine, Mapping) else None
    if isinstance(status, Mapping) and status.get("state") in ("complete", "incomplete"):
        reason = status.get("reason")
        return str(status["state"]), None if reason is None else str(reason)
    if str(run.get("status")) in COMPLETE_STATES:
        return "complete", None
    return "incomplete", f"the run store records the run as {run.get('status')!r}"


def _judge_name(config: Mapping[str, Any], store: RunStore) -> str:
    description = config.get("judge")
    if not isinstance(description, Mapping):
        description = store.judges().get(str(config.get("judge_fingerprint", "")), {})
    return _model(description) or "unnamed judge"


def _model(description: Mapping[str, Any]) -> str:
    return str(
        description.get("model") or description.get("name") or description.get("backend") or ""
    )


def _unique_figure_files(probes: Sequence[dict[str, Any]]) -> None:
    seen: dict[str, int] = {}
    for probe in probes:
        for figure in probe["figures"]:
            stem = figure["file"]
            seen[stem] = seen.get(stem, 0) + 1
            if seen[stem] > 1:
                figure["file"] = f"{stem}-{seen[stem]}"


def _counts(statuses: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(("pass", "warn", "fail", "inconclusive", "n/a", "info"), 0)
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return counts


def _worst(statuses: Sequence[str]) -> str:
    ranked = [s for s in statuses if s in SEVERITY]
    if ranked:
        return max(ranked, key=SEVERITY.__getitem__)
    if "inconclusive" in statuses:
        return "inconclusive"
    return "n/a" if any(s == "n/a" for s in statuses) or not statuses else "info"


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
