"""The card's verdict is decided or says it is not, and no status rests on no evidence.

PASS means every gated finding was shown to pass; a point estimate without an interval, or an
interval over too few units to resample, decides nothing; a finding derived from its probe's
others is information, so the family's error rate is spent once per question. Each judge here
is a planted Python function, audited through the command line or the Python API.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import data_root
from judgeprobe._cli.main import app
from judgeprobe.audit.demo import profanity_demo_config
from judgeprobe.audit.run import run_audit
from judgeprobe.probes import Finding, Threshold
from judgeprobe.report import build_card, exit_code, overall_status
from judgeprobe.report.overview import verdict_sentence
from judgeprobe.report.statuses import verdict
from judgeprobe.stats import Estimate, clustered_proportion
from judgeprobe.stats.result import ConfidenceInterval

DATA = data_root()
JUDGES = """
import random

_coin = random.Random(0)


def coin(request):
    return float(_coin.choice([1.0, 5.0]))


def first(request):
    return "A"
"""


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the planted judges' module, on the path and the working folder."""
    (tmp_path / "planted.py").write_text(JUDGES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGEPROBE_DATA", str(DATA))
    return tmp_path


def audit(*args: str) -> tuple[int, str, dict[str, Any]]:
    """Run ``judgeprobe audit ARGS --out out``: exit code, output and the card."""
    done = CliRunner().invoke(app, ["audit", *args, "--out", "out"])
    card = json.loads(Path("out/card.json").read_text(encoding="utf-8"))
    return done.exit_code, done.output, card


def gated(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for p in card["probes"] for f in p["findings"] if f["headline"]]


# -- the verdict over gated findings -----------------------------------------------------------
@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["pass", "pass"], "pass"),
        (["pass", "inconclusive"], "inconclusive"),
        (["pass", "n/a"], "inconclusive"),  # a pass beside an unassessed check is not shown
        (["inconclusive", "fail"], "fail"),
        (["pass", "warn", "inconclusive"], "warn"),
        (["n/a", "n/a"], "n/a"),
        ([], "n/a"),
    ],
)
def test_the_verdict_passes_only_when_every_gated_finding_is_shown_to_pass(
    statuses: list[str], expected: str
) -> None:
    assert verdict(statuses) == expected


def test_a_point_estimate_without_an_interval_decides_nothing() -> None:
    # a permutation probe left with one usable tuple: a distance of 0 and no interval
    lone = Estimate(0.0, ConfidenceInterval(math.nan, math.nan, 0.95, "needs 2 tuples"), 1)
    threshold = Threshold(warn=0.2, fail=0.4)
    assert Finding("wasserstein", lone, "w1", {}, threshold).status == "inconclusive"
    far = Estimate(4.0, lone.ci, 1)
    assert Finding("wasserstein", far, "w1", {}, threshold).status == "inconclusive"


def test_a_bootstrap_over_a_handful_of_clusters_becomes_an_exact_interval_over_them() -> None:
    one_question = clustered_proportion([True, False], ["q1", "q1"])
    assert one_question.ci.method == "exact over clusters"
    assert one_question.n == 1 and one_question.counts["n"] == 2  # n counts the clusters
    assert one_question.ci.low < 0.05 and one_question.ci.high > 0.95
    many = clustered_proportion([True, False] * 12, [f"q{i // 2}" for i in range(24)])
    assert many.ci.method == "cluster bootstrap percentile" and many.n == 24


# -- reproductions, through the command line ---------------------------------------------------
def test_one_item_under_a_coin_judge_is_undecided_not_failed(planted: Path) -> None:
    code, output, card = audit(
        "--judge", "python:planted:coin", "--data", "demo", "--rubric", "harmfulness",
        "--probes", "repetition", "--limit", "1", "--fail-on", "warn",
    )  # fmt: skip
    assert code == 0, output
    assert card["summary"]["overall"] == "inconclusive"
    assert {f["status"] for f in gated(card)} == {"inconclusive"}
    no_interval = [f for f in gated(card) if f["ci"]["low"] is None]
    assert no_interval and all(
        "no confidence interval" in f["sentence"] and "decides nothing" in f["sentence"]
        for f in no_interval
    )
    assert card["summary"]["headline"].startswith(f"INCONCLUSIVE: of {len(gated(card))} findings")
    summary = [line for line in output.splitlines() if not line.startswith("round ")]
    assert summary[0].startswith(card["summary"]["headline"][:40])  # after the rounds' lines
    strict = CliRunner().invoke(app, ["card", "out/run.sqlite", "--fail-on", "inconclusive"])
    assert strict.exit_code == 1, strict.output


