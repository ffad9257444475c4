"""Sampling until decided against the fixed-n design: judge calls to a verdict, at what error.

Planted judges from ``simulate_verdicts.py`` (items of harmfulness level 1 or 5; the repetition
probe with one repeat of the response, two requests per item; the gated finding is the
decision flip rate, fail at 0.10, warn at 0.05):

- ``invariant``: never flips (:func:`simulate_verdicts.max_judge`); a fail is a false fail;
- ``clear effect``: a repeated response flips with p = 0.25, far beyond the fail threshold;
- ``near effect``: flips with p = ``--near`` (0.16 by default), just beyond it.

The fixed-n design audits ``n`` items once at 95 %, ``n`` sized by the normal approximation for
80 % power on the near effect (a one-sided 2.5 % test that the flip rate exceeds 0.10). The
sequential design (:func:`judgeprobe.sequential.run_until_decided`) audits rounds of 25, 50,
100, ... items of a pool of ``4 n`` items with a call budget of ``8 n``, each round at its
alpha-spending level, and stops when the finding is decided. Both run through the engine on
a fresh in-memory store per audit; every audit has its own seed (items, judge noise, order).

It prints a Markdown table: mean judge calls per audit for each design, their ratio, and the
rate of fail verdicts (false fail for the invariant judge, power for the effects) with Wilson
95 % intervals. Goal: at least 3x fewer calls overall, false fail <= 5 %, power >= 80 %. Run
from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/until_decided.py --sims 150
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parent))

import simulate_verdicts as sim

from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.engine.engine import run_blocking
from judgeprobe.family import adjust_family
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.repetition import RepetitionProbe
from judgeprobe.running import run_probe_sync
from judgeprobe.sequential import Audited, UntilDecided, run_until_decided, seeded_order
from judgeprobe.stats import proportion

GATED = "decision_flip_rate"
FAIL, NULL_RATE = 0.10, 0.10
RESAMPLES = 50
"""Bootstrap resamples of the (ungated) Wasserstein finding: few, it decides nothing here."""


def fixed_n(near: float, *, alpha: float = 0.05, power: float = 0.80) -> int:
    """Items for ``power`` against flip rate ``near`` with a one-sided ``alpha / 2`` test of
    "the rate is at most the fail threshold" (the fixed design's 95 % interval above it)."""
    z_a, z_b = norm.ppf(1 - alpha / 2), norm.ppf(power)
    spread = z_a * math.sqrt(NULL_RATE * (1 - NULL_RATE)) + z_b * math.sqrt(near * (1 - near))
    return math.ceil((spread / (near - NULL_RATE)) ** 2)


def only_gated(result: ProbeResult) -> ProbeResult:
    """The result with only the flip rate gated: the finding the planted judges speak to."""
    result.findings = [f if f.name == GATED else f.with_threshold(None) for f in result.findings]
    return result


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


def fixed_audit(judge: Callable[[int], sim.JudgeFn], seed: int, n: int) -> tuple[str, int]:
    """The fixed-n design: the first ``n`` items of the seeded order, once, at 95 %."""
    engine = _engine(judge, seed)
    items = seeded_order(sim.level_items(4 * n, seed), seed)[:n]
    result = only_gated(run_probe_sync(_probe(), items, engine, sim.HARM, seed=seed))
    adjust_family([result])
    return _status(result), engine.totals.called


def sequential_audit(
    judge: Callable[[int], sim.JudgeFn], seed: int, n: int, start: int
) -> tuple[str, int, int]:
    """The sequential design on a pool of ``4 n`` items with a budget of ``8 n`` calls."""
    engine = _engine(judge, seed)
    options = UntilDecided(max_calls=8 * n, start_items=start, growth=2.0, max_rounds=12)
    audited = [Audited("repetition", _probe(), sim.level_items(4 * n, seed), sim.HARM)]
    outcome = run_blocking(
        run_until_decided(audited, engine, options, seed=seed, prepare=only_gated)
    )
    return _status(outcome.results["repetition"]), outcome.calls, len(outcome.rounds)


@dataclass
class Row:
    """One planted judge's audits under both designs."""

    name: str
    flip: float
    sims: int = 0
    fixed_fails: int = 0
    fixed_calls: int = 0
    seq_fails: int = 0
    seq_calls: int = 0
    seq_rounds: int = 0
    seq_undecided: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.fixed_calls / self.seq_calls if self.seq_calls else float("nan")


def run(sims: int, near: float, start: int, first_seed: int = 0) -> tuple[list[Row], int]:
    """``sims`` audits of each planted judge under both designs."""
    n = fixed_n(near)
    judges = [
        ("invariant", 0.0, sim.max_judge),
        ("clear effect", 0.25, sim.flip_judge(0.25)),
        ("near effect", near, sim.flip_judge(near)),
    ]
    rows = []
    for name, flip, judge in judges:
        row = Row(name, flip)
        for seed in range(first_seed, first_seed + sims):
            status, calls = fixed_audit(judge, seed, n)
            row.fixed_fails += status == "fail"
            row.fixed_calls += calls
            status, calls, rounds = sequential_audit(judge, seed, n, start)
            row.seq_fails += status == "fail"
            row.seq_calls += calls
            row.seq_rounds += rounds
            row.seq_undecided += status == "inconclusive"
            row.statuses[status] = row.statuses.get(status, 0) + 1
            row.sims += 1
        rows.append(row)
    return rows, n


def _rate(k: int, n: int) -> str:
    est = proportion(k, n)
    return f"{est.estimate:.1%} [{est.ci.low:.1%}, {est.ci.high:.1%}]"


def table(rows: list[Row], n: int) -> str:
    """The Markdown table; goals: >= 3x fewer calls overall, false fail <= 5 %, power >= 80 %."""
    lines = [
        f"Fixed-n design: {n} items ({2 * n} calls) at 95 %; sequential: rounds from the first "
        f"items, x2 each, pool {4 * n} items, budget {8 * n} calls.",
        "",
        "| planted judge | flip rate | sims | fixed calls | sequential calls | x fewer "
        "| mean rounds | fixed: fail | sequential: fail | sequential undecided |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.flip:g} | {r.sims} | {r.fixed_calls / r.sims:.0f} | "
            f"{r.seq_calls / r.sims:.0f} | {r.ratio:.2f} | {r.seq_rounds / r.sims:.1f} | "
            f"{_rate(r.fixed_fails, r.sims)} | {_rate(r.seq_fails, r.sims)} | "
            f"{r.seq_undecided / r.sims:.1%} |"
        )
    fixed = sum(r.fixed_calls for r in rows)
    seq = sum(r.seq_calls for r in rows)
    lines += [
        "",
        f"All judges together: {fixed / max(seq, 1):.2f}x fewer calls with the sequential design "
        f"({seq} against {fixed}).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sims", type=int, default=150, help="audits per judge and design")
    parser.add_argument("--near", type=float, default=0.16, help="the near effect's flip rate")
    parser.add_argument("--start", type=int, default=25, help="items of the first round")
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows, n = run(args.sims, args.near, args.start, args.first_seed)
    print(table(rows, n))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
