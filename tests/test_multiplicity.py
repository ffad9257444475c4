"""The audit decides its gated findings together: slices inform, Holm controls the family.

An audit with 40 gated findings decided one by one at 95% fails on noise; these tests pin that
the family's warn and fail claims are adjusted together (Holm's step-down), that a strong effect
still fails, that slices of a measure (per category, turn, stratum) are information unless the
config names them, and that the card states the method and the family size.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from audited import audited_store
from conftest import data_root
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.family import adjust_family, headline_thresholds, is_slice
from judgeprobe.audit.run import run_audit
from judgeprobe.data.items import PairwiseItem, Vote
from judgeprobe.engine.store import RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.probes.base import Finding, Probe, ProbeResult, Threshold
from judgeprobe.probes.pairwise.human_agreement import HumanAgreementProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.report import build_card, validate_card
from judgeprobe.rubrics import get_rubric
from judgeprobe.runs.probe import analyze_offline
from judgeprobe.stats.multiplicity import holm, pvalue_from_ci
from judgeprobe.stats.proportions import proportion

DATA = data_root()
FLIP = Threshold(warn=None, fail=0.1, higher_is_worse=True)
"""A flip rate that fails at 0.1 or above (no warn band), as a probe's default would."""


def flip_finding(flips: int, n: int = 400, *, index: int = 0) -> Finding:
    """A gated flip-rate finding with a Wilson interval, one of a family."""
    return Finding(f"flip_rate_{index}", proportion(flips, n), "flips of one transform", {}, FLIP)


def family_of(findings: list[Finding]) -> ProbeResult:
    result = ProbeResult(probe="noise", kind="invariance", params={}, findings=findings)
    (adjusted,) = adjust_family([result])
    return adjusted


# -- the statistics -------------------------------------------------------------------------------
def test_holm_matches_the_step_down_adjustment_worked_by_hand() -> None:
    # sorted: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> made monotone: 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []


def test_a_ci_whose_end_sits_on_the_bound_gives_half_the_complement_of_its_level() -> None:
    for higher_is_worse, (low, high), bound in ((True, (0.2, 0.5), 0.2), (False, (0.1, 0.4), 0.4)):
        p = pvalue_from_ci(0.3, low, high, bound=bound, level=0.9, higher_is_worse=higher_is_worse)
        assert p == pytest.approx(0.05)


def test_a_lopsided_ci_is_read_on_the_side_that_faces_the_bound() -> None:
    # a rate near 0: the CI reaches far up and barely down; a bound above is judged by the top
    p_above = pvalue_from_ci(0.02, 0.01, 0.2, bound=0.2, level=0.95, higher_is_worse=False)
    assert p_above == pytest.approx(0.025)
    assert pvalue_from_ci(0.3, 0.3, 0.3, bound=0.2, level=0.95, higher_is_worse=True) == 0.0
    assert pvalue_from_ci(0.1, 0.1, 0.1, bound=0.2, level=0.95, higher_is_worse=True) == 1.0


# -- (a) noise does not fail a large family; (b) a strong effect still does -----------------------
def test_forty_findings_that_each_narrowly_exclude_the_threshold_are_not_failed_together() -> None:
    # 52 flips of 400: Wilson CI [0.1005, 0.167], just above the fail threshold 0.1
    findings = [flip_finding(52, index=k) for k in range(40)]
    assert {f.status for f in findings} == {"fail"}  # each one alone fails
    result = family_of(findings)
    assert {f.status for f in result.findings} == {"inconclusive"}
    family = result.findings[0].family
    assert family is not None
    assert (family.method, family.family_size, family.bound, family.source) == (
        "holm",
        40,
        "fail",
        "ci",
    )
    assert family.pvalue == pytest.approx(0.0225, abs=0.003)
    assert family.adjusted_pvalue >= family.alpha == pytest.approx(0.05)
    assert result.findings[0].unadjusted_status == "fail"


