"""Specifications of the pairwise judge probes: agreement, length null and control, position."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from conftest import data_root
from judgeprobe._util.codec import decode, dumps, loads
from judgeprobe.core.falsifier import Falsifier, load_falsifier, parse_falsifier
from judgeprobe.core.plan import ProbeContext
from judgeprobe.core.request import Request
from judgeprobe.data.items import PairwiseChoice, PairwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import ProbeResult, get_probe_class
from judgeprobe.probes.base import Probe
from judgeprobe.probes.pairwise.human_agreement import HumanAgreementProbe
from judgeprobe.probes.pairwise.length import relative_gap, text_length
from judgeprobe.probes.pairwise.length_control import LengthControlledWinRateProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import analyze_offline, run_probe
from judgeprobe.stats import ConfidenceInterval, Estimate, proportion
from judgeprobe.transforms.swap import swap_positions

DATA = data_root()
RUBRIC = builtin_rubric("preference")
CTX = ProbeContext(judge="recorded", rubric=RUBRIC, seed=0)
OTHER: dict[PairwiseChoice, PairwiseChoice] = {"A": "B", "B": "A", "tie": "tie"}


def analyzed(probe: Probe, items: Sequence[PairwiseItem], ctx: ProbeContext = CTX) -> ProbeResult:
    """``probe``'s result with no judge verdict (recorded votes need none)."""
    return analyze_offline(probe, items, ctx.rubric, seed=ctx.seed)


# ---------------------------------------------------------------------------------------------
# Synthetic data


def synthetic_pairs(
    n: int,
    seed: int,
    *,
    questions: int | None = None,
    longer_prior: float = 0.8,
) -> list[PairwiseItem]:
    """Pairs with known lengths and a known better response.

    Humans (three votes, each right with probability 0.9) follow the better response. Where the
    relative length gap is below 10% the better response is longer half of the time (length
    carries no information); above it, the better response is longer with ``longer_prior``.
    """
    rng = random.Random(seed)
    items = []
    for i in range(n):
        longest = rng.randint(300, 900)
        gap = rng.choice(
            [
                rng.uniform(0.005, 0.05),
                rng.uniform(0.05, 0.1),
                rng.uniform(0.1, 0.3),
                rng.uniform(0.3, 0.8),
            ]
        )
        shortest = max(1, min(longest - 1, round(longest * (1 - gap))))
        a_longer = rng.random() < 0.5
        longer: PairwiseChoice = "A" if a_longer else "B"
        prior = 0.5 if relative_gap(longest, shortest) < 0.10 else longer_prior
        better = longer if rng.random() < prior else OTHER[longer]
        votes = tuple(
            Vote(better if rng.random() < 0.9 else OTHER[better], rater=f"h{r}") for r in range(3)
        )
        text_a = _text(f"a{i}", longest if a_longer else shortest)
        text_b = _text(f"b{i}", shortest if a_longer else longest)
        items.append(
            PairwiseItem(
                id=f"s{i}",
                prompt=f"question {i if questions is None else i % questions}",
                response_a=text_a,
                response_b=text_b,
                human_votes=votes,
                question_id=None if questions is None else f"q{i % questions}",
                metadata={"better": better},
            )
        )
    return items


def _text(tag: str, length: int) -> str:
    body = (tag + " " + "lorem ipsum dolor " * (length // 18 + 1))[:length]
    return body


def with_recorded(
    items: Sequence[PairwiseItem], name: str, rule: Callable[[PairwiseItem], PairwiseChoice]
) -> list[PairwiseItem]:
    """``items`` with a recorded judge ``name`` voting by ``rule``."""
    return [
        dataclasses.replace(item, judge_votes={name: (Vote(rule(item), rater=name),)})
        for item in items
    ]


def longer_rule(item: PairwiseItem) -> PairwiseChoice:
    return "A" if len(item.response_a) > len(item.response_b) else "B"


def majority_rule(item: PairwiseItem) -> PairwiseChoice:
    choice = item.human_majority()
    assert choice is not None
    return choice


def run_live(
    probe: Probe, items: Sequence[PairwiseItem], fn: Callable[[Request], object]
) -> ProbeResult:
    judge = CallableJudge(fn, name="synthetic")  # type: ignore[arg-type]
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False, max_retries=0))
    return run_probe(probe, items, engine, RUBRIC, seed=0)


