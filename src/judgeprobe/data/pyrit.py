"""PyRIT's human-labeled scorer-evaluation CSVs (``pyrit/datasets/scorer_evals``).

Three families share one shape: refusal (``human_score`` 1 = the response is a refusal), objective
achieved (1 = the harmful objective was met) and harm severity (0, 0.25, 0.5, 0.75, 1 under a named
harm definition). Each file opens with a block of ``#`` comment lines (``dataset_version=...,
harm_definition=...``) before the header; columns are found by name because their order differs
between versions, and every column named ``human_score`` or ``human_score_<n>`` is one rater.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from judgeprobe.data._records import RowError, RowProblems, Table, as_score, as_text, read_table
from judgeprobe.data.dataset import (
    BINARY_SCALE,
    LIKERT5_SCALE,
    Dataset,
    SkippedRow,
    check_on_error,
    files_sha256,
)
from judgeprobe.data.items import HumanLabel, Item, PointwiseItem
from judgeprobe.data.tables import stem
from judgeprobe.errors import DataError

PathLike = str | Path

_HUMAN_COLUMN = re.compile(r"^human_score(?:_(\d+))?$")
_KNOWN = {"objective", "assistant_response", "harm_category", "data_type", "item_type"}


def load_pyrit_csv(
    path: PathLike | Sequence[PathLike],
    *,
    on_error: Literal["raise", "skip"] = "raise",
    scale: Sequence[float] | None = None,
    name: str | None = None,
) -> Dataset:
    """Load one or more PyRIT human-labeled CSVs as pointwise items.

    Parameters
    ----------
    path : path, directory, or sequence of paths
        A CSV (or TSV, named ``.tsv``) file, a directory (its ``*.csv`` and ``*.tsv`` files,
        sorted by name), or several of either;
        e.g. ``[refusal.csv, refusal_extra.csv]`` for the full refusal set. All files must share
        one label scale.
    on_error : {"raise", "skip"}
        Raise :class:`~judgeprobe.errors.DataError` on a bad row (non-numeric or off-scale
        label, missing label or text), or skip it and record it in :attr:`Dataset.skipped`.
    scale : sequence of float, optional
        The allowed label values. By default ``(0, 0.25, 0.5, 0.75, 1)`` for harm files (those
        with ``harm_definition=`` in their header or in a ``harm`` folder), ``(0, 1)`` for
        refusal and objective files, and inferred from the values otherwise.
    name : str, optional
        Defaults to the file stems joined with ``+``.

    Returns
    -------
    Dataset
        Items with ``prompt`` = ``objective``, ``response`` = ``assistant_response``, one
        :class:`HumanLabel` per ``human_score*`` column (rater = column name), ``category`` =
        ``harm_category`` when present and ``id`` = ``<file stem>-<row>``. Each item's metadata
        holds ``file``, ``data_type`` and the header facts (``dataset_version``,
        ``harm_definition``, ...). :attr:`Dataset.scale` is the label scale and
        ``metadata["family"]`` is ``"refusal"``, ``"objective"``, ``"harm"`` or ``"unknown"``.
    """
    policy = check_on_error(on_error)
    paths = _expand(path)
    items: list[Item] = []
    skipped: list[SkippedRow] = []
    families: list[str] = []
    headers: dict[str, dict[str, Any]] = {}
    chosen_scale: tuple[float, ...] | None = tuple(float(v) for v in scale) if scale else None
    seen_ids: set[str] = set()
    for file in paths:
        table = read_table(file, on_error=policy, fmt=_text_format(file), comment_header=True)
        header = parse_comment_header(table.comments)
        family = _family(Path(file), header)
        families.append(family)
        headers[stem(file)] = header
        file_scale = chosen_scale or _default_scale(family, table)
        if chosen_scale is not None and file_scale != chosen_scale:
            raise DataError(
                f"label scale {file_scale} differs from {chosen_scale} of the other files; "
                "load files of different families separately",
                path=table.path,
            )
        chosen_scale = file_scale
        new_items, new_skipped = _items(table, header, file_scale, policy, seen_ids)
        items.extend(new_items)
        skipped.extend(new_skipped)
    distinct = sorted(set(families))
    return Dataset(
        name=name or "+".join(stem(p) for p in paths),
        items=tuple(items),
        source=" + ".join(str(p) for p in paths),
        sha256=files_sha256(paths),
        skipped=tuple(skipped),
        scale=chosen_scale,
        metadata={
            "family": distinct[0] if len(distinct) == 1 else "mixed",
            "files": headers,
            "max_raters": max(
                (len(i.labels) for i in items if isinstance(i, PointwiseItem)), default=0
            ),
        },
    )


def has_pyrit_columns(columns: Sequence[str]) -> bool:
    """True for the columns of a PyRIT scorer-evaluation CSV: ``objective``,
    ``assistant_response`` and at least one ``human_score`` or ``human_score_<n>``.

    >>> has_pyrit_columns(["objective", "assistant_response", "human_score_1", "data_type"])
    True
    >>> has_pyrit_columns(["#", "prompt", "response", "label"])
    False
    """
    names = set(columns)
    return {"objective", "assistant_response"} <= names and any(
        _HUMAN_COLUMN.match(name) for name in names
    )


def parse_comment_header(lines: Sequence[str]) -> dict[str, Any]:
    """The ``key=value`` pairs of a PyRIT comment block; other text goes under ``"notes"``.

    >>> parse_comment_header(["# dataset_version=1.0, harm_definition=violence.yaml,,"])
    {'dataset_version': '1.0', 'harm_definition': 'violence.yaml'}
    """
    facts: dict[str, Any] = {}
    notes: list[str] = []
    for line in lines:
        body = line.lstrip("#").strip()
        parts = [p.strip() for p in body.split(",")]
        pairs = [p for p in parts if p]
        if pairs and all("=" in p for p in pairs):
            for pair in pairs:
                key, _, value = pair.partition("=")
                facts[key.strip()] = value.strip()
        elif body:
            notes.append(body)
    if notes:
        facts["notes"] = notes
    return facts


def _expand(path: PathLike | Sequence[PathLike]) -> list[Path]:
    given = [path] if isinstance(path, (str, Path)) else list(path)
    if not given:
        raise DataError("no PyRIT CSV file given")
    files: list[Path] = []
    for entry in given:
        entry = Path(entry)
        if entry.is_dir():
            found = sorted([*entry.glob("*.csv"), *entry.glob("*.tsv")])
            if not found:
                raise DataError("directory holds no .csv or .tsv files", path=str(entry))
            files.extend(found)
        else:
            files.append(entry)
    return files


def _text_format(path: Path) -> str:
    """``tsv`` for a ``.tsv`` (or ``.tsv.gz``) file; ``csv`` for any other name, as PyRIT
    writes them."""
    names = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    return "tsv" if names and names[-1] == ".tsv" else "csv"


def _family(path: Path, header: dict[str, Any]) -> str:
    folder = path.parent.name.lower()
    if "harm_definition" in header or folder == "harm":
        return "harm"
    if folder == "objective":
        return "objective"
    if folder in ("refusal_scorer", "refusal") or "refusal" in path.name.lower():
        return "refusal"
    return "unknown"


def _human_columns(table: Table) -> list[str]:
    found = [(c, _HUMAN_COLUMN.match(c)) for c in table.columns]
    ranked = [(int(m.group(1) or 0), c) for c, m in found if m is not None]
    return [c for _, c in sorted(ranked)]


def _default_scale(family: str, table: Table) -> tuple[float, ...] | None:
    if family == "harm":
        return LIKERT5_SCALE
    if family in ("refusal", "objective"):
        return BINARY_SCALE
    values: set[float] = set()
    for record in table.records:
        for column in _human_columns(table):
            try:
                values.add(as_score(record.values.get(column), column))
            except RowError:
                continue
    if values <= set(BINARY_SCALE):
        return BINARY_SCALE
    return LIKERT5_SCALE if values <= set(LIKERT5_SCALE) else None


def _items(
    table: Table,
    header: dict[str, Any],
    scale: tuple[float, ...] | None,
    policy: Literal["raise", "skip"],
    seen_ids: set[str],
) -> tuple[list[Item], list[SkippedRow]]:
    listing = ", ".join(repr(c) for c in table.columns)
    for required in ("objective", "assistant_response"):
        if required not in table.columns:
            raise DataError(
                f"missing required column; available columns: {listing}",
                path=table.path,
                column=required,
            )
    raters = _human_columns(table)
    if not raters:
        raise DataError(
            f"no human score column (human_score or human_score_<n>); available columns: {listing}",
            path=table.path,
            column="human_score",
        )
    problems = RowProblems(table.path, policy)
    file_stem = stem(table.path)
    facts = {k: v for k, v in header.items() if k != "notes"}
    extra = [c for c in table.columns if c not in _KNOWN and c not in raters]
    items: list[Item] = []
    for record in table.records:
        values = record.values
        try:
            labels = tuple(
                HumanLabel(_on_scale(as_score(values.get(c), c), scale, c), rater=c) for c in raters
            )
            item_id = f"{file_stem}-{record.row}"
            if item_id in seen_ids:
                raise RowError(f"duplicate id {item_id!r}: two files share the stem {file_stem!r}")
            item = PointwiseItem(
                id=item_id,
                prompt=as_text(values.get("objective"), "objective"),
                response=as_text(values.get("assistant_response"), "assistant_response"),
                labels=labels,
                category=_optional(values.get("harm_category")),
                item_type=_optional(values.get("item_type")),
                metadata={
                    "file": file_stem,
                    "data_type": values.get("data_type"),
                    **facts,
                    **{c: values.get(c) for c in extra},
                },
            )
        except RowError as error:
            problems.report_error(error, record)
            continue
        seen_ids.add(item_id)
        items.append(item)
    return items, list(table.skipped) + problems.skipped


def _on_scale(value: float, scale: tuple[float, ...] | None, column: str) -> float:
    if scale is None or any(math.isclose(value, s, abs_tol=1e-9) for s in scale):
        return value
    raise RowError(f"label {value:g} is not on the scale {scale}", column=column)


def _optional(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None
