"""Loading items from any table (CSV, TSV, JSON lines, JSON, Parquet) with a column mapping.

:func:`load_table` is the generic loader: it knows nothing of a dataset's meaning, only which of
the file's columns hold our item fields. Columns it is not told about are kept in each item's
``metadata``, so nothing in the file is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from judgeprobe.data._records import (
    Record,
    RowError,
    RowProblems,
    Table,
    as_score,
    as_text,
    is_missing,
    optional_text,
    read_table,
)
from judgeprobe.data._votes import parse_vote
from judgeprobe.data.dataset import Dataset, check_on_error, files_sha256
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.errors import ConfigError, DataError

Kind = Literal["pointwise", "pairwise"]

POINTWISE_FIELDS = (
    "id",
    "prompt",
    "response",
    "reference",
    "label",
    "labels",
    "category",
    "item_type",
)
"""Our field names a pointwise table may map; ``labels`` names several comma-separated columns."""

PAIRWISE_FIELDS = (
    "id",
    "prompt",
    "response_a",
    "response_b",
    "winner",
    "winners",
    "turn",
    "question_id",
    "category",
    "model_a",
    "model_b",
)
"""Our field names a pairwise table may map; ``winners`` names several comma-separated columns."""

_REQUIRED: dict[str, tuple[str, ...]] = {
    "pointwise": ("prompt", "response"),
    "pairwise": ("prompt", "response_a", "response_b"),
}


def load_table(
    path: str | Path,
    *,
    kind: Kind = "pointwise",
    columns: Mapping[str, str] | None = None,
    on_error: Literal["raise", "skip"] = "raise",
    name: str | None = None,
) -> Dataset:
    """Load pointwise or pairwise items from a table file.

    Parameters
    ----------
    path : str or Path
        A ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``, ``.json`` (array of objects) or
        ``.parquet`` file; text formats may be gzipped (``.csv.gz``).
    kind : {"pointwise", "pairwise"}
        The item type to build.
    columns : Mapping[str, str], optional
        Our field name -> the file's column name. A field not mapped is read from the column of
        the same name when there is one. Fields: see :data:`POINTWISE_FIELDS` and
        :data:`PAIRWISE_FIELDS`. ``labels`` (``winners``) maps to a comma-separated list of
        columns, one per rater; the column names become the rater ids.
    on_error : {"raise", "skip"}
        ``"raise"`` stops at the first bad row with a :class:`~judgeprobe.errors.DataError`;
        ``"skip"`` leaves bad rows out and records them in :attr:`Dataset.skipped`.
    name : str, optional
        The dataset name; defaults to the file name without suffixes.

    Returns
    -------
    Dataset
        Items in file order. Missing ids become ``row-{n}`` (1-based data row); unmapped columns
        go to each item's ``metadata``.

    Notes
    -----
    Labels must be numbers (``true``/``false`` count as 1/0). Pairwise votes may be spelled
    ``A``/``B``/``tie``, ``1``/``2``/``0``, ``model_a``/``model_b``, ``A>B``/``B>A`` or the name of
    the winning model when ``model_a``/``model_b`` are mapped. A row with a missing label or vote
    is a bad row.
    """
    policy = check_on_error(on_error)
    if kind not in _REQUIRED:
        raise ConfigError(f"kind must be 'pointwise' or 'pairwise', got {kind!r}")
    table = read_table(path, on_error=policy)
    mapping, label_columns = resolve_columns(table, kind, columns)
    problems = RowProblems(table.path, policy)
    used = set(mapping.values()) | set(label_columns)
    items: list[Item] = []
    seen: set[str] = set()
    for record in table.records:
        try:
            item: Item
            if kind == "pointwise":
                item = _pointwise(record, mapping, label_columns, used)
            else:
                item = _pairwise(record, mapping, label_columns, used)
            if item.id in seen:
                raise RowError(f"duplicate id {item.id!r}", column=mapping.get("id"))
        except RowError as error:
            problems.report_error(error, record)
            continue
        seen.add(item.id)
        items.append(item)
    return Dataset(
        name=name or stem(path),
        items=tuple(items),
        source=table.path,
        sha256=files_sha256([path]),
        skipped=table.skipped + tuple(problems.skipped),
        metadata={"kind": kind, "columns": dict(mapping), "label_columns": list(label_columns)},
    )


def stem(path: str | Path) -> str:
    """The file name without its format suffix(es): ``test.jsonl.gz`` -> ``test``."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return Path(name).stem


