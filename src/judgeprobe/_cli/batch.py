"""``judgeprobe batch``: an audit's pending judge calls as OpenAI Batch files, and back.

``batch export CONFIG -o DIR`` writes the requests the audit still needs (its probes' current
stage) as OpenAI Batch input files; ``batch import DIR...`` reads the output files of the OpenAI
Batch API or ``vllm run-batch`` into the run store. Export again after an import for the next
stage of multi-stage probes; when an export finds nothing pending, ``judgeprobe audit CONFIG``
makes no judge call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(
    help="Run an audit's judge calls through a provider batch API: export, then import.",
    no_args_is_help=True,
)
out = Console()

_LISTED = 10
"""At most this many unknown or conflicting custom_ids are printed (all are counted)."""


@app.command("export")
def export(
    config_path: Annotated[Path, typer.Argument(help="Audit config YAML.")],
    folder: Annotated[
        Path, typer.Option("--output", "-o", help="Folder for the batch input files.")
    ],
    shards: Annotated[
        int, typer.Option(min=1, help="Split the requests into this many files (by key).")
    ] = 1,
    out_dir: Annotated[
        str | None, typer.Option("--out", help="The audit's output folder (its run store).")
    ] = None,
) -> None:
    """Write the audit's pending requests as OpenAI Batch JSONL (custom_id = request key)."""
    from judgeprobe.audit.batch_export import export_batch
    from judgeprobe.audit.config import load_config

    config = load_config(config_path, out=out_dir)
    report = export_batch(config, folder, shards=shards)
    stages = ", ".join(f"{name} stage {stage}" for name, stage in report.stages.items())
    out.print(
        f"pending requests: {report.requests}"
        + (f" ({escape(stages)})" if stages else "; nothing to export, run the audit")
    )
    for path in report.files:
        out.print(f"input file: {escape(str(path))}")


@app.command("import")
def import_(
    paths: Annotated[
        list[Path], typer.Argument(help="Batch output files, or folders of *.jsonl output files.")
    ],
    store: Annotated[
        Path | None,
        typer.Option(help="The run store (default: the one named by an export's manifest)."),
    ] = None,
) -> None:
    """Read OpenAI Batch / vllm run-batch output into the run store (importing twice is a no-op)."""
    from judgeprobe.audit.batch_export import import_batch

    report = import_batch(paths, store=store)
    out.print(
        f"files: {len(report.files)}, lines: {report.lines}, imported: {report.imported} "
        f"(errors: {report.errors}), unchanged: {report.unchanged}, duplicates: "
        f"{report.duplicates}, kept: {report.kept}, not run: {report.not_run}, unknown custom_id: "
        f"{len(report.unknown)}"
    )
    for what, keys in (("unknown custom_id", report.unknown), ("conflicting", report.conflicts)):
        for key in keys[:_LISTED]:
            out.print(f"  {what}: {escape(key)}")
        if len(keys) > _LISTED:
            out.print(f"  ... and {len(keys) - _LISTED} more {what}")
