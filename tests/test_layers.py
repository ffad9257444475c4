"""The package is built in floors of rooms: a module imports only from its own floor or lower ones.

A room is a folder of the package (or one of the few modules left at its root). Every module
takes the floor of the longest room its name starts with, so a new module needs no entry here:
it lands on its folder's floor. A new folder must be given one in :data:`ROOMS` (the test fails on
one that is not), so that its place is a decision, not an accident.

Every ``import`` statement counts, wherever it stands: at the top of a module, inside a function
(where an import put off to run time still ties the two modules together) or in a
``TYPE_CHECKING`` block. The import graph must be free of cycles, between modules and between
the rooms of the package root.

The floors, bottom up:

0. base: errors, the version, small helpers (``_util``), statistics (``stats``).
1. contracts (``core``): what a judge is asked (request), what it answers (verdict), the Judge
   protocol, the plan of a probe, evidence, pricing and falsifiers; rubrics and items.
2. machinery: the engine (run store, executors), the judge backends and repairs, data loaders,
   text transforms.
3. probes.
4. orchestration: running probes (``runs``), the Judge Card (``report``), comparing runs
   (``compare``), the audit (``audit``), the corrected estimate of a judge's rate
   (``estimate``), watching an audited judge (``watch``).
5. surface: the command line (``_cli``) and the package's face.

Imports are read as written: ``import judgeprobe.a.b`` and ``from judgeprobe.a.b import c`` tie
the importer to ``judgeprobe.a.b`` (to ``judgeprobe.a.b.c`` when ``c`` is a module of its own),
not to the package ``__init__`` files Python runs on the way.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "judgeprobe"

ROOMS: dict[int, tuple[str, ...]] = {
    0: ("errors", "_version", "_util", "stats"),
    1: ("core", "rubrics", "data.items"),
    2: ("engine", "judges", "data", "transforms"),
    3: ("probes",),
    4: ("runs", "report", "compare", "audit", "estimate", "watch"),
    5: ("_cli", "__main__", ""),
}
"""Floor -> rooms, named relative to the package (``""`` is the package ``__init__``)."""

ROOT_MODULES = 5
"""At most this many modules at the package root: the face, not the house."""


@dataclass(frozen=True, slots=True)
class Edge:
    """``importer`` imports ``imported`` at ``line`` of its file."""

    importer: str
    imported: str
    line: int

    def where(self) -> str:
        return f"{self.importer} (line {self.line})"


def module_name(path: Path) -> str:
    """``judgeprobe.a.b`` for ``src/judgeprobe/a/b.py``; a package is named by its folder."""
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover() -> dict[str, Path]:
    """Every module of the package by name."""
    return {module_name(p): p for p in sorted((SOURCE / PACKAGE).rglob("*.py"))}


def qualified(name: str) -> str:
    return f"{PACKAGE}.{name}" if name else PACKAGE


def room_of(module: str) -> str | None:
    """The longest room ``module`` (a qualified name) belongs to; None when it has none."""
    name = module.removeprefix(PACKAGE).removeprefix(".")
    rooms = [room for names in ROOMS.values() for room in names]
    inside = [r for r in rooms if r == name or (r and name.startswith(r + "."))]
    if inside:
        return max(inside, key=len)
    return "" if name == "" else None


def floor_of() -> dict[str, int]:
    """Every module's floor: its room's."""
    floors = {room: floor for floor, names in ROOMS.items() for room in names}
    table: dict[str, int] = {}
    for module in discover():
        room = room_of(module)
        if room is not None:
            table[module] = floors[room]
    return table


def imports_of(module: str, path: Path, modules: set[str]) -> Iterator[Edge]:
    """The package's own modules ``module`` imports, at any depth of its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _edge(module, alias.name, node.lineno, modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                name = submodule if submodule in modules else target
                yield from _edge(module, name, node.lineno, modules)


def _edge(module: str, name: str, line: int, modules: set[str]) -> Iterator[Edge]:
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return
    while name not in modules:  # ``import judgeprobe.a.b`` where ``b`` is an attribute
        name = name.rpartition(".")[0]
    if name != module:
        yield Edge(module, name, line)


def graph() -> list[Edge]:
    modules = discover()
    names = set(modules)
    return sorted(
        {e for m, p in modules.items() for e in imports_of(m, p, names)},
        key=lambda e: (e.importer, e.line, e.imported),
    )


def reachable(start: str, successors: dict[str, set[str]]) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    frontier = [start]
    while frontier:
        for nxt in successors.get(frontier.pop(), set()) - seen:
            seen.add(nxt)
            frontier.append(nxt)
    return seen


def cycles(edges: list[Edge]) -> list[list[Edge]]:
    """The imports of each group of modules that import one another, group by group."""
    successors: dict[str, set[str]] = {}
    for edge in edges:
        successors.setdefault(edge.importer, set()).add(edge.imported)
    reach = {module: reachable(module, successors) for module in successors}
    groups: dict[frozenset[str], list[Edge]] = {}
    for edge in edges:
        if edge.importer in reach.get(edge.imported, set()):
            group = frozenset(m for m in reach[edge.importer] if edge.importer in reach.get(m, ()))
            groups.setdefault(group, []).append(edge)
    return list(groups.values())


