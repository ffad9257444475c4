"""The run store: one SQLite file holding every request, verdict, result and config of an audit.

Written append-only with one transaction per verdict (WAL mode), so a crash loses at most the calls
in flight; read back by key through the primary-key index, so a lookup costs the same in the
10th run as in the first. A report is rendered from this file alone.

Nothing secret is written: every text goes through a :class:`~judgeprobe._util.redaction.Redactor`
that knows the values of secret-looking environment variables and whatever the engine's judge
declares (its API key, secrets in its request body or base URL), and recognises URL credentials.
What :meth:`RunStore.put` stores (and returns) is the redacted verdict.

The schema is versioned (``meta.schema_version``): a store written by an older judgeprobe is
brought up to date when it is opened (a step adds tables, or moves what a store kept in an older
layout to where it is kept now, so nothing stored is lost and its card reads the same), and a
store from a newer judgeprobe is refused with a :class:`~judgeprobe.errors.StoreError`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe._util.redaction import MIN_DECLARED_LENGTH, Redactor
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.engine.store_base import FRESH_START, StoreBase
from judgeprobe.engine.store_batches import BATCHES_SCHEMA, BatchStore
from judgeprobe.engine.store_meta import RUN_META_SCHEMA, RunMetaStore
from judgeprobe.engine.store_plans import PLANS_SCHEMA, PlanStore
from judgeprobe.engine.store_skipped import SKIPPED_ROWS_SCHEMA, SkippedRowsStore
from judgeprobe.engine.store_upgrade import upgrade_to_5
from judgeprobe.errors import StoreError
from judgeprobe.rubrics import Rubric

SCHEMA_VERSION = 5
"""1: verdicts, runs and results; 2: adds ``skipped_rows`` (the data rows each run left out);
3: adds ``plans`` and ``plan_roles`` (each probe's plan: its design and its requests by role);
4: adds ``batch_requests`` and ``batches`` (the requests sent in provider batches, each batch);
5: adds ``run_meta`` (a run's rounds, engine totals and state, until then pseudo-results) and
stores each finding's threshold source (:mod:`judgeprobe.engine.store_upgrade`)."""


_MIGRATIONS: dict[int, str | Callable[[StoreBase], list[tuple[str, Sequence[Any]]]]] = {
    1: SKIPPED_ROWS_SCHEMA,
    2: PLANS_SCHEMA,
    3: BATCHES_SCHEMA,
    4: upgrade_to_5,
}
"""What takes a store from schema ``version`` to ``version + 1``: a script, or a function giving
the statements run in one transaction with the new version."""

_SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judges (fingerprint TEXT PRIMARY KEY, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rubrics (hash TEXT PRIMARY KEY, name TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    rubric TEXT NOT NULL,
    trial INTEGER NOT NULL,
    fields TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    label TEXT,
    distribution TEXT,
    raw_text TEXT NOT NULL,
    error TEXT,
    latency_s REAL NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    meta TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    finished REAL,
    status TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""

_SCHEMA = _SCHEMA_1 + SKIPPED_ROWS_SCHEMA + PLANS_SCHEMA + BATCHES_SCHEMA + RUN_META_SCHEMA
"""Every table of the current schema; ``IF NOT EXISTS`` leaves an existing store's data alone."""

_COLUMNS = (
    "key, judge, rubric, trial, fields, status, score, label, distribution, raw_text, error, "
    "latency_s, prompt_tokens, completion_tokens, attempts, meta, created"
)
_TABLES: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "judges": ("fingerprint", "description"),
    "rubrics": ("hash", "name", "body"),
    "verdicts": tuple(_COLUMNS.split(", ")),
    "runs": ("id", "started", "finished", "status", "config"),
    "results": ("run_id", "name", "body"),
}
"""Every table of a run store and its columns, in order: what an existing file must hold."""


class RunStore(PlanStore, SkippedRowsStore, BatchStore, RunMetaStore):
    """A SQLite run store. Use as a context manager, or call :meth:`close`.

    The plans (:class:`~judgeprobe.engine.store_plans.PlanStore`), the data rows each run
    left out (:class:`~judgeprobe.engine.store_skipped.SkippedRowsStore`), the provider
    batches (:class:`~judgeprobe.engine.store_batches.BatchStore`) and each run's metadata
    (:class:`~judgeprobe.engine.store_meta.RunMetaStore`) have their own modules; their
    methods are the store's.

    Examples
    --------
    >>> store = RunStore(":memory:")
    >>> store.count()
    0
    >>> store.close()
    """

    def __init__(self, path: str | Path, *, secrets: Sequence[str] = ()) -> None:
        self.path = str(path)
        self.redactor = Redactor(secrets, min_length=MIN_DECLARED_LENGTH)
        """Applied to every text written; :meth:`add_secrets` teaches it more secrets."""
        if self.path != ":memory:":
            if Path(self.path).is_dir():
                raise StoreError(f"{self.path}: is a folder, not a run store file")
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot create its folder ({exc.strerror})") from exc
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the run store ({exc})") from exc
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def read_copy(cls, path: str | Path) -> RunStore:
        """The run store at ``path`` copied into memory, the file only read: an older store is
        upgraded in the copy, never in place (for what must leave its inputs as they are, such
        as a merge). Changes to the copy are lost when it is closed; errors name ``path``.

        A store whose write-ahead log is still beside it (its writer is running, or was killed)
        is read through a read-only SQLite connection, which folds the log in; any other is
        read as bytes, so not even SQLite's shared-memory file is made beside it.
        """
        source = Path(path)
        if not source.is_file():
            raise StoreError(f"{path}: no run store there")
        store = cls(":memory:")
        store.path = str(path)
        try:
            if source.with_name(source.name + "-wal").exists():
                uri = f"{source.resolve().as_uri()}?mode=ro"
                with closing(sqlite3.connect(uri, uri=True)) as db:
                    db.backup(store._db)
            else:
                store._db.deserialize(_rollback_image(source.read_bytes()))
            store._open()
        except (sqlite3.Error, OSError) as exc:
            store.close()
            raise StoreError(f"{path}: cannot read the run store ({exc})") from exc
        except BaseException:
            store.close()
            raise
        return store

    def _open(self) -> None:
        """Check an existing file is a run store of this schema, or make a new one."""
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            tables = self._table_columns()
            if tables:
                self._check_tables(tables)
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable judgeprobe run store ({exc})") from exc
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", str(SCHEMA_VERSION))
        elif not version.strip().isdigit():
            raise StoreError(
                f"{self.path}: the run store's schema version {version!r} is not a number; "
                f"the file was altered ({FRESH_START})"
            )
        else:
            self._migrate(version)

    def _migrate(self, stored: str) -> None:
        """Bring a store of an older schema up to :data:`SCHEMA_VERSION`; refuse a newer one."""
        version = int(stored)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: run store schema {version}, this judgeprobe reads schemas 1 to "
                f"{SCHEMA_VERSION}; a newer judgeprobe wrote it"
            )
        if version < 1:
            raise StoreError(
                f"{self.path}: run store schema {stored!r} is not one judgeprobe wrote"
            )
        while version < SCHEMA_VERSION:
            step = _MIGRATIONS[version]
            version += 1
            mark = ("INSERT OR REPLACE INTO meta VALUES (?, ?)", ("schema_version", str(version)))
            if isinstance(step, str):
                self._db.executescript(step)
                self._transaction([mark])
            else:
                self._transaction([*step(self), mark])

    def _table_columns(self) -> dict[str, tuple[str, ...]]:
        names = [
            str(row[0])
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        quoted = {name: name.replace('"', '""') for name in names}
        return {
            name: tuple(str(col[1]) for col in self._db.execute(f'PRAGMA table_info("{q}")'))
            for name, q in quoted.items()
        }

    def _check_tables(self, tables: Mapping[str, tuple[str, ...]]) -> None:
        """Refuse a file that is not a run store, or a run store with tables missing or changed."""
        if not set(tables) & set(_TABLES):
            raise StoreError(
                f"{self.path}: an SQLite file that is not a judgeprobe run store (its tables: "
                f"{', '.join(sorted(tables))}); {FRESH_START}"
            )
        missing = [name for name in _TABLES if name not in tables]
        if missing:
            raise StoreError(
                f"{self.path}: the run store lacks the table(s) {', '.join(missing)}; the file "
                f"was damaged or altered ({FRESH_START})"
            )
        for name, columns in _TABLES.items():
            if tables[name] != columns:
                raise StoreError(
                    f"{self.path}: the run store's table {name!r} has the columns "
                    f"{', '.join(tables[name])}, not {', '.join(columns)}; the file was altered "
                    f"({FRESH_START})"
                )

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def add_secrets(self, secrets: Sequence[str]) -> None:
        """Redact ``secrets`` from everything written from now on (a judge's API key...)."""
        self.redactor.add(secrets)

    # -- metadata -----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return None if not rows else str(rows[0][0])

    def set_meta(self, key: str, value: str) -> None:
        self._execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, self.redactor.text(value)))

    def register_judge(self, fingerprint: str, description: Mapping[str, Any]) -> None:
        self._execute(
            "INSERT OR IGNORE INTO judges VALUES (?, ?)",
            (fingerprint, canonical_json(self.redactor.value(description))),
        )

    def register_rubric(self, rubric: Rubric) -> None:
        self._execute(
            "INSERT OR IGNORE INTO rubrics VALUES (?, ?, ?)",
            (
                rubric.hash,
                self.redactor.text(rubric.name),
                self.redactor.text(rubric.model_dump_json()),
            ),
        )

    def judges(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for fingerprint, body in self._rows("SELECT fingerprint, description FROM judges"):
            found[str(fingerprint)] = self._mapping(body, f"judge {fingerprint!r}")
        return found

    def rubrics(self) -> dict[str, Rubric]:
        found: dict[str, Rubric] = {}
        for rubric_hash, body in self._rows("SELECT hash, body FROM rubrics"):
            try:
                found[str(rubric_hash)] = Rubric.model_validate_json(body)
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                raise self._damaged(f"rubric {rubric_hash!r}", exc) from exc
        return found

    # -- verdicts -----------------------------------------------------------------------------
    def put(self, request: Request, verdict: Verdict) -> Verdict:
        """Store one verdict in its own transaction (replacing an earlier failed one).

        Returns the verdict as stored: its raw text, error and meta redacted, so what the engine
        hands on is what a later run reads back.
        """
        verdict = self._redact_verdict(verdict)
        fields = [(name, self.redactor.text(text)) for name, text in request.fields]
        self._execute(
            f"INSERT OR REPLACE INTO verdicts ({_COLUMNS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _row(request, verdict, fields),
        )
        return verdict

    def _redact_verdict(self, verdict: Verdict) -> Verdict:
        redact = self.redactor
        raw_text = redact.text(verdict.raw_text)
        error = None if verdict.error is None else redact.text(verdict.error)
        meta = redact.value(dict(verdict.meta), names=False) if verdict.meta else verdict.meta
        if raw_text == verdict.raw_text and error == verdict.error and meta == verdict.meta:
            return verdict
        return verdict.but(raw_text=raw_text, error=error, meta=meta)

    def get_many(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """Stored verdicts for ``keys`` (missing keys are absent from the result)."""
        found: dict[str, Verdict] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._rows(f"SELECT {_COLUMNS} FROM verdicts WHERE key IN ({marks})", chunk)
            for row in rows:
                found[row[0]] = self._verdict(row)
        return found

    def get(self, key: str) -> Verdict | None:
        return self.get_many([key]).get(key)

    def count(self, status: VerdictStatus | None = None) -> int:
        if status is None:
            rows = self._rows("SELECT COUNT(*) FROM verdicts")
        else:
            rows = self._rows("SELECT COUNT(*) FROM verdicts WHERE status = ?", (status.value,))
        return int(rows[0][0])

    def iter_verdicts(self) -> Iterator[tuple[dict[str, Any], Verdict]]:
        """Every stored verdict with its request record (judge, rubric hash, trial, fields)."""
        cursor = self._execute(f"SELECT {_COLUMNS} FROM verdicts ORDER BY created, key")
        while True:
            try:
                rows = cursor.fetchmany(500)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: the run store cannot be read ({exc})") from exc
            if not rows:
                return
            for row in rows:
                record = {
                    "key": row[0],
                    "judge": row[1],
                    "rubric": row[2],
                    "trial": row[3],
                    "fields": self._fields(row),
                }
                yield record, self._verdict(row)

    # -- runs and results ---------------------------------------------------------------------
    def start_run(self, config: Mapping[str, Any]) -> int:
        cursor = self._execute(
            "INSERT INTO runs (started, status, config) VALUES (?, 'running', ?)",
            (time.time(), canonical_json(self.redactor.value(config))),
        )
        return int(cursor.lastrowid or 0)

    def finish_run(self, run_id: int, status: str) -> None:
        self._execute(
            "UPDATE runs SET finished = ?, status = ? WHERE id = ?", (time.time(), status, run_id)
        )

    def put_result(self, run_id: int, name: str, body: Mapping[str, Any]) -> None:
        """Record probe ``name``'s result of run ``run_id`` (``ProbeResult.to_dict``); the run's
        own records (rounds, engine totals, state) go to :meth:`put_run_meta`."""
        self._execute(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?)",
            (run_id, self.redactor.text(name), canonical_json(self.redactor.value(body))),
        )

    def latest_run(self) -> tuple[int, dict[str, Any], str] | None:
        rows = self._rows("SELECT id, config, status FROM runs ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        run_id, config, status = rows[0]
        return int(run_id), self._mapping(config, f"the config of run {run_id}"), str(status)

    def run_ids(self) -> list[int]:
        """The ids of every run in the store, oldest first."""
        return [int(row[0]) for row in self._rows("SELECT id FROM runs ORDER BY id")]

    def run(self, run_id: int) -> dict[str, Any] | None:
        """Run ``run_id``: id, started and finished (epoch seconds), status and config."""
        rows = self._rows(
            "SELECT id, started, finished, status, config FROM runs WHERE id = ?", (run_id,)
        )
        if not rows:
            return None
        row = rows[0]
        try:
            return {
                "id": int(row[0]),
                "started": float(row[1]),
                "finished": None if row[2] is None else float(row[2]),
                "status": str(row[3]),
                "config": self._mapping(row[4], f"the config of run {run_id}"),
            }
        except (TypeError, ValueError) as exc:
            raise self._damaged(f"run {run_id}", exc) from exc

    def results(self, run_id: int) -> dict[str, dict[str, Any]]:
        rows = self._rows(
            "SELECT name, body FROM results WHERE run_id = ? ORDER BY rowid", (run_id,)
        )
        return {
            str(name): self._mapping(body, f"the result {name!r} of run {run_id}")
            for name, body in rows
        }

    # -- decoding -----------------------------------------------------------------------------
    def _fields(self, row: Sequence[Any]) -> dict[str, Any]:
        """The input fields of a ``verdicts`` row (stored as a JSON list of name-value pairs)."""
        try:
            return dict(json.loads(row[4]))
        except (TypeError, ValueError) as exc:
            raise self._damaged(f"the fields of verdict {row[0]!r}", exc) from exc

    def _verdict(self, row: Sequence[Any]) -> Verdict:
        try:
            return _verdict(row)
        except (TypeError, ValueError, KeyError) as exc:
            raise self._damaged(f"verdict {row[0]!r}", exc) from exc


def _row(request: Request, verdict: Verdict, fields: Sequence[tuple[str, str]]) -> tuple[Any, ...]:
    return (
        request.key,
        request.judge,
        request.rubric.hash,
        request.trial,
        canonical_json(fields),
        verdict.status.value,
        verdict.score,
        verdict.label,
        None if verdict.distribution is None else canonical_json(verdict.distribution),
        verdict.raw_text,
        verdict.error,
        verdict.latency_s,
        _token_count(verdict.prompt_tokens),
        _token_count(verdict.completion_tokens),
        verdict.attempts,
        canonical_json(verdict.meta) if verdict.meta else None,
        time.time(),
    )


def _token_count(value: Any) -> int:
    """A token count the ``verdicts`` table can hold: an impossible one (not an integer,
    negative, past 2**53: a server's absurd usage) as 0, never an overflow that stops the run."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53
    return int(value) if ok else 0


def _verdict(row: Sequence[Any]) -> Verdict:
    """The verdict of a ``verdicts`` row; TypeError or ValueError when a value has a wrong type."""
    score = row[6]
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise TypeError(f"score {score!r} is not a number")
    distribution = None if row[8] is None else json.loads(row[8])
    if distribution is not None and not isinstance(distribution, dict):
        raise TypeError(f"distribution {row[8]!r:.60} is not a JSON object")
    meta = {} if row[15] is None else json.loads(row[15])
    if not isinstance(meta, dict):
        raise TypeError(f"meta {row[15]!r:.60} is not a JSON object")
    for name, value in (("trial", row[3]), ("prompt_tokens", row[12]),
                        ("completion_tokens", row[13]), ("attempts", row[14])):  # fmt: skip
        if not isinstance(value, int):
            raise TypeError(f"{name} {value!r} is not an integer")
    if not isinstance(row[11], int | float):
        raise TypeError(f"latency_s {row[11]!r} is not a number")
    return Verdict(
        status=VerdictStatus(row[5]),
        score=None if score is None else float(score),
        label=row[7],
        distribution=distribution,
        raw_text=str(row[9]),
        error=row[10],
        key=row[0],
        trial=row[3],
        latency_s=float(row[11]),
        prompt_tokens=row[12],
        completion_tokens=row[13],
        attempts=row[14],
        meta=meta,
    )


def _rollback_image(data: bytes) -> bytes:
    """An SQLite file's bytes marked as a rollback-journal database (header bytes 18 and 19),
    as an in-memory copy cannot keep a write-ahead log; other bytes are left as they are."""
    if data.startswith(b"SQLite format 3\x00") and len(data) >= 100:
        return data[:18] + b"\x01\x01" + data[20:]
    return data


def open_store(path: str | Path | None) -> RunStore:
    """A run store at ``path``; an in-memory one when ``path`` is None."""
    return RunStore(":memory:" if path is None else path)
