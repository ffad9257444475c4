"""The file formats a recorded judge reads, each turned into the same rows.

Every reader returns a :class:`~judgeprobe.data._records.Table` whose records carry the item's
``id`` and a ``score`` or a ``label`` (and, where the source has them, ``probability``,
``p_<label>`` columns and the judge's ``raw`` answer), so the recorded judge reads them one way
whatever made them:

==============  ==================================================================================
format          what
==============  ==================================================================================
``table``       CSV / JSONL / Parquet rows (``judgeprobe score -o`` writes one)
``inspect``     an Inspect eval log (``.eval`` or ``.json``), through ``inspect_ai.log``
``promptfoo``   the results JSON of ``promptfoo eval -o results.json``
``pyrit``       PyRIT ``Score`` records exported as JSONL / CSV (``score_value``, ``score_type``)
==============  ==================================================================================

The format is detected from the content (:func:`detect_format`) unless one is given
(``recorded:FORMAT:PATH`` or the judge option ``format=``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from judgeprobe.data._records import Table, read_table
from judgeprobe.errors import ConfigError, DataError

FILE_FORMATS = ("table", "inspect", "promptfoo", "pyrit")
"""The formats of a verdict file (``dataset`` is the fifth source, with no file)."""

PYRIT_COLUMNS = ("score_value", "score_type")


def detect_format(path: Path) -> str:
    """The format of the verdict file ``path``, from its content (see the module docstring)."""
    if zipfile.is_zipfile(path):
        return "inspect"  # an .eval log is a zip archive
    if path.suffix.lower() == ".eval":
        raise DataError(
            "not an Inspect eval log: an .eval log is a zip archive and this file is not one "
            "(cut short, damaged, or not written by Inspect); an Inspect log written as JSON "
            "is named .json",
            path=str(path),
        )
    if path.suffix.lower() == ".json":
        head = _json_head(path)
        if isinstance(head, dict) and "eval" in head and "version" in head:
            return "inspect"
        results = head.get("results") if isinstance(head, dict) else None
        if isinstance(results, dict) and isinstance(results.get("results"), list):
            return "promptfoo"
        raise DataError(
            "a JSON verdict file must be an Inspect eval log (keys 'version', 'eval') or a "
            "promptfoo results file (results.results[]); write JSONL rows for anything else, "
            "or name the format (recorded:FORMAT:PATH)",
            path=str(path),
        )
    table = read_table(path)
    if all(column in table.columns for column in PYRIT_COLUMNS):
        return "pyrit"
    return "table"


def read_verdicts(path: Path, fmt: str | None, options: dict[str, Any]) -> tuple[str, Table]:
    """The format of ``path`` and its verdict rows; ``options`` are the format's own
    (``scorer`` for Inspect, ``id_var`` for promptfoo, ``id_field`` for PyRIT)."""
    if not path.is_file():
        kind = "a directory, not a file" if path.is_dir() else "not found"
        raise DataError(f"verdict file {kind}", path=str(path))
    fmt = fmt or detect_format(path)
    if fmt not in FILE_FORMATS:
        raise ConfigError(f"recorded verdicts: unknown format {fmt!r}; use one of {FILE_FORMATS}")
    wanted = {"inspect": "scorer", "promptfoo": "id_var", "pyrit": "id_field"}.get(fmt)
    given = sorted(k for k, v in options.items() if v is not None and k != wanted)
    if given:
        raise ConfigError(
            f"recorded verdicts {path.name} ({fmt}): option(s) {', '.join(given)} do not apply"
            f" to this format{f'; it takes {wanted}=' if wanted else ''}"
        )
    if fmt == "inspect":
        from judgeprobe.judges.recorded_formats.inspect_log import read_inspect_log

        return fmt, read_inspect_log(path, scorer=options.get("scorer"))
    if fmt == "promptfoo":
        from judgeprobe.judges.recorded_formats.promptfoo import read_promptfoo

        return fmt, read_promptfoo(path, id_var=options.get("id_var") or "id")
    if fmt == "pyrit":
        from judgeprobe.judges.recorded_formats.pyrit_scores import read_pyrit_scores

        return fmt, read_pyrit_scores(path, id_field=options.get("id_field"))
    return fmt, read_table(path)


def _json_head(path: Path) -> Any:
    from judgeprobe.data._records import read_json

    return read_json(path)
