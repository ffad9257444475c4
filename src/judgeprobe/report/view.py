"""Card values as plain text rows, shared by the Markdown and HTML renderers (neither escapes here).

Probe tables are free-form JSON; :func:`tabulate` turns the common shapes (a list of records, a
list of values, a mapping) into columns and rows, and anything else into one JSON cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.report.text import fmt_number

MAX_ROWS = 50
MAX_COLUMNS = 10
USAGE_ROWS = (
    ("requests", "distinct requests"),
    ("calls", "judge calls made"),
    ("cached", "answered from the run store"),
    ("ok", "verdicts ok"),
    ("error", "failed calls"),
    ("unparseable", "unparseable answers"),
    ("skipped", "skipped (input longer than the context window)"),
    ("missing", "not judged"),
    ("retries", "retries"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
)
ENGINE_ROWS = (
    ("requested", "requests made by probes"),
    ("distinct", "distinct requests"),
    ("cached", "answered from the run store"),
    ("called", "judge calls made"),
    ("ok", "verdicts ok"),
    ("failed", "failed calls"),
    ("unparseable", "unparseable answers"),
    ("skipped", "skipped (input longer than the context window)"),
    ("pending", "not judged (run stopped)"),
    ("retries", "retries"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
)
STATUS_WORDS = {
    "pass": "PASS",
    "warn": "WARN",
    "fail": "FAIL",
    "inconclusive": "INCONCLUSIVE",
    "info": "info",
    "n/a": "n/a",
}
DATA_KEYS = ("name", "source", "n", "sha256", "skipped")
SKIPPED_ROWS_LISTED = 20
"""How many left-out data rows the Markdown and HTML cards list (the JSON lists more)."""
SKIPPED_COLUMNS = ("Dataset", "File", "Row", "Column", "Reason")


def value_text(value: Any) -> str:
    """A JSON value as text: numbers formatted, strings as they are, the rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt_number(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def params_text(params: Any, max_len: int = 400) -> str:
    """Probe parameters as ``key=value, ...``."""
    if not isinstance(params, Mapping) or not params:
        return value_text(params) if params else "defaults"
    text = ", ".join(f"{k}={value_text(v)}" for k, v in params.items())
    return text if len(text) <= max_len else text[: max_len - 1] + "…"


def threshold_text(finding: Mapping[str, Any]) -> str:
    """The threshold a finding was judged against and who set it, e.g. ``fail >= 0.1 (probe)``."""
    threshold = finding.get("threshold")
    if threshold is None:
        return "none"
    op = ">=" if threshold["higher_is_worse"] else "<="
    parts = [
        f"{word} {op} {fmt_number(threshold[word])}"
        for word in ("fail", "warn")
        if threshold.get(word) is not None
    ]
    return (", ".join(parts) or "none") + f" ({finding.get('threshold_source')})"


def interval_text(ci: Mapping[str, Any], reason: str | None = None) -> str:
    """``[low, high] (95% method)``; an undefined estimate's ``reason`` stands for the method."""
    level = f"{round(float(ci.get('level') or 0.95) * 100):d}%"
    said = ci.get("method") or reason
    method = f" {said}" if said else ""
    return f"[{fmt_number(ci.get('low'))}, {fmt_number(ci.get('high'))}] ({level}{method})"


def side_interval(side: Mapping[str, Any]) -> str:
    """``estimate [low, high]`` of one run's finding (``low`` and ``high`` beside the estimate)
    or of a difference (under ``ci``); the estimate alone when the interval is undefined."""
    low, high = side.get("low"), side.get("high")
    if "ci" in side:
        low, high = side["ci"].get("low"), side["ci"].get("high")
    text = fmt_number(side.get("estimate"))
    if low is None or high is None:
        return text
    return f"{text} [{fmt_number(low)}, {fmt_number(high)}]"


def labels_text(labels: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def status_text(finding: Mapping[str, Any]) -> str:
    status = str(finding.get("status"))
    word = STATUS_WORDS.get(status, status)
    borderline = finding.get("certainty") == "borderline" and status != "inconclusive"
    return word + (" (borderline)" if borderline else "")


def descriptions(findings: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Each finding name's description, once, in order of first appearance."""
    described: dict[str, str] = {}
    for finding in findings:
        if finding.get("description"):
            described.setdefault(str(finding["name"]), str(finding["description"]))
    return list(described.items())


def engine_rows(totals: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The engine's totals as (label, count), known counters first in a reading order."""
    labels = dict(ENGINE_ROWS)
    known = [(labels[k], totals[k]) for k, _ in ENGINE_ROWS if k in totals]
    return known + [(k.replace("_", " "), v) for k, v in totals.items() if k not in labels]


def data_rows(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    keys = [k for k in DATA_KEYS if k in data] + [k for k in data if k not in DATA_KEYS]
    return [(k, value_text(data[k])) for k in keys]


def skipped_rows(tested: Mapping[str, Any]) -> tuple[int, list[list[str]], int]:
    """The data rows left out: (how many, rows of text to list, how many are not listed).

    A card older than version 1.1 has no such list: none are listed.
    """
    skipped = tested.get("skipped_rows")
    if not isinstance(skipped, Mapping) or not skipped.get("count"):
        return 0, [], 0
    listed = [
        [value_text(row.get(key)) for key in ("dataset", "path", "row", "column", "reason")]
        for row in list(skipped.get("rows") or [])[:SKIPPED_ROWS_LISTED]
    ]
    count = int(skipped["count"])
    return count, listed, count - len(listed)


def tabulate(table: Any) -> tuple[list[str], list[list[str]], int]:
    """``table`` as (columns, rows of text, rows left out)."""
    if isinstance(table, Sequence) and not isinstance(table, str) and table:
        shown = table[:MAX_ROWS]
        if all(isinstance(row, Mapping) for row in table):
            columns: list[str] = []
            for row in table:
                columns += [str(k) for k in row if str(k) not in columns]
            columns = columns[:MAX_COLUMNS]
            rows = [[value_text(row.get(c)) for c in columns] for row in shown]
            return columns, rows, len(table) - len(shown)
        return ["value"], [[value_text(v)] for v in shown], len(table) - len(shown)
    if isinstance(table, Mapping) and table:
        items = list(table.items())
        rows = [[str(k), value_text(v)] for k, v in items[:MAX_ROWS]]
        return ["", ""], rows, max(0, len(items) - MAX_ROWS)
    return ["value"], [[value_text(table)]], 0