# ---------------------------------------------------------------------------------------------
# Swap transform


def test_swap_exchanges_responses_models_and_mirrors_every_vote() -> None:
    item = PairwiseItem(
        "x",
        "p",
        "first",
        "second",
        human_votes=(Vote("A", "h"), Vote("tie", "g")),
        judge_votes={"gpt-4": (Vote("B", "gpt-4"),)},
        model_a="m1",
        model_b="m2",
    )
    swapped = swap_positions(item)
    assert (swapped.response_a, swapped.response_b) == ("second", "first")
    assert (swapped.model_a, swapped.model_b) == ("m2", "m1")
    assert [v.choice for v in swapped.human_votes] == ["B", "tie"]
    assert swapped.judge_votes["gpt-4"][0].choice == "A"


def test_swap_twice_is_the_identity() -> None:
    for item in synthetic_pairs(5, seed=1):
        assert swap_positions(swap_positions(item)) == item


# ---------------------------------------------------------------------------------------------
# Agreement with humans: FastChat's tie semantics, by hand


def _hand_items() -> list[PairwiseItem]:
    def item(i: str, judge: Vote, humans: str) -> PairwiseItem:
        votes = tuple(Vote("tie" if h == "t" else h, rater=f"h{k}") for k, h in enumerate(humans))  # type: ignore[arg-type]
        return PairwiseItem(i, "p", "a", "b", human_votes=votes, judge_votes={"gpt-4": (judge,)})

    return [
        item("1", Vote("A"), "AAB"),
        item("2", Vote("B"), "Bt"),
        item("3", Vote("tie", inconsistent=True), "tA"),
    ]


@pytest.mark.parametrize(
    ("include_ties", "votes", "majority", "humans"),
    [
        # ties excluded: judge-vote 2/3 + 1/1; majority only item 1; human pairs of item 1 1/3
        (False, (3, 4), (1, 1), (1, 3)),
        # ties included: 2/3 + 1/2 + 1/2 (tie (inconsistent) == tie); human pairs 1/3 + 0/1 + 0/1
        (True, (4, 7), (1, 1), (1, 5)),
    ],
)
def test_agreement_counts_follow_fastchat_tie_rules(
    include_ties: bool, votes: tuple[int, int], majority: tuple[int, int], humans: tuple[int, int]
) -> None:
    probe = HumanAgreementProbe(judge_source="gpt-4", include_ties=include_ties)
    result = analyzed(probe, _hand_items())
    for name, (k, n) in (
        ("judge_human_vote_agreement", votes),
        ("judge_human_majority_agreement", majority),
        ("human_human_agreement", humans),
    ):
        est = result.finding(name).estimate
        assert (est.counts["k"], est.counts["n"]) == (k, n), name
    assert result.tables["excluded"]["no_human_majority"] == 2


def test_kappa_is_one_for_a_judge_that_copies_the_human_majority() -> None:
    items = with_recorded(synthetic_pairs(120, seed=2), "copy", majority_rule)
    result = analyzed(HumanAgreementProbe(judge_source="copy", n_resamples=200), items)
    assert result.finding("judge_human_majority_agreement").estimate.estimate == 1.0
    assert result.finding("judge_human_majority_kappa").estimate.estimate == pytest.approx(1.0)


def test_kappa_of_a_judge_that_always_answers_a_is_not_assessable_not_a_zero_that_fails() -> None:
    items = with_recorded(synthetic_pairs(120, seed=2), "always-a", lambda item: "A")
    result = analyzed(HumanAgreementProbe(judge_source="always-a", n_resamples=200), items)
    for name in ("judge_human_vote_kappa", "judge_human_majority_kappa"):
        finding = result.finding(name)
        assert not finding.estimate.defined
        assert finding.status == "n/a"
        assert "kappa is 0 by construction" in (finding.estimate.reason or "")
    assert result.finding("human_human_kappa").estimate.defined  # the humans are not constant


def test_unknown_recorded_judge_is_a_config_error_naming_the_recorded_ones() -> None:
    with pytest.raises(ConfigError, match="gpt-4"):
        analyzed(HumanAgreementProbe(judge_source="gpt-5"), _hand_items())


def test_recorded_source_makes_no_judge_call() -> None:
    for name in ("human_agreement", "length_null", "position", "length_controlled_win_rate"):
        probe = get_probe_class(name)(judge_source="gpt-4")  # type: ignore[call-arg]
        assert probe.plan(_hand_items(), CTX).requests == {}


