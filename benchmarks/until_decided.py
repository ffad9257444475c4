"""Sampling until decided against the fixed-n design: judge calls to a verdict, at what error.

Planted judges from ``simulate_verdicts.py`` (items of harmfulness level 1 or 5; the repetition
probe with one repeat of the response, two requests per item; the gated finding is the
decision flip rate, fail at 0.10, warn at 0.05):

- ``invariant``: never flips (:func:`simulate_verdicts.max_judge`); a fail is a false fail;
- ``clear effect``: a repeated response flips with p = 0.25, far beyond the fail threshold;
- ``near effect``: flips with p = ``--near`` (0.16 by default), just beyond it;
- ``at threshold``: flips with p = 0.10, on the fail threshold: the worst case of a sound judge,
  whose fails measure the false-fail rate where it is largest.

Fixed-n designs at the same error rates: a fixed audit decides at 95 % (a fail needs the Wilson
interval wholly at or above 0.10, so its false-fail rate is at most about 2.5 %), and ``n`` is
the fewest items whose audit reaches the planted judge's right verdict (fail for an effect, pass
for the invariant judge) with probability >= 80 %, computed exactly from the binomial
distribution (:func:`fixed_size`, the first n that reaches 80 %). Two such designs are
compared: the one sized for each judge (what a user who knew the effect would run: the hardest
comparison), and the *planned* one,
sized for the smallest effect of interest, the near effect (what a user who does not know the
judge must run to have 80 % power; the comparison of group-sequential designs). The bound
column is the fewest items any valid sequential test needs on average: Wald's approximation of
the sequential probability ratio test's expected sample size at the planted rate (optimal among
tests with the same error rates, Wald and Wolfowitz 1948), with a one-sided error of 2.5 % and
80 % power.

The sequential design (:func:`judgeprobe.audit.sequential.run_until_decided`, with the default round
schedule of :class:`~judgeprobe.audit.sequential.UntilDecided`: 20, 30, 45, 68, ... items) audits a
pool of ``4 n`` items (``n`` of the planned design) with a call budget of ``8 n`` and stops when
the finding is decided; the flip rate is decided by its confidence sequence. Every audit runs
through the engine on a fresh in-memory store with its own seed (items, judge noise, order).

It prints a Markdown table: mean judge calls per audit, the ratios, and the rate of fail
verdicts (false fail for the invariant and at-threshold judges, power for the effects) with
Wilson 95 % intervals. Goal: at least 3x fewer calls, false fail <= 5 %, power >= 80 %. Run from
the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/until_decided.py --sims 2000 --engine-sims 40
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.stats import binom, norm

sys.path.insert(0, str(Path(__file__).resolve().parent))

import simulate_verdicts as sim

from judgeprobe.audit.anytime import as_sequence
from judgeprobe.audit.sequential import Audited, UntilDecided, run_until_decided, settled
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.engine.engine import run_blocking
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Finding
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.decisions import FLIP_THRESHOLD
from judgeprobe.stats import proportion
from judgeprobe.stats.sequential import look_level

GATED = "decision_flip_rate"
FAIL, NULL_RATE = 0.10, 0.10
RESAMPLES = 50
"""Bootstrap resamples of the (ungated) Wasserstein finding: few, it decides nothing here."""


WARN = 0.05
POWER = 0.80
LEVEL = 0.95


def right_verdict(flip: float) -> str:
    """The verdict a planted judge should get: fail beyond the fail threshold, else pass."""
    return "fail" if flip > FAIL else "pass"


def fixed_chance(flip: float, n: int, verdict: str) -> float:
    """The probability that a fixed audit of ``n`` items at 95 % gives ``verdict`` (fail or
    pass) to a judge of flip rate ``flip``: exact, over the binomial number of flips (the
    Wilson bounds in closed form, as :func:`judgeprobe.stats.proportion` computes them)."""
    k = np.arange(n + 1)
    z = norm.ppf(0.5 + LEVEL / 2)
    rate = k / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    hits = centre - half >= FAIL if verdict == "fail" else centre + half < WARN
    return float(binom.pmf(k[hits], n, flip).sum())


def fixed_size(flip: float, *, power: float = POWER, longest: int = 2000) -> int:
    """The fewest items whose fixed audit at 95 % gives the planted judge its right verdict
    with probability >= ``power`` (exact; the binomial's chance is a sawtooth in n, and the
    first n that reaches ``power`` is the design most favourable to the fixed audit)."""
    verdict = right_verdict(flip)
    for n in range(1, longest + 1):
        if fixed_chance(flip, n, verdict) >= power:
            return n
    raise ValueError(f"no fixed design of at most {longest} items decides flip rate {flip}")


def sprt_items(flip: float, *, alpha: float = 0.025, power: float = POWER) -> float:
    """Wald's approximation of the expected items of the sequential probability ratio test of
    the threshold against ``flip`` at the planted rate: ``((1 - b) log((1 - b) / a) + b log(b /
    (1 - a))) / KL(flip, threshold)``, the fewest any test with those errors needs on average.
    For a judge with no flips the data are certain: ``log(1 / a) / -log(1 - warn)``."""
    if flip == 0.0:
        return math.log(1 / alpha) / -math.log(1 - WARN)
    beta = 1 - power
    drift = flip * math.log(flip / FAIL) + (1 - flip) * math.log((1 - flip) / (1 - FAIL))
    evidence = power * math.log(power / alpha) + beta * math.log(beta / (1 - alpha))
    return evidence / drift


def only_gated(result: ProbeResult) -> ProbeResult:
    """The result with only the flip rate gated: the finding the planted judges speak to."""
    findings = [f if f.name == GATED else f.with_threshold(None) for f in result.findings]
    return replace(result, findings=findings)


def _probe() -> RepetitionProbe:
    return RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=RESAMPLES)


def _engine(judge: Callable[[int], sim.JudgeFn], seed: int) -> Engine:
    return Engine(
        CallableJudge(judge(seed), name="planted", version=str(seed)),
        RunStore(":memory:"),
        EngineConfig(progress=False),
    )


def _status(result: ProbeResult) -> str:
    return result.finding(GATED).status


def sequential_audit(
    judge: Callable[[int], sim.JudgeFn], seed: int, n: int, start: int
) -> tuple[str, int, int]:
    """The sequential design on a pool of ``4 n`` items with a budget of ``8 n`` calls."""
    engine = _engine(judge, seed)
    options = UntilDecided(max_calls=8 * n, start_items=start)
    audited = [Audited("repetition", _probe(), sim.level_items(4 * n, seed), sim.HARM)]
    outcome = run_blocking(
        run_until_decided(audited, engine, options, seed=seed, prepare=only_gated)
    )
    return _status(outcome.results["repetition"]), outcome.calls, len(outcome.rounds)


@dataclass
class Row:
    """One planted judge's sequential audits, and the fixed designs it is compared with."""

    name: str
    flip: float
    own_n: int
    planned_n: int
    sims: int = 0
    seq_fails: int = 0
    seq_calls: int = 0
    seq_rounds: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def calls(self) -> float:
        return self.seq_calls / self.sims

    def add(self, status: str, calls: int, rounds: int) -> None:
        self.seq_fails += status == "fail"
        self.seq_calls += calls
        self.seq_rounds += rounds
        self.statuses[status] = self.statuses.get(status, 0) + 1
        self.sims += 1


