"""``--max-calls N`` is a hard limit on ``audit --repair`` too: one budget, counted at the judge.

The original audit and each repaired audit draw on one budget, and a repaired verdict costs its
inner calls, not one. Before, each audit had the whole budget again and counted repaired verdicts:
90 requests reached the judge for ``--max-calls 30`` with one swap-average repair.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judgeprobe.audit.repair import run_repair_audit
from judgeprobe.core.request import Request
from judgeprobe.engine import Budget, Engine, EngineConfig, RunStore
from judgeprobe.engine.limits import BudgetMeter
from judgeprobe.engine.metered import MeteredJudge
from judgeprobe.errors import BudgetExhausted
from judgeprobe.judges import CallableJudge
from judgeprobe.rubrics import builtin_rubric
from test_repair import half_first, pairs, swap_average_audit


class Counted:
    """A judge function that counts the calls it receives."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, request: Request) -> Any:
        self.calls += 1
        return self.fn(request)


def _repair_audit(tmp_path: Path, max_calls: int) -> tuple[Any, Counted]:
    items = pairs(30)
    config = swap_average_audit(tmp_path, items, engine={"max_calls": max_calls}, fail_on="never")
    counted = Counted(half_first(items))
    judge = CallableJudge(counted, name="h")
    return run_repair_audit(config, judge=judge, progress=False), counted


@pytest.mark.parametrize("max_calls", [30, 100])
def test_the_call_budget_of_a_repair_audit_bounds_every_call_the_judge_receives(
    tmp_path: Path, max_calls: int
) -> None:
    """The position probe asks 120 calls of the original judge (30 pairs in both orders, and a
    rerun of each of those 60 requests: the judge's picks differ between trials, and its null
    decides the status, so the rerun sample grows to all of them) and the swap-average repair 2
    inner calls for each of its 100 verdicts (60, and 40 reruns): 320 without a budget."""
    outcome, counted = _repair_audit(tmp_path, max_calls)
    assert counted.calls == max_calls  # before: 90 for 30, 180 for 100
    repaired = outcome.repaired["swap_average"]
    assert not repaired.complete
    assert "call budget of" in (repaired.reason or "")
    assert outcome.original.complete is (max_calls >= 120)


def test_a_repair_audit_within_its_budget_makes_every_call_once(tmp_path: Path) -> None:
    outcome, counted = _repair_audit(tmp_path, 320)
    assert counted.calls == 320 and outcome.repaired["swap_average"].complete


def _metered(n: int) -> tuple[MeteredJudge, Counted, list[Request]]:
    """A judge metered on a budget of 3 calls, what counts its calls, and ``n`` requests."""
    counted = Counted(lambda request: 1.0)
    judge = MeteredJudge(CallableJudge(counted, name="c"), BudgetMeter(Budget(max_calls=3)))
    rubric = builtin_rubric("harmfulness")
    requests = [
        Request.make(judge.fingerprint, rubric, {"prompt": "p", "response": f"r{i}"})
        for i in range(n)
    ]
    return judge, counted, requests


def test_a_metered_judge_refuses_a_call_the_shared_budget_has_no_room_for() -> None:
    judge, counted, requests = _metered(5)
    meter = judge.meter
    store = RunStore(":memory:")
    result = Engine(judge, store, EngineConfig(progress=False, concurrency=1)).run_sync(requests)
    assert counted.calls == meter.calls == 3 and len(result.verdicts) == 3
    assert result.stopped is not None and "call budget of 3 reached" in result.stopped
    assert result.stats.pending == 2 and store.get(requests[4].key) is None


async def test_a_metered_judge_sends_nothing_of_a_batch_the_budget_cannot_hold() -> None:
    judge, counted, requests = _metered(4)
    meter = judge.meter
    with pytest.raises(BudgetExhausted, match="call budget of 3 reached"):
        await judge.judge_batch(requests)
    assert counted.calls == meter.calls == 0
