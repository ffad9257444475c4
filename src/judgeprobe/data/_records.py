"""Reading raw records from CSV, TSV, JSON lines, JSON and Parquet files.

Every loader goes through :func:`read_table`, so that each one reports a bad file the same way:
a :class:`~judgeprobe.errors.DataError` that names the file, the 1-based data row, the column and,
for text formats, the line where the record starts. :class:`RowProblems` applies the loader's
``on_error`` policy to bad rows: raise at once, or skip the row and count it.

CSV fields may be of any length (the :mod:`csv` module stops at 128 KiB unless told otherwise),
and Parquet binary columns are read as UTF-8 text, never as Python ``b'...'`` reprs.
"""

from __future__ import annotations

import csv
import gzip
import importlib
import io
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe.data.dataset import OnError, SkippedRow
from judgeprobe.errors import DataError, MissingDependencyError

FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")
"""The file formats :func:`read_table` understands (``.gz`` is allowed on the text ones)."""

_SUFFIX_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}

CSV_FIELD_LIMIT = 2**31 - 1
"""The longest CSV field read, in characters: the largest value :func:`csv.field_size_limit`
takes on every platform (a C ``long``), so in practice any field of a file that fits in memory."""


@dataclass(frozen=True, slots=True)
class Record:
    """One data row: its 1-based number, the file line it starts on (text formats), its values."""

    row: int
    line: int | None
    values: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Table:
    """The records of one file, with its columns and any leading ``#`` comment lines."""

    path: str
    columns: tuple[str, ...]
    records: tuple[Record, ...]
    skipped: tuple[SkippedRow, ...] = ()
    comments: tuple[str, ...] = ()


class RowError(DataError):
    """A bad value in one row; the loader turns it into a DataError or a SkippedRow.

    It knows the column, not yet the file or the row: the loader adds those.
    """

    def __init__(self, reason: str, *, column: str | None = None) -> None:
        super().__init__(reason, column=column)


class RowProblems:
    """Applies ``on_error`` to bad rows: raise a DataError, or record a SkippedRow."""

    def __init__(self, path: str, on_error: OnError) -> None:
        self.path = path
        self.on_error = on_error
        self.skipped: list[SkippedRow] = []

    def report(
        self, reason: str, *, row: int | None, column: str | None = None, line: int | None = None
    ) -> None:
        """Raise or record one bad row."""
        if line is not None:
            reason = f"{reason} (line {line})"
        if self.on_error == "raise":
            raise DataError(reason, path=self.path, row=row, column=column)
        self.skipped.append(SkippedRow(self.path, row, column, reason))

    def report_error(self, error: RowError, record: Record) -> None:
        """Raise or record a :class:`RowError` raised while reading ``record``."""
        self.report(error.reason, row=record.row, column=error.column, line=record.line)