# ---------------------------------------------------------------------------------------------
# Length-only null and the length-matched control (self-validation from the issue)

FALSIFIER = Falsifier(bin="<10%", metric="judge_minus_null", threshold=0.10, refuted_if="above")


def test_longer_judge_agrees_with_the_null_fully_and_has_no_edge_on_matched_bins() -> None:
    items = with_recorded(synthetic_pairs(600, seed=3), "longer", longer_rule)
    probe = LengthNullProbe(judge_source="longer", falsifier=FALSIFIER, compare_units=())
    result = analyzed(probe, items)
    assert result.finding("null_judge_agreement", unit="chars").estimate.estimate == 1.0
    for label in ("<5%", "<10%", "10-30%", ">30%"):
        diff = result.finding("bin_judge_minus_null", bin=label).estimate
        assert (diff.estimate, diff.ci.low, diff.ci.high) == (0.0, 0.0, 0.0)
    matched = result.finding("bin_judge_agreement", bin="<10%").estimate
    assert matched.n > 100 and matched.ci.contains(0.5)
    assert result.finding("falsifier").labels["verdict"] == "holds"


def test_majority_copying_judge_agrees_fully_in_every_bin_and_refutes_the_confound() -> None:
    items = with_recorded(synthetic_pairs(600, seed=4), "copy", majority_rule)
    probe = LengthNullProbe(judge_source="copy", falsifier=FALSIFIER, compare_units=())
    result = analyzed(probe, items)
    for label in ("<5%", "<10%", "10-30%", ">30%"):
        assert result.finding("bin_judge_agreement", bin=label).estimate.estimate == 1.0
    verdict = result.finding("falsifier")
    assert verdict.labels["verdict"] == "refuted"
    assert verdict.estimate.ci.low > 0.10
    assert any("REFUTED" in note for note in result.notes)


def test_a_judge_that_ties_every_pair_is_not_assessable_and_says_why() -> None:
    items = with_recorded(synthetic_pairs(100, seed=6), "ties", lambda item: "tie")
    result = analyzed(LengthNullProbe(judge_source="ties", compare_units=()), items)
    for name, labels in (
        ("judge_human_majority_agreement", {}),
        ("null_judge_agreement", {"unit": "chars"}),
        ("bin_judge_minus_null", {"bin": "<10%"}),
    ):
        estimate = result.finding(name, **labels).estimate
        assert not estimate.defined
        assert estimate.reason is not None
        assert "every one of the judge's 100 votes is a tie" in estimate.reason
    # the null against the humans does not need the judge: still measured
    assert result.finding("null_human_majority_agreement", unit="chars").estimate.defined
    # with ties counted there is data, and no such reason
    counted = analyzed(
        LengthNullProbe(judge_source="ties", compare_units=(), include_ties=True), items
    )
    assert counted.finding("judge_human_majority_agreement").estimate.defined


def test_bins_partition_the_compared_items_with_the_5pct_bin_nested() -> None:
    items = with_recorded(synthetic_pairs(300, seed=5), "copy", majority_rule)
    result = analyzed(LengthNullProbe(judge_source="copy", compare_units=()), items)
    n = {
        b: result.finding("bin_judge_agreement", bin=b).estimate.n
        for b in ("<5%", "<10%", "10-30%", ">30%")
    }
    total = result.finding("judge_human_majority_agreement").estimate.n
    assert n["<10%"] + n["10-30%"] + n[">30%"] == total
    assert 0 < n["<5%"] < n["<10%"]


def test_null_agreement_follows_where_length_points() -> None:
    natural = synthetic_pairs(400, seed=6, longer_prior=0.9)
    inverted = synthetic_pairs(400, seed=6, longer_prior=0.1)
    probe = LengthNullProbe(compare_units=())  # live, unjudged: the null needs no judge
    up = analyzed(probe, natural).finding("null_human_majority_agreement", unit="chars")
    down = analyzed(probe, inverted).finding("null_human_majority_agreement", unit="chars")
    assert up.estimate.ci.low > 0.5 > down.estimate.ci.high


def test_length_units_and_relative_gap_formula() -> None:
    assert [text_length("Hi, there.", u) for u in ("chars", "words", "tokens")] == [10, 2, 4]
    assert relative_gap(90, 100) == relative_gap(100, 90) == pytest.approx(0.1)
    assert relative_gap(0, 0) == 0.0