def judges(near: float) -> list[tuple[str, float, Callable[[int], sim.JudgeFn]]]:
    return [
        ("invariant", 0.0, sim.max_judge),
        ("clear effect", 0.25, sim.flip_judge(0.25)),
        ("near effect", near, sim.flip_judge(near)),
        ("at threshold", FAIL, sim.flip_judge(FAIL)),
    ]


@functools.cache
def stream_status(k: int, n: int, level: float) -> tuple[str, bool]:
    """The flip rate's status and whether it is decided at ``k`` flips of ``n`` items in a round
    at ``level``, by the package's own functions (the round's interval with its pass side from
    the confidence sequence, the threshold, :func:`settled`)."""
    rate = proportion(k, n, confidence_level=level)
    finding = Finding(GATED, rate, "flips", threshold=FLIP_THRESHOLD)
    finding = as_sequence(finding, 1.0 - LEVEL)
    return finding.status, settled(finding)


def stream_audits(row: Row, sims: int, start: int, seed: int) -> None:
    """``sims`` sequential audits of ``row``'s judge as streams of item flips: each item flips
    with the planted rate, and the rounds decide as the engine's audits do (2 calls per item,
    the same round sizes, budget and stopping rule)."""
    options = UntilDecided(max_calls=8 * row.planned_n, start_items=start)
    sizes = options.sizes(4 * row.planned_n)
    rng = np.random.default_rng([seed, round(row.flip * 1_000_000)])
    flips = np.cumsum(rng.random((sims, sizes[-1])) < row.flip, axis=1)
    for audit in flips:
        for index, n in enumerate(sizes, start=1):
            level = look_level(LEVEL, index, looks=len(sizes))
            status, decided = stream_status(int(audit[n - 1]), n, level)
            if decided or 2 * n > options.max_calls:
                break
        row.add(status, 2 * n, index)


