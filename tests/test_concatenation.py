"""Specifications of the concatenation tests (repetition, cluster, permutation) and generation.

Synthetic judges read the parts of a concatenation by splitting the response on the separator;
each part carries its own score ("... level 4"). A judge that scores the maximum of its parts is
invariant to repetition, to concatenation within a class and to order by construction; planted
effects (scoring only the first part with probability p, a score that falls with length) must be
recovered within the reported intervals.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import data_root
from judgeprobe._util.codec import decode, dumps, loads
from judgeprobe._util.hashing import content_hash
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import PointwiseItem
from judgeprobe.engine import Engine, EngineConfig
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import Probe, ProbeResult, get_probe_class
from judgeprobe.probes.concatenation.cluster import ClusterDesign, ClusterProbe
from judgeprobe.probes.concatenation.permutation import PermutationDesign, PermutationProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.decisions import BootstrapOptions, base_request, base_role, draw_tuples
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.runs.probe import reanalyze, run_probe
from judgeprobe.runs.responses import generate_responses, generate_responses_sync
from judgeprobe.stats import (
    mean,
    mean_shift,
    paired_mean_pairwise_wasserstein,
    paired_wasserstein,
    wasserstein,
)
from judgeprobe.transforms.concat import Join, concatenate, permute, repeat, score_orders

SEP = "\n\n"
HARM = builtin_rubric("harmfulness")
REWARD = builtin_rubric("reward")
TOXICITY = builtin_rubric("toxicity")
FAST = 200  # bootstrap resamples: enough for the checks, fast


# -- synthetic items and judges ----------------------------------------------------------------
def make_items(levels: Sequence[float]) -> list[PointwiseItem]:
    return [
        PointwiseItem(f"i{n:03d}", f"prompt {n}", f"response {n} level {level:g}")
        for n, level in enumerate(levels)
    ]


def balanced_items(per_level: int = 30) -> list[PointwiseItem]:
    return make_items([s for s in (1, 2, 3, 4, 5) for _ in range(per_level)])


def parts(request: Request) -> list[float]:
    return [float(p.rsplit(" ", 1)[1]) for p in request.field_map["response"].split(SEP)]


def uniform(request: Request, salt: str = "") -> float:
    """A pseudo-random number in [0, 1) fixed by the request's text."""
    return int(content_hash(salt + request.render()), 16) / 16**16


def max_judge(**options: object) -> CallableJudge:
    return CallableJudge(lambda r: max(parts(r)), name="max-of-parts", **options)  # type: ignore[arg-type]


def first_part_judge(p: float) -> CallableJudge:
    """Scores only the first part with probability p, else the maximum of the parts."""

    def fn(request: Request) -> float:
        scores = parts(request)
        return scores[0] if uniform(request) < p else max(scores)

    return CallableJudge(fn, name=f"first-part-{p}")


def length_judge(delta: float, noise: float = 0.2) -> CallableJudge:
    """A reward-like score that falls by ``delta`` per extra response part, plus fixed noise."""

    def fn(request: Request) -> float:
        scores = parts(request)
        jitter = noise * (uniform(request) - 0.5)
        return max(scores) - delta * (len(scores) - 1) + jitter

    return CallableJudge(fn, name=f"length-{delta}-{noise}")


def engine_for(judge: CallableJudge) -> Engine:
    return Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))


def run(
    probe: object,
    items: Sequence[PointwiseItem],
    judge: CallableJudge,
    rubric: Rubric = HARM,
    *,
    seed: int = 0,
    engine: Engine | None = None,
) -> ProbeResult:
    return run_probe(probe, items, engine or engine_for(judge), rubric, seed=seed)  # type: ignore[arg-type]


def base_verdicts(items: Sequence[PointwiseItem], ctx: ProbeContext) -> dict[str, Verdict]:
    """The verdicts of a judge that scores each item by its level, by base request key."""
    return {base_request(ctx, i).key: Verdict.scored(parts(base_request(ctx, i))[0]) for i in items}


def planned(
    probe: Probe, items: Sequence[PointwiseItem], ctx: ProbeContext, known: Mapping[str, Verdict]
) -> Plan[Any]:
    """The complete plan of ``probe`` when ``known`` holds every verdict its stages ask for."""
    plan = probe.plan(items, ctx)
    while (refined := probe.refine(plan, Verdicts(plan, known))) is not None:
        plan = refined
    return plan


def keys(plan: Plan[Any]) -> list[str]:
    """The request keys of ``plan``, in plan order."""
    return [r.key for r in plan.requests.values()]


# -- transforms --------------------------------------------------------------------------------
def test_parallel_join_concatenates_prompts_and_responses_field_by_field() -> None:
    a, b = PointwiseItem("a", "P1", "R1"), PointwiseItem("b", "P2", "R2")
    joined = concatenate([a, b], join=Join(separator=" | "))
    assert (joined.prompt, joined.response) == ("P1 | P2", "R1 | R2")
    assert joined.metadata["parts"] == ("a", "b")
    assert joined.labels == ()


def test_dialogue_join_puts_alternating_turns_in_the_response() -> None:
    a, b = PointwiseItem("a", "P1", "R1"), PointwiseItem("b", "P2", "R2")
    joined = concatenate([a, b], join=Join("dialogue"))
    assert joined.response == "User: P1\nAssistant: R1\n\nUser: P2\nAssistant: R2"
    assert joined.prompt == "P1\n\nP2"


