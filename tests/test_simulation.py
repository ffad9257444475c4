"""How often the verdict is wrong: a small version of ``benchmarks/simulate_verdicts.py``.

For each probe family, seeded simulated audits with a judge that has no effect must rarely
fail, audits with a planted effect beyond the fail threshold must mostly fail, and the main
finding's CI must mostly cover the planted value. The benchmark runs 500 audits per family
and judge against the real goals (false fail <= 5 %, power >= 80 %, coverage 95 +- 2 %); here a
few audits on smaller designs face loose bounds, so a probe whose verdict breaks shows up in
the test suite, not only in the benchmark.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _benchmark() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "simulate_verdicts.py"
    spec = importlib.util.spec_from_file_location("simulate_verdicts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


simulation = _benchmark()

SIMS = 20
"""Audits per family and judge (null and effect): 40 per family."""
RESAMPLES = 50
"""Bootstrap resamples: enough for loose bounds."""

# family: design size (share of the benchmark's item counts). The pairwise families keep the
# benchmark's 150 pairs: with fewer, a planted effect of the size the benchmark uses could
# not reach a decided fail.
SIZES = {
    "repetition": 0.5,
    "cluster": 0.5,
    "permutation": 0.5,
    "bypass": 0.5,
    "policy_invariance": 0.5,
    "agreement": 0.5,
    "position": 1.0,
    "length_null": 1.0,
}


def family(name: str, size: float) -> Any:
    return next(f for f in simulation.families(size, RESAMPLES) if f.name == name)


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    """The simulated audits of every family, run once for all the checks."""
    return {
        name: simulation.simulate(family(name, size), SIMS, first_seed=1000)
        for name, size in SIZES.items()
    }


def test_the_simulation_is_seeded_and_repeats_exactly() -> None:
    chosen = family("repetition", 0.5)
    first = simulation.simulate(chosen, 3)
    again = simulation.simulate(chosen, 3)
    assert (first.null_statuses, first.effect_statuses, first.covered) == (
        again.null_statuses,
        again.effect_statuses,
        again.covered,
    )


def test_every_family_of_the_benchmark_is_checked_here() -> None:
    assert [f.name for f in simulation.FAMILIES] == list(SIZES)


@pytest.mark.parametrize("name", list(SIZES))
def test_a_judge_without_the_effect_rarely_fails(name: str, outcomes: dict[str, Any]) -> None:
    outcome = outcomes[name]
    assert outcome.false_fail <= 0.20, outcome.null_fail_findings


@pytest.mark.parametrize("name", list(SIZES))
def test_a_planted_effect_beyond_the_fail_threshold_mostly_fails(
    name: str, outcomes: dict[str, Any]
) -> None:
    outcome = outcomes[name]
    assert outcome.power >= 0.50, outcome.effect_statuses


@pytest.mark.parametrize("name", list(SIZES))
def test_the_main_interval_mostly_covers_the_planted_value(
    name: str, outcomes: dict[str, Any]
) -> None:
    outcome = outcomes[name]
    assert outcome.assessed == SIMS
    assert outcome.coverage >= 0.80
