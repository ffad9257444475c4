"""Merging two run stores into a third, by request key.

Verdicts are merged by request key (the hash of judge, rubric, fields and trial, so one key is
one question to one judge). A key in one store only is taken as it is. A key in both:

- the two verdicts say the same (status, score, label, label distribution): one row is kept,
  the same one whichever store comes first (the smaller row in canonical JSON);
- one is an error and the other is not: the one that is not (an error is a failed attempt,
  which the next audit would repeat anyway);
- both are errors: as for equal verdicts;
- otherwise they **conflict**: the key is left out of the merged store (the next audit asks the
  judge again) and reported with both verdicts. Nothing is silently overwritten.

Every other table is a union: judges, rubrics and batch requests by their key (equal rows, as a
key's row is determined by its content), batches by id. Runs of both stores are kept with their
results, metadata, plans and left-out data rows; a run present in both (same record and
contents) is kept once. Runs are renumbered in the order they started, so ``merge(A, B)`` and
``merge(B, A)`` hold the same content, and ``merge(A, A)`` holds what ``A`` holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.engine.store import _COLUMNS, RunStore, _verdict
from judgeprobe.engine.store_batches import BATCH_COLUMNS
from judgeprobe.errors import StoreError

_KEYED: dict[str, tuple[str, int]] = {
    "judges": ("fingerprint, description", 2),
    "rubrics": ("hash, name, body", 3),
    "batch_requests": ("key, judge, rubric, trial, fields", 5),
    "batches": (", ".join(BATCH_COLUMNS), len(BATCH_COLUMNS)),
}
"""Tables merged as a union by primary key (first column): their columns and how many."""

_PER_RUN: dict[str, str] = {
    "results": "name, body",
    "run_meta": "name, body",
    "skipped_rows": "seq, dataset, path, data_row, data_column, reason",
    "plans": "probe, stage, context, design",
    "plan_roles": "probe, seq, role, key, judge, rubric, trial, fields",
}
"""Tables whose rows belong to a run (``run_id`` first): their other columns."""


@dataclass
class MergeReport:
    """What a merge kept, and the keys whose verdicts conflict (left out, with both values)."""

    verdicts: int = 0
    only_first: int = 0
    only_second: int = 0
    same: int = 0
    errors_replaced: int = 0
    runs: int = 0
    conflicts: list[dict[str, Any]] = field(default_factory=list)


def same_verdict(a: Verdict, b: Verdict) -> bool:
    """Whether two verdicts say the same: status, score, label and label distribution."""
    said = (a.status, a.score, a.label, a.distribution)
    return said == (b.status, b.score, b.label, b.distribution)


def merge_stores(first: str | Path, second: str | Path, out: str | Path) -> MergeReport:
    """Merge the run stores ``first`` and ``second`` into the new run store ``out``.

    The inputs are only read (each is copied into memory, and an older one upgraded there), so a
    merge leaves them byte for byte as they were."""
    target = Path(out)
    if target.exists():
        raise StoreError(f"{target}: exists; a merge writes a new run store (give another -o)")
    with RunStore.read_copy(first) as a, RunStore.read_copy(second) as b:
        tables = [_read(a), _read(b)]
    report = MergeReport()
    verdicts = _merge_verdicts(tables[0]["verdicts"], tables[1]["verdicts"], report)
    runs = _merge_runs(tables)
    report.runs = len(runs)
    with RunStore(target) as merged:
        statements: list[tuple[str, Sequence[Sequence[Any]]]] = []
        for name, (columns, width) in _KEYED.items():
            rows = sorted({_canon(r): r for t in tables for r in t[name]}.items())
            marks = ", ".join("?" * width)
            statements.append(
                (f"INSERT OR IGNORE INTO {name} ({columns}) VALUES ({marks})", [r for _, r in rows])
            )
        marks = ", ".join("?" * len(_COLUMNS.split(", ")))
        statements.append(
            (
                f"INSERT INTO verdicts ({_COLUMNS}) VALUES ({marks})",
                [verdicts[k] for k in sorted(verdicts)],
            )
        )
        for run_id, run in enumerate(runs, start=1):
            statements.append(
                (
                    "INSERT INTO runs (id, started, finished, status, config) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [(run_id, *run["record"])],
                )
            )
            for name, columns in _PER_RUN.items():
                width = len(columns.split(", ")) + 1
                statements.append(
                    (
                        f"INSERT INTO {name} (run_id, {columns}) VALUES ({', '.join('?' * width)})",
                        [(run_id, *row) for row in run[name]],
                    )
                )
        merged._transaction(many=[(sql, rows) for sql, rows in statements if rows])
    report.verdicts = len(verdicts)
    return report


def _read(store: RunStore) -> dict[str, list[tuple[Any, ...]]]:
    tables: dict[str, list[tuple[Any, ...]]] = {
        name: [tuple(r) for r in store._rows(f"SELECT {columns} FROM {name}")]
        for name, (columns, _) in _KEYED.items()
    }
    tables["verdicts"] = [tuple(r) for r in store._rows(f"SELECT {_COLUMNS} FROM verdicts")]
    tables["runs"] = [
        tuple(r) for r in store._rows("SELECT id, started, finished, status, config FROM runs")
    ]
    for name, columns in _PER_RUN.items():
        tables[name] = [
            tuple(r) for r in store._rows(f"SELECT run_id, {columns} FROM {name} ORDER BY rowid")
        ]
    return tables


def _canon(row: Sequence[Any]) -> str:
    return canonical_json(list(row))


def _merge_verdicts(
    first: list[tuple[Any, ...]], second: list[tuple[Any, ...]], report: MergeReport
) -> dict[str, tuple[Any, ...]]:
    a = {str(r[0]): r for r in first}
    b = {str(r[0]): r for r in second}
    merged: dict[str, tuple[Any, ...]] = {}
    for key in sorted(set(a) | set(b)):
        if key not in b:
            merged[key] = a[key]
            report.only_first += 1
            continue
        if key not in a:
            merged[key] = b[key]
            report.only_second += 1
            continue
        row_a, row_b = a[key], b[key]
        va, vb = _decoded(row_a), _decoded(row_b)
        a_error, b_error = va.status is VerdictStatus.ERROR, vb.status is VerdictStatus.ERROR
        if same_verdict(va, vb) or (a_error and b_error):
            merged[key] = min(row_a, row_b, key=_canon)
            report.same += 1
        elif a_error != b_error:
            merged[key] = row_b if a_error else row_a
            report.errors_replaced += 1
        else:
            report.conflicts.append({"key": key, "first": _said(va), "second": _said(vb)})
    return merged


def _decoded(row: Sequence[Any]) -> Verdict:
    try:
        return _verdict(row)
    except (TypeError, ValueError, KeyError) as exc:
        raise StoreError(f"verdict {row[0]!r} cannot be read ({exc})") from exc


def _said(verdict: Verdict) -> dict[str, Any]:
    return {
        "status": verdict.status.value,
        "score": verdict.score,
        "label": verdict.label,
        "distribution": verdict.distribution,
    }


def _merge_runs(tables: list[dict[str, list[tuple[Any, ...]]]]) -> list[dict[str, Any]]:
    """Every distinct run of the stores (record and contents), in the order they started."""
    runs: dict[str, dict[str, Any]] = {}
    for table in tables:
        for run_id, *record in table["runs"]:
            run: dict[str, Any] = {"record": tuple(record)}
            for name in _PER_RUN:
                run[name] = [tuple(row[1:]) for row in table[name] if row[0] == run_id]
            signature = canonical_json({k: [list(r) for r in v] if k != "record" else list(v)
                                        for k, v in run.items()})  # fmt: skip
            run["signature"] = signature
            runs.setdefault(signature, run)
    return sorted(runs.values(), key=lambda r: (r["record"][0], r["signature"]))


def describe_conflict(conflict: dict[str, Any]) -> str:
    """One line for a conflicting key: both verdicts."""
    return (
        f"{conflict['key']}: {json.dumps(conflict['first'], sort_keys=True)} vs "
        f"{json.dumps(conflict['second'], sort_keys=True)}"
    )
