"""Schema 5's upgrade of an older run store: run metadata out of the results, sources stored.

Before schema 5 a run store kept two things the way only its readers could make sense of:

- a run's metadata (its rounds, the engine's totals, whether it completed, its repairs) as
  pseudo-results named ``_rounds``, ``_engine``, ``_status`` and ``_repair`` among the probes'
  results (and, in the oldest stores, the state inside ``_engine`` as its ``_status`` key);
- each finding's threshold without where it came from: the card worked it out again from the
  run's configured thresholds (a key ``probe.finding`` or ``finding`` meant the config's).

:func:`upgrade_to_5` gives the statements that bring such a store up to date, run in the same
transaction as the new schema version: each pseudo-result moves to ``run_meta``
(:mod:`judgeprobe.engine.store_meta`) under its name without the underscore, and each stored
finding with a threshold gets the ``threshold_source`` the card derived for it. What a card
shows of the store does not change; a body that cannot be read is left as it is (the card then
reports it damaged, as before).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe.engine.store_base import StoreBase
from judgeprobe.engine.store_meta import STATUS

LEGACY_PREFIX = "_"
"""Results whose name starts with this were a run's metadata, never a probe's result."""

Statement = tuple[str, Sequence[Any]]


def upgrade_to_5(store: StoreBase) -> list[Statement]:
    """The statements that take ``store`` from schema 4 to 5 (see the module)."""
    configs = {int(run_id): config for run_id, config in store._rows("SELECT id, config FROM runs")}
    rows = store._rows("SELECT run_id, name, body FROM results ORDER BY rowid")
    legacy = {(int(run_id), str(name)) for run_id, name, _ in rows}
    statements: list[Statement] = []
    for run_id, name, body in rows:
        run_id, name = int(run_id), str(name)
        if name.startswith(LEGACY_PREFIX):
            statements += _moved(run_id, name, body, has_status=(run_id, "_status") in legacy)
            continue
        upgraded = _with_threshold_sources(body, name, _configured(configs.get(run_id)))
        if upgraded is not None:
            statements.append(
                (
                    "UPDATE results SET body = ? WHERE run_id = ? AND name = ?",
                    (upgraded, run_id, name),
                )
            )
    return statements


def _moved(run_id: int, name: str, body: Any, *, has_status: bool) -> list[Statement]:
    """Move the pseudo-result ``name`` of run ``run_id`` to ``run_meta``."""
    insert = "INSERT OR REPLACE INTO run_meta VALUES (?, ?, ?)"
    statements: list[Statement] = [
        (insert, (run_id, name[len(LEGACY_PREFIX) :], body)),
        ("DELETE FROM results WHERE run_id = ? AND name = ?", (run_id, name)),
    ]
    if name == "_engine" and not has_status:
        nested = _loaded(body).get("_status")
        if isinstance(nested, Mapping):  # the oldest stores kept the state inside the totals
            statements.append((insert, (run_id, STATUS, canonical_json(nested))))
    return statements


def _with_threshold_sources(body: Any, name: str, configured: Mapping[str, Any]) -> str | None:
    """``body`` with ``threshold_source`` on every finding that lacks it, as the card derived it;
    None when nothing changes (or the body cannot be read)."""
    result = _loaded(body)
    findings = result.get("findings")
    if not isinstance(findings, list):
        return None
    probe = str(result.get("probe") or name)
    changed = False
    for finding in findings:
        if not isinstance(finding, dict) or "threshold_source" in finding:
            continue
        source = None
        if finding.get("threshold") is not None:
            named = str(finding.get("name", ""))
            aimed = f"{probe}.{named}" in configured or named in configured
            source = "config" if aimed else "probe"
        finding["threshold_source"] = source
        changed = True
    return canonical_json(result) if changed else None


def _configured(config: Any) -> Mapping[str, Any]:
    """The thresholds run's config set (empty when it set none, or cannot be read)."""
    thresholds = _loaded(config).get("thresholds")
    return thresholds if isinstance(thresholds, Mapping) else {}


def _loaded(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
