"""The watch store: every check of a watch, beside the audit it watches (``watch.sqlite``).

A :class:`WatchStore` is a run store (:class:`~judgeprobe.engine.store.RunStore`): the engine
caches, retries and resumes a check's judge calls in it as in an audit's, and its ``verdicts``
table keeps every verdict of every check (check ``c`` judges its anchors at trial
:func:`check_trial` ``(c)``, so no check is ever answered from another). Its own tables:

- ``watch_anchors``: the anchors, frozen when the first check starts (item, fields, the audited
  request's key, its decision);
- ``watch_null``: the rerun pairs of the null (the audit's, and the first check's when it
  measured them);
- ``watch_checks``: one row per check: when, its state (``running``, ``complete``, ``stopped``),
  how many anchors it drew, the judge's identity then (:mod:`judgeprobe.watch.identity`);
- ``watch_requests``: which request each check asked for which anchor, by role (``anchor``, or
  ``null-first`` and ``null-again`` for the null's pairs).

What the watch was set up with (the audit, its judge and rubric, the seed, the level, the stated
change) is one JSON value under the meta key :data:`SETTINGS_KEY`; it is fixed by the first check,
since the test's prior and the anchors' draws must not move with the data.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe.engine.store import RunStore
from judgeprobe.watch.anchors import Anchor, NullPair

STORE_NAME = "watch.sqlite"
SETTINGS_KEY = "watch.settings"
TRIAL_OFFSET = 1000
"""Check ``c`` asks for trial ``1000 + c``: far from the audit's own reruns (trials 1 to 3)."""

WATCH_SCHEMA = """
CREATE TABLE IF NOT EXISTS watch_anchors (
    item_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    key TEXT NOT NULL,
    fields TEXT NOT NULL,
    decision TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS watch_null (
    item_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    source TEXT NOT NULL,
    first TEXT NOT NULL,
    again TEXT NOT NULL,
    PRIMARY KEY (item_id, trial, source)
);
CREATE TABLE IF NOT EXISTS watch_checks (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,
    finished REAL,
    status TEXT NOT NULL,
    anchors INTEGER NOT NULL,
    identity TEXT NOT NULL,
    note TEXT
);
CREATE TABLE IF NOT EXISTS watch_requests (
    check_id INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (check_id, item_id, role)
);
"""

ANCHOR, NULL_FIRST, NULL_AGAIN = "anchor", "null-first", "null-again"


def check_trial(check: int) -> int:
    """The trial at which check ``check`` (from 1) judges its anchors.

    Examples
    --------
    >>> check_trial(1)
    1001
    """
    return TRIAL_OFFSET + check


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One check as stored: id, times, state, anchors drawn, identity, note."""

    check: int
    started: float
    finished: float | None
    status: str
    anchors: int
    identity: dict[str, Any]
    note: str | None


class WatchStore(RunStore):
    """A run store with the watch's tables (see the module). Use as a context manager."""

    def __init__(self, path: Any, *, secrets: Sequence[str] = ()) -> None:
        super().__init__(path, secrets=secrets)
        try:
            self._db.executescript(WATCH_SCHEMA)
        except Exception:
            self.close()
            raise

    def __enter__(self) -> WatchStore:
        return self

    # -- settings, anchors and null ----------------------------------------------------------
    def settings(self) -> dict[str, Any] | None:
        """The settings of the watch, or None before its first check."""
        text = self.get_meta(SETTINGS_KEY)
        return None if text is None else self._mapping(text, "the watch's settings")

    def set_settings(self, settings: Mapping[str, Any]) -> None:
        self.set_meta(SETTINGS_KEY, self.redactor.text(canonical_json(dict(settings))))

    def put_anchors(self, anchors: Sequence[Anchor]) -> None:
        """Freeze the anchors (once: the first check)."""
        rows = [
            (
                a.item_id,
                seq,
                a.key,
                canonical_json([[f, self.redactor.text(t)] for f, t in a.fields]),
                a.decision,
            )
            for seq, a in enumerate(anchors)
        ]
        self._transaction(many=[("INSERT INTO watch_anchors VALUES (?, ?, ?, ?, ?)", rows)])

    def anchors(self) -> list[Anchor]:
        """The frozen anchors, in the order they were stored."""
        found = []
        for item_id, key, fields, decided in self._rows(
            "SELECT item_id, key, fields, decision FROM watch_anchors ORDER BY seq"
        ):
            try:
                pairs = tuple((str(f), str(t)) for f, t in json.loads(fields))
            except (TypeError, ValueError) as exc:
                raise self._damaged(f"the fields of anchor {item_id!r}", exc) from exc
            found.append(Anchor(str(item_id), pairs, str(key), str(decided)))
        return found

    def put_null(self, pairs: Sequence[NullPair]) -> None:
        rows = [(p.item_id, p.trial, p.source, p.first, p.again) for p in pairs]
        self._transaction(many=[("INSERT OR REPLACE INTO watch_null VALUES (?, ?, ?, ?, ?)", rows)])

    def null_pairs(self) -> list[NullPair]:
        return [
            NullPair(str(i), int(t), str(a), str(b), str(s))
            for i, t, s, a, b in self._rows(
                "SELECT item_id, trial, source, first, again FROM watch_null "
                "ORDER BY source, item_id, trial"
            )
        ]

    # -- checks -------------------------------------------------------------------------------
    def start_check(self, check: int, anchors: int, identity: Mapping[str, Any]) -> None:
        """Record check ``check`` as running (a check resumed keeps its start)."""
        body = self.redactor.text(canonical_json(dict(identity)))
        self._transaction(
            [
                (
                    "INSERT INTO watch_checks VALUES (?, ?, NULL, 'running', ?, ?, NULL) "
                    "ON CONFLICT(id) DO UPDATE SET status = 'running', anchors = excluded.anchors",
                    (check, time.time(), anchors, body),
                )
            ]
        )

    def finish_check(
        self, check: int, status: str, identity: Mapping[str, Any], note: str | None = None
    ) -> None:
        body = self.redactor.text(canonical_json(dict(identity)))
        self._transaction(
            [
                (
                    "UPDATE watch_checks SET finished = ?, status = ?, identity = ?, note = ? "
                    "WHERE id = ?",
                    (
                        time.time(),
                        status,
                        body,
                        None if note is None else self.redactor.text(note),
                        check,
                    ),
                )
            ]
        )

    def checks(self) -> list[CheckRow]:
        """Every check, oldest first."""
        return [
            CheckRow(
                int(i),
                float(started),
                None if finished is None else float(finished),
                str(status),
                int(anchors),
                self._mapping(identity, f"the identity of check {i}"),
                None if note is None else str(note),
            )
            for i, started, finished, status, anchors, identity, note in self._rows(
                "SELECT id, started, finished, status, anchors, identity, note FROM watch_checks "
                "ORDER BY id"
            )
        ]

    def put_requests(self, check: int, rows: Sequence[tuple[str, str, str]]) -> None:
        """Record the ``(item_id, role, key)`` of each request check ``check`` asks."""
        self._transaction(
            many=[
                (
                    "INSERT OR REPLACE INTO watch_requests VALUES (?, ?, ?, ?)",
                    [(check, item, role, key) for item, role, key in rows],
                )
            ]
        )

    def requests(self, check: int) -> list[tuple[str, str, str]]:
        """The ``(item_id, role, key)`` of check ``check``'s requests."""
        return [
            (str(item), str(role), str(key))
            for item, role, key in self._rows(
                "SELECT item_id, role, key FROM watch_requests WHERE check_id = ? "
                "ORDER BY role, item_id",
                (check,),
            )
        ]
