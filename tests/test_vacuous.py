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
    assert repetition and all(f["status"] != "pass" for f in repetition)
    assert card["summary"]["overall"] != "pass"
