"""The rerun null of the invariance probes, and the failed calls that gate every probe.

- A keyword judge that ignores repetition but flips a share of its calls at random (a judge
  sampled at a temperature above 0) is warned by its raw flip rate, but not by the excess of
  that rate over its own rerun flips, which is what the probe gates.
- A judge that flips only repeated inputs (a real effect) still fails.
- The same for a pairwise judge under the position swap: noise is not warned, a first-shown
  preference still fails.
- A judge whose first trial is greedy and whose reruns are sampled (the embedded judges) has a
  null above its rate: the excess is then no pass the rate alone could not give.
- A deterministic judge pays ten reruns per probe: they all match trial 0, and no more are asked.
- A judge that fails half its calls fails ``failed_call_rate`` instead of passing on the half
  that survived.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from judgeprobe.core.request import Request
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import RetryableJudgeError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import Probe, ProbeResult
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.concatenation.cluster import ClusterProbe
from judgeprobe.probes.concatenation.permutation import PermutationProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.probes.reruns import BASE_RERUNS, FIRST_RERUNS, WIDE_RERUNS
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import run_probe
from judgeprobe.stats import proportion
from judgeprobe.stats.excess import excess_over

HARM = builtin_rubric("harmfulness")
PREFERENCE = builtin_rubric("preference")
SEEDS = 20
FAST = 100


def uniform(*parts: object) -> float:
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def items(n: int = 40) -> list[Item]:
    """Half harmful (a keyword), half not; labels for the bypass probe's classes."""
    return [
        PointwiseItem(
            f"i{k:03d}",
            f"prompt {k}",
            f"reply {k} " + ("harmful" if k % 2 else "fine"),
            labels=(HumanLabel(float(k % 2)),),
        )
        for k in range(n)
    ]


def keyword(request: Request) -> bool:
    return "harmful" in request.field_map["response"]


def noisy_keyword(p: float, seed: int) -> Callable[[Request], float]:
    """Reads the keyword, and flips the decision of a share ``p`` of its calls at random: each
    call (a request and its trial) draws anew, whatever the input."""

    def fn(request: Request) -> float:
        bad = keyword(request) != (uniform(seed, request.key) < p)
        return 5.0 if bad else 1.0

    return fn


def repetition_sensitive(p: float, seed: int) -> Callable[[Request], float]:
    """Deterministic; flips the decision of a share ``p`` of repeated inputs (a real effect)."""

    def fn(request: Request) -> float:
        response = request.field_map["response"]
        repeated = "\n\n" in response
        bad = keyword(request) != (repeated and uniform(seed, response) < p)
        return 5.0 if bad else 1.0

    return fn


def run(
    probe: Probe, fn: Callable[[Request], Any], seed: int = 0, n: int = 40, **config: Any
) -> ProbeResult:
    judge = CallableJudge(fn, name="keyword", version=str(seed))
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False, **config))
    return run_probe(probe, items(n), engine, HARM, seed=seed)


def repetition() -> RepetitionProbe:
    return RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=FAST)


@pytest.mark.parametrize("p", [0.05, 0.10])
def test_a_judge_that_flips_calls_at_random_is_not_warned_by_the_excess(p: float) -> None:
    raw, excess = [], []
    for seed in range(SEEDS):
        result = run(repetition(), noisy_keyword(p, seed), seed)
        raw.append(result.finding("decision_flip_rate").estimate)
        excess.append(result.finding("decision_flip_excess").status)
        assert result.finding("decision_flip_rate").threshold is None  # information
        # all 80 reruns are asked once one of the first ten differs or the rate reaches warn
        assert result.tables["reruns"]["reruns"] in (FIRST_RERUNS, 80)
    flagged = sum(status in ("warn", "fail") for status in excess)
    assert flagged <= 2, excess
    if p >= 0.10:  # the raw rate would have warned in most audits: its interval clears 0.05
        assert sum(e.ci.low >= 0.05 for e in raw) >= SEEDS // 2


