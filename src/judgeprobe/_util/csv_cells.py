"""CSV cells a spreadsheet will not run: formula injection neutralised, and undone on reading.

A spreadsheet reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage
return before one) as a formula, so an item id or a judge's raw answer written to a CSV as it is
can run commands or leak data when the file is opened (CSV injection). OWASP's advice is to
prefix such a cell with ``'``, which spreadsheets take as "text" and do not show.

To read the same values back, a file written so says it in its header (the
:data:`ESCAPED_COLUMN` column), and every text cell that starts with ``'`` gets the prefix too:
then exactly one leading ``'`` is removed from every cell of such a file on reading, and a value
of the user's own that starts with ``'`` survives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ESCAPED_COLUMN = "cells_escaped"
"""The column whose presence in a CSV header says its text cells were escaped."""

_PREFIX = "'"
_ACTIVE = ("=", "+", "-", "@", "\t", "\r", _PREFIX)
"""Leading characters that get the prefix: a formula's, and the prefix itself (so that removing
one prefix on reading is always right)."""


def escape_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet evaluates (only text is changed).

    Examples
    --------
    >>> [escape_cell(v) for v in ("=1+1", "-2", "'quoted", "plain", -2.5)]
    ["'=1+1", "'-2", "''quoted", 'plain', -2.5]
    """
    if isinstance(value, str) and value.startswith(_ACTIVE):
        return _PREFIX + value
    return value


def unescape_cell(value: Any) -> Any:
    """The value :func:`escape_cell` was given, from a cell of an escaped file."""
    if isinstance(value, str) and value.startswith(_PREFIX):
        return value[len(_PREFIX) :]
    return value


def escape_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with each cell escaped and the :data:`ESCAPED_COLUMN` marker added."""
    return {**{k: escape_cell(v) for k, v in record.items()}, ESCAPED_COLUMN: "yes"}


def unescape_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record of an escaped file as it was before :func:`escape_record`, marker dropped."""
    return {k: unescape_cell(v) for k, v in record.items() if k != ESCAPED_COLUMN}
