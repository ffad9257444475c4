"""The package is built in floors: a module imports only from its own floor or lower ones.

Every ``import`` statement counts, wherever it stands: at the top of a module, inside a function
(where an import put off to run time still ties the two modules together) or in a
``TYPE_CHECKING`` block. The import graph must also be free of cycles, within a floor too.

Each module of ``src/judgeprobe`` is assigned its floor in :data:`FLOORS`; a new module must be
added there (the test fails on one that is not), so that its place is a decision, not an accident.

The floors, bottom up:

0. base: errors, hashing, files, the codec, redaction, statistics.
1. contracts: what a judge is asked (rubric, variants, request), what it answers (verdict), the
   Judge protocol, items, the plan of a probe, and a pre-registered falsifier (a claim and the
   rule that decides it, which a probe applies to its estimate).
2. machinery: the engine and run store, the judge backends, the data loaders, text transforms.
3. probes.
4. orchestration: running probes and audits, generating responses and rubric variants, the
   demo, and the Judge Card, which is built from a run store alone and which an audit writes as
   its last step.
5. surface: the command line and the package's own exports.

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

FLOORS: dict[int, tuple[str, ...]] = {
    0: (
        "errors",
        "_version",
        "_hashing",
        "_yaml_files",
        "_annotations",
        "_atomic",
        "_codec",
        "redaction",
        "pricing",
        "stats",
        "stats._validation",
        "stats.agreement",
        "stats.comparison",
        "stats.classification",
        "stats.distances",
        "stats.flips",
        "stats.multiplicity",
        "stats.paired",
        "stats.proportions",
        "stats.regression",
        "stats.resampling",
        "stats.result",
        "stats.sequential",
    ),
    1: (
        "rubrics",
        "rubrics.rubric",
        "rubrics.variants",
        "rubrics.validation",
        "request",
        "verdict",
        "judge",
        "data.items",
        "plan",
        "evidence",
        "falsifier",
    ),
    2: (
        "engine",
        "engine.engine",
        "engine.limits",
        "engine.lock",
        "engine.ordering",
        "engine.progress",
        "engine.store",
        "engine.store_base",
        "engine.store_plans",
        "engine.store_skipped",
        "engine.store_batches",
        "engine.store_merge",
        "engine.executor",
        "batch",
        "batch.client",
        "batch.executor",
        "batch.lines",
        "ray_executor",
        "judges",
        "judges.base",
        "judges.callable",
        "judges.classifier",
        "judges.llama",
        "judges.openai_compat",
        "judges.parsing",
        "judges.pythia_reward",
        "judges.pyrit_scorer",
        "judges.pyrit_setup",
        "judges.recorded",
        "judges.recorded_formats",
        "judges.recorded_formats._rows",
        "judges.recorded_formats.inspect_log",
        "judges.recorded_formats.promptfoo",
        "judges.recorded_formats.pyrit_scores",
        "judges.registry",
        "judges.transformers_judge",
        "judges.transformers_loading",
        "data",
        "data._records",
        "data._votes",
        "data.attaq",
        "data.dataset",
        "data.demo",
        "data.mt_bench",
        "data.mt_bench_votes",
        "data.pairwise_sets",
        "data.pyrit",
        "data.registry",
        "data.tables",
        "transforms",
        "transforms.bias_edits",
        "transforms.concat",
        "transforms.swap",
        "repair",
        "repair.base",
        "repair.chunked",
        "repair.ensemble",
        "repair.length",
        "repair.single_answer",
        "repair.swap",
    ),
    3: (
        "probes",
        "probes._agreement_data",
        "probes._agreement_findings",
        "probes._baselines",
        "probes._bias_findings",
        "probes._bypass_design",
        "probes._bypass_tally",
        "probes._decisions",
        "probes._concat_evidence",
        "probes._length",
        "probes._pairwise",
        "probes._params",
        "probes._permutation_design",
        "probes.agreement",
        "probes.base",
        "probes.bias",
        "probes.bypass",
        "probes.cluster",
        "probes.human_agreement",
        "probes.length_control",
        "probes.length_null",
        "probes.permutation",
        "probes.policy_invariance",
        "probes.policy_invariance.accuracy",
        "probes.policy_invariance.design",
        "probes.policy_invariance.evidence",
        "probes.policy_invariance.failures",
        "probes.policy_invariance.flips",
        "probes.policy_invariance.noise",
        "probes.policy_invariance.probe",
        "probes.policy_invariance.reproduction",
        "probes.policy_invariance.section",
        "probes.policy_invariance.strata",
        "probes.policy_invariance.wordings",
        "probes.position",
        "probes.registry",
        "probes.repetition",
        "probes.self_preference",
    ),
    4: (
        "running",
        "recorded_pairwise",
        "generation",
        "variant_generation",
        "audit",
        "sequential",
        "anytime",
        "billing",
        "family",
        "scoring",
        "scoring_agreement",
        "demo",
        "report",
        "report.card",
        "report.findings",
        "report.gate",
        "report.sections",
        "report.statuses",
        "report.stored",
        "report.summary",
        "report.tested",
        "report.usage",
        "report.figures",
        "report.html",
        "report.markdown",
        "report.redact",
        "report.rounds",
        "report.schema",
        "report.text",
        "report.view",
        "report.overview",
        "report.overview_figure",
        "report.evidence_view",
        "report.write",
        "compare",
        "compare.build",
        "compare.agreement_units",
        "compare.item_units",
        "compare.render",
        "compare.figure",
        "compare.rubrics",
        "compare.runs",
        "compare.schema",
        "compare.units",
        "compare.write",
        "executors",
        "batch.export",
        "repair_audit",
        "report.repair",
    ),
    5: (
        "cli",
        "cli_compare",
        "cli_demo",
        "cli_batch",
        "cli_store",
        "cli_plan",
        "cli_options",
        "cli_repair",
        "",
    ),
}
"""Floor -> modules, named relative to the package (``""`` is the package ``__init__``)."""


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


def floor_of() -> dict[str, int]:
    table: dict[str, int] = {}
    for floor, names in FLOORS.items():
        for name in names:
            assert qualified(name) not in table, f"{name!r} is assigned twice in FLOORS"
            table[qualified(name)] = floor
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


def test_every_module_has_a_floor() -> None:
    table = floor_of()
    modules = set(discover())
    unassigned = sorted(modules - set(table))
    stale = sorted(set(table) - modules)
    assert not unassigned, f"modules without a floor (add them to FLOORS): {unassigned}"
    assert not stale, f"FLOORS names modules that do not exist: {stale}"


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
