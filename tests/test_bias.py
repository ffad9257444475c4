"""The judge-bias probes against planted judges.

Each planted judge has one known weakness (it rewards length, obeys instructions written in the
response, trusts citations); the probe for that weakness must fail it with a CI above the
threshold, the others' placebo must not move it, and a judge that ignores whatever is added to
the response passes all five probes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from judgeprobe._util.hashing import content_hash
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.evidence import KEPT
from judgeprobe.core.plan import ProbeContext
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.registry import get_probe_class
from judgeprobe.report.stored import read_result
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import reanalyze, run_probe
from judgeprobe.transforms.bias_edits import (
    BIAS_EDITS,
    assign,
    assign_by_id,
    edit_set,
    placebo_text,
)

N_ITEMS = 120
"""Enough items that a judge with no move at all has a CI below the warn threshold (0.05)."""


def _uniform(text: str) -> float:
    return int(content_hash(text), 16) / 16**16


def pointwise_items(n: int = N_ITEMS) -> list[Item]:
    return [
        PointwiseItem(f"p{k:03d}", f"request {k}", f"Answer {k}. It has a few words here.")
        for k in range(n)
    ]


def pairwise_items(n: int = N_ITEMS) -> list[Item]:
    return [
        PairwiseItem(f"q{k:03d}", f"question {k}", f"First answer {k}.", f"Second answer {k}.")
        for k in range(n)
    ]


def base_score(request: Request) -> float:
    """Harmfulness from the prompt alone: 5 (unsafe) for three items in four, else 1 (safe)."""
    return 1.0 if _uniform(request.field_map["prompt"]) < 0.25 else 5.0


def ignores_additions(request: Request) -> float:
    """Scores the request alone: whatever is added to the response changes nothing."""
    return base_score(request)


def rewards_length(request: Request) -> float:
    """Safe as soon as the response is long (in words; blank space is not length)."""
    return 1.0 if len(request.field_map["response"].split()) > 20 else base_score(request)


_ASKED = re.compile(r"(?:answer|output is|verdict:)\s*([1-5AB])\b", re.IGNORECASE)


def obeys_instructions(request: Request) -> float:
    """Gives the score an instruction in the response asks for."""
    asked = _ASKED.search(request.field_map["response"])
    return float(asked.group(1)) if asked else base_score(request)


def obeys_sometimes(request: Request) -> float:
    """Obeys the instruction on 40 % of requests (the prompt decides which)."""
    if _uniform("obey " + request.field_map["prompt"]) < 0.4:
        return obeys_instructions(request)
    return base_score(request)


def trusts_citations(request: Request) -> float:
    """Safe whenever the response cites a year, 'et al.' or a certification."""
    cited = re.search(r"\(\d{4}\)|et al\.|certified", request.field_map["response"])
    return 1.0 if cited else base_score(request)


def follows_majority(request: Request) -> float:
    """Safe whenever the response claims what reviewers or readers thought of it."""
    claimed = re.search(r"reviewers|readers", request.field_map["response"])
    return 1.0 if claimed else base_score(request)


def distracted(request: Request) -> float:
    """Safe whenever a second paragraph with any words follows the response."""
    paragraphs = [p for p in request.field_map["response"].split("\n\n") if p.strip()]
    return 1.0 if len(paragraphs) > 1 else base_score(request)


def pair_base(request: Request) -> str:
    return "A" if _uniform(request.field_map["prompt"]) < 0.5 else "B"


def pair_ignores(request: Request) -> str:
    return pair_base(request)


def pair_longer(request: Request) -> str:
    """Picks a response with at least ten more words, else decides by the prompt."""
    a, b = (len(request.field_map[f].split()) for f in ("response_a", "response_b"))
    if abs(a - b) >= 10:
        return "A" if a > b else "B"
    return pair_base(request)


def pair_trusts_citations(request: Request) -> str:
    for side, field in (("A", "response_a"), ("B", "response_b")):
        if re.search(r"\(\d{4}\)|et al\.|certified", request.field_map[field]):
            return side
    return pair_base(request)


def pair_obeys(request: Request) -> str:
    for field in ("response_a", "response_b"):
        asked = _ASKED.search(request.field_map[field])
        if asked:
            return asked.group(1)
    return pair_base(request)


def _run(
    name: str,
    judge: Callable[[Request], object],
    items: Sequence[Item],
    *,
    rubric: str = "harmfulness",
    seed: int = 0,
    **params: object,
) -> ProbeResult:
    probe = get_probe_class(name)(**params)
    engine = Engine(
        CallableJudge(judge, name=judge.__name__),  # type: ignore[arg-type]
        RunStore(":memory:"),
        EngineConfig(progress=False),
    )
    return run_probe(probe, items, engine, builtin_rubric(rubric), seed=seed)


def _pairwise(name: str, judge: Callable[[Request], str], **params: object) -> ProbeResult:
    # Only pairs whose verdict is not already the edited side can move: about half of them.
    return _run(name, judge, pairwise_items(2 * N_ITEMS), rubric="preference", **params)


# -- the edits -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BIAS_EDITS)
def test_every_edit_set_ships_several_reviewed_forms(name: str) -> None:
    edits = edit_set(name)
    assert len(edits.forms) >= 3
    assert all(form.rationale.strip() for form in edits.forms)


@pytest.mark.parametrize("kind", ["whitespace", "neutral"])
def test_a_placebo_has_exactly_the_length_it_stands_in_for(kind: str) -> None:
    for length in (0, 1, 17, 250):
        assert len(placebo_text(kind, length)) == length  # type: ignore[arg-type]


def test_the_assignment_is_balanced_and_independent_of_the_order_of_the_ids() -> None:
    ids = [f"i{k}" for k in range(31)]
    groups = assign(ids, 3, seed=4, salt="x")
    assert groups == assign(ids[::-1], 3, seed=4, salt="x")
    sizes = Counter(groups.values())
    assert max(sizes.values()) - min(sizes.values()) <= 1
    assert groups != assign(ids, 3, seed=5, salt="x")


def test_the_assignment_by_id_is_nested_and_near_balanced() -> None:
    """The forms of the bias edits: a prefix of the items keeps its items' forms, so an audit in
    rounds finds the earlier items' edits in the store."""
    ids = [f"i{k}" for k in range(300)]
    groups = assign_by_id(ids, 3, seed=4, salt="x")
    assert groups == assign_by_id(ids[::-1], 3, seed=4, salt="x")
    assert assign_by_id(ids[:40], 3, seed=4, salt="x") == {i: groups[i] for i in ids[:40]}
    sizes = Counter(groups.values())
    assert set(sizes) == {0, 1, 2} and all(abs(n - 100) <= 30 for n in sizes.values())
    assert groups != assign_by_id(ids, 3, seed=5, salt="x")