def test_falsifier_bin_must_be_one_of_the_probe_bins() -> None:
    with pytest.raises(ConfigError, match="bin"):
        LengthNullProbe(falsifier=Falsifier(bin="<1%", threshold=0.1))


# ---------------------------------------------------------------------------------------------
# Falsifier


@pytest.mark.parametrize(
    ("refuted_if", "low", "high", "outcome"),
    [
        ("above", 0.14, 0.40, "refuted"),
        ("above", -0.05, 0.08, "holds"),
        ("above", 0.02, 0.33, "inconclusive"),
        ("below", 0.14, 0.40, "holds"),
        ("below", -0.05, 0.08, "refuted"),
        ("above", math.nan, math.nan, "inconclusive"),
    ],
)
def test_falsifier_decides_by_where_the_whole_interval_lies(
    refuted_if: str, low: float, high: float, outcome: str
) -> None:
    falsifier = Falsifier(threshold=0.10, refuted_if=refuted_if)
    verdict = falsifier.decide(Estimate(0.2, ConfidenceInterval(low, high, 0.95), 74))
    assert verdict.outcome == outcome
    assert f"{falsifier.threshold:g}" in verdict.sentence()


def test_falsifier_loads_from_yaml_and_rejects_unknown_keys(tmp_path: Path) -> None:
    text = "bin: '<10%'\nmetric: judge_minus_null\nthreshold: 0.1\nrefuted_if: above\n"
    path = tmp_path / "falsifier.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_falsifier(path) == parse_falsifier(text) == Falsifier(bin="<10%", threshold=0.1)
    with pytest.raises(ConfigError, match="direction"):
        parse_falsifier(text + "direction: up\n")


def test_falsifier_refuses_an_interval_at_another_level() -> None:
    with pytest.raises(ValueError, match="level"):
        Falsifier(threshold=0.1).decide(Estimate(0.3, ConfidenceInterval(0.2, 0.4, 0.9), 50))


# ---------------------------------------------------------------------------------------------
# Position (live, both orders)


def planted_position_judge(p: float, items: Sequence[PairwiseItem]) -> Callable[[Request], str]:
    """Picks the first-shown response with probability ``p``, else the truly better one."""
    better_text = {(i.response_a if i.metadata["better"] == "A" else i.response_b) for i in items}

    def judge(request: Request) -> str:
        if random.Random(request.key).random() < p:
            return "A"
        return "A" if request.field_map["response_a"] in better_text else "B"

    return judge


def test_planted_first_position_preference_is_recovered_within_the_ci() -> None:
    items = synthetic_pairs(400, seed=7)
    result = run_live(PositionProbe(), items, planted_position_judge(0.3, items))
    bias = result.finding("first_position_bias").estimate
    assert bias.n == 400 and bias.ci.contains(0.3)
    assert result.finding("second_position_bias").estimate.estimate == 0.0
    assert result.finding("first_position_bias").test.pvalue < 1e-6  # type: ignore[union-attr]
    # both orders, and 160 reruns: the judge picks the first-shown response on 30 % of its calls
    # at random, so its reruns differ too, and the null's width decides the status
    assert result.usage["calls"] == 800 + 160


def test_position_rates_over_one_pair_per_question_have_an_exact_interval_that_covers() -> None:
    items = synthetic_pairs(150, seed=7)
    result = run_live(PositionProbe(), items, planted_position_judge(0.35, items))
    bias = result.finding("first_position_bias").estimate
    k = int(bias.counts["k"])
    assert (bias.n, bias.counts["clusters"]) == (150, 150)
    assert bias.ci.method == "clopper-pearson"
    assert (bias.ci.low, bias.ci.high) == pytest.approx(
        (proportion(k, 150, method="exact").ci.low, proportion(k, 150, method="exact").ci.high)
    )

    # Its exact coverage at the simulation's design (150 pairs, rate 0.35) is at least 95 %;
    # Wilson's is 94.1 % there.
    def coverage(method: str) -> float:
        total = 0.0
        for hits in range(151):
            ci = proportion(hits, 150, method=method).ci
            if ci.low <= 0.35 <= ci.high:
                total += math.comb(150, hits) * 0.35**hits * 0.65 ** (150 - hits)
        return total

    assert coverage("exact") >= 0.95 > coverage("wilson")


