"""What the card says was tested and how the run went.

The judge (backend, model, revision, decoding), the rubric, the data, the probes' parameters and
the configured thresholds, as the run's config and the run store recorded them; the probes
left out as not applicable to the judge, with why; the data rows
the run left out; and whether the run completed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from judgeprobe.engine.store import RunStore
from judgeprobe.engine.store_meta import STATUS

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
COMPLETE_STATES = ("complete", "completed", "done", "finished")
SKIPPED_ROWS_SHOWN = 100
"""How many of the data rows a run left out the card lists; the run store holds them all."""


def tested_section(
    config: Mapping[str, Any],
    store: RunStore,
    probes: Sequence[Mapping[str, Any]],
    configured: Mapping[str, Any],
) -> dict[str, Any]:
    """The card's ``tested`` section: judge, rubric, data, probe parameters, thresholds."""
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
        "not_applicable": {
            str(k): str(v) for k, v in dict(config.get("not_applicable") or {}).items()
        },
    }


def configured_thresholds(configured: Any) -> dict[str, Any]:
    """The thresholds the run's config set, as configured: the audit checked them and applied
    them to the findings before it stored them, so the card only lists them."""
    return dict(configured) if isinstance(configured, Mapping) else {}


def skipped_rows(store: RunStore, run_id: int) -> dict[str, Any]:
    """The data rows the run's loaders left out: how many, the first ones, how many more."""
    count = store.count_skipped_rows(run_id)
    rows = store.skipped_rows(run_id, limit=SKIPPED_ROWS_SHOWN)
    return {"count": count, "rows": rows, "left_out": count - len(rows)}


def run_state(run: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[str, str | None]:
    """``complete`` or ``incomplete`` and why, as the audit recorded it in the run's metadata
    (``RunStore.run_meta``) or, failing that, as the run's status says."""
    status = meta.get(STATUS)
    if isinstance(status, Mapping) and status.get("state") in ("complete", "incomplete"):
        reason = status.get("reason")
        return str(status["state"]), None if reason is None else str(reason)
    if str(run.get("status")) in COMPLETE_STATES:
        return "complete", None
    return "incomplete", f"the run store records the run as {run.get('status')!r}"


def judge_name(config: Mapping[str, Any], store: RunStore) -> str:
    """The judge's model (or name, or backend) for the card's title."""
    description = config.get("judge")
    if not isinstance(description, Mapping):
        description = store.judges().get(str(config.get("judge_fingerprint", "")), {})
    return _model(description) or "unnamed judge"


def _model(description: Mapping[str, Any]) -> str:
    return str(
        description.get("model") or description.get("name") or description.get("backend") or ""
    )


def iso_time(epoch: float) -> str:
    """``epoch`` (seconds) as an ISO 8601 UTC time to the second."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
