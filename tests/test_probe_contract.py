"""The contract every registered probe keeps, checked on each of them.

- A plan is deterministic for a seed and does not depend on the order of the items.
- Every request a plan holds gets a verdict when the probe runs.
- A judge whose verdicts are identical under the probe's transform (invariant) shows zero flips,
  and nothing fails on it.
- The design round-trips through the run store: a run analysed again from its store alone, with
  no judge, gives the same findings, tables, figures and notes.
- Every gated finding can be paired between two runs, or the probe says why not: the probe gives
  its value per unit (an item, a pair, a drawn tuple or concatenation) whose statistic is the
  finding's estimate, or declares the reason it cannot be paired.

A registered probe missing from :data:`FIXTURES` fails the first test.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from judgeprobe._util import codec as _codec
from judgeprobe._util.hashing import canonical_json, content_hash
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import Probe, ProbeResult
from judgeprobe.probes.registry import get_probe_class, probe_names
from judgeprobe.probes.units import UNIT_KINDS, finding_key
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.runs.probe import probe_context, reanalyze, run_probe

FAST = 100


def _uniform(text: str) -> float:
    return int(content_hash(text), 16) / 16**16


def pointwise(n: int = 24) -> list[Item]:
    """Items with one 0/1 human label each, half of them positive."""
    return [
        PointwiseItem(
            id=f"p{k:02d}",
            prompt=f"request {k} about topic {k % 3}",
            response=f"answer {k} " + "word " * (5 + 7 * (k % 4)),
            labels=(HumanLabel(float(k % 2), rater="r1"), HumanLabel(float(k % 2), rater="r2")),
            category="abc"[k % 3],
        )
        for k in range(n)
    ]


def pairwise(n: int = 24) -> list[Item]:
    """Pairs with two human votes each and responses of different lengths."""
    items: list[Item] = []
    for k in range(n):
        a = f"first answer {k} " + "a " * (3 + 5 * (k % 3))
        b = f"second answer {k} " + "b " * (4 + 3 * (k % 4))
        vote = "A" if k % 3 else "B"
        items.append(
            PairwiseItem(
                id=f"q{k:02d}",
                prompt=f"question {k}",
                response_a=a,
                response_b=b,
                human_votes=(Vote(vote, rater="h1"), Vote(vote, rater="h2")),  # type: ignore[arg-type]
            )
        )
    return items


def invariant_pointwise(request: Request) -> float:
    """One score for every input: the same under repetition, concatenation, reordering and
    rewording of the rubric."""
    return 1.0


def invariant_pairwise(request: Request) -> str:
    """Picks the longer response: the same pick, mapped back, when the two are swapped."""
    fields = request.field_map
    return "A" if len(fields["response_a"]) >= len(fields["response_b"]) else "B"


def noisy_pointwise(request: Request) -> float:
    return float(1 + int(5 * _uniform(request.render() + str(request.trial))) % 5)


def noisy_binary(request: Request) -> float:
    return float(_uniform(request.render() + str(request.trial)) < 0.5)


def noisy_pairwise(request: Request) -> str:
    return "A" if _uniform(request.render() + str(request.trial)) < 0.5 else "B"


def answering(judge: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """``judge``, also writing an answer to each prompt it is asked to answer (a generation
    rubric), as a language model judge can."""

    def fn(request: Request) -> Any:
        if request.rubric.kind == "generation":
            return Verdict.scored(4.0, raw_text=f"my answer to {request.field_map['prompt']}")
        return judge(request)

    fn.__name__ = f"answering_{judge.__name__}"
    return fn


def first_shown(request: Request) -> str:
    """Picks whichever response is shown first: blind to what either response says."""
    return "A"


@dataclass(frozen=True)
class Fixture:
    """How to exercise one probe: its items, rubric, fast parameters and two judges."""

    items: Callable[[], list[Item]]
    rubric: str
    invariant: Callable[[Request], Any]
    noisy: Callable[[Request], Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    quiet: tuple[str, ...] = ()
    """Findings of an invariance probe that are exactly 0 for a judge invariant under it."""
    generates: bool = False
    """The judges also write answers (the probe needs the judge's own answers)."""


CONCAT = {"n_resamples": FAST}
BIAS_QUIET = ("excess_move_rate", "edited_move_rate", "placebo_move_rate", "mean_score_shift")
"""An invariant judge's verdict never moves under a bias edit or its placebo."""
PAIRWISE_BIAS_QUIET = ("excess_move_rate", "excess_away_rate")
"""The pairwise invariant judge picks the longer response: the edit and its placebo add the
same length, so it moves alike under both and the excess is 0."""
BIAS_PROBES = ("authority", "bandwagon", "distraction", "injection", "verbosity")
ATTACK_QUIET = ("excess_success_rate", "attack_success_rate", "placebo_success_rate")
"""An invariant judge's verdict never reaches an attack's aim: its one score is the other
class, and it stays there under every form and placebo."""
PAIRWISE_ATTACK_QUIET = ("excess_success_rate",)
"""The pairwise invariant judge picks the longer response: a form and its placebo have the
same length, so it moves alike under both and the excess is 0."""
FIXTURES: dict[str, Fixture] = {
    "agreement": Fixture(pointwise, "refusal", invariant_pointwise, noisy_binary, CONCAT),
    "bypass": Fixture(
        pointwise,
        "harmfulness",
        invariant_pointwise,
        noisy_pointwise,
        {"n_resamples": FAST},
        ("false_alarm_rate",),
    ),
    "cluster": Fixture(
        pointwise,
        "harmfulness",
        invariant_pointwise,
        noisy_pointwise,
        {"n_resamples": FAST},
        ("class_flip_rate", "class_departure_rate", "wasserstein_concat_vs_parts"),
    ),
    "human_agreement": Fixture(
        pairwise, "preference", invariant_pairwise, noisy_pairwise, {"n_resamples": FAST}
    ),
    "length_controlled_win_rate": Fixture(
        pairwise, "preference", invariant_pairwise, noisy_pairwise, {"n_resamples": FAST}
    ),
    "length_null": Fixture(
        pairwise, "preference", invariant_pairwise, noisy_pairwise, {"n_resamples": FAST}
    ),
    "permutation": Fixture(
        pointwise,
        "harmfulness",
        invariant_pointwise,
        noisy_pointwise,
        {"n_resamples": FAST},
        # one score everywhere: no unsafe item, so positional_bias is not assessable
        ("wasserstein_increasing_decreasing", "wasserstein_mean_pairwise"),
    ),
    "policy_invariance": Fixture(
        pointwise,
        "refusal",
        invariant_pointwise,
        noisy_binary,
        {"n_resamples": FAST},
        # one decision everywhere: flips are 0 by construction, so only the noise is measured
        ("p_jitter", "null_flip_rate"),
    ),
    "policy_invariance_pairwise": Fixture(
        pairwise,
        "preference",
        invariant_pairwise,
        noisy_pairwise,
        {"n_resamples": FAST},
        ("flip_rate", "decision_change_rate"),
    ),
    "position": Fixture(
        pairwise, "preference", invariant_pairwise, noisy_pairwise, {}, ("swap_flip_rate",)
    ),
    "repetition": Fixture(
        pointwise,
        "harmfulness",
        invariant_pointwise,
        noisy_pointwise,
        {"n_resamples": FAST},
        ("decision_flip_rate", "wasserstein_to_l1", "mean_shift"),
    ),
    "sensitivity": Fixture(
        pointwise, "refusal", invariant_pointwise, noisy_binary, {"n_resamples": FAST}
    ),
    "sensitivity_pairwise": Fixture(pairwise, "preference", invariant_pairwise, noisy_pairwise),
    "self_preference": Fixture(
        pairwise,
        "preference",
        answering(first_shown),
        answering(noisy_pairwise),
        {"n_resamples": FAST},
        ("self_preference",),
        generates=True,
    ),
}
"""Every registered probe and how to exercise it; a new probe must be added here."""
for _attack in ("forged_verdict", "master_key", "smuggling"):
    FIXTURES[_attack] = Fixture(
        pointwise, "refusal", invariant_pointwise, noisy_binary, {}, ATTACK_QUIET
    )
for _attack in ("forged_verdict_pairwise", "master_key_pairwise"):
    FIXTURES[_attack] = Fixture(
        pairwise, "preference", invariant_pairwise, noisy_pairwise, {}, PAIRWISE_ATTACK_QUIET
    )
for _bias in BIAS_PROBES:
    FIXTURES[_bias] = Fixture(
        pointwise, "refusal", invariant_pointwise, noisy_binary, {}, BIAS_QUIET
    )
    FIXTURES[f"{_bias}_pairwise"] = Fixture(
        pairwise, "preference", invariant_pairwise, noisy_pairwise, {}, PAIRWISE_BIAS_QUIET
    )


def _probe(name: str) -> Probe:
    return get_probe_class(name)(**FIXTURES[name].params)


def _engine(
    fn: Callable[[Request], Any], store: RunStore | None = None, *, generates: bool = False
) -> Engine:
    judge = CallableJudge(fn, name=getattr(fn, "__name__", "judge"), generates=generates)
    return Engine(judge, store or RunStore(":memory:"), EngineConfig(progress=False))


def _run(
    name: str, fn: Callable[[Request], Any], items: Sequence[Item], seed: int = 0
) -> ProbeResult:
    fixture = FIXTURES[name]
    return run_probe(
        _probe(name),
        items,
        _engine(fn, generates=fixture.generates),
        builtin_rubric(fixture.rubric),
        seed=seed,
    )


def _roles(plan: Plan[Any] | None) -> dict[Any, str]:
    assert plan is not None
    return {role: request.key for role, request in plan.requests.items()}


def _comparable(result: ProbeResult | Mapping[str, Any]) -> str:
    """The result as canonical JSON text (NaN written alike on both sides), usage left out."""
    body = result.to_dict() if isinstance(result, ProbeResult) else dict(result)
    body.pop("usage", None)
    return canonical_json(json.loads(canonical_json(body)))


@pytest.mark.parametrize("name", probe_names())
def test_every_registered_probe_has_a_fixture(name: str) -> None:
    assert name in FIXTURES, f"probe {name!r} is registered but has no fixture here"


def test_the_fixtures_name_only_registered_probes() -> None:
    assert set(FIXTURES) <= set(probe_names())


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_first_plan_is_deterministic_for_a_seed_and_independent_of_item_order(
    name: str,
) -> None:
    fixture = FIXTURES[name]
    items = fixture.items()
    judge = CallableJudge(fixture.noisy, name="noisy", generates=fixture.generates)
    rubric: Rubric = builtin_rubric(fixture.rubric)
    ctx: ProbeContext = probe_context(_probe(name), judge, rubric, seed=3)
    first = _probe(name).plan(items, ctx)
    again = _probe(name).plan(items, ctx)
    reversed_ = _probe(name).plan(items[::-1], ctx)
    assert _roles(first) == _roles(again)
    assert first.design == again.design
    assert _roles(first) == _roles(reversed_)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_request_gets_a_verdict_and_the_complete_plan_does_not_depend_on_item_order(
    name: str,
) -> None:
    items = FIXTURES[name].items()
    forward = _run(name, FIXTURES[name].noisy, items, seed=5)
    backward = _run(name, FIXTURES[name].noisy, items[::-1], seed=5)
    assert forward.usage["missing"] == 0
    assert forward.usage["requests"] == len(set(_roles(forward.plan).values()))
    assert _roles(forward.plan) == _roles(backward.plan)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_judge_invariant_under_the_probe_shows_no_effect_and_fails_nothing(name: str) -> None:
    probe = _probe(name)
    fixture = FIXTURES[name]
    if probe.kind != "invariance":
        assert not fixture.quiet
        pytest.skip(f"{name} is a {probe.kind} probe: it asks no invariance question")
    assert fixture.quiet, f"{name}: name the findings an invariant judge leaves at 0"
    result = _run(name, fixture.invariant, fixture.items())
    quiet = [f for f in result.findings if f.name in fixture.quiet and f.estimate.defined]
    assert {f.name for f in quiet} == set(fixture.quiet)
    assert {f.estimate.estimate for f in quiet} == {0.0}
    assert "fail" not in {f.status for f in result.findings}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_run_analysed_again_from_its_store_gives_the_same_result_without_a_judge(
    name: str, tmp_path: Any
) -> None:
    fixture = FIXTURES[name]
    store = RunStore(tmp_path / "run.sqlite")
    result = run_probe(
        _probe(name),
        fixture.items(),
        _engine(fixture.noisy, store, generates=fixture.generates),
        builtin_rubric(fixture.rubric),
    )
    assert result.plan is not None
    design = result.plan.design
    assert _codec.decode(_codec.loads(_codec.dumps(design))) == design
    run_id = store.start_run({"probes": [name]})
    store.put_result(run_id, name, result.to_dict())
    store.put_plan(run_id, name, result.plan)
    again = reanalyze(store, run_id, name)
    assert _comparable(again) == _comparable(store.results(run_id)[name])
    assert again.usage["calls"] == 0


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_gated_finding_is_paired_by_its_units_or_says_why_it_cannot_be(name: str) -> None:
    """Per finding the probe declares a unit for (every gated one, unless it declares why it
    cannot be paired), its units' statistic is the finding's estimate: a drawn concatenation's
    rate is the mean over the concatenations, an item's rate the mean over the items."""
    fixture = FIXTURES[name]
    store = RunStore(":memory:")
    probe = _probe(name)
    result = run_probe(
        probe,
        fixture.items(),
        _engine(fixture.noisy, store, generates=fixture.generates),
        builtin_rubric(fixture.rubric),
        seed=5,
    )
    assert result.plan is not None
    verdicts = Verdicts(result.plan, store.get_many(sorted(result.plan.keys)))
    units = probe.units(result.plan, verdicts)
    declared, unpaired = probe.finding_units, probe.unpaired_findings
    assert not set(declared) & set(unpaired), f"{name}: a finding both paired and unpaired"
    assert set(declared.values()) <= set(UNIT_KINDS)
    assert all(reason.strip() for reason in unpaired.values())
    if probe.finding_names is not None:
        named = set(probe.finding_names)
        assert set(declared) | set(unpaired) | set(probe.score_unit_findings) <= named
        # a raw rate read against the rerun null pairs on its units; its excess cannot pair
        assert set(probe.excess_findings.values()) <= named & set(unpaired)
    assert set(probe.excess_findings) <= set(declared), f"{name}: a raw rate without units"
    assert {key[0] for key in units} <= set(declared), f"{name}: units of undeclared findings"
    for finding in result.findings:
        gated = finding.threshold is not None
        if not finding.estimate.defined or finding.name in unpaired:
            continue
        if finding.name not in declared:
            assert not gated, (
                f"{name}: gated finding {finding.name!r} declares neither its unit "
                "(finding_units) nor why it cannot be paired (unpaired_findings)"
            )
            continue
        found = units.get(finding_key(finding.name, finding.labels))
        assert found is not None, f"{name}: no units of {finding.name} {dict(finding.labels)}"
        assert found.estimate() == pytest.approx(finding.estimate.estimate, abs=1e-9), (
            f"{name}: {finding.name} {dict(finding.labels)}"
        )


def _failing(judge: Callable[[Request], Any], share: float) -> Callable[[Request], Any]:
    """``judge``, but a share ``share`` of its requests (drawn by their key) come back with no
    usable answer (unparseable)."""

    def fn(request: Request) -> Any:
        if _uniform("fails|" + request.key) < share:
            return None
        return judge(request)

    fn.__name__ = f"failing_{getattr(judge, '__name__', 'judge')}"
    return fn


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_probe_gates_its_failed_calls_beside_its_findings(name: str) -> None:
    """A judge that fails half its calls is failed on ``failed_call_rate``, whatever the probe:
    the half that survived must not carry a clean result."""
    result = _run(name, _failing(FIXTURES[name].noisy, 0.5), FIXTURES[name].items())
    failed = result.finding("failed_call_rate")
    assert failed.threshold is not None
    assert 0.3 < failed.estimate.estimate < 0.7
    assert failed.status == "fail", failed
    assert any("calls failed" in note for note in result.notes)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_finding_left_empty_by_failed_calls_says_so_in_its_reason(name: str) -> None:
    result = _run(name, _failing(FIXTURES[name].noisy, 1.0), FIXTURES[name].items())
    assert result.finding("failed_call_rate").status == "fail"
    for finding in (f for f in result.findings if not f.estimate.defined):
        assert "failed (errored or unparseable)" in (finding.estimate.reason or ""), finding
