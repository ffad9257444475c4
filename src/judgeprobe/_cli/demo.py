"""``judgeprobe demo``: audit two real judges on the shipped demo data and compare them (a thin
layer over :func:`judgeprobe.audit.demo.run_demo`)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from judgeprobe._cli.choices import FailOn

out = Console()
console = Console(stderr=True)

_STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "inconclusive": "magenta"}


def demo(
    out_dir: Annotated[
        Path,
        typer.Option("--out", help="Folder for the two audits (llama/, profanity/) and compare.*."),
    ] = Path("judgeprobe-demo"),
    fail_on: Annotated[
        FailOn, typer.Option(help="Exit non-zero when either card's status reaches this one.")
    ] = "never",
) -> None:
    """Audit the embedded LLM judge (Gemma 3 270M, offline) and the profanity classifier on the
    shipped demo data, each with the rubric it fits, and compare them.

    Writes each judge's Judge Card (llama/card.html, profanity/card.html, with .md and .json)
    and their comparison (compare.html, compare.md, compare.json) in the --out folder.
    """
    from judgeprobe.audit.demo import comparison_lines, run_demo
    from judgeprobe.report import NOTHING_ASSESSED_EXIT, exit_code, nothing_assessed

    command = "judgeprobe " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    outcome = run_demo(out_dir, fail_on=fail_on, command=command)
    codes = []
    for name, audit in outcome.audits.items():
        card: dict[str, Any] = audit.card or {}
        summary = card.get("summary", {})
        overall = str(summary.get("overall", "n/a"))
        style = _STATUS_STYLE.get(overall, "none")
        out.print(
            f"[bold]{escape(name)}:[/] [{style}]{escape(str(summary.get('headline', '')))}[/]"
        )
        out.print(
            f"  card: {escape(str(audit.card_paths.get('html', audit.store_path)))} (.md, .json)"
        )
        totals = audit.engine_totals
        out.print(
            f"  judge calls: {totals.get('called', 0)}, from the store: {totals.get('cached', 0)}, "
            f"failed: {totals.get('failed', 0)}"
        )
        if not audit.complete:
            console.print(f"[yellow]{escape(name)} incomplete: {escape(str(audit.reason))}[/]")
            codes.append(3)
        elif card:
            reason = nothing_assessed(card, fail_on=fail_on)
            if reason is not None:
                console.print(f"[red]{escape(name)}: nothing assessed:[/] {escape(reason)}")
                codes.append(NOTHING_ASSESSED_EXIT)
            elif fail_on != "never":
                codes.append(exit_code(card, fail_on=fail_on))
    if outcome.comparison is not None:
        out.print("[bold]comparison:[/]")
        for line in comparison_lines(outcome.comparison):
            out.print(escape(line))
        html = outcome.comparison_paths.get("html")
        out.print(f"  comparison: {escape(str(html))} (.md, .json)")
    raise typer.Exit(max(codes, default=0))
