"""What a run store records about a run beside its probes' results: rounds, engine totals, state.

A run's metadata is not a probe's result, so it has a table of its own (schema 5 and later),
``run_meta``, keyed by run id and name; ``results`` holds the probes' results and nothing else.
The names an audit writes:

- :data:`ROUNDS`: the rounds of an audit sampled until decided (:mod:`judgeprobe.audit.sequential`);
- :data:`ENGINE`: the engine's call totals for the whole run;
- :data:`STATUS`: whether the run completed, and why not (``{"state", "reason"}``);
- :data:`REPAIR`: the summary of the repairs audited against the run
  (:mod:`judgeprobe.audit.repair`).

:class:`RunMetaStore` holds the :class:`~judgeprobe.engine.store.RunStore` methods that write and
read the table. Stores written before it kept these records among the results, under the same
names with a leading underscore (``_rounds``...); :mod:`judgeprobe.engine.store_upgrade` moves
them here when such a store is opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe.engine.store_base import StoreBase

ROUNDS = "rounds"
ENGINE = "engine"
STATUS = "status"
REPAIR = "repair"

RUN_META_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_meta (
    run_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""
"""The table of each run's metadata: one JSON object per run and name."""


class RunMetaStore(StoreBase):
    """The run-metadata methods of :class:`~judgeprobe.engine.store.RunStore` (a mixin)."""

    def put_run_meta(self, run_id: int, name: str, body: Mapping[str, Any]) -> None:
        """Record ``body`` as run ``run_id``'s ``name`` (replacing an earlier one), redacted."""
        self._execute(
            "INSERT OR REPLACE INTO run_meta VALUES (?, ?, ?)",
            (run_id, name, canonical_json(self.redactor.value(body))),
        )

    def run_meta(self, run_id: int) -> dict[str, dict[str, Any]]:
        """Every metadata record of run ``run_id`` by name (empty when it has none)."""
        rows = self._rows(
            "SELECT name, body FROM run_meta WHERE run_id = ? ORDER BY rowid", (run_id,)
        )
        return {
            str(name): self._mapping(body, f"the {name!r} record of run {run_id}")
            for name, body in rows
        }