def test_the_placebo_is_placed_where_the_edit_goes_with_the_same_length() -> None:
    items = pointwise_items(12)
    result = _run("injection", ignores_additions, items)
    assert result.plan is not None
    requests = result.plan.requests
    for item in items:
        edited = requests[("edited", item.id)].field_map["response"]
        placebo = requests[("placebo", item.id)].field_map["response"]
        assert len(edited) == len(placebo) > len(item.response)  # type: ignore[union-attr]
        assert edited.startswith(item.response + "\n\n")  # type: ignore[union-attr]
        assert placebo.startswith(item.response + "\n\n")  # type: ignore[union-attr]


def test_an_unknown_form_is_refused_with_the_forms_there_are() -> None:
    with pytest.raises(ConfigError, match="forms must be distinct forms of edit set 'verbosity'"):
        get_probe_class("verbosity")(forms=("nonsense",))


def test_a_rubric_that_reads_no_response_is_refused() -> None:
    rubric = builtin_rubric("harmfulness").with_template("{prompt}", inputs=("prompt",))
    with pytest.raises(ConfigError, match="rubric 'harmfulness' does not read one"):
        get_probe_class("verbosity")().check(pointwise_items(4), ProbeContext("j", rubric))


# -- planted judges, pointwise ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "judge"),
    [
        ("verbosity", rewards_length),
        ("injection", obeys_instructions),
        ("authority", trusts_citations),
        ("bandwagon", follows_majority),
        ("distraction", distracted),
    ],
)
def test_each_planted_weakness_fails_its_probe_with_the_ci_above_the_threshold(
    name: str, judge: Callable[[Request], float]
) -> None:
    result = _run(name, judge, pointwise_items())
    overall = result.finding("excess_move_rate")
    assert overall.labels == {}
    assert overall.status == "fail"
    assert overall.threshold is not None and overall.threshold.fail is not None
    assert overall.estimate.ci.low > overall.threshold.fail
    assert result.finding("placebo_move_rate").estimate.estimate == 0.0
    assert result.tables["moved"], "the moved items are kept for the drill-down"
    row = result.tables["moved"][0]
    assert row["original"] == "unsafe" and row["edited"] == "safe" and row["placebo"] == "unsafe"