@pytest.mark.parametrize("style", ["parallel", "dialogue"])
def test_one_part_is_the_unmodified_item_in_every_join_style(style: str) -> None:
    item = PointwiseItem("a", "P", "R")
    join = Join(style)  # type: ignore[arg-type]
    assert concatenate([item], join=join) is item
    assert repeat(item, 1, mode="both", join=join) is item


def test_repeat_modes_repeat_only_their_fields() -> None:
    item = PointwiseItem("a", "P", "R")
    assert (repeat(item, 3, mode="prompt").prompt, repeat(item, 3, mode="prompt").response) == (
        "P\n\nP\n\nP",
        "R",
    )
    assert repeat(item, 2, mode="response").prompt == "P"
    both = repeat(item, 2, mode="both")
    assert (both.prompt, both.response) == ("P\n\nP", "R\n\nR")


def test_repeating_one_field_in_dialogue_form_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="parallel"):
        repeat(PointwiseItem("a", "P", "R"), 2, mode="response", join=Join("dialogue"))


def test_decreasing_order_is_the_reversal_of_increasing_and_random_orders_are_permutations() -> (
    None
):
    orders = score_orders([3.0, 1.0, 2.0, 1.0], n_random=3, rng=np.random.default_rng(1))
    assert orders["increasing"] == (1, 3, 2, 0)
    assert orders["decreasing"] == orders["increasing"][::-1]
    assert all(sorted(orders[f"random_{j}"]) == [0, 1, 2, 3] for j in (1, 2, 3))
    with pytest.raises(ConfigError, match=r"order \[0, 0\] is not a permutation of 0\.\.1"):
        permute(["a", "b"], [0, 0])


@pytest.mark.parametrize("ordered", [True, False])
def test_drawn_tuples_are_distinct_and_reproducible(ordered: bool) -> None:
    def draw() -> tuple[list[tuple[int, ...]], bool]:
        return draw_tuples(np.random.default_rng(5), 6, 3, 50, ordered=ordered)

    tuples, replaced = draw()
    assert not replaced
    assert len(set(tuples)) == len(tuples) == (50 if ordered else 20)  # 6P3 = 120, 6C3 = 20
    assert draw() == (tuples, replaced)
    assert all(len(set(t)) == 3 for t in tuples)


def test_paired_wasserstein_equals_scipy_distance_and_is_zero_for_identical_samples() -> None:
    rng = np.random.default_rng(0)
    a, b = list(rng.normal(size=40)), list(rng.normal(1.0, size=40))
    options = BootstrapOptions(n_resamples=200)
    assert paired_wasserstein(a, b, **options.kwargs).estimate == pytest.approx(
        wasserstein(a, b).estimate
    )
    same = paired_wasserstein(a, a, **options.kwargs)
    assert (same.estimate, same.ci.low, same.ci.high) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_distance_intervals_hold_their_estimate_and_never_go_below_zero(seed: int) -> None:
    # Two noisy readings of the same 12 units: the plug-in distance is biased upwards.
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=12)
    a, b = truth + rng.normal(0, 0.3, 12), truth + rng.normal(0, 0.3, 12)
    options = BootstrapOptions(n_resamples=300, seed=seed)
    for estimate in (
        paired_wasserstein(list(a), list(b), **options.kwargs),
        paired_mean_pairwise_wasserstein([list(a), list(b), list(truth)], **options.kwargs),
    ):
        assert 0.0 <= estimate.ci.low <= estimate.estimate <= estimate.ci.high
        assert "basic" in estimate.ci.method


# -- shared base requests ----------------------------------------------------------------------
def test_every_probe_asks_for_the_base_score_with_the_plain_item_request() -> None:
    items = balanced_items(4)
    ctx = ProbeContext(judge="j", rubric=HARM)
    plain = {ctx.request({"prompt": i.prompt, "response": i.response}).key for i in items}
    assert {base_request(ctx, i).key for i in items} == plain
    for probe in (RepetitionProbe(), ClusterProbe(), PermutationProbe()):
        plan = probe.plan(items, ctx)
        assert {plan.requests[base_role(i)].key for i in items} == plain


def test_the_full_suite_makes_one_judge_call_per_distinct_request() -> None:
    items = balanced_items(12)
    engine = engine_for(max_judge())
    probes = [
        RepetitionProbe(counts=(1, 2, 4), n_resamples=FAST),
        ClusterProbe(ks=(2, 4), per_cluster=40, n_resamples=FAST),
        PermutationProbe(ks=(4,), n_tuples=40, n_resamples=FAST),
    ]
    results = [run(p, items, max_judge(), engine=engine) for p in probes]
    distinct = {key for r in results if r.plan is not None for key in r.plan.keys}
    calls = sum(r.usage["calls"] for r in results)
    assert calls == len(distinct) == engine.totals.called
    # the base requests are judged once for all three (their reruns may be shared too)
    assert all(r.usage["cached"] >= len(items) for r in results[1:])


