"""Auditing repaired judges next to the original: same probes, same data, before and after.

:func:`run_repair_audit` audits the judge of a config as ``judgeprobe audit`` does, then audits
each repaired judge (:mod:`judgeprobe.repair`) with the same probes, data and seed into a
sibling folder ``repair-NAME`` of the audit's ``out``, each with its own run store and card. It
then compares every repaired run with the original through :func:`judgeprobe.compare.compare_runs`
(paired differences over shared items where the probe's per-item outcomes are known, else
unpaired from the intervals; a word per difference: better, worse, changed, no evidence), and
reads each repair's cost multiplier (inner judge calls per verdict) from its run store.

It writes ``repair-compare/`` (the comparison's three files) and ``repair.json`` and
``repair.md`` (the before/after summary of each repair on the probe it targets, with the cost
multiplier) in ``out``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeprobe._atomic import write_atomic
from judgeprobe.audit import AuditConfig, AuditOutcome, run_audit
from judgeprobe.compare import compare_runs, write_comparison
from judgeprobe.engine import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judge import Judge
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.repair import REPAIRS, TARGETS, build_repair, cost_multiplier, repair_options
from judgeprobe.report.repair import render_repair_markdown

RepairSpecs = Sequence[str] | Mapping[str, Mapping[str, Any]]


@dataclass
class RepairOutcome:
    """The original audit, each repaired audit, their comparison and the repair summary."""

    original: AuditOutcome
    repaired: dict[str, AuditOutcome]
    comparison: dict[str, Any]
    summary: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)


def repair_specs(specs: RepairSpecs | None) -> dict[str, dict[str, Any]]:
    """Repair names (or a mapping of name to options) as a mapping of name to options;
    ConfigError naming an unknown repair."""
    try:
        return repair_options(specs)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def run_repair_audit(
    config: AuditConfig,
    repairs: RepairSpecs | None = None,
    *,
    judge: Judge | None = None,
    command: str | None = None,
    progress: bool | None = None,
) -> RepairOutcome:
    """Audit ``config``'s judge and each repaired judge; compare them (module docstring).

    ``repairs`` defaults to the config's ``repair``; ``judge`` overrides ``config.judge``.

    Examples
    --------
    >>> from judgeprobe.audit import parse_config  # doctest: +SKIP
    >>> config = parse_config({"judge": "profanity", "rubric": "toxicity",  # doctest: +SKIP
    ...     "data": "pyrit:harm", "probes": {"bypass": {}}})
    >>> summary = run_repair_audit(config, ["chunked"]).summary  # doctest: +SKIP
    >>> summary["repairs"][0]["cost_multiplier"]  # doctest: +SKIP
    1.9
    """
    chosen = repair_specs(repairs if repairs is not None else config.repair)
    if not chosen:
        raise ConfigError(f"no repair selected; available: {', '.join(REPAIRS)}")
    inner = judge if judge is not None else build_judge(config.judge, **config.judge_options)
    if isinstance(inner, RecordedJudge):
        raise ConfigError(
            f"judge {config.judge!r} holds verdicts made elsewhere: a repair asks the judge new "
            "questions (the other order, each part, other wordings), which recorded verdicts "
            "cannot answer; repair a live judge"
        )
    wrapped = {name: build_repair(name, inner, options) for name, options in chosen.items()}
    out = Path(config.out)
    original = run_audit(config, judge=inner, command=command, progress=progress)
    repaired: dict[str, AuditOutcome] = {}
    for name, repair_judge in wrapped.items():
        sibling = config.model_copy(update={"out": str(out / f"repair-{name}")})
        repaired[name] = run_audit(sibling, judge=repair_judge, command=command, progress=progress)
    stores = [original.store_path, *(outcome.store_path for outcome in repaired.values())]
    comparison = compare_runs(stores)
    paths = {
        f"compare-{k}": p for k, p in write_comparison(comparison, out / "repair-compare").items()
    }
    summary = summarize(comparison, repaired, chosen)
    paths["json"] = write_atomic(
        out / "repair.json", json.dumps(summary, indent=2, allow_nan=False) + "\n"
    )
    paths["md"] = write_atomic(out / "repair.md", render_repair_markdown(summary))
    return RepairOutcome(original, repaired, comparison, summary, paths)


def summarize(
    comparison: Mapping[str, Any],
    repaired: Mapping[str, AuditOutcome],
    chosen: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """Per repair: its options, cost multiplier, and the differences of the probe it targets
    (all probes' differences are in the comparison)."""
    by_candidate = {c["candidate"]: c for c in comparison["comparisons"]}
    rows = []
    for index, (name, outcome) in enumerate(repaired.items(), start=1):
        target = TARGETS[name]
        differences = by_candidate[index]["differences"]
        rows.append(
            {
                "repair": name,
                "options": dict(chosen[name]),
                "target_probe": target,
                "store": str(outcome.store_path),
                "cost_multiplier": stored_cost(outcome.store_path, outcome.run_id),
                "target_findings": [_row(d) for d in differences if d["probe"] == target],
                "other_findings": [_row(d) for d in differences if d["probe"] != target],
            }
        )
    return {
        "baseline": comparison["runs"][0]["source"],
        "headline": comparison["summary"]["headline"],
        "repairs": rows,
    }


def stored_cost(store_path: Path, run_id: int) -> float | None:
    """Mean inner calls per repaired verdict over every request the run's probes planned."""
    with RunStore(store_path) as store:
        keys: set[str] = set()
        for name in store.results(run_id):
            plan = store.plan(run_id, name)
            if plan is not None:
                keys |= set(plan.keys)
        verdicts = store.get_many(sorted(keys))
    return cost_multiplier(list(verdicts.values()))


def _row(difference: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "finding": difference["finding"],
        "labels": dict(difference["labels"]),
        "before": difference["baseline"],
        "after": difference["candidate"],
        "difference": difference["difference"],
        "method": difference["method"],
        "word": difference["word"],
    }
