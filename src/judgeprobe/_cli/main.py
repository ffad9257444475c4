"""The judgeprobe command line: a thin layer over the Python API.

Text from data, files and the card (column names, labels, paths, error messages) is printed
through :func:`rich.markup.escape`, never as rich markup, so ``[/]`` or ``[link=...]`` in a file
shows as written instead of failing or printing a live terminal link.
"""

from __future__ import annotations

import errno
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judgeprobe._cli.aliases import deprecated_command, renamed_options, warn_deprecated
from judgeprobe._cli.batch import app as batch_app
from judgeprobe._cli.bill import bill as bill_command
from judgeprobe._cli.bill import confirm_cost, print_bill
from judgeprobe._cli.choices import FAIL_ON_HELP, Executor, FailOn
from judgeprobe._cli.compare import compare as compare_command
from judgeprobe._cli.demo import demo as demo_command
from judgeprobe._cli.estimate import estimate as estimate_command
from judgeprobe._cli.interrupts import resumable
from judgeprobe._cli.lists import list_datasets, list_judges, list_repairs, version_callback
from judgeprobe._cli.options import (
    DataLoader,
    DataSpec,
    JudgeOptions,
    JudgeSpec,
    Limit,
    ProbeNames,
    RubricSpec,
    Seed,
    build_config,
    parse_judge_options,
)
from judgeprobe._cli.repair import run_repairs
from judgeprobe._cli.store import app as store_app
from judgeprobe._cli.watch import watch as watch_command
from judgeprobe._util.redaction import redact_message
from judgeprobe._util.signals import stop_exit_code, stop_on_termination, terminated
from judgeprobe.errors import JudgeprobeError

