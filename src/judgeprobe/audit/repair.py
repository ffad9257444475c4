"""Auditing repaired judges next to the original: same probes, same data, before and after.

:func:`run_repair_audit` audits the judge of a config as ``judgeprobe audit`` does, then audits
each repaired judge (:mod:`judgeprobe.judges.repairs`) with the same probes, data and seed into a
sibling folder ``repair-NAME`` of the audit's ``out``, each with its own run store and card. It
then compares every repaired run with the original through :func:`judgeprobe.compare.compare_runs`
(paired differences over shared items where the probe's per-item outcomes are known, else
unpaired from the intervals; a word per difference: better, worse, changed, no evidence), and
reads each repair's cost multiplier (inner judge calls per verdict) from its run store.

The call and token budget (``--max-calls``, ``--max-tokens``) is one budget for all of them,
counted at the judge under repair: the original audit spends from it first, then each repair's
inner calls in turn (:class:`~judgeprobe.engine.metered.MeteredJudge`); a repaired audit that
finds it spent stops with the reason, incomplete, as an audit stops at its budget.

It stores the before/after summary of each repair on the probe it targets (with the cost
multiplier, the repaired card's verdict and links to its folder and the comparison's) with the
original run, and renders the original card again, which now shows it in its ``repair``
section (:mod:`judgeprobe.report.repair`); ``judgeprobe card`` on the original run store renders
the same section. It also writes ``repair-compare/`` (the comparison's three files) and
``repair.json`` (the summary, with each repaired run store's path and the other probes'
differences) and ``repair.md`` (the card's repair section on its own) in ``out``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeprobe._util.atomic import write_atomic
from judgeprobe.audit.config import AuditConfig
from judgeprobe.audit.run import AuditOutcome, run_audit
from judgeprobe.compare import compare_runs, write_comparison
from judgeprobe.core.judge import Judge
from judgeprobe.engine import RunStore
from judgeprobe.engine.limits import BudgetMeter
from judgeprobe.engine.lock import StoreLock
from judgeprobe.engine.metered import MeteredJudge
from judgeprobe.engine.store_meta import REPAIR
from judgeprobe.errors import ConfigError
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.judges.repairs import (
    REPAIRS,
    build_repair,
    cost_multiplier,
    repair_options,
    target_of,
)
from judgeprobe.report.card import build_card
from judgeprobe.report.markdown import render_repair_markdown
from judgeprobe.report.overview import verdict_sentence
from judgeprobe.report.repair import repair_section
from judgeprobe.report.write import render_card

RepairSpecs = Sequence[str] | Mapping[str, Mapping[str, Any]]
COMPARISON_FOLDER = "repair-compare"
"""The comparison's folder in the audit's ``out``."""


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
    >>> from judgeprobe.audit.run import parse_config  # doctest: +SKIP
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
    shared = BudgetMeter(config.engine_config(progress=progress).budget)
    metered = MeteredJudge(inner, shared)
    wrapped = {name: build_repair(name, metered, options) for name, options in chosen.items()}
    out = Path(config.out)
    original = run_audit(config, judge=inner, command=command, progress=progress, meter=shared)
    repaired: dict[str, AuditOutcome] = {}
    for name, repair_judge in wrapped.items():
        sibling = config.model_copy(update={"out": str(out / f"repair-{name}")})
        repaired[name] = run_audit(sibling, judge=repair_judge, command=command, progress=progress)
    stores = [original.store_path, *(outcome.store_path for outcome in repaired.values())]
    comparison = compare_runs(stores)
    paths = {
        f"compare-{k}": p for k, p in write_comparison(comparison, out / COMPARISON_FOLDER).items()
    }
    summary = summarize(comparison, repaired, chosen, out)
    section = repair_section(summary)
    assert section is not None  # at least one repair was audited
    with StoreLock(original.store_path), RunStore(original.store_path) as store:
        store.put_run_meta(original.run_id, REPAIR, section)
    original.card, original.card_paths = render_card(
        original.store_path, out, run_id=original.run_id
    )
    paths["json"] = write_atomic(
        out / "repair.json", json.dumps(summary, indent=2, allow_nan=False) + "\n"
    )
    paths["md"] = write_atomic(out / "repair.md", render_repair_markdown(section))
    return RepairOutcome(original, repaired, comparison, summary, paths)


def summarize(
    comparison: Mapping[str, Any],
    repaired: Mapping[str, AuditOutcome],
    chosen: Mapping[str, Mapping[str, Any]],
    out: Path,
) -> dict[str, Any]:
    """Per repair: its options, cost multiplier, its card's verdict, links (relative to ``out``,
    the original run's folder) and the differences of the probe it targets (all probes'
    differences are in the comparison)."""
    by_candidate = {c["candidate"]: c for c in comparison["comparisons"]}
    rows = []
    for index, (name, outcome) in enumerate(repaired.items(), start=1):
        target = target_of(name)
        differences = by_candidate[index]["differences"]
        card = build_card(outcome.store_path, run_id=outcome.run_id)
        rows.append(
            {
                "repair": name,
                "options": dict(chosen[name]),
                "target_probe": target,
                "store": str(outcome.store_path),
                "cost_multiplier": stored_cost(outcome.store_path, outcome.run_id),
                "verdict": {
                    "overall": card["summary"]["overall"],
                    "sentence": verdict_sentence(card),
                },
                "links": {
                    "card": outcome.store_path.parent.relative_to(out).as_posix(),
                    "comparison": COMPARISON_FOLDER,
                },
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
        "gated": difference["gated"],
        "before": difference["baseline"],
        "after": difference["candidate"],
        "difference": difference["difference"],
        "method": difference["method"],
        "adjusted_pvalue": difference["adjusted_pvalue"],
        "word": difference["word"],
    }