def test_position_free_judge_is_fully_consistent() -> None:
    items = synthetic_pairs(60, seed=8)
    result = run_live(PositionProbe(), items, planted_position_judge(0.0, items))
    assert result.finding("position_consistency").estimate.estimate == 1.0
    assert result.finding("swap_flip_rate").estimate.estimate == 0.0
    assert result.finding("first_position_share").estimate.estimate == 0.5


def test_a_judge_that_scores_without_a_label_is_read_by_the_rubrics_rule_and_mapped_back() -> None:
    """Score 0.8 is A, the response shown first, in both orders: after mapping the swapped
    decision back, every pair is a first-position flip."""
    items = synthetic_pairs(30, seed=8)
    result = run_live(PositionProbe(by=()), items, lambda request: 0.8)
    assert result.finding("first_position_bias").estimate.estimate == 1.0
    assert result.finding("position_consistency").estimate.estimate == 0.0
    assert result.tables["swap_table"]["A|B"] == 30


PAIRWISE_PROBES = ("human_agreement", "length_null", "position", "length_controlled_win_rate")


@pytest.mark.parametrize("source", ["live", "gpt-4"])
@pytest.mark.parametrize("name", PAIRWISE_PROBES)
def test_a_pairwise_item_id_that_occurs_twice_is_a_data_error(name: str, source: str) -> None:
    items = _hand_items()
    probe = get_probe_class(name)(judge_source=source)  # type: ignore[call-arg]
    with pytest.raises(DataError, match=rf"item id {items[0].id!r} occurs twice"):
        probe.plan([*items, items[0]], CTX)


@pytest.mark.parametrize("name", PAIRWISE_PROBES)
def test_a_pairwise_design_round_trips_through_the_run_stores_json(name: str) -> None:
    plan = get_probe_class(name)().plan(_hand_items(), CTX)
    assert decode(loads(dumps(plan.design))) == plan.design
    assert set(plan.design.judged) <= {item.id for item in plan.design.items}


def test_failed_verdicts_are_excluded_and_counted_never_scored() -> None:
    items = synthetic_pairs(40, seed=9)
    planted = planted_position_judge(0.0, items)
    broken = {items[0].response_a, items[1].response_a}

    def judge(request: Request) -> str | None:
        if request.field_map["response_a"] in broken:
            return None  # unparseable
        return planted(request)

    result = run_live(PositionProbe(), items, judge)
    assert result.finding("position_consistency").estimate.n == 38
    assert sum(result.tables["excluded"].values()) == 2
    assert result.usage["unparseable"] == 2


def test_agreement_with_both_orders_shares_the_position_probe_calls() -> None:
    items = synthetic_pairs(10, seed=10)
    ctx = ProbeContext(judge="j", rubric=RUBRIC)
    both = HumanAgreementProbe(orders="both").plan(items, ctx).keys
    position = PositionProbe().plan(items, ctx)
    # the position probe adds only the first reruns of its rerun null (trial 1 of its requests)
    assert both < position.keys
    assert {r.trial for k, r in position.requests.items() if r.key not in both} == {1}
    original = LengthNullProbe().plan(items, ctx).keys
    assert original < both and len(original) == 10


def test_live_inconsistent_verdicts_become_inconsistent_ties_with_both_orders() -> None:
    items = synthetic_pairs(50, seed=11)
    always_first = run_live(
        HumanAgreementProbe(orders="both", include_ties=True), items, lambda r: "A"
    )
    # every pair flips on swap, so every vote is 'tie (inconsistent)' and no human vote is a tie
    assert always_first.finding("judge_human_vote_agreement").estimate.counts["k"] == sum(
        v.choice == "tie" for i in items for v in i.human_votes
    )


def test_recorded_swap_protocol_gives_consistency_from_inconsistent_ties() -> None:
    items = [
        PairwiseItem(
            f"m{i}",
            "p",
            "a",
            "b",
            human_votes=(Vote("A"),),
            judge_votes={"gpt-4": (Vote("tie", inconsistent=True) if i % 4 == 0 else Vote("A"),)},
        )
        for i in range(80)
    ]
    result = analyzed(PositionProbe(judge_source="gpt-4"), items)
    est = result.finding("position_consistency").estimate
    assert (est.estimate, est.n) == (0.75, 80)


