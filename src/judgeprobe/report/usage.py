"""What a run cost the judge: the request tallies of each probe and of the whole run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.engine.store_meta import ENGINE

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


def card_usage(meta: Mapping[str, Any], probes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's usage: the engine's own totals from the run's metadata (``RunStore.run_meta``;
    None when it kept none) and the probes' sum."""
    engine = meta.get(ENGINE)
    totals = None
    if isinstance(engine, Mapping):
        body = engine.get("totals", engine)
        if isinstance(body, Mapping):
            totals = {str(k): v for k, v in body.items() if isinstance(v, int | float)}
    summed = {key: sum(int(p["usage"].get(key, 0)) for p in probes) for key in USAGE_KEYS}
    return {"engine": totals, "probes": summed}


def probe_usage(raw: Mapping[str, Any]) -> dict[str, int]:
    """A probe's usage: each :data:`USAGE_KEYS` tally (0 when absent) and any other count kept."""
    usage = {key: int(raw.get(key, 0) or 0) for key in USAGE_KEYS}
    usage.update(
        {
            str(k): v
            for k, v in raw.items()
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0 and k not in usage
        }
    )
    return usage