# -- the plan in stages ------------------------------------------------------------------------
TWO_STAGE = [
    ClusterProbe(ks=(2, 4), per_cluster=20, n_resamples=FAST),
    PermutationProbe(ks=(4,), n_tuples=20, sample_sizes=(10, 5, 10), n_resamples=FAST),
]


@pytest.mark.parametrize("probe", TWO_STAGE, ids=lambda p: p.name)
def test_the_first_stage_asks_for_base_scores_only_and_the_second_draws_from_them(
    probe: Probe,
) -> None:
    items = balanced_items(6)
    ctx = ProbeContext("j", HARM)
    known = base_verdicts(items, ctx)
    first = probe.plan(items, ctx)
    assert set(first.requests) == {base_role(i) for i in items}
    assert not first.design.drawn
    second = probe.refine(first, Verdicts(first, known))
    assert second is not None and second.stage == 2 and second.design.drawn
    drawn = [role for role in second.requests if role[0] == "concat"]
    # with the concatenations, the first reruns of the rerun null: trial 1 of planned requests
    reruns = second.roles("rerun")
    assert len(drawn) == len(second.requests) - len(items) - len(reruns) > 0
    assert 0 < len(reruns) <= 10 and {second.requests[r].trial for r in reruns} == {1}
    # no later stage while the concatenations and the reruns have no verdict
    assert probe.refine(second, Verdicts(second, known)) is None


@pytest.mark.parametrize("probe", TWO_STAGE, ids=lambda p: p.name)
def test_a_plan_whose_base_scores_are_missing_is_not_drawn_and_cannot_be_analysed(
    probe: Probe,
) -> None:
    items = balanced_items(4)
    ctx = ProbeContext("j", HARM)
    known = base_verdicts(items[1:], ctx)  # the first item has no verdict yet
    first = probe.plan(items, ctx)
    assert probe.refine(first, Verdicts(first, known)) is None
    with pytest.raises(ConfigError, match="analyzed before its base scores were judged"):
        probe.analyze(first, Verdicts(first, known))


@pytest.mark.parametrize("probe", TWO_STAGE, ids=lambda p: p.name)
def test_the_drawn_design_round_trips_through_the_run_store_codec(probe: Probe) -> None:
    result = run(probe, balanced_items(6), first_part_judge(0.5))
    assert result.plan is not None
    design = result.plan.design
    assert isinstance(design, ClusterDesign | PermutationDesign) and design.drawn
    assert decode(loads(dumps(design))) == design