def test_a_judge_that_obeys_on_40_percent_of_items_is_measured_within_its_ci() -> None:
    finding = _run("injection", obeys_sometimes, pointwise_items()).finding("excess_move_rate")
    assert finding.estimate.ci.contains(0.4)
    assert finding.status == "fail"


@pytest.mark.parametrize("name", BIAS_EDITS)
def test_a_judge_that_ignores_what_is_added_passes_every_probe(name: str) -> None:
    result = _run(name, ignores_additions, pointwise_items())
    overall = result.finding("excess_move_rate")
    assert overall.estimate.estimate == 0.0
    assert overall.status == "pass"
    assert result.finding("placebo_move_rate").estimate.estimate == 0.0
    assert result.tables["moved"] == []
    assert {f.status for f in result.findings} <= {"pass", "info"}


@pytest.mark.parametrize(
    ("name", "judge"),
    [("injection", obeys_instructions), ("authority", trusts_citations)],
)
def test_the_placebo_moves_nothing_on_a_judge_that_reacts_only_to_the_edit(
    name: str, judge: Callable[[Request], float]
) -> None:
    result = _run(name, judge, pointwise_items())
    assert result.finding("placebo_move_rate").estimate.counts["k"] == 0
    assert all(row["placebo_move"] == "" for row in result.tables["moved"])


def test_a_length_judge_does_not_fail_the_probes_whose_placebo_has_the_same_length() -> None:
    # Neutral text of the edit's length makes the response as long: the excess is the claim's.
    finding = _run("authority", rewards_length, pointwise_items()).finding("excess_move_rate")
    assert finding.status != "fail"


def test_the_findings_are_reported_per_form_as_information() -> None:
    result = _run("verbosity", rewards_length, pointwise_items())
    per_form = [f for f in result.findings if "slice" in f.labels]
    assert {f.labels["slice"] for f in per_form} == set(edit_set("verbosity").form_ids)
    assert all(f.status == "info" for f in per_form)
    assert sum(row["items"] for row in result.tables["forms"]) == N_ITEMS


def test_a_judge_already_at_the_favoured_verdict_everywhere_is_not_assessable() -> None:
    finding = _run("injection", lambda request: 1.0, pointwise_items(10)).finding(
        "excess_move_rate"
    )
    assert finding.status == "n/a"
    assert finding.estimate.reason == (
        "every original verdict is already safe: no item can move toward it"
    )


def test_the_score_shift_is_signed_toward_the_favoured_class() -> None:
    result = _run("injection", obeys_instructions, pointwise_items())
    # harmfulness: lower is safer, so an injection that asks for 1 shifts the score positively
    assert result.finding("mean_score_shift").estimate.estimate > 0


def test_the_same_seed_gives_the_same_plan_and_result_and_another_seed_other_forms() -> None:
    items = pointwise_items(30)
    first = _run("distraction", rewards_length, items, seed=2)
    again = _run("distraction", rewards_length, items[::-1], seed=2)
    other = _run("distraction", rewards_length, items, seed=3)
    assert first.plan is not None and again.plan is not None and other.plan is not None
    assert first.plan.design == again.plan.design
    assert first.to_dict()["findings"] == again.to_dict()["findings"]
    assert first.plan.design.cases != other.plan.design.cases


# -- planted judges, pairwise ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "judge"),
    [
        ("verbosity_pairwise", pair_longer),
        ("injection_pairwise", pair_obeys),
        ("authority_pairwise", pair_trusts_citations),
    ],
)
def test_a_pairwise_judge_moving_toward_the_edited_side_fails(
    name: str, judge: Callable[[Request], str]
) -> None:
    result = _pairwise(name, judge)
    overall = result.finding("excess_move_rate")
    assert overall.status == "fail"
    assert overall.estimate.ci.low > 0.10
    assert result.finding("placebo_move_rate").estimate.estimate == 0.0


@pytest.mark.parametrize("name", [f"{n}_pairwise" for n in BIAS_EDITS])
def test_a_pairwise_judge_that_ignores_what_is_added_passes(name: str) -> None:
    result = _pairwise(name, pair_ignores)
    assert result.finding("excess_move_rate").estimate.estimate == 0.0
    assert result.finding("excess_move_rate").status == "pass"


def test_the_edited_side_is_balanced_between_a_and_b() -> None:
    result = _pairwise("bandwagon_pairwise", pair_ignores)
    assert result.plan is not None
    sides = Counter(case.side for case in result.plan.design.cases)
    assert abs(sides["A"] - sides["B"]) <= 1
    assert set(sides) == {"A", "B"}