app = typer.Typer(
    help="Can this judge's numbers be believed? Reliability audits for automatic judges.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(batch_app, name="batch")
app.add_typer(store_app, name="store")
console = Console(stderr=True)
out = Console()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Can this judge's numbers be believed? Reliability audits for automatic judges."""


def _command_line() -> str:
    return "judgeprobe " + " ".join(shlex.quote(a) for a in sys.argv[1:])


app.command("demo")(demo_command)


@app.command(cls=renamed_options({"--plan": "--bill"}))
def audit(
    config_path: Annotated[
        Path | None,
        typer.Argument(help="Audit config YAML (judge, rubric, data, probes, thresholds)."),
    ] = None,
    judge: JudgeSpec = None,
    data: DataSpec = None,
    rubric: RubricSpec = None,
    judge_option: JudgeOptions = None,
    loader: DataLoader = None,
    probes: ProbeNames = None,
    out_dir: Annotated[
        str | None, typer.Option("--out", help="Output folder (run store + card).")
    ] = None,
    limit: Limit = None,
    seed: Seed = None,
    max_calls: Annotated[
        int | None,
        typer.Option(
            help="Make at most this many judge calls, retries included (>= 1; resume later); "
            "in rounds (the default), also the rounds' budget."
        ),
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Spend at most this many tokens (>= 1; resume later).")
    ] = None,
    budget: Annotated[
        float | None,
        typer.Option(
            "--budget",
            help="Spend at most this much money, at the config's 'pricing' (tokens at the dearer "
            "of its input and output prices; resume later).",
        ),
    ] = None,
    fail_on: Annotated[FailOn | None, typer.Option(help=FAIL_ON_HELP)] = None,
    executor: Annotated[
        Executor | None,
        typer.Option(
            help="Who makes the judge calls: local (default), openai-batch (the provider's "
            "Batch API; see docs/batch.md) or ray (Ray workers; see docs/scale.md). Overrides "
            "the config's engine.executor."
        ),
    ] = None,
    until_decided: Annotated[
        bool | None,
        typer.Option(
            "--until-decided/--fixed-size",
            help="Audit in rounds of growing item prefixes until the card's verdict is decided "
            "(the default where it applies: see docs/judge-card.md#sampling-until-decided), or "
            "every item at once.",
            show_default=False,
        ),
    ] = None,
    call_budget: Annotated[
        int | None,
        typer.Option(hidden=True, help="Deprecated spelling of --max-calls."),
    ] = None,
    bill: Annotated[
        bool, typer.Option("--bill", help="Print the bill (as `judgeprobe bill`); call nothing.")
    ] = False,
    confirm_over: Annotated[
        float | None,
        typer.Option(
            min=0, help="Ask before running when the planned cost (config 'pricing') exceeds this."
        ),
    ] = None,
    pilot: Annotated[
        bool,
        typer.Option(
            "--pilot",
            help="With --bill or --confirm-over: first judge the first stage of the multi-stage "
            "probes (stored; the audit reuses it) so that their later stages are billed exactly.",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", help="Run past --confirm-over without asking.")
    ] = False,
    repair: Annotated[
        list[str] | None,
        typer.Option(
            "--repair",
            help="Also audit the judge repaired by NAME (repeatable): swap_average, chunked, "
            "rubric_ensemble, length_controlled, single_answer, or a chain such as "
            "single_answer+length_controlled; see docs/repair.md.",
        ),
    ] = None,
) -> None:
    """Audit a judge: run the selected probes in one engine run and write its Judge Card.

    Re-running the same audit makes no judge call: every verdict is in the run store. By default
    the audit runs in rounds of growing item prefixes and stops once the card's verdict can no
    longer change (--fixed-size: every item at once); --max-calls is also the rounds' budget: no
    round starts that would pass it.
    """
    if call_budget is not None:
        warn_deprecated("--call-budget", "--max-calls")
        max_calls = call_budget if max_calls is None else min(max_calls, call_budget)
    config = build_config(
        config_path,
        judge_option=judge_option,
        loader=loader,
        probes=probes,
        engine={
            "max_calls": max_calls,
            "max_tokens": max_tokens,
            "max_cost": budget,
            "executor": executor,
            "fixed_size": True if until_decided is False else None,
        },
        until_decided=bool(until_decided),
        repair=repair,
        judge=judge,
        data=data,
        rubric=rubric,
        out=out_dir,
        limit=limit,
        seed=seed,
        fail_on=fail_on,
    )
    if until_decided is None:
        from judgeprobe.audit.run import sampled_by_default

        config, why = sampled_by_default(config)
        if why is not None and not config.engine.fixed_size:
            console.print(f"[dim]every item at once (not in rounds): {escape(why)}[/]")
    if not config.probes and (bill or confirm_over is not None):
        from judgeprobe.audit.run import with_default_probes

        config = with_default_probes(config)  # the bill is of the probes the audit will run
    if bill:
        print_bill(config, pilot=pilot)
        return
    if confirm_over is not None:
        confirm_cost(config, confirm_over, yes=yes, pilot=pilot)
    _run(config, _command_line())


app.command("bill")(bill_command)
app.command("plan", hidden=True, cls=deprecated_command("bill"))(bill_command)


@app.command()
def card(
    store: Annotated[Path, typer.Argument(help="A run store (run.sqlite) written by an audit.")],
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: beside the store).")
    ] = None,
    fail_on: Annotated[FailOn, typer.Option(help=FAIL_ON_HELP)] = "never",
    run_id: Annotated[
        int | None,
        typer.Option("--run", help="Which run of the store (its id); default: the latest."),
    ] = None,
) -> None:
    """Render the Judge Card from a run store, without a single judge call."""
    from judgeprobe.report.write import render_card

    if not store.is_file():
        raise typer.BadParameter(f"no run store at {store}")
    card, paths = render_card(store, out_dir or store.parent, run_id=run_id)
    for kind, path in paths.items():
        out.print(f"{kind}: {escape(str(path))}")
    raise typer.Exit(_exit_code(card, fail_on))