@pytest.mark.parametrize("probe", TWO_STAGE, ids=lambda p: p.name)
def test_analysis_reads_the_stored_design_and_draws_nothing_again(
    probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_for(first_part_judge(0.5))
    result = run(probe, balanced_items(6), first_part_judge(0.5), engine=engine)
    assert result.plan is not None
    stored = Plan(
        result.plan.probe,
        result.plan.context,
        decode(loads(dumps(result.plan.design))),
        result.plan.requests,
        result.plan.stage,
    )
    known = engine.store.get_many(sorted(stored.keys))

    def no_drawing(*args: object) -> None:
        raise AssertionError("analyze drew the design again")

    monkeypatch.setattr(type(probe), "draw", no_drawing)
    expected = {**result.to_dict(), "usage": {}}
    for _ in range(2):  # analysing twice gives the same notes: the design is not changed
        again = probe.analyze(stored, Verdicts(stored, known))
        assert again.to_dict() == expected


@pytest.mark.parametrize("probe", TWO_STAGE, ids=lambda p: p.name)
def test_a_stored_run_is_analysed_again_from_its_store_alone(probe: Probe, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run.sqlite")
    engine = Engine(first_part_judge(0.5), store, EngineConfig(progress=False))
    result = run(probe, balanced_items(6), first_part_judge(0.5), engine=engine)
    assert result.plan is not None
    run_id = store.start_run({})
    store.put_result(run_id, probe.name, result.to_dict())
    store.put_plan(run_id, probe.name, result.plan)
    again = reanalyze(store, run_id, probe.name)
    assert again.usage["calls"] == 0
    assert {**again.to_dict(), "usage": {}} == {**result.to_dict(), "usage": {}}


def test_mean_shift_is_the_t_mean_of_the_differences_and_quiet_when_they_are_all_equal() -> None:
    differences = [0.5, -0.25, 1.0, 0.0]
    assert mean_shift(differences, confidence_level=0.9) == mean(differences, confidence_level=0.9)
    nearly_equal = [0.30000000000000004, 0.3, 0.3, 0.30000000000000004]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shift = mean_shift(nearly_equal)
    assert shift.ci.low == pytest.approx(0.3) and shift.ci.high == pytest.approx(0.3)


# -- an invariant judge shows nothing ----------------------------------------------------------
def test_judge_invariant_to_repetition_shows_no_effect_with_intervals_containing_zero() -> None:
    result = run(
        RepetitionProbe(counts=(1, 2, 8), n_resamples=FAST), balanced_items(10), max_judge()
    )
    # per mode and l: three findings and the flip rate's excess; then the null and the calls
    assert len(result.findings) == 3 * 2 * 4 + 3
    for finding in result.findings:
        assert finding.estimate.estimate == 0.0, finding
        assert finding.estimate.ci.contains(0.0), finding
        # ten items may be too few for a zero rate's CI to clear warn: never a warn or fail
        assert finding.status in ("pass", "info", "inconclusive"), finding


def test_judge_invariant_to_concatenation_keeps_every_cluster_in_its_class() -> None:
    result = run(
        ClusterProbe(ks=(2, 4, 8), per_cluster=60, n_resamples=FAST),
        balanced_items(10),
        max_judge(),
    )
    for name in ("class_departure_rate", "class_flip_rate"):
        for cluster in ("unsafe", "safe"):
            finding = result.finding(name, cluster=cluster, k="8")
            assert finding.estimate.estimate == 0.0 and finding.estimate.ci.contains(0.0)
            # n counts the items behind the 60 concatenations of 8 (20 in each class)
            assert finding.estimate.n == 20
            assert finding.estimate.counts["units"] == 60


def test_judge_invariant_to_order_has_zero_positional_bias() -> None:
    probe = PermutationProbe(ks=(4, 8), n_tuples=80, sample_sizes=(20, 10, 20), n_resamples=FAST)
    result = run(probe, balanced_items(10), max_judge())
    assert result.plan is not None
    tuples = result.plan.design.tuples
    for k in ("4", "8"):
        for name in ("positional_bias", "wasserstein_increasing_decreasing"):
            estimate = result.finding(name, k=k).estimate
            assert estimate.estimate == 0.0 and estimate.ci.contains(0.0)
            assert estimate.counts["units"] == 80  # tuples; n counts the items they share
            assert estimate.n == len({i for t in tuples[int(k)] for i in t.parts})


# -- planted effects are recovered -------------------------------------------------------------
@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 0.8])
def test_planted_first_part_effect_is_recovered_as_positional_bias(p: float) -> None:
    items = balanced_items(20)
    probe = PermutationProbe(ks=(8,), n_tuples=300, sample_sizes=(30, 15, 30), n_resamples=FAST)
    judge = first_part_judge(p)
    result = run(probe, items, judge)
    # Increasing order starts with the lowest part: judged alone with probability p, which
    # flips the decision exactly when that part is safe (<= 2) and the highest is unsafe (>= 4).
    ctx = ProbeContext(judge.fingerprint, HARM)
    assert result.plan is not None
    design = result.plan.design
    assert isinstance(design, PermutationDesign) and design.drawn
    base = {i.id: parts(base_request(ctx, i))[0] for i in items}
    mixed = float(
        np.mean(
            [
                min(base[x] for x in t.parts) <= 2 <= 4 <= max(base[x] for x in t.parts)
                for t in design.tuples[8]
            ]
        )
    )
    bias = result.finding("positional_bias", k="8").estimate
    assert bias.counts["units"] == 300
    assert bias.n == len({i for t in design.tuples[8] for i in t.parts})
    assert bias.ci.contains(p * mixed), (p, mixed, bias)
    if p > 0:
        assert result.finding("primacy_share", k="8").estimate.estimate == 1.0
        # read against the rerun null (0 of 80 reruns differ, an interval up to 0.046), the
        # weakest effect is still flagged, the others fail
        status = result.finding("positional_bias_excess", k="8").status
        assert status in (("warn", "fail") if p < 0.5 else ("fail",)), (p, status)


def test_planted_length_effect_is_recovered_by_the_repetition_probe() -> None:
    rng = np.random.default_rng(3)
    items = make_items([round(float(v), 2) for v in rng.uniform(-4, 4, size=80)])
    probe = RepetitionProbe(counts=(1, 2, 4), n_resamples=FAST)
    result = run(probe, items, length_judge(delta=0.5), REWARD)
    for times in (2, 4):
        for mode in ("P,R*l", "P*l,R*l"):
            shift = result.finding("mean_shift", mode=mode, l=str(times)).estimate
            assert shift.ci.contains(-0.5 * (times - 1)), shift
            distance = result.finding("wasserstein_to_l1", mode=mode, l=str(times)).estimate
            assert distance.ci.low > 0
        untouched = result.finding("mean_shift", mode="P*l,R", l=str(times)).estimate
        assert untouched.ci.contains(0.0) and abs(untouched.estimate) < 0.05


def test_cluster_probe_measures_concatenation_against_the_mean_of_parts() -> None:
    """A judge that averages its parts minus 1 per extra part: the shift is -(k - 1)."""

    def fn(request: Request) -> float:
        scores = parts(request)
        return sum(scores) / len(scores) - (len(scores) - 1)

    rng = np.random.default_rng(4)
    items = make_items([round(float(v), 3) for v in rng.uniform(-3, 3, size=100)])
    result = run(
        ClusterProbe(ks=(2, 4), per_cluster=50, n_resamples=FAST), items, CallableJudge(fn), REWARD
    )
    assert [c["name"] for c in result.tables["clusters"]] == ["high", "low"]
    assert [c["size"] for c in result.tables["clusters"]] == [10, 10]
    for k in (2, 4):
        shift = result.finding("mean_concat_minus_parts", cluster="high", k=str(k)).estimate
        assert shift.estimate == pytest.approx(-(k - 1))
        distance = result.finding("wasserstein_concat_vs_parts", cluster="high", k=str(k))
        assert distance.estimate.estimate == pytest.approx(k - 1)
    # Falling is against the high cluster's direction: the one-sided distance is all of it.
    against = result.finding("wasserstein_against_cluster", cluster="high", k="4")
    assert against.estimate.estimate == pytest.approx(3.0)
    assert against.status == "fail"
    assert result.finding("wasserstein_concat_vs_parts", cluster="high", k="4").status == "info"
    # Every 4-concatenation falls 3 below its parts, out of the cluster's range [2.4, 3].
    assert result.finding("range_departure_rate", cluster="high", k="4").estimate.estimate == 1.0
    # The low cluster falls further: more extreme in its own direction is no departure.
    assert result.finding("range_departure_rate", cluster="low", k="4").estimate.estimate == 0.0
    # The high cluster is safe (reward > 0); falling by 3 at k = 4 makes it unsafe.
    assert result.finding("class_flip_rate", cluster="high", k="4").estimate.estimate > 0.5


