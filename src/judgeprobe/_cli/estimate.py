"""``judgeprobe estimate``: the judge's rate corrected with a few human labels (a thin layer over
:func:`judgeprobe.estimate.estimate` and :func:`judgeprobe.estimate.run.suggest_labels`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judgeprobe._cli.options import DataLoader, JudgeOptions, parse_judge_options

out = Console()


QuantityChoice = Literal["rate", "mean", "win_rate"]
"""What ``--quantity`` takes:
:data:`judgeprobe.probes.agreement.corrected.population.QUANTITIES` (written out, so that the
command line starts without loading the estimate; a test checks that they agree)."""


def estimate(
    judge: Annotated[
        str, typer.Option(help="Judge spec, e.g. profanity, llama, recorded:verdicts.jsonl.")
    ] = "llama",
    judge_option: JudgeOptions = None,
    rubric: Annotated[
        str, typer.Option(help="Rubric: a built-in name or a YAML path.")
    ] = "harmfulness",
    data: Annotated[str, typer.Option(help="Dataset: a short name or a path.")] = "demo",
    loader: DataLoader = None,
    label_budget: Annotated[
        str,
        typer.Option(
            help="Use N of the data's labelled items, drawn at random (--seed), or 'all'."
        ),
    ] = "all",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the label draw.")] = 0,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="A filled labelling sheet (--suggest), or a CSV/JSONL of id and label: its "
            "labels replace the data's."
        ),
    ] = None,
    suggest: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Write a labelling sheet of N items to label next (unsure and unstable items "
            "first); estimate nothing.",
        ),
    ] = None,
    sheet: Annotated[
        Path, typer.Option(help="Where --suggest writes the sheet (.csv, and .jsonl beside it).")
    ] = Path("labelling-sheet.csv"),
    audit: Annotated[
        Path | None,
        typer.Option(
            help="With --suggest: an audit's run store; the items its probes found unstable "
            "are labelled first."
        ),
    ] = None,
    quantity: Annotated[
        QuantityChoice | None,
        typer.Option(
            help="What to estimate: the rate of the positive class (default), the mean score "
            "on the human scale, or the win rate of response A (pairwise, the default there)."
        ),
    ] = None,
    target_width: Annotated[
        float | None,
        typer.Option(help="Also say how many labels give this interval half-width (> 0)."),
    ] = None,
    confidence_level: Annotated[
        float, typer.Option(help="Level of every interval, strictly between 0 and 1.")
    ] = 0.95,
    store: Annotated[Path, typer.Option(help="Run store to cache verdicts in.")] = Path(
        "judgeprobe-score.sqlite"
    ),
    limit: Annotated[int | None, typer.Option(min=1, help="Use only the first N items.")] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help='Print {"naive": ..., "labels_only": ..., "corrected": ...}.'),
    ] = False,
) -> None:
    """The judge's rate corrected with human labels: naive, labels only, corrected.

    The corrected estimate (prediction-powered, PPI++) is unbiased for the humans' rate over
    every item when the labelled items are a random draw of them (docs/estimate.md).
    """
    from judgeprobe.estimate.run import estimate as run_estimate
    from judgeprobe.estimate.run import suggest_labels

    common: dict[str, Any] = {
        "quantity": quantity,
        "judge_options": parse_judge_options(judge_option),
        "loader": loader,
        "store": store,
        "limit": limit,
    }
    if suggest is not None:
        chosen, paths = suggest_labels(
            judge, rubric, data, suggest, sheet=sheet, seed=seed, audit=audit, **common
        )
        _print_suggestion(chosen, paths, as_json)
        return
    result = run_estimate(
        judge,
        rubric,
        data,
        label_budget=label_budget,
        seed=seed,
        labels=labels,
        target_width=target_width,
        confidence_level=confidence_level,
        **common,
    )
    if as_json:
        out.print_json(json.dumps(result.to_dict()))
        return
    _print_estimates(result)


def _print_estimates(result: Any) -> None:
    table = Table(
        title=escape(
            f"{result.what}: {result.items} items, {result.labels} labels ({result.design})"
        )
    )
    for column in ("estimate", "value", "CI", "n"):
        table.add_column(column)
    for name in ("naive", "labels_only", "corrected"):
        est = getattr(result, name)
        if est.defined:
            ci = est.ci
            value, interval = f"{est.estimate:.3f}", f"{ci.level:.0%} [{ci.low:.3f}, {ci.high:.3f}]"
        else:
            value, interval = "n/a", est.reason or "-"
        table.add_row(name, value, escape(interval), str(est.n))
    out.print(table)
    out.print(
        f"naive: the judge alone over every item; corrected: the judge's verdicts weighted "
        f"{result.lam:.2f} ({escape(result.predictor)}) plus the error the labels measure."
    )
    needed = result.labels_needed
    if needed is not None:
        out.print(
            f"labels for a half-width of {needed.half_width:g}: about {needed.corrected} "
            f"corrected, {needed.labels_only} with the labels alone (drawn at random)"
        )
    for note in result.notes:
        out.print(escape(note))


def _print_suggestion(chosen: Any, paths: tuple[Path, Path], as_json: bool) -> None:
    sizes = chosen.design.sizes
    if as_json:
        record = {
            "sheet": [str(p) for p in paths],
            "strata": {h: {"items": sizes[h], "labels": chosen.allocation[h]} for h in sizes},
        }
        out.print_json(json.dumps(record))
        return
    table = Table(title=f"{len(chosen.rows)} items to label, by stratum")
    for column in ("stratum", "items", "to label"):
        table.add_column(column)
    for stratum in sorted(sizes):
        table.add_row(escape(stratum), str(sizes[stratum]), str(chosen.allocation[stratum]))
    out.print(table)
    for path in paths:
        out.print(f"sheet: {escape(str(path))}")
    out.print(
        "Fill in the 'label' column, then run the same command with --labels SHEET instead of "
        "--suggest."
    )