@app.command()
def score(
    judge: Annotated[
        str, typer.Option(help="Judge spec, e.g. llama, profanity, openai:MODEL@URL.")
    ] = "llama",
    judge_option: JudgeOptions = None,
    rubric: Annotated[
        str, typer.Option(help="Rubric: a built-in name or a YAML path.")
    ] = "harmfulness",
    data: Annotated[str, typer.Option(help="Dataset: a short name or a path.")] = "demo",
    loader: DataLoader = None,
    store: Annotated[Path, typer.Option(help="Run store to cache verdicts in.")] = Path(
        "judgeprobe-score.sqlite"
    ),
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write verdicts to .csv or .jsonl.")
    ] = None,
    trials: Annotated[int, typer.Option(min=1, help="Independent reruns per item.")] = 1,
    limit: Annotated[int | None, typer.Option(min=1, help="Use only the first N items.")] = None,
) -> None:
    """Judge a dataset with a rubric; store every verdict and print a summary."""
    from judgeprobe.data import load_dataset
    from judgeprobe.engine import Engine, EngineConfig, RunStore, run_blocking
    from judgeprobe.judges.registry import build_judge
    from judgeprobe.rubrics import get_rubric
    from judgeprobe.runs.scoring import check_verdicts_path, score_items

    if output is not None:
        check_verdicts_path(output)  # before any call: a wrong name costs no judging
    dataset = load_dataset(data) if loader is None else load_dataset(data, loader=loader)
    items = list(dataset.items[:limit] if limit else dataset.items)
    the_judge = build_judge(judge, **parse_judge_options(judge_option))
    the_rubric = get_rubric(rubric)

    async def go() -> Any:
        try:
            with RunStore(store) as run_store:
                engine = Engine(the_judge, run_store, EngineConfig())
                return await score_items(items, engine, the_rubric, trials=trials)
        finally:
            await the_judge.aclose()

    with resumable(store):
        result = run_blocking(go())
    table = Table(
        title=escape(
            f"{len(items)} items of {dataset.name} x {trials} trial(s), rubric {the_rubric.name}"
        )
    )
    for column in ("status", "count"):
        table.add_column(column)
    counts: dict[str, int] = {}
    for row in result.rows:
        counts[row.verdict.status.value] = counts.get(row.verdict.status.value, 0) + 1
    for status, count in sorted(counts.items()):
        table.add_row(escape(status), str(count))
    out.print(table)
    stats = result.stats
    out.print(
        f"judge calls: {stats.called}, from the store: {stats.cached}, skipped: {stats.skipped}"
    )
    from judgeprobe.runs.scoring_agreement import score_agreement

    agreement = score_agreement(result, the_rubric)
    if agreement is not None:
        _print_agreement(agreement)
    if output is not None:
        out.print(f"verdicts: {escape(str(result.write(output)))}")
    if result.stopped:
        console.print(f"[yellow]stopped early: {escape(result.stopped)}; run again to resume[/]")


def _print_agreement(agreement: Any) -> None:
    """The score command's agreement table: each metric with its CI and n, and the best
    trivial baseline (a :class:`~judgeprobe.runs.scoring_agreement.ScoreAgreement`)."""
    table = Table(
        title=f"agreement with human labels: {agreement.items} items, "
        f"{agreement.binary_items} with a human decision (trial 0)"
    )
    for column in ("metric", "estimate", "CI", "n"):
        table.add_column(column)
    for finding in agreement.findings:
        est = finding.estimate
        label = ", ".join(str(v) for v in finding.labels.values())
        name = f"{finding.name} ({label})" if label else finding.name
        if est.defined:
            ci = est.ci
            value, interval = f"{est.estimate:.3f}", f"{ci.level:.0%} [{ci.low:.3f}, {ci.high:.3f}]"
        else:
            value, interval = "n/a", est.reason or "-"
        table.add_row(escape(name), value, escape(interval), str(est.n))
    out.print(table)
    best = agreement.best_baseline
    if best is not None:
        out.print(
            f"best trivial baseline: {escape(best['baseline'])} ({escape(best['description'])}): "
            f"balanced accuracy {best['balanced_accuracy']:.3f}, kappa {best['kappa']:.3f}"
        )
    for note in agreement.notes:
        out.print(escape(note))


@app.command("probes")
def list_probes(
    judge: JudgeSpec = None,
    data: DataSpec = None,
    rubric: RubricSpec = None,
    judge_option: JudgeOptions = None,
    loader: DataLoader = None,
    limit: Limit = None,
) -> None:
    """List the probes an audit can run; with --judge, --rubric or --data, which of them apply
    (the probes an audit without --probes runs) and why each other one does not."""
    from judgeprobe.probes import get_probe_class, probe_names

    if judge is None and data is None and rubric is None:
        table = Table("probe", "kind", "items", "rubric kinds", "what it asks")
        for name in probe_names():
            cls = get_probe_class(name)
            doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            cells = (name, cls.kind, cls.item_kind, ", ".join(cls.rubric_kinds), doc)
            table.add_row(*(escape(str(cell)) for cell in cells))
        out.print(table)
        return
    from judgeprobe.audit.config import parse_config
    from judgeprobe.audit.run import with_default_probes

    given = {"judge": judge, "data": data, "rubric": rubric, "limit": limit}
    config = parse_config({k: v for k, v in given.items() if v is not None}, source="options")
    config.judge_options.update(parse_judge_options(judge_option))
    if loader is not None:
        config.data_options["loader"] = loader
    chosen = with_default_probes(config)
    table = Table("probe", "applies", "why not")
    for name in probe_names():
        why = chosen.not_applicable.get(name, "")
        table.add_row(escape(name), "no" if why else "yes", escape(why))
    out.print(table)
    out.print(
        f"{len(chosen.probes)} of {len(probe_names())} probes apply to judge "
        f"{escape(config.judge)}, rubric {escape(config.rubric)} and data {escape(config.data)}."
    )


app.command("judges")(list_judges)
app.command("datasets")(list_datasets)
app.command("repairs")(list_repairs)


