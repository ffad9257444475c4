"""``judgeprobe watch``: is today's judge the one that was audited? (a thin layer over
:mod:`judgeprobe.watch`).

Exit status: 0 no drift detected, 1 drift detected (at this check or an earlier one), 2 an error
(no audit there, a judge that answered nothing, bad options), 3 a check stopped before it
finished (a budget; run the same command again to resume it), 130 or 143 when stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from judgeprobe._cli.interrupts import resumable
from judgeprobe._cli.options import JudgeOptions, RubricSpec, parse_judge_options
from judgeprobe.errors import ConfigError, JudgeError

if TYPE_CHECKING:
    from judgeprobe.watch import CheckOutcome

out = Console()
console = Console(stderr=True)


def watch(
    audit_out: Annotated[
        Path, typer.Argument(help="The audit's output folder (its run.sqlite), or the store.")
    ],
    judge: Annotated[
        str | None,
        typer.Option(help="The judge as it is now (a judge spec, as for audit); one check."),
    ] = None,
    judge_option: JudgeOptions = None,
    rubric: RubricSpec = None,
    anchors: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Anchors this check draws (default: the watch's, sized by its first check "
            "to detect --change within --within checks).",
        ),
    ] = None,
    report: Annotated[
        bool,
        typer.Option("--report", help="Write watch.md / watch.html from the store; no call."),
    ] = False,
    alpha: Annotated[
        float | None,
        typer.Option(help="False-alarm level over every check (first check only; 0.05)."),
    ] = None,
    change: Annotated[
        float | None,
        typer.Option(
            help="Share of the anchors' verdicts whose flip must be detected (first check "
            "only; 0.10)."
        ),
    ] = None,
    within: Annotated[
        int | None,
        typer.Option(help="... within this many checks of its start (first check only; 10)."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Seed of the anchors' draws (first check only; 0).")
    ] = None,
    max_calls: Annotated[
        int | None, typer.Option(min=1, help="Make at most this many judge calls (resume later).")
    ] = None,
) -> None:
    """Watch an audited judge for drift: one check of anchors from the audit, re-judged now.

    With --judge, re-judges a seeded draw of the audit's anchors with the judge as it is now,
    keeps the check in watch.sqlite beside the audit, writes watch.md and watch.html, and exits 1
    once drift is detected. With --report, renders the series from the store alone.
    """
    from judgeprobe.watch import report_watch, verdict_line, watch_store_path

    if judge is None and not report:
        raise ConfigError("give --judge SPEC to run a check, or --report to render the series")
    store_path = watch_store_path(audit_out)
    if judge is not None:
        outcome = _check(
            audit_out,
            judge,
            judge_option,
            rubric,
            anchors,
            max_calls,
            store_path,
            {"alpha": alpha, "change": change, "within": within, "seed": seed},
        )
        out.print(f"check {outcome.check}: {outcome.calls} judge calls")
        if not outcome.complete:
            if store_path.is_file():
                report_watch(store_path)
            if outcome.failed:
                raise JudgeError(f"check {outcome.check} failed: {outcome.reason}")
            console.print(
                f"[yellow]check {outcome.check} incomplete: {escape(str(outcome.reason))}; run "
                "the same command again to resume it[/]"
            )
            raise typer.Exit(3)
    elif not store_path.is_file():
        raise ConfigError(f"{audit_out}: no watch yet (watch.sqlite); run a check with --judge")
    document, paths = report_watch(store_path)
    for change_line in document["state"]["identity_changed"]:
        console.print(f"[yellow]identity changed since the audit:[/] {escape(change_line)}")
    style = "red" if document["state"]["detected"] else "green"
    out.print(f"[bold {style}]{escape(verdict_line(document))}[/]")
    for kind, path in paths.items():
        out.print(f"watch ({kind}): {escape(str(path))}")
    raise typer.Exit(1 if document["state"]["detected"] else 0)


def _check(
    audit_out: Path,
    spec: str,
    judge_option: list[str] | None,
    rubric: str | None,
    anchors: int | None,
    max_calls: int | None,
    store_path: Path,
    settings: dict[str, float | int | None],
) -> CheckOutcome:
    from judgeprobe.engine import Budget, EngineConfig
    from judgeprobe.judges.registry import build_judge
    from judgeprobe.rubrics import get_rubric
    from judgeprobe.watch import run_check

    the_judge = build_judge(spec, **parse_judge_options(judge_option))
    engine = EngineConfig(progress=False, budget=Budget(max_calls=max_calls))
    with resumable(store_path):
        return run_check(
            audit_out,
            the_judge,
            rubric=None if rubric is None else get_rubric(rubric),
            anchors=anchors,
            settings={k: v for k, v in settings.items() if v is not None},
            engine=engine,
        )
