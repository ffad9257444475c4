"""``judgeprobe audit --repair NAME``: the audit, each repaired judge's audit, and their
comparison (a thin layer over :func:`judgeprobe.repair_audit.run_repair_audit`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # the audit is imported when one runs, not when the command line starts
    from judgeprobe.audit import AuditConfig, AuditOutcome

out = Console()

_WORD_STYLE = {"worse": "red", "better": "green", "changed": "yellow"}


def with_repairs(config: AuditConfig, names: list[str] | None) -> AuditConfig:
    """``config`` with the ``--repair`` names added to its ``repair`` (options kept)."""
    if not names:
        return config
    from judgeprobe.repair_audit import repair_specs

    chosen = {
        **config.repair,
        **{k: v for k, v in repair_specs(names).items() if k not in config.repair},
    }
    updated = config.model_copy(update={"repair": chosen})
    updated._source = config.source
    return updated


def run_repairs(config: AuditConfig, command: str, **options: Any) -> AuditOutcome:
    """Run the repair audit, print each repair's cost and target findings; the original audit's
    outcome (whose card decides the exit code, as without ``--repair``)."""
    from judgeprobe.repair_audit import run_repair_audit

    outcome = run_repair_audit(config, command=command, **options)
    for repair in outcome.summary["repairs"]:
        cost = repair["cost_multiplier"]
        cost_text = "n/a" if cost is None else f"{cost:.3g}x"
        out.print(
            f"repair {escape(repair['repair'])} (targets {escape(repair['target_probe'])}): "
            f"cost {cost_text} inner calls per verdict, card in {escape(repair['store'])}"
        )
        for row in repair["target_findings"]:
            labels = ", ".join(f"{k}={v}" for k, v in sorted(row["labels"].items()))
            before, after = row["before"], row["after"]
            style = _WORD_STYLE.get(row["word"], "default")
            out.print(
                f"  {escape(row['finding'])}{escape(f' ({labels})' if labels else '')}: "
                f"{_value(before['estimate'])} -> {_value(after['estimate'])} "
                f"[{style}]{escape(row['word'])}[/] ({row['method']})"
            )
    out.print(f"[bold]{escape(outcome.summary['headline'])}[/]")
    for kind, path in outcome.paths.items():
        out.print(f"repair ({kind}): {escape(str(path))}")
    return outcome.original


def _value(value: Any) -> str:
    return "n/a" if not isinstance(value, int | float) else f"{value:.3g}"