@app.command("rubrics")
def list_rubrics() -> None:
    """List the built-in rubrics."""
    from judgeprobe.rubrics import builtin_rubric, builtin_rubric_names

    table = Table("rubric", "kind", "hash", "decision")
    for name in builtin_rubric_names():
        rubric = builtin_rubric(name)
        rule = rubric.decision
        decision = "" if rule is None else f"{rule.positive} / {rule.negative}"
        table.add_row(*(escape(str(cell)) for cell in (name, rubric.kind, rubric.hash, decision)))
    out.print(table)


def _run(config: Any, command: str) -> None:

    from judgeprobe.audit.run import run_audit

    with resumable(Path(config.out) / "run.sqlite"):
        if config.repair:
            outcome = run_repairs(config, command)
        else:
            outcome = run_audit(config, command=command)
    card_doc = outcome.card
    if card_doc is not None:
        _print_summary(card_doc)
    for kind, path in outcome.card_paths.items():
        out.print(f"card ({kind}): {escape(str(path))}")
    totals = outcome.engine_totals
    out.print(
        f"judge calls: {totals.get('called', 0)}, distinct requests: {totals.get('distinct', 0)}, "
        f"from the store: {totals.get('cached', 0)}, failed: {totals.get('failed', 0)}, "
        f"unparseable: {totals.get('unparseable', 0)}, skipped: {totals.get('skipped', 0)}"
    )
    skipped = card_doc.get("tested", {}).get("skipped_rows", {}) if card_doc else {}
    if skipped.get("count"):
        console.print(
            f"[yellow]data rows left out: {skipped['count']} (listed in the card, with why)[/]"
        )
    if not outcome.complete:
        console.print(f"[yellow]incomplete: {escape(str(outcome.reason))}[/]")
        raise typer.Exit(3)
    if card_doc is not None:
        raise typer.Exit(_exit_code(card_doc, config.fail_on))


def _exit_code(card_doc: dict[str, Any], fail_on: str) -> int:
    """1 when the card's verdict reaches ``fail_on`` (warn or fail; ``inconclusive``: anything
    but pass); 0 for ``never``; 4 (whatever ``fail_on``) when the card assessed nothing, saying
    why."""
    from judgeprobe.report import NOTHING_ASSESSED_EXIT, exit_code, nothing_assessed

    reason = nothing_assessed(card_doc, fail_on=fail_on)
    if reason is not None:
        console.print(f"[red]nothing assessed:[/] {escape(reason)}")
        return NOTHING_ASSESSED_EXIT
    if fail_on == "never":
        return 0
    return exit_code(card_doc, fail_on=fail_on)


_STATUS_STYLE = {
    "pass": "green",
    "warn": "yellow",
    "fail": "red",
    "inconclusive": "magenta",
    "info": "blue",
    "n/a": "dim",
}


def _print_summary(card_doc: dict[str, Any]) -> None:
    """The card's one-minute summary on the terminal: the headline, then one line per probe."""
    summary = card_doc.get("summary", {})
    out.print(f"[bold]{escape(str(summary.get('headline', '')))}[/]")
    for probe in summary.get("probes", []):
        status = str(probe.get("status", "n/a"))
        style = _STATUS_STYLE.get(status, "none")
        out.print(
            f"  [{style}]{escape(f'{status:>4}')}[/] {escape(str(probe.get('name')))}: "
            f"{escape(str(probe.get('sentence', '')))}"
        )


app.command("compare")(compare_command)
app.command("estimate")(estimate_command)
app.command("watch")(watch_command)


def main() -> None:
    """Console entry point: user errors print one line and exit 2, never a traceback; Ctrl-C
    and SIGTERM stop a run the same way and exit 130 and 143 (:mod:`judgeprobe._util.signals`).
    """
    try:
        with stop_on_termination():
            app()
    except JudgeprobeError as exc:
        console.print(f"[red]error:[/] {escape(redact_message(str(exc)))}")
        sys.exit(2)
    except KeyboardInterrupt:
        console.print(
            "[yellow]interrupted; every finished verdict is stored, run again to resume[/]"
        )
        sys.exit(stop_exit_code())
    except SystemExit as exc:
        if exc.code == 130 and terminated():  # typer reports any stop as 130
            sys.exit(stop_exit_code())
        raise
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        console.print(
            f"[red]error:[/] {escape(where)}{escape(exc.strerror or str(exc))}; free some space "
            "and run the same command again (what was stored is kept)"
        )
        sys.exit(2)


_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
"""A full disk, or a full disk quota."""


if __name__ == "__main__":
    main()