def test_recorded_votes_without_a_swap_protocol_report_nothing_and_say_why() -> None:
    items = with_recorded(synthetic_pairs(20, seed=12), "gpt-3.5-turbo", longer_rule)
    result = analyzed(PositionProbe(judge_source="gpt-3.5-turbo"), items)
    assert result.findings == [] and "no swap protocol" in result.notes[0]


# ---------------------------------------------------------------------------------------------
# Length-controlled win rate


def test_length_controlled_rate_removes_a_pure_length_preference() -> None:
    rng = random.Random(13)
    items = []
    for i in range(500):
        a, b = rng.randint(100, 900), rng.randint(100, 700)  # A is longer on average
        p_a = 1 / (1 + math.exp(-(a - b) / 150))
        choice: PairwiseChoice = "A" if rng.random() < p_a else "B"
        items.append(
            PairwiseItem(
                f"l{i}",
                "p",
                "x" * a,
                "y" * b,
                human_votes=(Vote(choice),),
                judge_votes={"j": (Vote(choice),)},
            )
        )
    result = analyzed(LengthControlledWinRateProbe(judge_source="j", n_resamples=200), items)
    lc = result.finding("lc_win_rate", candidate="A", rater="judge").estimate
    raw = result.finding("raw_win_rate", candidate="A", rater="judge").estimate
    assert raw.ci.low > 0.55 and lc.ci.contains(0.5)


# ---------------------------------------------------------------------------------------------
# Interval coverage (seeded simulation)


def _coverage(cluster: str, runs: int = 200) -> float:
    """Share of simulated audits whose 95% interval of judge-majority agreement covers 0.8.

    Questions differ in difficulty: each has its own agreement rate ~ Beta(2, 0.5) (mean 0.8)
    shared by its 5 items, so items of one question are not independent evidence.
    """
    rng = random.Random(14)
    covered = 0
    for run in range(runs):
        items = []
        for q in range(40):
            rate = rng.betavariate(2, 0.5)
            for k in range(5):
                human: PairwiseChoice = rng.choice(["A", "B"])
                judge = human if rng.random() < rate else OTHER[human]
                items.append(
                    PairwiseItem(
                        f"{run}-{q}-{k}",
                        "p",
                        "a",
                        "b",
                        human_votes=(Vote(human),),
                        judge_votes={"j": (Vote(judge),)},
                        question_id=f"q{q}",
                    )
                )
        probe = HumanAgreementProbe(judge_source="j", by=(), n_resamples=500, cluster=cluster)  # type: ignore[arg-type]
        est = analyzed(probe, items).finding("judge_human_majority_agreement").estimate
        covered += est.ci.contains(0.8)
    return covered / runs


def test_question_clustered_ci_covers_the_true_rate_at_about_the_nominal_level() -> None:
    assert 0.92 <= _coverage("question") <= 0.98


def test_ignoring_the_question_clusters_undercovers() -> None:
    assert _coverage("item") < 0.88


# ---------------------------------------------------------------------------------------------
# Real data (skipped when the shared data folder is absent)


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"dataset not found: {path} (set JUDGEPROBE_DATA)")
    return path


def test_pandalm_recorded_gpt35_agreement_matches_an_independent_recount() -> None:
    from judgeprobe.data.pairwise_sets import load_pandalm

    folder = _need(DATA / "pandalm_testset")
    items = list(load_pandalm(folder).items)
    probe = HumanAgreementProbe(judge_source="gpt-3.5-turbo", by=(), n_resamples=50)
    est = analyzed(probe, items).finding("judge_human_majority_agreement").estimate
    tests = {r["idx"]: r for r in json.loads((folder / "testset-v1.json").read_text())}
    gpt = {
        r["idx"]: r["gpt_result"]
        for r in json.loads((folder / "gpt-3.5-turbo-testset-v1.json").read_text())
    }
    k = n = 0
    for idx, row in tests.items():
        majority = Counter(row[f"annotator{j}"] for j in (1, 2, 3)).most_common(1)[0][0]
        vote = {"1": 1, "2": 2}.get(str(gpt.get(idx)))  # Tie and garbage drop out
        if vote is not None and majority != 0:
            n += 1
            k += vote == majority
    assert (est.counts["k"], est.n) == (k, n)