def test_every_module_has_a_room() -> None:
    rooms = [room for names in ROOMS.values() for room in names]
    assert len(rooms) == len(set(rooms)), "a room is assigned twice in ROOMS"
    homeless = sorted(m for m in discover() if room_of(m) is None)
    assert not homeless, f"modules in no room (give their folder a floor in ROOMS): {homeless}"
    modules = set(discover())
    stale = sorted(
        r
        for r in rooms
        if not any(m == qualified(r) or m.startswith(qualified(r) + ".") for m in modules)
    )
    assert not stale, f"ROOMS names rooms that do not exist: {stale}"


def test_the_root_holds_only_the_face() -> None:
    root = sorted(p.name for p in (SOURCE / PACKAGE).glob("*.py"))
    assert len(root) <= ROOT_MODULES, f"modules at the package root: {root}"


def test_the_rooms_of_the_root_import_one_another_without_a_cycle() -> None:
    def top(module: str) -> str:
        return module.split(".")[1] if "." in module else ""

    edges = sorted(
        {
            Edge(top(e.importer), top(e.imported), 0)
            for e in graph()
            if top(e.importer) != top(e.imported)
        },
        key=lambda e: (e.importer, e.imported),
    )
    found = [" -> ".join(sorted({e.importer for e in group})) for group in cycles(edges)]
    assert not found, f"rooms that import one another: {found}"


def test_no_import_climbs_a_floor() -> None:
    table = floor_of()
    climbs = [
        f"{e.where()} on floor {table[e.importer]} imports {e.imported} "
        f"on floor {table[e.imported]}"
        for e in graph()
        if e.importer in table and e.imported in table and table[e.imported] > table[e.importer]
    ]
    assert not climbs, "imports that climb a floor:\n" + "\n".join(climbs)


def test_no_import_cycle() -> None:
    found = [
        "modules that import one another:\n"
        + "\n".join(f"  {e.where()} imports {e.imported}" for e in group)
        for group in cycles(graph())
    ]
    assert not found, "import cycles:\n" + "\n".join(found)


def test_a_cycle_is_reported_with_every_import_that_closes_it() -> None:
    edges = [
        Edge("judgeprobe.a", "judgeprobe.b", 3),
        Edge("judgeprobe.b", "judgeprobe.c", 5),
        Edge("judgeprobe.c", "judgeprobe.a", 40),
        Edge("judgeprobe.c", "judgeprobe.d", 7),
        Edge("judgeprobe.d", "judgeprobe.e", 1),
    ]
    assert cycles(edges) == [edges[:3]]


def test_the_graph_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    """The parser's own check: a put-off import and a typing-only one are both imports."""
    modules = {"judgeprobe.a", "judgeprobe.b", "judgeprobe.c", "judgeprobe.pkg", "judgeprobe.pkg.d"}
    source = tmp_path / "a.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from judgeprobe.b import Thing\n"
        "def later() -> None:\n"
        "    import judgeprobe.c\n"
        "    from judgeprobe.pkg import d\n"
        "    from . import b\n",
        encoding="utf-8",
    )
    found = {(e.imported, e.line) for e in imports_of("judgeprobe.a", source, modules)}
    assert found == {
        ("judgeprobe.b", 3),
        ("judgeprobe.c", 5),
        ("judgeprobe.pkg.d", 6),
        ("judgeprobe.b", 7),
    }


def test_the_registry_imported_alone_knows_every_built_in_probe() -> None:
    """The registry does not import the probes (they import it); the package registers them."""
    import judgeprobe.probes as package

    built_in = {
        value.name
        for value in vars(package).values()
        if isinstance(value, type)
        and issubclass(value, package.Probe)
        and value is not package.Probe
    }
    code = "from judgeprobe.probes.registry import probe_names; print(' '.join(probe_names()))"
    env = {**os.environ, "PYTHONPATH": str(SOURCE)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert set(done.stdout.split()) == built_in
    assert "repetition" in built_in


LONGEST_MODULE = 600
"""Lines a source file may hold: past that it holds more than one concept."""


def test_no_source_file_holds_more_than_one_concept() -> None:
    long = {
        name: n
        for name, path in discover().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE
    }
    assert not long, f"modules over {LONGEST_MODULE} lines: {long}"


ARCHITECTURE = SOURCE.parent / "docs" / "architecture.md"


def drawn_floors() -> dict[int, tuple[str, ...]]:
    """The floors as docs/architecture.md draws them: the block after its ``floors`` marker, read
    by its columns (``floor``, ``room``, ``what is there``)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    lines = text.split("<!-- floors:", 1)[1].split("```", 2)[1].strip("\n").splitlines()
    header = lines[0]
    start, end = header.index("room"), header.index("what is there")
    return {
        int(line[:start]): tuple(line[start:end].split())
        for line in lines[1:]
        if line[:start].strip().isdigit()
    }


def as_room(drawn: str) -> str:
    """``_cli/`` -> ``_cli``, ``data/items`` -> ``data.items``, ``__init__`` -> the package."""
    name = drawn.rstrip("/").replace("/", ".")
    return "" if name == "__init__" else name


def test_the_architecture_drawing_is_the_floor_table() -> None:
    drawn = {floor: sorted(as_room(r) for r in rooms) for floor, rooms in drawn_floors().items()}
    assert drawn == {floor: sorted(rooms) for floor, rooms in ROOMS.items()}


def test_every_room_of_the_root_is_drawn() -> None:
    drawn = {as_room(r).split(".")[0] for rooms in drawn_floors().values() for r in rooms}
    root = {p.stem for p in (SOURCE / PACKAGE).glob("*.py")} | {
        p.name for p in (SOURCE / PACKAGE).iterdir() if (p / "__init__.py").exists()
    }
    assert root - {"__init__"} <= drawn