def test_a_judge_that_flips_only_repeated_inputs_still_fails() -> None:
    result = run(repetition(), repetition_sensitive(0.4, 1), 1)
    assert result.finding("decision_flip_excess").status == "fail"
    assert result.finding("rerun_flip_rate").estimate.estimate == 0.0
    # its rate reaches warn, so every rerun is asked: a null of 0 of 10 could not decide it
    assert result.tables["reruns"]["reruns"] == 80


def test_a_rate_past_the_fail_line_that_only_the_null_holds_back_gets_a_wider_null() -> None:
    """0.15 on 400 items clears the fail line (0.10); over 0 flips of 80 reruns (up to 0.046)
    its excess cannot, so the reruns grow to 160 of each kind, and then it fails."""
    result = run(repetition(), repetition_sensitive(0.14, 0), 0, n=400)
    raw = result.finding("decision_flip_rate").estimate
    assert raw.ci.low > 0.10
    assert result.tables["reruns"]["reruns"] == 2 * WIDE_RERUNS
    assert result.finding("decision_flip_excess").estimate.ci.low > 0.10
    # the same judge with the null held at 80 reruns: the excess straddles the fail line
    narrow = excess_over(raw, proportion(0, 2 * BASE_RERUNS))
    assert narrow.ci.low < 0.10


def deterministic(request: Request) -> float:
    return 5.0 if keyword(request) else 1.0


def greedy_then_sampled(request: Request) -> float:
    """Trial 0 reads the keyword (greedy decoding, invariant); a rerun is a sample that flips
    four calls in ten."""
    if request.trial == 0:
        return deterministic(request)
    return 5.0 if keyword(request) != (uniform(request.key) < 0.4) else 1.0


@pytest.mark.parametrize(("n", "status"), [(40, "inconclusive"), (400, "pass")])
def test_reruns_that_move_more_than_the_first_trials_pass_nothing_the_rate_cannot(
    n: int, status: str
) -> None:
    """0 flips among 40 items cannot show a rate below 0.05 ([0, 0.088]); an excess over a null
    of 0.4 would (about -0.4): the interval reaches the rate's own upper end instead. Among 400
    items the rate alone passes ([0, 0.0095]), and so does the excess."""
    result = run(repetition(), greedy_then_sampled, n=n)
    raw = result.finding("decision_flip_rate").estimate
    excess = result.finding("decision_flip_excess")
    assert raw.estimate == 0.0
    assert result.finding("rerun_flip_rate").estimate.ci.low > 0.2
    assert excess.estimate.estimate < -0.2
    assert excess.estimate.ci.high == pytest.approx(raw.ci.high)
    assert excess.status == status


@pytest.mark.parametrize(
    "probe",
    [
        repetition(),
        ClusterProbe(ks=(2,), n_resamples=FAST),
        PermutationProbe(ks=(4,), sample_sizes=(10, 0, 10), n_resamples=FAST),
        BypassProbe(ks=(2,), n_resamples=FAST),
    ],
    ids=lambda p: p.name,
)
def test_a_deterministic_judge_pays_ten_reruns_per_probe(probe: Probe) -> None:
    result = run(probe, deterministic)
    assert result.plan is not None
    reruns = result.plan.roles("rerun")
    assert len(reruns) == FIRST_RERUNS == result.tables["reruns"]["reruns"]
    trial_zero = {r.key for r in result.plan.requests.values() if r.trial == 0}
    assert result.usage["calls"] == len(trial_zero) + FIRST_RERUNS
    assert {f.status for f in result.findings if f.name == "failed_call_rate"} == {"pass"}
    assert any("matched trial 0 exactly" in note for note in result.notes)


def half_failing(kind: str) -> Callable[[Request], float | None]:
    def fn(request: Request) -> float | None:
        if uniform("fail", request.key) < 0.5:
            if kind == "error":
                raise RetryableJudgeError("overloaded")
            return None  # no score: unparseable
        return deterministic(request)

    return fn


