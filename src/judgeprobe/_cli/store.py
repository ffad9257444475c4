"""``judgeprobe store``: operations on run stores (``store merge A B -o C``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(help="Work with run stores: merge two into one.", no_args_is_help=True)
out = Console()
console = Console(stderr=True)


@app.command("merge")
def merge(
    first: Annotated[Path, typer.Argument(help="A run store (run.sqlite).")],
    second: Annotated[Path, typer.Argument(help="Another run store.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The merged run store to write (a new file).")
    ],
) -> None:
    """Merge two run stores by request key; conflicting verdicts are listed and left out.

    Exits 1 when some verdicts conflict (the merged store is written without them: the next
    audit asks the judge again), 0 otherwise.
    """
    from judgeprobe.engine.store_merge import describe_conflict, merge_stores

    report = merge_stores(first, second, output)
    out.print(
        f"merged into {escape(str(output))}: {report.verdicts} verdicts ({report.only_first} "
        f"from the first store only, {report.only_second} from the second only, {report.same} "
        f"in both, {report.errors_replaced} errors replaced by a verdict), {report.runs} "
        f"run{'s' if report.runs != 1 else ''}"
    )
    if report.conflicts:
        console.print(
            f"[yellow]{len(report.conflicts)} conflicting verdicts left out "
            "(first store vs second):[/]"
        )
        for conflict in report.conflicts:
            console.print(f"  {escape(describe_conflict(conflict))}")
        raise typer.Exit(1)
