"""``judgeprobe bill`` and the audit's cost gate: the bill printed before the first judge call.

``judgeprobe bill CONFIG`` (and ``judgeprobe audit CONFIG --bill``) print the bill of
:func:`judgeprobe.audit.billing.plan_audit` and make no judge call; ``audit --confirm-over AMOUNT``
asks before an audit whose planned cost exceeds AMOUNT, and without a terminal refuses unless
``--yes`` is given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judgeprobe._cli.interrupts import resumable
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
)
from judgeprobe.errors import ConfigError

out = Console()


def bill(
    config_path: Annotated[
        Path | None,
        typer.Argument(help="Audit config YAML (judge, rubric, data, probes, pricing)."),
    ] = None,
    judge: JudgeSpec = None,
    data: DataSpec = None,
    rubric: RubricSpec = None,
    judge_option: JudgeOptions = None,
    loader: DataLoader = None,
    probes: ProbeNames = None,
    out_dir: Annotated[
        str | None, typer.Option("--out", help="Output folder (its run store is looked up).")
    ] = None,
    limit: Limit = None,
    seed: Seed = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the bill as JSON.")] = False,
    pilot: Annotated[
        bool,
        typer.Option(
            "--pilot",
            help="First judge the first stage of the multi-stage probes into the run store "
            "(the audit reuses it), so that their later stages are billed exactly.",
        ),
    ] = False,
    fixed_size: Annotated[
        bool,
        typer.Option(
            "--fixed-size",
            help="Bill the audit with every item at once (audit --fixed-size) only, without "
            "the expectation of the audit in rounds.",
        ),
    ] = False,
) -> None:
    """The bill of an audit, without a judge call: its requests, tokens, cost and time, per probe.

    Takes the audit's config and overrides; the audit then makes the calls it bills. With
    --pilot the first stages are judged first (their cost is printed), and the rest is exact.
    An audit in rounds (the default) is billed twice: its bound, every item audited, and its
    expectation, the audit in rounds of a sound stand-in judge that makes no call.
    """
    config = build_config(
        config_path,
        judge=judge,
        data=data,
        rubric=rubric,
        judge_option=judge_option,
        loader=loader,
        probes=probes,
        out=out_dir,
        limit=limit,
        seed=seed,
        engine={"fixed_size": True} if fixed_size else None,
    )
    print_bill(config, as_json=as_json, pilot=pilot)


def print_bill(config: Any, *, as_json: bool = False, pilot: bool = False) -> None:
    """Plan ``config``'s audit and print its bill (a table, or JSON); ``pilot`` as for
    :func:`judgeprobe.audit.billing.plan_audit`."""
    from judgeprobe.audit.billing import plan_audit

    with resumable(Path(config.out) / "run.sqlite"):
        bill = plan_audit(config, pilot=pilot, progress=False if as_json else None, rounds=True)
    if as_json:
        out.print_json(json.dumps(bill.to_dict()))
        return
    tokens = "prompt tokens (est.)" if bill.tokens_counted is False else "prompt tokens"
    currency = bill.pricing.currency if bill.pricing is not None else ""
    made = "no judge call made" if bill.pilot is None else f"{bill.pilot.calls} pilot calls made"
    table = Table(title=escape(f"the bill of the audit of {bill.judge}: {made}"))
    for column in (
        "probe", "requests", "distinct", "in store", "calls", tokens,
        "completion tokens (exp.)", f"cost {currency}".strip(), "time",
    ):  # fmt: skip
        table.add_column(column, justify="left" if column == "probe" else "right")
    rows = (*bill.rows, bill.total, *([bill.rounds] if bill.rounds is not None else []))
    for row in rows:
        calls = f"{row.calls} (bound {row.bound_calls})" if row.bound else str(row.calls)
        prompt = f"{row.prompt_tokens} (bound {row.bound_prompt_tokens})" if row.bound else ""
        name = f"[bold]{row.probe}[/]" if row is bill.total else escape(row.probe)
        if row is bill.rounds:
            name = "[bold]expected in rounds[/]"
        table.add_row(
            name,
            str(row.requests),
            str(row.distinct),
            str(row.stored),
            calls,
            prompt or str(row.prompt_tokens),
            str(row.completion_tokens),
            "-" if row.cost is None else f"{row.cost:.4f}",
            _duration(row.seconds),
        )
    out.print(table)
    counting = {
        True: "counted with the judge's tokenizer",
        False: "estimated at 4 characters a token (the judge has no tokenizer)",
        None: "no call left to make",
    }
    notes = [
        f"prompt tokens: {counting[bill.tokens_counted]}",
        f"completion tokens: {bill.completion}",
        f"time: {bill.time_note}",
    ]
    if bill.total.bound:
        notes.append(
            "(bound N): a later stage is drawn from verdicts not yet made; the figure is its "
            "expectation, the mean of plans on stand-in verdicts spread over the rubric's "
            "labels, and N the most any stand-in plan needs"
        )
    if bill.pilot is not None:
        cost = "" if bill.pilot.cost is None else f", cost {bill.pilot.cost:.4f}"
        notes.append(
            f"pilot: {bill.pilot.calls} calls made ({bill.pilot.prompt_tokens} prompt tokens"
            f"{cost}), the first stages of the multi-stage probes, stored in the run store; "
            f"they are counted above and the audit answers them from the store, leaving "
            f"{bill.total.calls - bill.pilot.calls} calls to make"
        )
    if bill.total.skipped:
        notes.append(f"{bill.total.skipped} inputs exceed the context window: skipped, not sent")
    if bill.total.cached_prompt_tokens:
        share = bill.total.cached_prompt_tokens / max(1, bill.total.prompt_tokens)
        priced = (
            "billed at the cached input price"
            if bill.pricing is not None and bill.pricing.cached_input_per_mtok is not None
            else "billed at the input price: add 'cached_input_per_mtok' to 'pricing' for the "
            "provider's discount"
        )
        notes.append(
            f"prompt cache: {bill.total.cached_prompt_tokens} of the prompt tokens "
            f"({share:.0%}) are prefixes shared with the call sent before, which a provider's "
            f"prompt cache serves; {priced}"
        )
    if bill.pricing is not None and config.engine.executor == "openai-batch":
        notes.append(
            f"cost: through the Batch API, at {bill.pricing.batch_price_factor:g} of the prices"
        )
    if bill.rounds is not None:
        notes.append(
            f"expected in rounds: {bill.rounds_note}. The audit runs in rounds and stops once "
            "its verdict is decided; this is the audit in rounds of a stand-in judge that makes "
            "no call and has none of the defects the probes look for (its decision follows the "
            "items a request holds): what a judge that passes costs. A judge with a decided "
            "defect stops sooner; the total above, every item audited, is the bound"
        )
    elif bill.rounds_note:
        notes.append(bill.rounds_note)
    if bill.pricing is None:
        notes.append("cost: add 'pricing: {input_per_mtok: ..., output_per_mtok: ...}' to price it")
    for note in notes:
        out.print(escape(note))


def confirm_cost(config: Any, amount: float, *, yes: bool, pilot: bool = False) -> None:
    """Go on when the planned cost is at most ``amount``, when ``yes``, or when the user says
    so on a terminal; else a :class:`ConfigError` naming the cost and ``--yes``. ``pilot``
    judges the first stages first (their cost is then spent whatever the answer)."""
    from judgeprobe.audit.billing import plan_audit

    with resumable(Path(config.out) / "run.sqlite"):
        bill = plan_audit(config, pilot=pilot)
    if bill.pricing is None or bill.cost is None:
        raise ConfigError(
            "--confirm-over needs a price table: add 'pricing: {input_per_mtok: ..., "
            "output_per_mtok: ...}' to the config"
        )
    if bill.cost <= amount or yes:
        return
    planned = f"{bill.cost:.4f} {bill.pricing.currency}"
    bound = f" (expected; up to {bill.total.bound_calls} calls)" if bill.total.bound else ""
    what = f"the planned cost {planned}{bound} exceeds --confirm-over {amount:g}"
    if not on_terminal():
        raise ConfigError(f"{what}; there is no terminal to confirm on: pass --yes to run it")
    if not typer.confirm(f"{what} ({bill.total.calls} judge calls); run the audit?"):
        raise ConfigError(f"{what}; not confirmed, no judge call made")


def on_terminal() -> bool:
    """Whether a person can be asked: standard input is a terminal."""
    return sys.stdin.isatty()


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