def test_a_noisy_judge_at_the_threshold_fails_nothing_once_its_forty_findings_are_adjusted() -> (
    None
):
    # a judge whose true flip rate is the threshold; seed 4 draws four counts whose CIs exclude it
    draws = np.random.default_rng(4).binomial(400, 0.1, size=40)
    findings = [flip_finding(int(k), index=i) for i, k in enumerate(draws)]
    assert sum(f.status == "fail" for f in findings) == 4
    assert not any(f.status == "fail" for f in family_of(findings).findings)


def test_one_strong_planted_effect_still_fails_among_forty_noisy_findings() -> None:
    draws = np.random.default_rng(4).binomial(400, 0.1, size=39)
    findings = [flip_finding(int(k), index=i) for i, k in enumerate(draws)]
    findings.append(flip_finding(200, index=39))  # a flip rate of 0.5
    statuses = [f.status for f in family_of(findings).findings]
    assert statuses[-1] == "fail"
    assert statuses.count("fail") == 1


def test_a_probe_test_that_finds_less_than_the_ci_speaks_for_the_finding() -> None:
    from judgeprobe.stats.result import TestResult

    weak = TestResult(statistic=1.0, pvalue=0.2, alternative="greater", null="p = 0.1", n=400)
    finding = Finding("flip_rate", proportion(200, 400), "flips", {}, FLIP, weak)
    (adjusted,) = family_of([finding]).findings
    assert adjusted.family is not None
    assert (adjusted.family.source, adjusted.family.pvalue) == ("test", 0.2)


def test_a_family_of_one_decides_as_the_finding_alone_and_pass_stays_pass() -> None:
    (alone,) = family_of([flip_finding(52)]).findings
    assert alone.status == "fail"
    (passing,) = family_of([flip_finding(10)]).findings
    assert passing.status == "pass"
    assert passing.family is not None and passing.family.family_size == 1


# -- (c) slices are information -------------------------------------------------------------------
def _sliced_items() -> list[PairwiseItem]:
    """60 pairs in two categories; the recorded judge agrees with the humans on half of them."""
    items = []
    for k in range(60):
        human = "A" if k % 2 else "B"
        judged = human if k % 4 < 2 else ("B" if human == "A" else "A")
        items.append(
            PairwiseItem(
                id=f"pair-{k}",
                prompt=f"question {k}",
                response_a="one",
                response_b="two",
                human_votes=(Vote(human, "h1"), Vote(human, "h2")),
                judge_votes={"recorded": (Vote(judged),)},
                category="math" if k < 30 else "writing",
            )
        )
    return items


@pytest.mark.parametrize(
    "probe",
    [
        HumanAgreementProbe(judge_source="recorded"),
        LengthNullProbe(judge_source="recorded"),
        PositionProbe(judge_source="recorded"),
    ],
    ids=lambda p: p.name,
)
def test_the_pairwise_probes_report_their_slices_as_information(probe: Probe) -> None:
    result = analyze_offline(probe, _sliced_items(), get_rubric("preference"))
    sliced = [f for f in result.findings if is_slice(f)]
    assert {f.status for f in sliced} <= {"info", "n/a"}
    gated = [f for f in result.findings if f.threshold is not None]
    assert all(not is_slice(f) for f in gated)
    if probe.name != "position":  # the recorded votes carry no swap protocol: no finding
        assert {f.labels.get("category") for f in sliced} == {"math", "writing"}
        assert gated


def test_the_audit_does_not_gate_a_slice_by_its_probe_default() -> None:
    """A plugin probe that puts its headline threshold on its slices: the audit drops it there."""
    findings = [
        Finding("flip_rate", proportion(60, 100), "all items", {}, FLIP),
        Finding("flip_rate", proportion(30, 50), "one category", {"category": "math"}, FLIP),
        Finding("flip_rate", proportion(9, 20), "one turn", {"turn": "2"}, FLIP),
    ]
    result = ProbeResult(probe="plugin", kind="invariance", params={}, findings=findings)
    judged = headline_thresholds(result, {})
    assert [f.status for f in judged.findings] == ["fail", "info", "info"]