@pytest.mark.parametrize("kind", ["error", "unparseable"])
@pytest.mark.parametrize(
    "probe", [repetition(), ClusterProbe(ks=(2,), n_resamples=FAST)], ids=lambda p: p.name
)
def test_a_judge_that_fails_half_its_calls_fails_failed_call_rate(probe: Probe, kind: str) -> None:
    result = run(probe, half_failing(kind), max_retries=0)
    failed = result.finding("failed_call_rate")
    assert failed.status == "fail", failed
    assert 0.35 < failed.estimate.estimate < 0.65
    assert failed.estimate.counts["errored" if kind == "error" else "unparseable"] > 0
    assert any("calls failed" in note for note in result.notes)


def test_a_finding_left_without_verdicts_names_the_failed_calls() -> None:
    def fn(request: Request) -> float | None:
        return None if "\n\n" in request.field_map["response"] else deterministic(request)

    result = run(repetition(), fn)
    flips = result.finding("decision_flip_rate")
    assert not flips.estimate.defined
    assert "40 of 40 repeated calls failed" in (flips.estimate.reason or "")


def test_the_excess_interval_is_newcombe_s_for_two_wilson_rates() -> None:
    excess = excess_over(proportion(56, 70), proportion(48, 80))
    assert excess.estimate == pytest.approx(0.2)
    assert (round(excess.ci.low, 4), round(excess.ci.high, 4)) == (0.0524, 0.3339)
    assert not excess_over(proportion(1, 4), proportion(0, 0)).defined


def pairs(n: int = 60) -> list[PairwiseItem]:
    """Pairs whose better response carries the word ``better``."""
    return [
        PairwiseItem(
            f"p{k:03d}",
            f"question {k}",
            f"answer {k} better" if k % 2 else f"answer {k}",
            f"answer {k}" if k % 2 else f"answer {k} better",
            (Vote("A" if k % 2 else "B"),),
        )
        for k in range(n)
    ]


def noisy_picker(p: float, seed: int, first: float = 0.0) -> Callable[[Request], str]:
    """Picks the response with ``better`` in it, the one shown first on a share ``first`` of the
    pairs (a position effect, the same in every call), and the other one on a share ``p`` of its
    calls at random (its rerun noise)."""

    def fn(request: Request) -> str:
        a, b = request.field_map["response_a"], request.field_map["response_b"]
        pick = "A" if "better" in a else "B"
        if uniform(seed, "first", min(a, b)) < first:
            pick = "A"
        if uniform(seed, request.key) < p:
            pick = "B" if pick == "A" else "A"
        return pick

    return fn


def run_pairs(fn: Callable[[Request], str], seed: int) -> ProbeResult:
    judge = CallableJudge(fn, name="picker", version=str(seed))
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    return run_probe(PositionProbe(), pairs(), engine, PREFERENCE, seed=seed)


def test_a_pairwise_judge_that_flips_calls_at_random_is_not_warned_by_the_swap_excess() -> None:
    """Two calls, one per order, disagree about as often as two calls in one order: 10 % noise
    gives a raw swap flip rate near 0.18, past the warn line, and no excess."""
    raw, excess = [], []
    for seed in range(SEEDS):
        result = run_pairs(noisy_picker(0.10, seed), seed)
        raw.append(result.finding("swap_flip_rate"))
        excess.append(result.finding("swap_flip_excess").status)
        assert raw[-1].threshold is None  # information
    assert sum(status in ("warn", "fail") for status in excess) <= 2, excess
    assert sum(f.estimate.estimate >= 0.10 for f in raw) >= SEEDS // 2


def test_a_pairwise_judge_that_picks_the_first_shown_still_fails_the_swap_excess() -> None:
    result = run_pairs(noisy_picker(0.0, 3, first=0.6), 3)
    assert result.finding("swap_flip_excess").status == "fail"
    assert result.finding("rerun_flip_rate").estimate.estimate == 0.0
    assert result.tables["reruns"]["reruns"] == 40  # its rate reaches warn: every rerun asked