def guess_format(path: str | Path) -> str:
    """The format of ``path`` from its suffix (a trailing ``.gz`` is ignored)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = _SUFFIX_FORMATS.get(suffixes[-1]) if suffixes else None
    if suffixes and suffixes[-1] == ".eval":
        raise DataError(
            "an .eval file is an Inspect eval log (a zip archive of a judge's verdicts), not a "
            "table of items: give it as recorded verdicts (--judge recorded:PATH)",
            path=str(path),
        )
    if fmt is None:
        raise DataError(
            f"cannot tell the file format from its name; use one of the suffixes "
            f"{sorted(_SUFFIX_FORMATS)} (optionally with .gz)",
            path=str(path),
        )
    return fmt


def read_table(
    path: str | Path,
    *,
    on_error: OnError = "raise",
    fmt: str | None = None,
    comment_header: bool | None = None,
) -> Table:
    """Read the records of ``path``.

    Parameters
    ----------
    path : str or Path
        The file.
    on_error : {"raise", "skip"}
        What to do with a row that cannot be parsed (a bad JSON line, a CSV row with the wrong
        number of fields). Whole-file problems (missing, empty, not UTF-8) always raise.
    fmt : str, optional
        One of :data:`FORMATS`; guessed from the suffix when omitted.
    comment_header : bool, optional
        CSV and TSV: True drops the block of lines starting with ``#`` *before* the header line
        (notes such as PyRIT's ``# dataset_version=...``; kept in :attr:`Table.comments`); a
        ``#`` further down, e.g. inside a quoted multi-line field, is data. False reads a first
        line starting with ``#`` as the header. None (the default) drops the block too, but
        keeps its last line as the header when it has as many fields as the line after it
        (``#,prompt,response`` over ``1,a,b``: a row-number column named ``#``).
    """
    where = str(path)
    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise DataError(f"unknown format {fmt!r}; expected one of {FORMATS}", path=where)
    if not Path(path).is_file():
        kind = "a directory, not a file" if Path(path).is_dir() else "not found"
        raise DataError(f"file {kind}", path=where)
    problems = RowProblems(where, on_error)
    if fmt == "parquet":
        return _read_parquet(where, problems)
    text = _read_text(where)
    if not text.strip():
        raise DataError("file is empty", path=where)
    if fmt in ("csv", "tsv"):
        table = _read_csv(where, text, "\t" if fmt == "tsv" else ",", comment_header, problems)
    elif fmt == "jsonl":
        table = _read_jsonl(where, text, problems)
    else:
        table = _read_json(where, text, problems)
    if not table.records and not table.skipped:
        raise DataError("file has no data rows", path=where)
    return table


def read_json(path: str | Path) -> Any:
    """The parsed JSON value of a whole file, with file and line in any error."""
    where = str(path)
    if not Path(path).is_file():
        kind = "a directory, not a file" if Path(path).is_dir() else "not found"
        raise DataError(f"file {kind}", path=where)
    text = _read_text(where)
    if not text.strip():
        raise DataError("file is empty", path=where)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"line {exc.lineno}, char {exc.colno}: invalid JSON: {exc.msg}", path=where
        ) from None


def _read_text(where: str) -> str:
    with open(where, "rb") as handle:
        data = handle.read()
    if where.lower().endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise DataError(f"not a valid gzip file ({exc})", path=where) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"line {line}: not UTF-8 text ({exc.reason})", path=where) from None


def _read_csv(
    where: str, text: str, delimiter: str, comment_header: bool | None, problems: RowProblems
) -> Table:
    stream = io.StringIO(text, newline="")
    comments: list[str] = []
    offset = 0
    if comment_header is not False:
        positions: list[int] = []
        while True:
            position = stream.tell()
            line = stream.readline()
            if not line.startswith("#"):
                stream.seek(position)
                break
            positions.append(position)
            comments.append(line.rstrip("\r\n"))
            offset += 1
        if comment_header is None and comments and _is_header(comments[-1], line, delimiter):
            stream.seek(positions[-1])
            comments.pop()
            offset -= 1
    allow_long_csv_fields()
    reader = csv.reader(stream, delimiter=delimiter)
    header: list[str] | None = None
    records: list[Record] = []
    row = 0
    previous = 0
    while True:
        start = offset + previous + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # the reader resumes at the next line: one malformed row costs that row only
            previous = reader.line_num
            if header is None:
                raise DataError(f"line {start}: malformed CSV header ({exc})", path=where) from None
            row += 1
            problems.report(f"malformed CSV ({exc})", row=row, line=start)
            continue
        previous = reader.line_num
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if header is None:
            header = [name.strip() for name in fields]
            _check_header(where, header)
            continue
        row += 1
        if len(fields) != len(header):
            reason = f"has {len(fields)} fields but the header has {len(header)}"
            end = offset + previous
            if end > start:
                reason += f"; the record runs on to line {end}: is a quote left open?"
            problems.report(reason, row=row, line=start)
            continue
        records.append(Record(row, start, dict(zip(header, fields, strict=True))))
    if header is None:
        skipped = f" (its {offset} leading line(s) start with '#': comments)" if offset else ""
        raise DataError(f"file has no header line{skipped}", path=where)
    return Table(where, tuple(header), tuple(records), tuple(problems.skipped), tuple(comments))


def _is_header(last: str, following: str, delimiter: str) -> bool:
    """Whether ``last``, the last of a file's leading ``#`` lines, is its header rather than a
    note: it has as many fields (more than one) as the line after it (a data line)."""
    if not following.strip():
        return False
    count = len(next(csv.reader([last], delimiter=delimiter), []))
    return count > 1 and count >= len(next(csv.reader([following], delimiter=delimiter), []))


def allow_long_csv_fields() -> None:
    """Raise the :mod:`csv` module's field size limit (128 KiB by default) to
    :data:`CSV_FIELD_LIMIT`, so that a long response does not stop the whole file.

    The limit is process-wide; it is only ever raised, and always to the same value, so readers
    in other threads are never cut short. The file is in memory already: no field can be longer.
    """
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)


def csv_header(path: str | Path, *, delimiter: str = ",") -> tuple[str, ...]:
    """The column names of a CSV file's header line, read after its leading ``#`` lines.

    The header is found as :func:`read_table` finds it with ``comment_header=True``. Only the top
    of the file is read, to tell which loader a file is for; an unreadable file has no columns
    (its loader then says what is wrong with it).
    """
    opener: Any = gzip.open if str(path).lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as handle:
            in_comments = True
            for line in handle:
                in_comments = in_comments and line.startswith("#")
                if in_comments or not line.strip():
                    continue
                names = next(csv.reader([line], delimiter=delimiter), [])
                return tuple(name.strip() for name in names)
    except (OSError, EOFError, csv.Error):
        return ()
    return ()


def _check_header(where: str, header: list[str]) -> None:
    seen: set[str] = set()
    for name in header:
        if not name:
            raise DataError("the header has an empty column name", path=where)
        if name in seen:
            raise DataError("the header repeats this column name", path=where, column=name)
        seen.add(name)


def _read_jsonl(where: str, text: str, problems: RowProblems) -> Table:
    records: list[Record] = []
    columns: dict[str, None] = {}
    row = 0
    # Split on "\n" only: JSON strings may hold raw U+2028 and friends.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        row += 1
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.report(f"invalid JSON: {exc.msg} at char {exc.colno}", row=row, line=number)
            continue
        if not isinstance(value, dict):
            problems.report(
                f"expected a JSON object, got {type(value).__name__}", row=row, line=number
            )
            continue
        columns.update(dict.fromkeys(value))
        records.append(Record(row, number, value))
    return Table(where, tuple(columns), tuple(records), tuple(problems.skipped))


def _read_json(where: str, text: str, problems: RowProblems) -> Table:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"line {exc.lineno}, char {exc.colno}: invalid JSON: {exc.msg}", path=where
        ) from None
    if not isinstance(value, list):
        raise DataError(
            f"expected a JSON array of objects at the top level, got {type(value).__name__}",
            path=where,
        )
    return _records_from_list(where, value, problems)


def _records_from_list(where: str, rows: list[Any], problems: RowProblems) -> Table:
    records: list[Record] = []
    columns: dict[str, None] = {}
    for row, value in enumerate(rows, start=1):
        if not isinstance(value, dict):
            problems.report(f"expected a JSON object, got {type(value).__name__}", row=row)
            continue
        columns.update(dict.fromkeys(value))
        records.append(Record(row, None, value))
    return Table(where, tuple(columns), tuple(records), tuple(problems.skipped))


def records_from_rows(where: str, rows: list[Any], *, on_error: OnError = "raise") -> Table:
    """Wrap in-memory rows (dicts, e.g. from the ``datasets`` package) as a :class:`Table`."""
    return _records_from_list(where, rows, RowProblems(where, on_error))


def _read_parquet(where: str, problems: RowProblems) -> Table:
    try:  # imported by name: pyarrow ships no type information
        parquet = importlib.import_module("pyarrow.parquet")
    except ImportError:  # pragma: no cover - pyarrow is a core dependency
        raise MissingDependencyError("pyarrow") from None
    try:
        arrow = parquet.read_table(where)
    except Exception as exc:  # pyarrow raises several unrelated types for bad files
        raise DataError(f"cannot read Parquet ({exc})", path=where) from None
    rows: list[dict[str, Any]] = arrow.to_pylist()
    if not rows:
        raise DataError("file has no data rows", path=where)
    records: list[Record] = []
    for number, values in enumerate(rows, start=1):
        try:
            decoded = {column: _binary_as_text(value, column) for column, value in values.items()}
        except RowError as error:
            problems.report(error.reason, row=number, column=error.column)
            continue
        records.append(Record(number, None, decoded))
    columns: list[str] = arrow.column_names
    return Table(where, tuple(columns), tuple(records), tuple(problems.skipped))


def _binary_as_text(value: Any, column: str) -> Any:
    """``value`` with every ``bytes`` in it (a Parquet binary column) decoded as UTF-8."""
    if isinstance(value, bytes):
        return bytes_as_text(value, column)
    if isinstance(value, list):
        return [_binary_as_text(v, column) for v in value]
    if isinstance(value, dict):
        return {k: _binary_as_text(v, column) for k, v in value.items()}
    return value


def bytes_as_text(value: bytes, column: str) -> str:
    """Binary data as UTF-8 text; a :class:`RowError` naming ``column`` when it is not UTF-8."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RowError(
            f"binary value is not UTF-8 text (byte {exc.start}: {exc.reason})", column=column
        ) from None


def is_missing(value: Any) -> bool:
    """True for None, NaN and blank strings: a value that is not there."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and not value.strip()


def as_text(value: Any, column: str, *, allow_empty: bool = True) -> str:
    """A text field as ``str``; JSON booleans and numbers are cast with ``str()``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise RowError("missing value", column=column)
    if isinstance(value, (dict, list)):
        raise RowError(f"expected text, got a JSON {type(value).__name__}", column=column)
    if isinstance(value, bytes):
        value = bytes_as_text(value, column)
    text = value if isinstance(value, str) else str(value)
    if not allow_empty and not text.strip():
        raise RowError("empty value", column=column)
    return text


def as_score(value: Any, column: str) -> float:
    """A numeric label: a finite number, a numeric string, or true/false (1/0)."""
    if is_missing(value):
        raise RowError("missing human label", column=column)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if text.lower() in ("true", "false"):
            return 1.0 if text.lower() == "true" else 0.0
        try:
            number = float(text)
        except ValueError:
            raise RowError(f"label {value!r} is not a number", column=column) from None
    else:
        raise RowError(f"label {value!r} is not a number", column=column)
    if not math.isfinite(number):
        raise RowError(f"label {value!r} is not a finite number", column=column)
    return number


def optional_text(value: Any) -> str | None:
    """A text field that may be absent: None for missing values, else ``str(value)``."""
    return None if is_missing(value) else str(value)