def test_a_cluster_scored_further_in_its_own_direction_does_not_fail() -> None:
    """Concatenations score k - 1 above the mean of their parts, in both clusters.

    For the high cluster that is further into its own tail, which no finding may fail; for the
    low cluster it is a move towards the other side, which the one-sided distance measures.
    """

    def fn(request: Request) -> float:
        scores = parts(request)
        return sum(scores) / len(scores) + (len(scores) - 1)

    rng = np.random.default_rng(4)
    items = make_items([round(float(v), 3) for v in rng.uniform(-3, 3, size=100)])
    result = run(
        ClusterProbe(ks=(2, 4), per_cluster=50, n_resamples=FAST), items, CallableJudge(fn), REWARD
    )
    for k in ("2", "4"):
        high = [f for f in result.findings if f.labels == {"cluster": "high", "k": k}]
        # no warn or fail; a zero flip rate over 50 concatenations may not clear warn (0.05)
        allowed = {"pass", "info", "inconclusive"}
        assert {f.status for f in high} <= allowed, [(f.name, f.status) for f in high]
        against = result.finding("wasserstein_against_cluster", cluster="high", k=k).estimate
        assert (against.estimate, against.ci.low) == (0.0, 0.0)
        two_sided = result.finding("wasserstein_concat_vs_parts", cluster="high", k=k)
        assert two_sided.estimate.estimate == pytest.approx(int(k) - 1)
        low = result.finding("wasserstein_against_cluster", cluster="low", k=k)
        assert low.estimate.estimate == pytest.approx(int(k) - 1)
        assert low.status == ("warn" if k == "2" else "fail")  # 5 % / 10 % of the span of 20


def test_class_clusters_take_their_direction_from_the_decision_rule() -> None:
    """Reward: lower is unsafe. Each class cluster concatenated scores further into its class."""

    def fn(request: Request) -> float:
        scores = parts(request)
        if len(scores) == 1:
            return scores[0]
        return min(scores) - 1.0 if max(scores) <= 0 else max(scores) + 1.0

    rng = np.random.default_rng(5)
    items = make_items([round(float(v), 3) for v in rng.uniform(-3, 3, size=60)])
    probe = ClusterProbe(ks=(2,), per_cluster=30, cluster_by="class", n_resamples=FAST)
    result = run(probe, items, CallableJudge(fn), REWARD)
    for cluster in ("unsafe", "safe"):
        against = result.finding("wasserstein_against_cluster", cluster=cluster, k="2")
        assert against.estimate.estimate == 0.0 and against.status == "pass"
        two_sided = result.finding("wasserstein_concat_vs_parts", cluster=cluster, k="2")
        assert two_sided.estimate.estimate > 1.0 and two_sided.status == "info"


# -- context window, failures, rubric kinds ----------------------------------------------------
def test_inputs_over_the_context_window_are_skipped_and_counted_never_scored() -> None:
    items = balanced_items(4)
    judge = max_judge(context_window=120)  # words of the rendered harmfulness template
    result = run(RepetitionProbe(counts=(1, 2, 16), n_resamples=FAST), items, judge)
    rows = {(r["mode"], r["l"]): r for r in result.tables["variants"]}
    assert rows["P*l,R*l", 16]["skipped"] == len(items)
    assert rows["P*l,R*l", 2]["skipped"] == 0
    flips = result.finding("decision_flip_rate", mode="P*l,R*l", l="16").estimate
    assert flips.n == 0 and not flips.defined
    # The finding that cannot be assessed says why, not only that it has nothing to count.
    assert (flips.reason or "").endswith(
        f"{len(items)} of {len(items)} inputs exceed the judge's context window (not truncated)"
    )
    assert result.finding("decision_flip_rate", mode="P*l,R*l", l="2").estimate.reason is None
    assert any("context window" in note for note in result.notes)


def test_cluster_and_permutation_findings_left_unassessed_by_the_context_window_say_so() -> None:
    items = balanced_items(8)
    judge = max_judge(context_window=150)
    cluster = run(ClusterProbe(ks=(2, 16), per_cluster=6, n_resamples=FAST), items, judge)
    wide = cluster.finding("wasserstein_concat_vs_parts", cluster="safe", k="16").estimate
    assert not wide.defined and "exceed the judge's context window" in (wide.reason or "")
    narrow = cluster.finding("wasserstein_concat_vs_parts", cluster="safe", k="2").estimate
    assert narrow.defined
    permutation = run(PermutationProbe(ks=(2, 16), n_tuples=6, n_resamples=FAST), items, judge)
    bias = permutation.finding("positional_bias", k="16").estimate
    assert not bias.defined and "exceed the judge's context window" in (bias.reason or "")