def run(
    sims: int,
    engine_sims: int,
    near: float,
    start: int,
    first_seed: int = 0,
    names: set[str] | None = None,
) -> tuple[list[Row], list[Row], int]:
    """Per planted judge (of ``names``, default all): ``sims`` audits as streams and
    ``engine_sims`` full audits through the engine."""
    planned = fixed_size(near)
    streams, engines = [], []
    for name, flip, judge in judges(near):
        if names is not None and name not in names:
            continue
        own = fixed_size(flip) if flip != FAIL else planned
        row = Row(name, flip, own, planned)
        stream_audits(row, sims, start, first_seed)
        streams.append(row)
        checked = Row(name, flip, own, planned)
        for seed in range(first_seed, first_seed + engine_sims):
            checked.add(*sequential_audit(judge, seed, planned, start))
        engines.append(checked)
    return streams, engines, planned


def _rate(k: int, n: int) -> str:
    est = proportion(k, n)
    return f"{est.estimate:.1%} [{est.ci.low:.1%}, {est.ci.high:.1%}]"


def _undecided(r: Row) -> float:
    return (r.sims - r.statuses.get("fail", 0) - r.statuses.get("pass", 0)) / r.sims


def table(rows: list[Row], planned: int) -> str:
    """The Markdown table; goals: >= 3x fewer calls, false fail <= 5 %, power >= 80 %."""
    lines = [
        f"Fixed designs at 95 % (Wilson), sized exactly for an 80 % chance of the right verdict: "
        f"planned = {planned} items ({2 * planned} calls), sized for the near effect; own = sized "
        f"for the judge itself (the at-threshold judge has no right fail; its own is the planned "
        f"one). Sequential: rounds of 20, 30, 45, ... items (x1.5) of a pool of {4 * planned}, "
        f"budget {8 * planned} calls, the flip rate's confidence sequence at 95 %.",
        "",
        "| planted judge | flip rate | sims | sequential calls | mean rounds | own fixed calls "
        "| x fewer than own | best possible x vs own | planned fixed calls | x fewer than planned "
        "| fixed (planned): fail | sequential: fail | sequential: undecided |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: |",
    ]
    for r in rows:
        if not r.sims:
            continue
        bound = r.own_n / sprt_items(r.flip) if r.flip != FAIL else math.nan
        lines.append(
            f"| {r.name} | {r.flip:g} | {r.sims} | {r.calls:.0f} | {r.seq_rounds / r.sims:.1f} | "
            f"{2 * r.own_n} | {2 * r.own_n / r.calls:.2f} | {bound:.2f} | {2 * planned} | "
            f"{2 * planned / r.calls:.2f} | {fixed_chance(r.flip, planned, 'fail'):.1%} | "
            f"{_rate(r.seq_fails, r.sims)} | {_undecided(r):.1%} |"
        )
    return "\n".join(lines)


def check_table(rows: list[Row]) -> str:
    """The full audits through the engine, to set beside the streams' rows."""
    lines = [
        "| planted judge | engine audits | sequential calls | mean rounds | sequential: fail "
        "| sequential: undecided |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if r.sims:
            lines.append(
                f"| {r.name} | {r.sims} | {r.calls:.0f} | {r.seq_rounds / r.sims:.1f} | "
                f"{_rate(r.seq_fails, r.sims)} | {_undecided(r):.1%} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sims", type=int, default=2000, help="audits per judge, as streams")
    parser.add_argument(
        "--engine-sims", type=int, default=20, help="full audits per judge through the engine"
    )
    parser.add_argument("--near", type=float, default=0.16, help="the near effect's flip rate")
    parser.add_argument("--start", type=int, default=20, help="items of the first round")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--judges", nargs="*", default=None, help="planted judges to run (default: all)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    names = None if args.judges is None else set(args.judges)
    streams, engines, planned = run(
        args.sims, args.engine_sims, args.near, args.start, args.first_seed, names
    )
    print(table(streams, planned))
    print(
        "\nBest possible x vs own: the own fixed design's calls over the expected calls of the "
        "optimal sequential test (Wald's SPRT approximation, one-sided 2.5 %, 80 % power): no "
        "valid design beats it on average. Fixed rates are exact (binomial).\n"
    )
    if any(r.sims for r in engines):
        print(check_table(engines))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
