"""``judgeprobe audit --repair NAME``: the audit, each repaired judge's audit, and their
comparison (a thin layer over :func:`judgeprobe.audit.repair.run_repair_audit`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # the audit is imported when one runs, not when the command line starts
    from judgeprobe.audit.config import AuditConfig
    from judgeprobe.audit.run import AuditOutcome

out = Console()


def run_repairs(config: AuditConfig, command: str, **options: Any) -> AuditOutcome:
    """Run the repair audit, print each repair's line of the card's repair section (its cost and
    its target's headline difference); the original audit's outcome (whose card, which now
    holds the repair section, decides the exit code, as without ``--repair``)."""
    from judgeprobe.audit.repair import run_repair_audit
    from judgeprobe.report.repair import repair_line, repair_section

    outcome = run_repair_audit(config, command=command, **options)
    section = repair_section(outcome.summary) or {"repairs": []}
    for entry in section["repairs"]:
        out.print(f"repair {escape(repair_line(entry))}")
        if entry["links"]["card"]:
            out.print(f"  its card: {escape(str(Path(config.out) / entry['links']['card']))}")
    out.print(f"[bold]{escape(outcome.summary['headline'])}[/]")
    for kind, path in outcome.paths.items():
        out.print(f"repair ({kind}): {escape(str(path))}")
    return outcome.original