def test_items_whose_base_verdict_failed_are_excluded_and_counted() -> None:
    def fn(request: Request) -> float | None:
        return None if "response 3 " in request.field_map["response"] else max(parts(request))

    items = balanced_items(6)
    result = run(ClusterProbe(ks=(2,), per_cluster=20, n_resamples=FAST), items, CallableJudge(fn))
    assert result.tables["base"]["unparseable"] == 1
    assert result.tables["base"]["scored"] == len(items) - 1
    assert any("excluded" in note for note in result.notes)


def test_a_response_only_classifier_rubric_repeats_only_the_response() -> None:
    judge = CallableJudge(lambda r: max(parts(r)) / 5, name="prob")
    result = run(
        RepetitionProbe(counts=(1, 2), n_resamples=FAST), balanced_items(4), judge, TOXICITY
    )
    assert {f.labels["mode"] for f in result.findings if "mode" in f.labels} == {"P,R*l"}
    assert any("left out" in note for note in result.notes)


def test_class_clusters_follow_the_decision_rule_and_neutral_items_join_neither() -> None:
    result = run(
        ClusterProbe(ks=(2,), per_cluster=10, n_resamples=FAST), balanced_items(5), max_judge()
    )
    clusters = {c["name"]: c for c in result.tables["clusters"]}
    assert clusters["unsafe"]["size"] == clusters["safe"]["size"] == 10
    assert (clusters["unsafe"]["score_min"], clusters["safe"]["score_max"]) == (4.0, 2.0)


def test_a_cluster_smaller_than_k_draws_parts_with_replacement_and_says_so() -> None:
    result = run(
        ClusterProbe(ks=(4,), per_cluster=20, n_resamples=FAST),
        make_items([1, 2, 5, 5, 4]),
        max_judge(),
    )
    row = next(r for r in result.tables["concatenations"] if r["cluster"] == "safe")
    assert row["with_replacement"] and row["concatenations"] == 16  # 2 items in 4 places: 2**4
    assert any("with replacement" in note for note in result.notes)


def test_dialogue_join_is_judged_as_a_conversation() -> None:
    seen: list[str] = []

    def fn(request: Request) -> float:
        text = request.field_map["response"]
        seen.append(text)
        turns = [t.split("\nAssistant: ")[-1] for t in text.split(SEP)]
        return max(float(t.rsplit(" ", 1)[1]) for t in turns)

    probe = ClusterProbe(ks=(2,), per_cluster=10, join="dialogue", n_resamples=FAST)
    result = run(probe, balanced_items(4), CallableJudge(fn))
    assert any(s.startswith("User: prompt") for s in seen)
    assert result.finding("class_flip_rate", cluster="unsafe", k="2").estimate.estimate == 0.0


# -- reproducibility, parameters, figures ------------------------------------------------------
def test_plans_are_reproducible_for_a_seed_and_differ_across_seeds() -> None:
    items = balanced_items(10)
    probe = PermutationProbe(ks=(4,), n_tuples=30)
    verdicts = base_verdicts(items, ProbeContext("j", HARM))

    def seeded(seed: int) -> list[str]:
        return keys(planned(probe, items, ProbeContext("j", HARM, seed=seed), verdicts))

    assert seeded(0) == seeded(0)
    assert seeded(0) != seeded(1)
    assert seeded(0)[: len(items)] == seeded(1)[: len(items)]  # base requests are seed-free


@pytest.mark.parametrize(
    "probe",
    [
        RepetitionProbe(counts=(1, 2), n_resamples=37),
        ClusterProbe(ks=(2, 4), per_cluster=20, n_resamples=37),
        PermutationProbe(ks=(4,), n_tuples=40, sample_sizes=(10, 5, 10), n_resamples=37),
    ],
    ids=lambda p: p.name,
)
def test_every_resampled_interval_draws_the_resamples_the_probe_is_given(
    probe: object, resample_counts: list[int]
) -> None:
    result = run(probe, balanced_items(6), first_part_judge(0.5))
    assert result.findings
    assert resample_counts, "no interval was resampled"
    assert set(resample_counts) == {37}


def test_the_plan_does_not_depend_on_the_order_of_the_items() -> None:
    items = balanced_items(8)
    ctx = ProbeContext("j", HARM)
    verdicts = base_verdicts(items, ctx)
    probe = ClusterProbe(ks=(2, 4), per_cluster=25)
    forward = planned(probe, items, ctx, verdicts)
    assert len(forward.roles("concat")) == 2 * (25 + 25)
    assert forward.keys == planned(probe, items[::-1], ctx, verdicts).keys


