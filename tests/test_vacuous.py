"""Invariance read against sensitivity: a judge shown not to move passes no invariance check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe._cli.main import app
from judgeprobe.report.vacuous import read_against_sensitivity


def probe(name: str, kind: str, *statuses: str) -> dict[str, Any]:
    findings = [
        {
            "name": f"f{i}",
            "labels": {},
            "estimate": 0.0,
            "ci": {"low": 0.0, "high": 0.01, "level": 0.95},
            "n": 100,
            "status": status,
            "headline": True,
            "certainty": "clear",
            "reason": None,
            "threshold": {"warn": 0.05, "fail": 0.1, "higher_is_worse": True},
        }
        for i, status in enumerate(statuses)
    ]
    return {"name": name, "kind": kind, "status": statuses[0], "findings": findings, "notes": []}


def test_a_failed_sensitivity_makes_every_passing_invariance_finding_vacuous() -> None:
    probes = [
        probe("sensitivity", "directional", "fail"),
        probe("repetition", "invariance", "pass", "pass", "fail"),
    ]
    read_against_sensitivity(probes)
    repetition = probes[1]
    assert [f["status"] for f in repetition["findings"]] == ["n/a", "n/a", "fail"]
    assert "not shown to move" in repetition["findings"][0]["reason"]
    assert "has not been shown reliable" in repetition["findings"][0]["sentence"]
    assert repetition["status"] == "fail"  # a failure stays a failure
    assert any("Vacuous" in note for note in repetition["notes"])


def test_a_passing_sensitivity_leaves_the_invariance_findings_as_decided() -> None:
    probes = [probe("sensitivity", "directional", "pass"), probe("cluster", "invariance", "pass")]
    read_against_sensitivity(probes)
    assert probes[1]["findings"][0]["status"] == "pass"
    assert probes[1]["notes"] == []


@pytest.mark.parametrize(
    ("directional", "why"), [((), "none ran"), (("inconclusive",), "inconclusive")]
)
def test_without_a_decided_sensitivity_the_card_says_invariance_was_not_read_against_it(
    directional: tuple[str, ...], why: str
) -> None:
    probes = [probe("sensitivity", "directional", s) for s in directional]
    probes.append(probe("cluster", "invariance", "pass"))
    read_against_sensitivity(probes)
    assert probes[-1]["findings"][0]["status"] == "pass"
    assert why in probes[-1]["notes"][0] and "never moves" in probes[-1]["notes"][0]


def test_a_judge_that_answers_one_to_everything_does_not_pass_its_invariance_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reproduction: a constant judge passed every repetition check."""
    (tmp_path / "constant_judge.py").write_text("def one(request):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "audit.yaml"
    config.write_text(
        "judge: python:constant_judge:one\nrubric: harmfulness\ndata: demo\nout: out\n"
        "probes:\n  repetition: {}\n  sensitivity: {human_scale: [1, 5]}\n",
        encoding="utf-8",
    )
    done = CliRunner().invoke(app, ["audit", str(config), "--fail-on", "never"])
    assert done.exit_code == 0, done.output
    card = json.loads((tmp_path / "out" / "card.json").read_text(encoding="utf-8"))
    by_name = {p["name"]: p for p in card["probes"]}
    assert by_name["sensitivity"]["status"] == "fail"
    repetition = [f for f in by_name["repetition"]["findings"] if f["headline"]]
    # its calls all succeeded: only the failed-call rate passes, and it is not about invariance
    assert repetition and all(
        f["status"] != "pass" for f in repetition if f["name"] != "failed_call_rate"
    )
    assert card["summary"]["overall"] != "pass"


def with_base(entry: dict[str, Any], **decisions: int) -> dict[str, Any]:
    return {**entry, "tables": {"base_decisions": decisions}}


def test_base_decisions_in_one_class_make_the_invariance_findings_vacuous_without_sensitivity() -> (
    None
):
    probes = [with_base(probe("repetition", "invariance", "pass", "pass"), safe=40)]
    read_against_sensitivity(probes)
    assert [f["status"] for f in probes[0]["findings"]] == ["n/a", "n/a"]
    assert (
        "every base decision of the audit is 'safe' (40 items)"
        in (probes[0]["findings"][0]["reason"])
    )
    assert probes[0]["status"] == "n/a"


def test_base_decisions_of_both_classes_leave_the_invariance_findings_as_decided() -> None:
    probes = [with_base(probe("cluster", "invariance", "pass"), safe=30, unsafe=10)]
    read_against_sensitivity(probes)
    assert probes[0]["findings"][0]["status"] == "pass"


def test_a_passing_sensitivity_shows_a_one_class_judge_moves() -> None:
    probes = [
        probe("sensitivity", "directional", "pass"),
        with_base(probe("cluster", "invariance", "pass"), safe=40),
    ]
    read_against_sensitivity(probes)
    assert probes[1]["findings"][0]["status"] == "pass"


def test_failed_calls_neither_make_a_judge_insensitive_nor_turn_vacuous() -> None:
    sensitivity = probe("sensitivity", "directional", "pass", "fail")
    sensitivity["findings"][1]["name"] = "failed_call_rate"
    repetition = with_base(probe("repetition", "invariance", "pass", "pass"), safe=40)
    repetition["findings"][1]["name"] = "failed_call_rate"
    probes = [sensitivity, repetition]
    read_against_sensitivity(probes)
    assert [f["status"] for f in repetition["findings"]] == ["pass", "pass"]
    alone = [with_base(probe("repetition", "invariance", "pass", "pass"), safe=40)]
    alone[0]["findings"][1]["name"] = "failed_call_rate"
    read_against_sensitivity(alone)
    assert [f["status"] for f in alone[0]["findings"]] == ["n/a", "pass"]


@pytest.mark.parametrize("data", ["demo", "pyrit:harm/violence_multi_score"])
def test_a_constant_judge_audited_without_sensitivity_does_not_read_pass(
    data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reproduction: a judge answering 1 to everything, ``--probes repetition,cluster``,
    read "PASS: 0 of 32 checks fail, 32 pass"."""
    (tmp_path / "constant_judge.py").write_text("def one(request):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["audit", "--judge", "python:constant_judge:one", "--rubric", "harmfulness"]
    args += ["--data", data, "--probes", "repetition,cluster", "--out", "out"]
    done = CliRunner().invoke(app, [*args, "--fail-on", "never"])
    assert done.exit_code == 0, done.output
    card = json.loads((tmp_path / "out" / "card.json").read_text(encoding="utf-8"))
    assert card["summary"]["overall"] != "pass"
    headline = [f for entry in card["probes"] for f in entry["findings"] if f["headline"]]
    assert not [f for f in headline if f["status"] == "pass" and f["name"] != "failed_call_rate"]
    reasons = [f["reason"] or "" for f in headline if f["status"] == "n/a"]
    assert any("every base decision of the audit is" in r for r in reasons), reasons