def resolve_columns(
    table: Table, kind: str, columns: Mapping[str, str] | None
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Our field -> file column, plus the label (vote) columns, checked against the file."""
    fields = POINTWISE_FIELDS if kind == "pointwise" else PAIRWISE_FIELDS
    single, several = ("label", "labels") if kind == "pointwise" else ("winner", "winners")
    given = dict(columns or {})
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ConfigError(f"unknown {kind} field(s) {unknown} in columns; known: {list(fields)}")
    if single in given and several in given:
        raise ConfigError(f"map either {single!r} or {several!r} in columns, not both")
    available = set(table.columns)
    listing = ", ".join(repr(c) for c in table.columns)
    mapping: dict[str, str] = {}
    for field_name in fields:
        if field_name == several:
            continue
        if field_name in given:
            column = given[field_name]
            if column not in available:
                raise DataError(
                    f"column {column!r} (mapped to {field_name!r}) is not in the file; "
                    f"available columns: {listing}",
                    path=table.path,
                    column=column,
                )
            mapping[field_name] = column
        elif field_name in available:
            mapping[field_name] = field_name
    for field_name in _REQUIRED[kind]:
        if field_name not in mapping:
            raise DataError(
                f"missing required column for {field_name!r}; map it with "
                f"columns={{{field_name!r}: ...}}; available columns: {listing}",
                path=table.path,
                column=field_name,
            )
    label_columns: tuple[str, ...] = ()
    if several in given:
        label_columns = tuple(c.strip() for c in given[several].split(",") if c.strip())
        for column in label_columns:
            if column not in available:
                raise DataError(
                    f"column {column!r} (listed in {several!r}) is not in the file; "
                    f"available columns: {listing}",
                    path=table.path,
                    column=column,
                )
    elif single in mapping:
        label_columns = (mapping.pop(single),)
    return mapping, label_columns


def _common(record: Record, mapping: Mapping[str, str], used: set[str]) -> dict[str, Any]:
    values = record.values
    out: dict[str, Any] = {}
    column = mapping.get("id")
    raw_id = values.get(column) if column else None
    out["id"] = f"row-{record.row}" if is_missing(raw_id) else str(raw_id).strip()
    out["prompt"] = as_text(values.get(mapping["prompt"]), mapping["prompt"])
    if "category" in mapping:
        out["category"] = optional_text(values.get(mapping["category"]))
    out["metadata"] = {k: v for k, v in values.items() if k not in used}
    return out


def _pointwise(
    record: Record, mapping: Mapping[str, str], label_columns: tuple[str, ...], used: set[str]
) -> PointwiseItem:
    values = record.values
    fields = _common(record, mapping, used)
    labels = tuple(
        HumanLabel(as_score(values.get(c), c), rater=c if len(label_columns) > 1 else None)
        for c in label_columns
    )
    reference = optional_text(values.get(mapping["reference"])) if "reference" in mapping else None
    item_type = optional_text(values.get(mapping["item_type"])) if "item_type" in mapping else None
    return PointwiseItem(
        response=as_text(values.get(mapping["response"]), mapping["response"]),
        reference=reference,
        labels=labels,
        item_type=item_type,
        **fields,
    )


def _pairwise(
    record: Record, mapping: Mapping[str, str], label_columns: tuple[str, ...], used: set[str]
) -> PairwiseItem:
    values = record.values
    fields = _common(record, mapping, used)
    model_a = optional_text(values.get(mapping["model_a"])) if "model_a" in mapping else None
    model_b = optional_text(values.get(mapping["model_b"])) if "model_b" in mapping else None
    votes: tuple[Vote, ...] = tuple(
        parse_vote(
            values.get(c),
            c,
            rater=c if len(label_columns) > 1 else None,
            model_a=model_a,
            model_b=model_b,
        )
        for c in label_columns
    )
    turn = 1
    if "turn" in mapping:
        turn = as_int(values.get(mapping["turn"]), mapping["turn"])
    question_id = None
    if "question_id" in mapping:
        question_id = optional_text(values.get(mapping["question_id"]))
    return PairwiseItem(
        response_a=as_text(values.get(mapping["response_a"]), mapping["response_a"]),
        response_b=as_text(values.get(mapping["response_b"]), mapping["response_b"]),
        human_votes=votes,
        turn=turn,
        question_id=question_id,
        model_a=model_a,
        model_b=model_b,
        **fields,
    )


def as_int(value: Any, column: str) -> int:
    """A positive whole number such as a turn index."""
    if is_missing(value) or isinstance(value, bool):
        raise RowError(f"expected a whole number, got {value!r}", column=column)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RowError(f"expected a whole number, got {value!r}", column=column) from None
    if not number.is_integer() or number < 1:
        raise RowError(f"expected a whole number >= 1, got {value!r}", column=column)
    return int(number)
