"""Plans, the Verdicts view, design JSON and plans in the run store."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from judgeprobe._util import codec as _codec
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts, check_role
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.data.items import HumanLabel, PointwiseItem
from judgeprobe.engine import RunStore
from judgeprobe.errors import StoreError
from judgeprobe.rubrics import builtin_rubric

HARM = builtin_rubric("harmfulness")
PREFERENCE = builtin_rubric("preference")
CTX = ProbeContext("judge", HARM, seed=7)


def request(text: str, rubric=HARM) -> Request:  # type: ignore[no-untyped-def]
    fields = {name: text for name in rubric.inputs}
    return Request.make("judge", rubric, fields)


def plan_of(*texts: str) -> Plan[tuple[str, ...]]:
    return Plan("probe", CTX, texts, {("base", t): request(t) for t in texts})


# -- Plan ------------------------------------------------------------------------------------------
def test_a_plan_is_frozen_and_its_requests_cannot_be_changed() -> None:
    plan = plan_of("a")
    with pytest.raises(TypeError, match="does not support item assignment"):
        plan.requests[("base", "b")] = request("b")  # type: ignore[index]


def test_extend_adds_a_stage_and_refuses_a_role_planned_before() -> None:
    plan = plan_of("a")
    later = plan.extend({("concat", "a", 2): request("a a")}, design=("a", "more"))
    assert (later.stage, later.design, len(later.requests)) == (2, ("a", "more"), 2)
    assert plan.stage == 1 and len(plan.requests) == 1
    with pytest.raises(ValueError, match=r"roles planned twice: \[\('base', 'a'\)\]"):
        later.extend({("base", "a"): request("a")})


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ((), "a role is a tuple that starts with its kind"),
        ((1, "a"), "a role is a tuple that starts with its kind"),
        (("base", 1.5), "role parts must be str or int, got \\[1.5\\]"),
        (("base", True), "role parts must be str or int, got \\[True\\]"),
    ],
)
def test_a_role_is_a_kind_then_str_and_int_parts(role: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_role(role)  # type: ignore[arg-type]


def test_two_roles_may_share_one_request_which_counts_once_in_the_keys() -> None:
    plan = Plan("probe", CTX, (), {("base", "a"): request("a"), ("again", "a"): request("a")})
    assert len(plan.requests) == 2 and len(plan.keys) == 1


# -- Verdicts --------------------------------------------------------------------------------------
def test_the_view_reads_scores_of_ok_verdicts_only_and_counts_missing_ones() -> None:
    plan = plan_of("ok", "bad", "missing")
    known = {
        request("ok").key: Verdict.scored(4.0, label="4"),
        request("bad").key: Verdict(VerdictStatus.UNPARSEABLE, raw_text="?"),
    }
    view = Verdicts(plan, known)
    assert [view.score(("base", t)) for t in ("ok", "bad", "missing")] == [4.0, None, None]
    assert [view.status(("base", t)) for t in ("ok", "bad", "missing")] == [
        "ok",
        "unparseable",
        "missing",
    ]
    tally = view.tally(plan.requests)
    assert (tally["ok"], tally["unparseable"], tally["missing"], tally["error"]) == (1, 1, 1, 0)
    assert not view.complete(plan.requests)
    assert view.decision(("base", "ok")) == "unsafe"
    assert view.decision(("base", "bad")) is None


def test_a_role_the_plan_lacks_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="plan 'probe' has no role \\('base', 'z'\\)"):
        Verdicts(plan_of("a"), {}).get(("base", "z"))


@pytest.mark.parametrize(
    ("score", "label", "decision"),
    [(0.7, None, "A"), (0.2, None, "B"), (0.5, None, "tie"), (0.0, "A", "A"), (1.0, "tie", "tie")],
)
def test_one_rule_decides_a_pairwise_verdict_its_label_first_then_its_score(
    score: float, label: str | None, decision: str
) -> None:
    pair = Request.make("judge", PREFERENCE, {"prompt": "p", "response_a": "a", "response_b": "b"})
    plan = Plan("probe", ProbeContext("judge", PREFERENCE), (), {("pair", "x"): pair})
    view = Verdicts(plan, {pair.key: Verdict.scored(score, label=label)})
    assert view.decision(("pair", "x")) == decision


# -- design JSON -----------------------------------------------------------------------------------
def test_designs_of_items_rubrics_tuples_and_tuple_keyed_maps_round_trip() -> None:
    item = PointwiseItem("a", "P", "R", labels=(HumanLabel(1.0, rater="r"),), metadata={"k": 1})
    design = {"items": (item,), ("cluster", 2): [(0, 1)], "rubric": HARM, "nan": frozenset({1})}
    assert _codec.decode(_codec.loads(_codec.dumps(design))) == design


def test_design_json_never_builds_a_class_outside_judgeprobe() -> None:
    text = '{"$dataclass": "subprocess:Popen", "fields": {"args": "true"}}'
    with pytest.raises(_codec.CodecError, match="names a class outside judgeprobe"):
        _codec.decode(_codec.loads(text))
    with pytest.raises(_codec.CodecError, match="only judgeprobe's own classes"):
        _codec.dumps(Outside(1))
    with pytest.raises(_codec.CodecError, match="cannot encode a PosixPath"):
        _codec.dumps(Path("x"))


@dataclasses.dataclass(frozen=True)
class Outside:
    value: int


# -- plans in the run store ------------------------------------------------------------------------
def test_a_stored_plan_reads_back_equal_with_its_requests_by_role(tmp_path: Path) -> None:
    plan = plan_of("a", "b").extend({("concat", "ab", 2, 0): request("a\n\nb")})
    with RunStore(tmp_path / "run.sqlite") as store:
        run_id = store.start_run({})
        store.put_plan(run_id, "probe", plan)
    with RunStore(tmp_path / "run.sqlite") as store:
        again = store.plan(run_id, "probe")
        assert store.plan(run_id, "other") is None
    assert again is not None
    assert (again.probe, again.stage, again.design, again.context) == (
        "probe",
        2,
        ("a", "b"),
        CTX,
    )
    assert {r: q.key for r, q in again.requests.items()} == {
        r: q.key for r, q in plan.requests.items()
    }


def test_a_plan_whose_texts_hold_a_secret_looking_url_reads_back_under_its_keys(
    tmp_path: Path,
) -> None:
    """The store redacts what looks like a secret from every text it writes, the fields of a
    planned request included; the redacted request keeps the key it was judged under."""
    text = "connect with postgres://admin:hunter2hunter2@db.example.com/app"
    plan = plan_of(text, "plain")
    with RunStore(tmp_path / "run.sqlite") as store:
        run_id = store.start_run({})
        store.put_plan(run_id, "probe", plan)
        again = store.plan(run_id, "probe")
    assert again is not None
    assert {r: q.key for r, q in again.requests.items()} == {
        r: q.key for r, q in plan.requests.items()
    }
    assert "hunter2" not in again.requests[("base", text)].field_map["response"]


def test_a_stored_role_whose_request_was_altered_is_a_store_error(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run.sqlite") as store:
        run_id = store.start_run({})
        store.put_plan(run_id, "probe", plan_of("a"))
    with sqlite3.connect(tmp_path / "run.sqlite") as db:
        db.execute('UPDATE plan_roles SET fields = \'[["prompt","x"],["response","x"]]\'')
    with (
        RunStore(tmp_path / "run.sqlite") as store,
        pytest.raises(StoreError, match=r'role \["base","a"\].*its request hashes to'),
    ):
        store.plan(run_id, "probe")
