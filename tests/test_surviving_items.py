"""Conditions are compared on the items that survived under every one of them.

A call that fails removes its item from one wording and not from another. Accuracy compared
across wordings on whichever items survived under each differs by *which* items survived, not by
the wordings: a wording-blind judge whose calls fail at random would show a spread. Policy
invariance compares its wordings on the items judged under every one of them and says how many
it left out.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from judgeprobe.core.request import Request
from judgeprobe.data.items import HumanLabel, Item, PointwiseItem
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import Finding, ProbeResult
from judgeprobe.probes.policy_invariance import PolicyInvarianceProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import run_probe
from judgeprobe.stats.flips import spread_of_means

SEEDS = 20


def uniform(*parts: object) -> float:
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def items(seed: int, n: int = 60) -> list[Item]:
    """Items with one human label each, 40 % positive."""
    rng = random.Random(seed)
    return [
        PointwiseItem(
            f"r{k:03d}",
            f"request number {k}",
            f"response number {k}",
            labels=(HumanLabel(float(rng.random() < 0.4), rater="r1"),),
        )
        for k in range(n)
    ]


def blind(seed: int, *, fails: float, noisy: bool) -> Callable[[Request], Any]:
    """A judge that ignores the rubric's wording; a share ``fails`` of its calls come back
    unparseable at random. ``noisy``: one item in five is a coin flip on every call."""

    def fn(request: Request) -> str | None:
        if uniform(seed, "fail", request.key) < fails:
            return None
        k = int(request.field_map["prompt"].rsplit(" ", 1)[-1])
        p_true = 0.5 if noisy and k % 5 == 0 else (0.03 if k % 2 else 0.97)
        if not noisy:
            p_true = round(p_true)
        return "true" if uniform(seed, "run", request.key) < p_true else "false"

    return fn


def audit(seed: int, fn: Callable[[Request], Any], n: int = 60) -> ProbeResult:
    engine = Engine(
        CallableJudge(fn, name="blind", version=str(seed)),
        RunStore(":memory:"),
        EngineConfig(progress=False),
    )
    probe = PolicyInvarianceProbe(n_resamples=200)
    return run_probe(probe, items(seed, n), engine, builtin_rubric("refusal"), seed=seed)


def gated_spread(result: ProbeResult) -> Finding:
    return next(
        f for f in result.findings if f.name == "accuracy_spread" and f.threshold is not None
    )


def test_the_spread_of_means_compares_the_rows_complete_in_every_column() -> None:
    # column 1 misses row 4; on rows 1-3 the means are 2/3 and 1/3
    spread = spread_of_means([[1, 1, 0, np.nan], [1, 0, 0, 1]], n_resamples=50)
    assert spread.estimate == pytest.approx(1 / 3)
    assert (spread.n, spread.counts["rows"], spread.counts["dropped"]) == (3, 3, 1)


def test_no_complete_row_leaves_the_spread_undefined_with_the_reason() -> None:
    spread = spread_of_means([[1, np.nan], [np.nan, 0]], n_resamples=50)
    assert not spread.defined
    assert "no item has a value under every wording" in (spread.reason or "")


def test_a_deterministic_wording_blind_judge_failing_calls_shows_no_spread() -> None:
    result = audit(0, blind(0, fails=0.1, noisy=False), n=80)
    spread = gated_spread(result)
    assert spread.estimate.estimate == 0.0
    assert spread.estimate.counts["dropped"] > 0
    assert f"{int(spread.estimate.counts['dropped'])} items left out" in spread.description
    assert any("judged under every one of them" in note for note in result.notes)


def test_a_wording_blind_judge_failing_a_third_of_its_calls_is_rarely_warned() -> None:
    statuses = [
        gated_spread(audit(seed, blind(seed, fails=0.3, noisy=True))).status
        for seed in range(SEEDS)
    ]
    assert sum(s in ("warn", "fail") for s in statuses) <= 2, statuses