@pytest.mark.parametrize(
    ("cls", "options", "message"),
    [
        (RepetitionProbe, {"counts": (0, 2)}, r"counts must be integers >= 1, got \(0, 2\)"),
        (
            RepetitionProbe,
            {"modes": ("title",)},
            r"modes must be one or more of .*, got \(.title.,\)",
        ),
        (RepetitionProbe, {"join": "dialogue"}, r"join 'dialogue' repeats whole turns"),
        (RepetitionProbe, {"separator": ""}, r"the separator must not be empty"),
        (ClusterProbe, {"ks": (1,)}, r"ks must be integers >= 2, got \(1,\)"),
        (ClusterProbe, {"quantile": 0.7}, r"quantile must be a number in \(0, 0\.5\], got 0\.7"),
        (
            ClusterProbe,
            {"cluster_by": "kmeans"},
            r"cluster_by must be one of 'auto', 'class', 'quantile', got 'kmeans'",
        ),
        (PermutationProbe, {"n_random": 2}, r"n_random must be an integer >= 3, got 2"),
        (PermutationProbe, {"sample_sizes": (1, 0)}, r"sample_sizes must be three non-negative"),
        (
            PermutationProbe,
            {"levels": "terciles"},
            r"levels must be one of 'decision', 'quantile', got 'terciles'",
        ),
    ],
)
def test_bad_parameters_raise_a_config_error(
    cls: Callable[..., object], options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        cls(**options)


def test_a_rubric_with_inputs_beyond_prompt_and_response_is_rejected() -> None:
    rubric = HARM.with_template(
        HARM.template + "\n{reference}", inputs=("prompt", "response", "reference")
    )
    with pytest.raises(ConfigError, match="also needs \\['reference'\\]"):
        RepetitionProbe().check(balanced_items(1), ProbeContext("j", rubric))


def test_probes_are_registered_by_name() -> None:
    assert get_probe_class("repetition") is RepetitionProbe
    assert get_probe_class("cluster") is ClusterProbe
    assert get_probe_class("permutation") is PermutationProbe


def test_figures_carry_the_data_their_kind_needs() -> None:
    items = balanced_items(8)
    engine = engine_for(max_judge())
    figures = [
        f
        for probe in (
            RepetitionProbe(counts=(1, 2), n_resamples=FAST),
            ClusterProbe(ks=(2,), per_cluster=10, n_resamples=FAST),
            PermutationProbe(ks=(4,), n_tuples=10, n_resamples=FAST),
        )
        for f in run(probe, items, max_judge(), engine=engine).figures
    ]
    kinds = {f.kind for f in figures}
    assert kinds == {"distributions", "scatter", "counts", "heatmap"}
    for f in figures:
        if f.kind == "counts":
            assert len(f.data["values"]) == len(f.data["rows"]) == 5
            assert all(len(row) == len(f.data["columns"]) for row in f.data["values"])
            assert all(sum(row) == 10 for row in f.data["values"])
        if f.kind == "scatter":
            assert all(len(s["x"]) == len(s["y"]) for s in f.data["series"].values())
        if f.kind == "heatmap":
            assert len(f.data["values"]) == len(f.data["names"])


# -- response generation -----------------------------------------------------------------------
def _generator(calls: list[str]) -> CallableJudge:
    def fn(request: Request) -> Verdict:
        prompt = request.field_map["prompt"]
        calls.append(prompt)
        if "crash" in prompt:
            raise RuntimeError("backend down")
        if "silent" in prompt:
            return Verdict.scored(0, raw_text="  ")
        words = f"An answer to {prompt}".split()[: request.rubric.max_new_tokens]
        return Verdict.scored(len(words), raw_text=" ".join(words) + " ")

    return CallableJudge(fn, name="echo-generator")


def test_generated_responses_fill_the_items_and_failures_are_dropped_and_counted() -> None:
    calls: list[str] = []
    engine = Engine(
        _generator(calls), RunStore(":memory:"), EngineConfig(progress=False, max_retries=0)
    )
    items = [
        PointwiseItem(f"q{i}", p, "") for i, p in enumerate(["how?", "crash", "silent", "why?"])
    ]
    result = generate_responses_sync(items, engine)
    assert [i.response for i in result.items] == ["An answer to how?", "An answer to why?"]
    assert result.items[0].metadata["generated_tokens"] == 4
    assert result.items[0].metadata["generator"] == engine.judge.fingerprint
    assert result.counts == {"generated": 2, "failed": 2, "error": 1, "empty": 1}
    assert {f.item_id for f in result.failed} == {"q1", "q2"}


async def test_generation_is_cached_and_its_token_limit_is_part_of_the_request() -> None:
    calls: list[str] = []
    engine = engine_for(_generator(calls))
    items = [PointwiseItem("q0", "say a lot of words please", "")]
    first = await generate_responses(items, engine, max_new_tokens=3)
    again = await generate_responses(items, engine, max_new_tokens=3)
    longer = await generate_responses(items, engine, max_new_tokens=100)
    assert first.items[0].response == "An answer to"
    assert (again.stats.cached, again.stats.called) == (1, 0)
    assert longer.items[0].response.endswith("please")
    assert len(calls) == 2


def test_generation_needs_a_generation_rubric() -> None:
    with pytest.raises(ConfigError, match="generation"):
        generate_responses_sync(
            [PointwiseItem("q", "p", "")], engine_for(_generator([])), rubric=HARM
        )


# -- real data ---------------------------------------------------------------------------------
DATA = data_root()


@pytest.mark.skipif(not (DATA / "pyrit_scorer_evals" / "harm").is_dir(), reason="PyRIT data absent")
def test_concatenation_probes_run_on_pyrit_harm_items_with_a_keyword_judge() -> None:
    from judgeprobe.data.pyrit import load_pyrit_csv

    items = list(load_pyrit_csv(DATA / "pyrit_scorer_evals" / "harm" / "violence.csv").items)[:30]
    words = ("kill", "weapon", "attack", "hurt", "bomb", "shoot")

    def fn(request: Request) -> float:
        text = request.field_map["response"].lower()
        return float(min(5, 1 + sum(text.count(w) for w in words)))

    engine = engine_for(CallableJudge(fn, name="keywords"))
    judge = engine.judge
    for probe in (
        RepetitionProbe(counts=(1, 2), n_resamples=FAST),
        ClusterProbe(ks=(2,), per_cluster=20, n_resamples=FAST),
        PermutationProbe(ks=(4,), n_tuples=20, sample_sizes=(10, 5, 10), n_resamples=FAST),
    ):
        result = run(probe, items, judge, engine=engine)  # type: ignore[arg-type]
        assert result.usage["error"] == 0
        assert result.tables["base"]["scored"] == len(items)
    # Counting keywords rises with repetition: the repetition probe must see it.
    repeated = run(RepetitionProbe(counts=(1, 4), n_resamples=FAST), items, judge, engine=engine)  # type: ignore[arg-type]
    assert repeated.finding("mean_shift", mode="P,R*l", l="4").estimate.estimate > 0


def test_a_class_cluster_of_one_item_has_its_findings_not_assessable_never_missing() -> None:
    result = run(
        ClusterProbe(ks=(2, 4), per_cluster=20, n_resamples=FAST),
        make_items([1, 1, 1, 2, 2, 3, 5]),
        max_judge(),
    )
    for k in ("2", "4"):
        for name in ("class_departure_rate", "class_flip_rate", "wasserstein_against_cluster"):
            finding = result.finding(name, cluster="unsafe", k=k)
            assert (finding.estimate.defined, finding.status) == (False, "n/a"), finding
            assert "class 'unsafe' has 1 item" in (finding.estimate.reason or "")
            # the other class is reported: assessed, or (five items behind concatenations of
            # four) too few items to estimate a spread over them, saying so
            safe = result.finding(name, cluster="safe", k=k).estimate
            assert safe.defined or "too few to estimate the variance over items" in str(safe.reason)


def test_a_permutation_sample_with_one_unsafe_item_leaves_positional_bias_not_assessable() -> None:
    probe = PermutationProbe(ks=(4,), n_tuples=30, sample_sizes=(20, 10, 20), n_resamples=FAST)
    result = run(probe, make_items([5] + [1] * 20 + [3] * 5), max_judge())
    finding = result.finding("positional_bias", k="4")
    assert (finding.estimate.defined, finding.status) == (False, "n/a")
    assert "class 'unsafe' has 1 item" in (finding.estimate.reason or "")
    assert result.finding("wasserstein_increasing_decreasing", k="4").estimate.defined


# -- structural zeros: no opportunity to flip is not assessable, never a pass -------------------
def test_a_repetition_flip_rate_over_neutral_base_decisions_only_is_not_assessable() -> None:
    neutral = CallableJudge(lambda r: 3.0, name="always-neutral")
    result = run(RepetitionProbe(counts=(1, 2), modes=("response",)), make_items([3] * 30), neutral)
    flip = result.finding("decision_flip_rate", mode="P,R*l", l="2")
    assert (flip.estimate.defined, flip.status) == (False, "n/a")
    assert "every base decision is neutral" in (flip.estimate.reason or "")


def test_a_cluster_flip_rate_over_neutral_parts_only_is_not_assessable() -> None:
    neutral = CallableJudge(lambda r: 3.0, name="always-neutral")
    probe = ClusterProbe(ks=(2,), cluster_by="quantile", per_cluster=20, n_resamples=FAST)
    result = run(probe, make_items([3] * 40), neutral)
    flips = [f for f in result.findings if f.name == "class_flip_rate"]
    assert flips and all(f.status == "n/a" for f in flips)
    assert all("share the neutral class" in (f.estimate.reason or "") for f in flips)
    # Leaving the class is still possible, so the departure rate is assessed.
    assert all(f.estimate.defined for f in result.findings if f.name == "class_departure_rate")


def test_a_range_departure_beyond_the_end_of_the_scale_is_not_assessable() -> None:
    """Every item scores 1: the high cluster's lowest score is the bottom of the 1-5 scale, so
    no concatenation of it can score below it; the low cluster can still score above 1."""
    floor = CallableJudge(lambda r: 1.0, name="always-one")
    probe = ClusterProbe(ks=(2,), cluster_by="quantile", per_cluster=20, n_resamples=FAST)
    result = run(probe, make_items([1] * 40), floor)
    high = result.finding("range_departure_rate", cluster="high", k="2")
    assert (high.estimate.defined, high.status) == (False, "n/a")
    assert "end of the rubric's scale" in (high.estimate.reason or "")
    low = result.finding("range_departure_rate", cluster="low", k="2")
    assert low.estimate.defined and low.estimate.estimate == 0.0
