"""``judgeprobe judges``, ``datasets`` and ``repairs``, and ``--version``: what the registries
hold, one line per entry with what it is for, read from the registries and their docstrings.

Each listing is also JSON (``--json``): a list of objects with ``name``, ``kind`` and ``what``.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

out = Console()

AsJson = Annotated[bool, typer.Option("--json", help="Print the list as JSON.")]

Entry = dict[str, str]
"""One line of a listing: ``name``, ``kind`` and ``what`` it is for."""


def version_callback(value: bool) -> None:
    """``--version``: print judgeprobe's version and stop."""
    if value:
        from judgeprobe._version import __version__

        typer.echo(f"judgeprobe {__version__}")
        raise typer.Exit()


def first_line(obj: Any) -> str:
    """The first line of ``obj``'s docstring (empty when it has none)."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def table_rows(doc: str) -> list[tuple[str, str]]:
    """The rows of the first reStructuredText simple table in ``doc``: the first column's text
    and the rest of the row, a row's continuation lines joined to it.

    >>> table_rows('''
    ... ====  ====
    ... name  what
    ... ====  ====
    ... a     the first
    ...       and more
    ... b     the second
    ... ====  ====
    ... ''')
    [('a', 'the first and more'), ('b', 'the second')]
    """
    lines = doc.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"\s*=+(\s+=+)+\s*", line)]
    if len(rules) < 3:
        return []
    width = len(lines[rules[0]].split()[0]) + lines[rules[0]].index("=")
    rows: list[tuple[str, str]] = []
    for line in lines[rules[1] + 1 : rules[2]]:
        name, rest = line[:width].strip(), " ".join(line[width:].split())
        if name:
            rows.append((name, rest))
        elif rows:
            rows[-1] = (rows[-1][0], f"{rows[-1][1]} {rest}".strip())
    return rows


def judge_entries() -> list[Entry]:
    """The judge specs of :mod:`judgeprobe.judges.registry` (its table), then the installed
    plugins of the ``judgeprobe.judges`` entry-point group."""
    from importlib import metadata

    from judgeprobe.judges import registry

    entries = [
        {"name": name.replace("``", ""), "kind": "backend", "what": what.replace("``", "")}
        for name, what in table_rows(registry.__doc__ or "")
    ]
    for plugin in metadata.entry_points(group="judgeprobe.judges"):
        entries.append({"name": f"{plugin.name}:...", "kind": "plugin", "what": plugin.value})
    return entries


def dataset_entries() -> list[Entry]:
    """The loaders of :data:`judgeprobe.data.registry.LOADERS` (their docstrings), then the
    short names the registry's docstring lists (``pyrit:refusal``, ``demo``, ...)."""
    from judgeprobe.data import registry

    entries = [
        {"name": name, "kind": "loader", "what": _plain(first_line(loader))}
        for name, loader in registry.LOADERS.items()
    ]
    for name, what in _short_names(registry.__doc__ or ""):
        if not what:  # a short name for a loader's fixed file: what the loader reads
            loader = registry.LOADERS.get(name.partition(":")[0])
            what = _plain(first_line(loader)) if loader is not None else ""
        entries.append({"name": name, "kind": "short name", "what": what})
    return entries


def _short_names(doc: str) -> list[tuple[str, str]]:
    """The indented block after ``::`` in the data registry's docstring, as (name, what) rows:
    names are split at commas, a row's continuation lines are joined to it."""
    block = doc.partition("::\n")[2]
    rows: list[tuple[list[str], str]] = []
    for line in block.splitlines()[1:]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        if line.startswith(" " * 8) and rows:  # a continuation of the row above
            rows[-1] = (rows[-1][0], f"{rows[-1][1]} {line.strip()}".strip())
            continue
        names = [n.strip() for n in cells[0].split(",") if n.strip()]
        rows.append((names, cells[1] if len(cells) > 1 else ""))
    return [(name, _plain(what)) for names, what in rows for name in names]


def repair_entries() -> list[Entry]:
    """The repairs of :data:`judgeprobe.judges.repairs.REPAIRS` (their docstrings), each with
    the probe whose failure it targets."""
    from judgeprobe.judges.repairs import REPAIRS, TARGETS

    return [
        {
            "name": name,
            "kind": f"repairs {TARGETS[name]}",
            "what": _plain(first_line(factory)),
        }
        for name, factory in REPAIRS.items()
    ]


def _plain(text: str) -> str:
    """Docstring text without reStructuredText markup (``code``, :class:`Name`)."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)
    return text.replace("``", "")


def _print(entries: list[Entry], as_json: bool, title: str) -> None:
    if as_json:
        out.print_json(json.dumps(entries))
        return
    table = Table(title, "kind", "what it is for")
    for entry in entries:
        table.add_row(escape(entry["name"]), escape(entry["kind"]), escape(entry["what"]))
    out.print(table)


def list_judges(as_json: AsJson = False) -> None:
    """List the judges an audit can take (--judge SPEC), from the judge registry."""
    _print(judge_entries(), as_json, "judge spec")


def list_datasets(as_json: AsJson = False) -> None:
    """List the dataset loaders (--loader) and short names (--data NAME), from the registry."""
    _print(dataset_entries(), as_json, "dataset")


def list_repairs(as_json: AsJson = False) -> None:
    """List the judge repairs (audit --repair NAME), each with the failure it targets."""
    _print(repair_entries(), as_json, "repair")
