"""When failures follow items: a small version of ``benchmarks/simulate_items.py``.

A share of items derails every concatenation that holds it. The concatenation probes' intervals
count items, so under such a judge they still cover the rate over the item population, a rate
past the fail line is still found, and one past the warn line is not passed; an interval over
the concatenations, taken as independent, covers the population rate far less often. The
benchmark runs more audits on larger designs against the real goals.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _benchmark() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "simulate_items.py"
    spec = importlib.util.spec_from_file_location("simulate_items", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


simulation = _benchmark()
SIMS = 12
SIZE = 0.25
RESAMPLES = 50


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    return {
        f.name: simulation.simulate(f, SIMS, first_seed=500)
        for f in simulation.families(SIZE, RESAMPLES)
    }


@pytest.mark.parametrize("name", [f.name for f in simulation.FAMILIES])
def test_an_invariant_judge_is_not_failed(name: str, outcomes: dict[str, Any]) -> None:
    assert outcomes[name].false_fail <= 0.1, outcomes[name].statuses


@pytest.mark.parametrize("name", [f.name for f in simulation.FAMILIES])
def test_the_interval_over_items_covers_the_population_rate(
    name: str, outcomes: dict[str, Any]
) -> None:
    outcome = outcomes[name]
    assert outcome.assessed == SIMS
    assert outcome.coverage >= 0.75, outcome


@pytest.mark.parametrize("name", [f.name for f in simulation.FAMILIES])
def test_a_rate_just_past_the_warn_line_is_not_passed(name: str, outcomes: dict[str, Any]) -> None:
    assert outcomes[name].pass_above_warn <= 0.1, outcomes[name].statuses


def test_concatenations_taken_as_independent_cover_the_population_rate_less_often(
    outcomes: dict[str, Any],
) -> None:
    items = sum(o.covered for o in outcomes.values())
    naive = sum(o.naive_covered for o in outcomes.values())
    assert naive < items