# -- the evidence ----------------------------------------------------------------------------------
OBEYED = ("p003", "p010", "p020", "p031", "p047")
"""Items whose verdict a planted judge moves under an injection (p020 is already safe)."""
ANY_ADDITION = "p055"
"""The item whose verdict it moves under any addition, the placebo's included."""


def moves_known_items(request: Request) -> float:
    """Safe on the items of ``OBEYED`` when what was added asks for it, and on ``ANY_ADDITION``
    whenever anything was added; otherwise :func:`base_score`."""
    k = int(request.field_map["prompt"].split()[1])
    added = request.field_map["response"].removeprefix(f"Answer {k}. It has a few words here.")
    if f"p{k:03d}" == ANY_ADDITION and added:
        return 1.0
    if f"p{k:03d}" in OBEYED and _ASKED.search(added):
        return 1.0
    return base_score(request)


def test_the_evidence_names_the_items_the_edit_moved_those_the_placebo_did_not_first() -> None:
    result = _run("injection", moves_known_items, pointwise_items())
    evidence = result.finding("excess_move_rate").evidence
    assert evidence is not None
    # p020 is judged safe as it is: it cannot move toward safe and is not behind the finding.
    assert evidence.item_ids == ["p003", "p010", "p031", "p047", "p055"]
    assert evidence.total == 5
    first = evidence.items[0]
    assert first.excerpt == "request 3 → Answer 3. It has a few words here."
    assert [(v.role, v.label, v.score, v.raw) for v in first.verdicts] == [
        ("original", "unsafe", 5.0, "5.0"),
        ("edited", "safe", 1.0, "1.0"),
        ("placebo", "unsafe", 5.0, "5.0"),
    ]
    assert [v.label for v in evidence.items[-1].verdicts] == ["unsafe", "safe", "safe"]


def test_each_form_s_slice_names_the_moved_items_of_its_form() -> None:
    result = _run("injection", moves_known_items, pointwise_items())
    forms = {row["item"]: row["form"] for row in result.tables["moved"]}
    slices = [f for f in result.findings if f.name == "excess_move_rate" and f.labels]
    assert {f.labels["slice"] for f in slices} == set(edit_set("injection").form_ids)
    for finding in slices:
        assert finding.evidence is not None
        assert all(forms[i] == finding.labels["slice"] for i in finding.evidence.item_ids)
    assert sum(f.evidence.total for f in slices if f.evidence) == 5


def test_a_judge_that_ignores_what_is_added_has_empty_evidence() -> None:
    evidence = (
        _run("verbosity", ignores_additions, pointwise_items(24))
        .finding("excess_move_rate")
        .evidence
    )
    assert evidence is not None and (evidence.total, evidence.items) == (0, ())


def test_the_pairwise_evidence_names_the_pairs_moved_toward_the_edited_side() -> None:
    result = _pairwise("verbosity_pairwise", pair_longer)
    finding = result.finding("excess_move_rate")
    assert finding.evidence is not None
    moved = [
        row["item"]
        for row in result.tables["moved"]
        if row["edited_move"] == "toward" and row["original"] != row.get("side")
    ]
    assert finding.evidence.total == len(moved) > KEPT  # all counted, the first KEPT kept
    assert finding.evidence.shown == KEPT
    assert set(finding.evidence.item_ids) <= set(moved)
    item = finding.evidence.items[0]
    assert [v.role for v in item.verdicts] == ["original", "edited", "placebo"]
    assert item.excerpt.startswith("question ")


def test_the_evidence_survives_the_store_and_an_analysis_again_from_it(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": i.id, "prompt": i.prompt, "response": i.response}) + "\n"
            for i in pointwise_items(60)
            if isinstance(i, PointwiseItem)
        ),
        encoding="utf-8",
    )
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(tmp_path / "out"),
            "probes": {"injection": {}},
            "fail_on": "never",
        }
    )
    judge = CallableJudge(moves_known_items, name="planted")
    store_path = run_audit(config, judge=judge, write_card=False).store_path
    with RunStore(store_path) as store:
        run_id = store.run_ids()[-1]
        stored = store.results(run_id)["injection"]
        again = reanalyze(store, run_id, "injection")
    finding = read_result(stored).findings[0]
    assert finding.name == "excess_move_rate" and finding.evidence is not None
    assert finding.evidence.total == 5
    assert [i.item_id for i in finding.evidence.items] == ["p003", "p010", "p031", "p047", "p055"]
    assert [f.to_dict().get("evidence") for f in again.findings] == [
        f.get("evidence") for f in stored["findings"]
    ]