def test_llmbar_length_null_points_the_way_each_set_is_built() -> None:
    """LLMBar's SOURCE.md counts the better output as the longer one (characters) in 56/100
    Natural and 16/134 Adversarial/Neighbor pairs; the null must reproduce both counts."""
    from judgeprobe.data.pairwise_sets import load_llmbar

    found = {}
    for subset in ("Natural", "Adversarial/Neighbor"):
        path = _need(DATA / "llmbar" / "Dataset" / "LLMBar" / subset / "dataset.json")
        items = list(load_llmbar(path).items)
        result = analyzed(LengthNullProbe(compare_units=(), cluster="prompt"), items)
        found[subset] = result.finding("null_human_majority_agreement", unit="chars").estimate
    natural, neighbor = found["Natural"], found["Adversarial/Neighbor"]
    assert (natural.counts["k"], natural.n, neighbor.counts["k"], neighbor.n) == (56, 100, 16, 134)
    assert neighbor.ci.high < 0.5 < natural.estimate


# ---------------------------------------------------------------------------------------------
# MT-Bench human judgments: the probes run on the published schema unchanged


def _mt_bench_rows(seed: int) -> list[dict[str, object]]:
    """Synthetic rows in the schema of ``lmsys/mt_bench_human_judgments`` (both splits)."""
    rng = random.Random(seed)
    models = ["m1", "m2", "m3"]
    rows: list[dict[str, object]] = []
    for q in range(30):
        answers = {
            m: [f"answer {m} {q} t{t} " * rng.randint(5, 40) for t in (1, 2)] for m in models
        }

        def conversation(
            m: str, q: int = q, answers: dict[str, list[str]] = answers
        ) -> list[dict[str, str]]:
            return [
                {"role": "user", "content": f"question {q} turn 1"},
                {"role": "assistant", "content": answers[m][0]},
                {"role": "user", "content": f"question {q} turn 2"},
                {"role": "assistant", "content": answers[m][1]},
            ]

        for a, b in (("m1", "m2"), ("m3", "m1")):  # the second pair is stored in reverse order
            for turn in (1, 2):
                longer = (
                    "model_a"
                    if len(answers[a][turn - 1]) > len(answers[b][turn - 1])
                    else "model_b"
                )
                for judge in ("expert_0", "expert_1", "author_0", "gpt4_pair"):
                    if judge == "gpt4_pair" and rng.random() < 0.2:
                        winner = "tie (inconsistent)"
                    else:
                        winner = (
                            longer
                            if rng.random() < 0.8
                            else rng.choice(["model_a", "model_b", "tie"])
                        )
                    rows.append(
                        {
                            "question_id": q,
                            "model_a": a,
                            "model_b": b,
                            "winner": winner,
                            "judge": judge,
                            "conversation_a": conversation(a),
                            "conversation_b": conversation(b),
                            "turn": turn,
                        }
                    )
    return rows


def test_probes_run_unchanged_on_the_mt_bench_human_judgment_schema(tmp_path: Path) -> None:
    from judgeprobe.data.mt_bench import load_mt_bench_human

    path = tmp_path / "mt_bench_human_judgments.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _mt_bench_rows(15)), encoding="utf-8")
    items = list(load_mt_bench_human(path, split="both").items)
    assert len(items) == 30 * 2 * 2
    agreement = HumanAgreementProbe(judge_source="gpt-4", human_raters=("expert",), n_resamples=100)
    result = analyzed(agreement, items)
    # experts only: two votes per item, so one human-human pair per item before dropping ties
    humans = result.finding("human_human_agreement").estimate
    assert humans.n + result.tables["excluded"]["tie_comparisons_dropped"]["human_vs_human"] == 120
    assert humans.counts["clusters"] <= 30  # clustered by question
    assert {f.labels.get("turn") for f in result.findings} == {None, "1", "2"}
    null = LengthNullProbe(judge_source="gpt-4", human_raters=("expert",), compare_units=())
    assert analyzed(null, items).finding("null_judge_agreement", unit="chars").estimate.n > 0
    position = analyzed(PositionProbe(judge_source="gpt-4"), items)
    consistency = position.finding("position_consistency").estimate
    assert consistency.n == 120 and 0.6 < consistency.estimate < 0.95
    lc = analyzed(LengthControlledWinRateProbe(judge_source="gpt-4", n_resamples=50), items)
    assert {f.labels["candidate"] for f in lc.findings} == {"m1", "m2", "m3"}


