"""The result of every loader: a named, hashed, frozen collection of items.

A :class:`Dataset` remembers where its items came from (``source``, ``sha256`` of the file bytes)
so a run store can tell whether an audit was made on the same data, and which rows were left out
and why (``skipped``), so that dropped rows are counted and reported, never silently lost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.errors import ConfigError

OnError = Literal["raise", "skip"]
"""What a loader does with a bad row: raise :class:`~judgeprobe.errors.DataError`, or skip it
and record a :class:`SkippedRow`."""

ON_ERROR_CHOICES: tuple[OnError, ...] = ("raise", "skip")

BINARY_SCALE: tuple[float, ...] = (0.0, 1.0)
"""Labels that are 0 (no) or 1 (yes): refusal, objective achieved."""

LIKERT5_SCALE: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A five-level Likert scale mapped onto [0, 1]: PyRIT harm severity."""


@dataclass(frozen=True, slots=True)
class SkippedRow:
    """One row a loader left out, with where it is and why.

    ``row`` is the 1-based data row (header not counted); ``column`` is the file's column name
    when one column is to blame.
    """

    path: str
    row: int | None
    column: str | None
    reason: str

    def __str__(self) -> str:
        where = [self.path]
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return f"{', '.join(where)}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Dataset:
    """Items loaded from one or more files.

    Attributes
    ----------
    name : str
        A short name for reports (``"refusal"``, ``"pandalm"``).
    items : tuple of Item
        The items, in file order (shuffled only where a loader says so).
    source : str
        The file path(s) the items came from; several are joined with ``" + "``.
    sha256 : str
        First 16 hex digits of the SHA-256 of the files' bytes, in order.
    skipped : tuple of SkippedRow
        Rows left out, with their reasons.
    scale : tuple of float or None
        The allowed human label values of a pointwise set, when the source fixes them.
    metadata : Mapping
        Loader-specific facts about the whole set (versions, counts of unparsed judge verdicts).

    Examples
    --------
    >>> from judgeprobe.data.items import PointwiseItem
    >>> item = PointwiseItem("1", "Hi", "Hello")
    >>> ds = Dataset("demo", (item,), source="demo.csv", sha256="0" * 16)
    >>> len(ds), ds.kind, [item.id for item in ds]
    (1, 'pointwise', ['1'])
    """

    name: str
    items: tuple[Item, ...]
    source: str
    sha256: str
    skipped: tuple[SkippedRow, ...] = ()
    scale: tuple[float, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    @property
    def kind(self) -> Literal["pointwise", "pairwise", "mixed", "empty"]:
        """Whether the items are all pointwise, all pairwise, a mix, or there are none."""
        has_point = any(isinstance(item, PointwiseItem) for item in self.items)
        has_pair = any(isinstance(item, PairwiseItem) for item in self.items)
        if has_point and has_pair:
            return "mixed"
        if has_point:
            return "pointwise"
        return "pairwise" if has_pair else "empty"

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n={len(self.items)}, kind={self.kind!r}, "
            f"skipped={len(self.skipped)}, scale={self.scale!r}, source={self.source!r}, "
            f"sha256={self.sha256!r})"
        )


def files_sha256(paths: Iterable[str | Path], *, length: int = 16) -> str:
    """A hex SHA-256 prefix of the bytes of ``paths``, read in order."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()[:length]


def check_on_error(on_error: str) -> OnError:
    """Validate the ``on_error`` option of a loader."""
    if on_error == "raise":
        return "raise"
    if on_error == "skip":
        return "skip"
    raise ConfigError(f"on_error must be one of {ON_ERROR_CHOICES}, got {on_error!r}")
