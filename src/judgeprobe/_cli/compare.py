"""``judgeprobe compare``: did the judge become more or less reliable? (a thin layer over
:func:`judgeprobe.compare.compare_runs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from judgeprobe._cli.choices import CompareFailOn

out = Console()

_WORD_STYLE = {"worse": "red", "better": "green", "changed": "yellow"}


def compare(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Two or more runs: run stores (run.sqlite), card.json files or audit folders; "
            "the first is the baseline."
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Folder for compare.json, compare.md, compare.html.")
    ] = Path("judgeprobe-compare"),
    fail_on: Annotated[
        CompareFailOn,
        typer.Option(help="Exit 1 when a gated finding got worse with evidence (worse)."),
    ] = "never",
    allow_different_data: Annotated[
        bool,
        typer.Option(
            "--allow-different-data",
            help="Compare runs on different data, rubric kinds or probe parameters (unpaired).",
        ),
    ] = False,
    allow_different_rubric: Annotated[
        bool,
        typer.Option(
            "--allow-different-rubric",
            help="Compare judges audited on the same items with rubrics of different kinds "
            "(paired; score-unit findings as shares of each rubric's score span).",
        ),
    ] = False,
) -> None:
    """Compare audit runs finding by finding: paired differences, and a word per difference."""
    from judgeprobe.compare import compare_runs, exit_code, write_comparison

    document = compare_runs(
        runs,
        allow_different_data=allow_different_data,
        allow_different_rubric=allow_different_rubric,
    )
    for run in document["runs"]:
        out.print(
            f"run {run['index']}: {escape(run['source'])} judge {escape(run['judge']['model'])} "
            f"fingerprint {escape(run['judge']['fingerprint'])}, data sha256 "
            f"{escape(run['data']['sha256'])} (n={run['data']['n']})"
        )
    for comparison in document["comparisons"]:
        for d in comparison["differences"]:
            if d["word"] in _WORD_STYLE:
                labels = ", ".join(f"{k}={v}" for k, v in sorted(d["labels"].items()))
                where = f" ({labels})" if labels else ""
                out.print(
                    f"  [{_WORD_STYLE[d['word']]}]{d['word']}[/] run {comparison['candidate']}: "
                    f"{escape(d['probe'])} {escape(d['finding'])}{escape(where)} "
                    f"{d['difference']['estimate']:+.3g} ({d['method']})"
                )
    out.print(f"[bold]{escape(document['summary']['headline'])}[/]")
    for kind, path in write_comparison(document, out_dir).items():
        out.print(f"comparison ({kind}): {escape(str(path))}")
    raise typer.Exit(exit_code(document, fail_on))
