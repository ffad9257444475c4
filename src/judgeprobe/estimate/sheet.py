"""The labelling sheet: the items to label, written for a person, and their labels read back.

``--suggest N`` writes the sheet twice, as CSV (for a spreadsheet; its text cells are escaped
against formula injection, :mod:`judgeprobe._util.csv_cells`) and as JSON lines, one row per item
with its ``id``, the texts to read, the judge's verdict, why the item was chosen, its stratum,
the stratum's number of items and the chance it had to be chosen, and an empty ``label`` column
to fill in. ``--labels FILE`` reads either back: the rows with a label, and the design they were
drawn by (each stratum's size, from the sheet), so the estimate weighs each stratum as drawn.

Any CSV or JSONL with an ``id`` (or ``item_id``) and a ``label`` column is read too; without a
``stratum`` column its labels are taken as a simple random sample of the items. A row whose
label is left empty is not used: the estimate stays unbiased if the rows left empty are left so
for reasons unrelated to their label.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from judgeprobe._util.csv_cells import ESCAPED_COLUMN, escape_record, unescape_record
from judgeprobe.data._records import is_missing, read_table
from judgeprobe.errors import DataError
from judgeprobe.probes.agreement.corrected.design import UNIFORM, LabelDesign
from judgeprobe.probes.agreement.corrected.population import Population

LABEL_COLUMN = "label"
ID_COLUMNS = ("id", "item_id")


@dataclass(frozen=True, slots=True)
class SheetRow:
    """One item to label."""

    id: str
    prompt: str
    response: str
    judge_verdict: str
    judge_score: float
    why: str
    stratum: str
    stratum_items: int
    inclusion_probability: float
    label: str = ""


def write_sheet(rows: Sequence[SheetRow], path: str | Path) -> tuple[Path, Path]:
    """Write ``rows`` to ``path`` as CSV and beside it as JSON lines (same name, ``.jsonl``);
    returns both paths."""
    base = Path(path)
    csv_path = base if base.suffix == ".csv" else base.with_suffix(".csv")
    jsonl_path = csv_path.with_suffix(".jsonl")
    records = [asdict(row) for row in rows]
    with jsonl_path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    escaped = [escape_record(record) for record in records]
    names = list(escaped[0]) if escaped else [*SheetRow.__dataclass_fields__, ESCAPED_COLUMN]
    with csv_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=names)
        writer.writeheader()
        writer.writerows(escaped)
    return csv_path, jsonl_path


@dataclass(frozen=True, slots=True)
class LabelSheet:
    """The labels of a sheet (item id -> label as written) and the design that drew them."""

    path: str
    labels: Mapping[str, str]
    strata: Mapping[str, str] | None
    """Each labelled item's stratum; None for a file without strata (a simple random sample)."""
    stratum_items: Mapping[str, int]
    empty: int
    """Rows of the sheet with no label yet (not used)."""

    def design(self, population: Population) -> LabelDesign:
        """The design of these labels over ``population`` (whose items they must be)."""
        index = {item_id: k for k, item_id in enumerate(population.ids)}
        rows = tuple(index[item_id] for item_id in self.labels)
        note = f" ({self.empty} rows without a label left out)" if self.empty else ""
        if self.strata is None:
            return LabelDesign(
                rows,
                (UNIFORM,) * len(rows),
                {UNIFORM: population.size},
                f"{len(rows)} labels from {self.path}, taken as a random draw{note}",
            )
        total = sum(self.stratum_items.values())
        if total != population.size:
            raise DataError(
                f"the sheet's strata hold {total} items but the judge scored {population.size}: "
                "was the sheet written for other data, another judge or rubric?",
                path=self.path,
            )
        return LabelDesign(
            rows,
            tuple(self.strata[item_id] for item_id in self.labels),
            dict(self.stratum_items),
            f"{len(rows)} labels from {self.path}, drawn by {len(self.stratum_items)} strata{note}",
        )


def read_labels(path: str | Path) -> LabelSheet:
    """The labels of a sheet (CSV or JSONL) or of any file of ``id`` and ``label``."""
    table = read_table(path)
    where = table.path
    id_column = next((c for c in ID_COLUMNS if c in table.columns), None)
    if id_column is None or LABEL_COLUMN not in table.columns:
        raise DataError(
            f"a labels file needs an id (or item_id) and a {LABEL_COLUMN!r} column; "
            f"it has {list(table.columns)}",
            path=where,
        )
    stratified = "stratum" in table.columns
    if stratified and "stratum_items" not in table.columns:
        raise DataError("a sheet with a 'stratum' column needs 'stratum_items' too", path=where)
    escaped = ESCAPED_COLUMN in table.columns
    labels: dict[str, str] = {}
    strata: dict[str, str] = {}
    sizes: dict[str, int] = {}
    empty = 0
    for record in table.records:
        values: Mapping[str, Any] = unescape_record(record.values) if escaped else record.values
        item_id = str(values.get(id_column, "")).strip()
        if not item_id:
            raise DataError("a row has no id", path=where, row=record.row)
        if stratified:
            stratum = str(values["stratum"])
            size = _count(values["stratum_items"], where, record.row)
            if sizes.setdefault(stratum, size) != size:
                raise DataError(
                    f"stratum {stratum!r} is given {sizes[stratum]} and {size} items",
                    path=where,
                    row=record.row,
                )
        if is_missing(values.get(LABEL_COLUMN)):
            empty += 1
            continue
        if item_id in labels:
            raise DataError(f"item {item_id!r} is labelled twice", path=where, row=record.row)
        labels[item_id] = str(values[LABEL_COLUMN]).strip()
        if stratified:
            strata[item_id] = stratum
    if not labels:
        raise DataError("no row has a label yet: fill in the 'label' column", path=where)
    return LabelSheet(where, labels, strata if stratified else None, sizes, empty)


def _count(value: Any, where: str, row: int) -> int:
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        raise DataError(f"stratum_items {value!r} is not a count", path=where, row=row) from None
    if number < 1:
        raise DataError(f"stratum_items {value!r} is not a positive count", path=where, row=row)
    return number