def test_a_configured_threshold_gates_the_slices_it_names() -> None:
    result = analyze_offline(
        HumanAgreementProbe(judge_source="recorded"), _sliced_items(), get_rubric("preference")
    )
    strict = Threshold(warn=None, fail=0.9, higher_is_worse=False)
    judged = headline_thresholds(result, {"human_agreement.judge_human_majority_agreement": strict})
    named = [f for f in judged.findings if f.name == "judge_human_majority_agreement"]
    assert len(named) == 3 and all(f.threshold == strict for f in named)
    others = [f for f in judged.findings if is_slice(f) and f.name != named[0].name]
    assert all(f.threshold is None for f in others)


def test_a_recorded_pandalm_audit_stores_its_slices_as_information(tmp_path: Path) -> None:
    folder = DATA / "pandalm_testset"
    if not folder.exists():
        pytest.skip(f"dataset not found: {folder} (set JUDGEPROBE_DATA)")
    config = parse_config(
        {
            "judge": "profanity",
            "rubric": "preference",
            "data": str(folder / "testset-v1.json"),
            "limit": 300,
            "probes": {"human_agreement": {"judge_source": "gpt-3.5-turbo"}},
            "out": str(tmp_path),
        }
    )
    outcome = run_audit(config, judge=CallableJudge(_never_called, name="never"), progress=False)
    with RunStore(outcome.store_path) as store:
        body = store.results(outcome.run_id)["human_agreement"]
    sliced = [f for f in body["findings"] if {"category", "turn"} & set(f["labels"])]
    assert sliced and {f["status"] for f in sliced} <= {"info", "n/a"}
    gated = [f for f in body["findings"] if f["threshold"] is not None]
    assert gated and all(f["family"]["family_size"] == len(gated) for f in gated)


def _never_called(request: object) -> float:
    raise AssertionError("a recorded audit must not call the judge")


# -- (d) the card names the method and the family size --------------------------------------------
def test_the_card_states_the_method_and_the_family_size(tmp_path: Path) -> None:
    card = build_card(audited_store(tmp_path))
    validate_card(card)
    assert card["card_version"] == "1.10"
    gated = [
        f
        for p in card["probes"]
        for f in p["findings"]
        if f["threshold"] is not None and f["status"] != "n/a"
    ]
    family = card["summary"]["multiplicity"]
    assert family == {"method": "holm", "family_size": len(gated), "alpha": 0.05}
    assert (
        f"The {len(gated)} gated findings are decided together (Holm's step-down"
        in (card["summary"]["headline"])
    )
    assert all(f["family"]["family_size"] == len(gated) for f in gated)


def test_a_store_written_before_the_adjustment_still_makes_a_card_without_one(
    tmp_path: Path,
) -> None:
    path = audited_store(tmp_path)
    with RunStore(path) as store:
        run_id = store.run_ids()[-1]
        for name, body in store.results(run_id).items():
            if not name.startswith("_"):
                for finding in body["findings"]:
                    finding.pop("family", None)
                store.put_result(run_id, name, json.loads(json.dumps(body)))
    card = build_card(path)
    validate_card(card)
    assert card["summary"]["multiplicity"] is None
    assert "decided together" not in card["summary"]["headline"]
    assert all(f["family"] is None for p in card["probes"] for f in p["findings"])


def test_the_sentence_of_an_adjusted_away_fail_says_why_it_is_inconclusive() -> None:
    from judgeprobe.report.findings import finding_entry
    from judgeprobe.report.stored import StoredFinding

    (finding,) = family_of([flip_finding(52, index=k) for k in range(40)]).findings[:1]
    entry = finding_entry(StoredFinding.model_validate(finding.to_dict()))
    assert entry["status"] == "inconclusive"
    assert "its own evidence says fail, but not once the 40 gated findings" in entry["sentence"]
    assert not math.isnan(entry["family"]["adjusted_pvalue"])
