"""Verdicts from a promptfoo results file (``promptfoo eval -o results.json``).

promptfoo's JSON output holds ``results.results[]``, one entry per test case and provider, with
the test's ``vars``, the grader's ``gradingResult`` (``pass``, ``score``, ``reason``) and the
entry's ``score`` and ``success``. The item id is the var ``id_var`` (default ``id``); the score is
``gradingResult.score`` (else the entry's ``score``), the grader's reason is the raw answer. An
entry whose provider call failed (an ``error`` and no grading) is a failed verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgeprobe.data._records import Table, is_missing, read_json
from judgeprobe.errors import DataError
from judgeprobe.judges.recorded_formats._rows import rows_table


def read_promptfoo(path: Path, *, id_var: str = "id") -> Table:
    """The verdict rows of the promptfoo results file ``path`` (see the module docstring)."""
    document = read_json(path)
    results = document.get("results") if isinstance(document, Mapping) else None
    entries = results.get("results") if isinstance(results, Mapping) else None
    if not isinstance(entries, list):
        raise DataError(
            "not a promptfoo results file: it has no results.results list", path=str(path)
        )
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, entry in enumerate(entries, start=1):
        rows.append((number, _row(entry, id_var, path, number)))
    return rows_table(path, rows)


def _row(entry: Any, id_var: str, path: Path, number: int) -> dict[str, Any]:
    where = str(path)
    if not isinstance(entry, Mapping):
        raise DataError("results.results entry is not an object", path=where, row=number)
    variables = entry.get("vars")
    if not isinstance(variables, Mapping):
        test_case = entry.get("testCase")
        variables = test_case.get("vars") if isinstance(test_case, Mapping) else None
    if not isinstance(variables, Mapping) or is_missing(variables.get(id_var)):
        raise DataError(
            f"results.results entry has no var {id_var!r} (the item id; choose the var with "
            "the judge option id_var=NAME)",
            path=where,
            row=number,
        )
    row: dict[str, Any] = {"id": str(variables[id_var])}
    grading = entry.get("gradingResult")
    grading = grading if isinstance(grading, Mapping) else {}
    score = grading.get("score", None if entry.get("error") else entry.get("score"))
    if score is None:
        row["status"] = f"promptfoo: {entry.get('error') or 'no score'}"
    elif isinstance(score, bool) or not isinstance(score, int | float):
        raise DataError(f"score {score!r} is not a number", column="score", path=where, row=number)
    else:
        row["score"] = float(score)
    row["raw"] = str(grading.get("reason") or "")
    return row