@pytest.mark.skipif(not (DATA / "pandalm_testset").is_dir(), reason="PandaLM data missing")
def test_two_pairs_of_one_question_are_not_a_position_bias_fail(planted: Path) -> None:
    code, output, card = audit(
        "--judge", "python:planted:first", "--data", "pandalm", "--rubric", "preference",
        "--probes", "position", "--limit", "2",
    )  # fmt: skip
    assert code == 0, output
    findings = {f["name"]: f for f in card["probes"][0]["findings"]}
    flips, excess = findings["swap_flip_rate"], findings["swap_flip_excess"]
    assert (flips["n"], flips["ci"]["method"]) == (1, "exact over clusters")
    # the gated finding is the flip rate's excess over the rerun null: as undecided as its rate
    assert excess["status"] == "inconclusive"
    # the raw rate and its parts are information, outside the family
    for name in ("swap_flip_rate", "first_position_bias", "second_position_bias"):
        assert (findings[name]["status"], findings[name]["family"]) == ("info", None)
    assert excess["family"]["family_size"] == 2  # beside the failed-call rate
    assert card["summary"]["overall"] == "inconclusive"


def test_a_derived_finding_the_config_names_is_gated_again(planted: Path) -> None:
    pairs = planted / "pairs.jsonl"
    rows = [
        {"id": f"p{i}", "prompt": f"q{i}", "response_a": "x", "response_b": "y", "winner": "A"}
        for i in range(12)
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "judge": "python:planted:first",
        "rubric": "preference",
        "data": str(pairs),
        "data_options": {"kind": "pairwise"},
        "probes": {"position": {}},
        "thresholds": {"first_position_bias": {"warn": 0.1, "fail": 0.2}},
        "fail_on": "never",
    }
    Path("audit.yaml").write_text(json.dumps(config))
    done = CliRunner().invoke(app, ["audit", "audit.yaml", "--out", "out"])
    assert done.exit_code == 0, done.output
    card = json.loads(Path("out/card.json").read_text())
    findings = {f["name"]: f for f in card["probes"][0]["findings"]}
    assert findings["first_position_bias"]["status"] == "fail"
    assert findings["first_position_bias"]["family"]["family_size"] == 3  # and failed calls
    assert findings["second_position_bias"]["status"] == "info"


def test_policy_invariance_on_two_items_does_not_pass(planted: Path) -> None:
    code, output, card = audit(
        "--judge", "python:planted:coin", "--data", "demo", "--rubric", "harmfulness",
        "--probes", "policy_invariance", "--limit", "2",
    )  # fmt: skip
    assert code == 0, output
    assert card["summary"]["overall"] != "pass"
    assert "pass" not in {f["status"] for f in gated(card) if f["n"] <= 2}
    spreads = [f for f in gated(card) if f["name"] == "accuracy_spread"]
    for spread in spreads:
        assert spread["status"] == "inconclusive"
        assert "at least 10 needed to resample" in spread["sentence"]


# -- the demo's profanity card, through the API the demo uses ----------------------------------
def test_the_profanity_demo_card_is_not_a_pass_while_most_checks_are_undecided(
    tmp_path: Path,
) -> None:
    # the demo's probes but agreement (which fails this judge against a prompt-length rule) and
    # sensitivity (which fails it: it flags none of the harmful demo responses, so its passes would
    # be vacuous): every other gated check of the classifier is a pass or undecided at 40 items
    config = profanity_demo_config(out=str(tmp_path / "profanity"))
    config = config.model_copy(
        update={
            "probes": {
                k: v for k, v in config.probes.items() if k not in ("agreement", "sensitivity")
            }
        }
    )
    card = build_card(run_audit(config).store_path)
    statuses = [f["status"] for f in gated(card)]
    assert statuses.count("inconclusive") > len(statuses) / 2 and "pass" in statuses
    assert not {"warn", "fail"} & set(statuses)
    assert overall_status(card) == card["summary"]["overall"] == "inconclusive"
    assert card["summary"]["headline"].startswith("INCONCLUSIVE: ")
    assert "more units would likely decide" in card["summary"]["headline"]
    assert verdict_sentence(card).split(";")[0] == card["summary"]["headline"].split(";")[0]
    assert exit_code(card, fail_on="warn") == 0
    assert exit_code(card, fail_on="inconclusive") == 1