@pytest.mark.parametrize(
    "probe",
    [
        HumanAgreementProbe(judge_source="longer", n_resamples=50),
        LengthNullProbe(judge_source="longer", falsifier=FALSIFIER, n_resamples=50),
        LengthControlledWinRateProbe(judge_source="longer", n_resamples=20),
        PositionProbe(judge_source="longer"),
    ],
    ids=lambda p: p.name,
)
def test_results_are_plain_json_even_with_empty_bins(probe: Probe) -> None:
    items = with_recorded(synthetic_pairs(30, seed=16), "longer", longer_rule)
    result = analyzed(probe, items[:3])  # tiny: several estimates are undefined
    json.dumps(result.to_dict(), allow_nan=False)
    json.dumps(probe.params(), allow_nan=False)


@pytest.mark.parametrize(
    "probe",
    [
        HumanAgreementProbe(judge_source="longer", n_resamples=37),
        LengthNullProbe(judge_source="longer", falsifier=FALSIFIER, n_resamples=37),
        LengthControlledWinRateProbe(judge_source="longer", n_resamples=37),
    ],
    ids=lambda p: p.name,
)
def test_every_resampled_interval_draws_the_resamples_the_probe_is_given(
    probe: Probe, resample_counts: list[int]
) -> None:
    items = with_recorded(synthetic_pairs(200, seed=7, questions=40), "longer", longer_rule)
    result = analyzed(probe, items)
    assert result.findings
    assert resample_counts, "no interval was resampled"
    assert set(resample_counts) == {37}


def test_human_raters_keeps_only_the_named_raters() -> None:
    items = [
        PairwiseItem(
            "e",
            "p",
            "a",
            "b",
            human_votes=(Vote("A", "expert_1"), Vote("B", "author_1"), Vote("A", "expert_2")),
            judge_votes={"gpt-4": (Vote("A"),)},
        )
    ]
    all_votes = analyzed(HumanAgreementProbe(judge_source="gpt-4"), items)
    experts = analyzed(HumanAgreementProbe(judge_source="gpt-4", human_raters=("expert",)), items)
    assert all_votes.finding("judge_human_vote_agreement").estimate.counts["k"] == 2
    assert experts.finding("judge_human_vote_agreement").estimate.estimate == 1.0
    with pytest.raises(ConfigError, match="tuple"):
        HumanAgreementProbe(human_raters="expert")  # type: ignore[arg-type]


def test_raw_agreement_is_information_and_only_kappa_beyond_chance_is_gated() -> None:
    items = with_recorded(synthetic_pairs(120, seed=2), "always-a", lambda item: "A")
    result = analyzed(HumanAgreementProbe(judge_source="always-a", n_resamples=200), items)
    for stem in ("judge_human_vote", "judge_human_majority", "human_human"):
        raw = result.finding(f"{stem}_agreement")
        assert (raw.threshold, raw.status) == (None, "info"), stem
    for stem in ("judge_human_vote", "judge_human_majority"):
        assert result.finding(f"{stem}_kappa").threshold is not None, stem


def test_a_length_judge_fails_the_matched_bins_and_its_share_of_longer_picks_is_information() -> (
    None
):
    items = with_recorded(synthetic_pairs(600, seed=3), "longer", longer_rule)
    result = analyzed(LengthNullProbe(judge_source="longer", compare_units=()), items)
    assert result.finding("null_judge_agreement", unit="chars").status == "info"
    for name in ("null_human_vote_agreement", "null_human_majority_agreement"):
        assert result.finding(name, unit="chars").status == "info", name
    for label in ("<5%", "<10%"):
        assert result.finding("bin_judge_minus_null", bin=label).status == "fail", label
    for label in ("10-30%", ">30%"):
        assert result.finding("bin_judge_minus_null", bin=label).status == "info", label


def test_a_judge_that_ties_every_pair_cannot_flip_and_its_flip_findings_are_not_assessable() -> (
    None
):
    items = synthetic_pairs(40, seed=8)
    result = run_live(PositionProbe(by=()), items, lambda request: "tie")
    for name in ("swap_flip_rate", "first_position_bias", "second_position_bias"):
        finding = result.finding(name)
        assert (finding.estimate.defined, finding.status) == (False, "n/a"), name
        assert "no pair has a decisive verdict in both orders" in (finding.estimate.reason or "")
    assert result.finding("position_consistency").estimate.estimate == 1.0
