"""``judgeprobe batch``: an audit's pending judge calls as OpenAI Batch files, and back.

``batch export CONFIG --out DIR`` writes the requests the audit still needs (its probes' current
stage) as OpenAI Batch input files; ``batch import DIR...`` reads the output files of the OpenAI
Batch API or ``vllm run-batch`` into the run store. Export again after an import for the next
stage of multi-stage probes; when an export finds nothing pending, ``judgeprobe audit CONFIG``
makes no judge call.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand

from judgeprobe._cli.aliases import warn_deprecated
from judgeprobe._cli.options import build_config

app = typer.Typer(
    help="Run an audit's judge calls through a provider batch API: export, then import.",
    no_args_is_help=True,
)
out = Console()

_LISTED = 10
"""At most this many unknown or conflicting custom_ids are printed (all are counted)."""


class ExportCommand(TyperCommand):
    """``batch export``, which reads the old spellings: ``-o/--output DIR`` (now ``--out``) and,
    given with it, ``--out DIR`` for the audit's folder (now ``--store DIR/run.sqlite``)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, old_export_args(args))


def old_export_args(args: list[str]) -> list[str]:
    """``args`` of an old-style export (one with ``-o`` or ``--output``) in the new spellings,
    with a deprecation warning; other ``args`` as they are.

    >>> old_export_args(["a.yaml", "-o", "batch", "--out", "audit"])
    ['a.yaml', '--out', 'batch', '--store', 'audit/run.sqlite']
    """
    head = args[: args.index("--")] if "--" in args else args
    if not any(a in ("-o", "--output") or a.startswith("--output=") for a in head):
        return list(args)
    moved: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        name, eq, value = arg.partition("=")
        if arg == "--":
            moved.extend(args[index:])
            break
        if name == "--out":
            if not eq and index + 1 < len(args):
                index, value = index + 1, args[index + 1]
            warn_deprecated("batch export --out DIR (the audit's folder)", "--store DIR/run.sqlite")
            moved += ["--store", str(PurePosixPath(value) / STORE_NAME)]
        elif arg == "-o" or name == "--output":
            warn_deprecated(f"batch export {name}", "--out")
            moved.append("--out" + eq + value)
        else:
            moved.append(arg)
        index += 1
    return moved


STORE_NAME = "run.sqlite"
"""The file name of an audit's run store in its output folder."""


@app.command("export", cls=ExportCommand)
def export(
    config_path: Annotated[Path, typer.Argument(help="Audit config YAML.")],
    folder: Annotated[Path, typer.Option("--out", help="Folder for the batch input files.")],
    shards: Annotated[
        int, typer.Option(min=1, help="Split the requests into this many files (by key).")
    ] = 1,
    store: Annotated[
        Path | None,
        typer.Option(
            help="The audit's run store, OUT/run.sqlite (default: the one of the config's out)."
        ),
    ] = None,
) -> None:
    """Write the audit's pending requests as OpenAI Batch JSONL (custom_id = request key)."""
    from judgeprobe.audit.batch_export import export_batch

    if store is not None and store.name != STORE_NAME:
        raise typer.BadParameter(
            f"{store}: an audit's run store is OUT/{STORE_NAME}, in its output folder",
            param_hint="--store",
        )
    out_dir = None if store is None else str(store.parent)
    config = build_config(config_path, out=out_dir)
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
    config_path: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="The audit config, whose judge's secrets are redacted from what is stored "
            "(default: the API key variable the export's manifest names).",
        ),
    ] = None,
) -> None:
    """Read OpenAI Batch / vllm run-batch output into the run store (importing twice is a no-op)."""
    from judgeprobe.audit.batch_export import import_batch

    config = None if config_path is None else build_config(config_path)
    report = import_batch(paths, store=store, config=config)
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
