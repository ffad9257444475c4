"""``judgeprobe compare`` on the agreement probes: statistics over items, paired by item.

Two planted judges score the same 60 items on the toxicity rubric (a probability). Both read
the item's human label and one shared per-item noise; the *sharp* judge weighs the label more,
so it ranks the toxic items higher (a larger ROC AUC) and the two judges' scores are strongly
correlated. Every agreement finding (the AUC, the gated margins over the best trivial baseline,
kappa, Spearman, calibration) is then a paired difference: per bootstrap resample of the shared
items, each run's statistic is recomputed on the same items, so the shared noise cancels and the
interval is narrower than the one made from the two runs' own intervals. The human-agreement
probe's kappa of a pairwise judge against human votes is paired the same way, per item's table
of comparisons.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.compare import compare_runs, validate_comparison
from judgeprobe.core.request import Request
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from pairwise_runs import good_choice, pairwise_store
from test_compare import audit, differences

N_ITEMS = 60
PROBES = {"agreement": {"human_scale": [1, 5], "n_resamples": 200}}
"""The agreement probe alone, with the test data's labels 1-5 mapped onto the rubric's [0, 1]."""


def _number(request: Request) -> int:
    return int(request.field_map["response"].split()[1])


def _toxic(request: Request) -> float:
    """1.0 when the item's human label (1 + number % 5) is 3 or more, which the toxicity rubric
    maps to 0.5 or more: toxic."""
    return float(1 + _number(request) % 5 >= 3)


def _noise(request: Request) -> float:
    """A uniform number in [0, 1) fixed by the item, the same for both judges."""
    digest = hashlib.sha256(str(_number(request)).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def sharp_probability(request: Request) -> float:
    return 0.35 * _toxic(request) + 0.65 * _noise(request)


def blunt_probability(request: Request) -> float:
    return 0.1 * _toxic(request) + 0.9 * _noise(request)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The blunt judge, the sharp judge, and the blunt judge again, on the same items."""
    root = tmp_path_factory.mktemp("compare-agreement")
    return {
        name: audit(root / name, score, name=name, rows=N_ITEMS, rubric="toxicity", probes=PROBES)
        for name, score in (
            ("blunt", blunt_probability),
            ("sharp", sharp_probability),
            ("blunt-again", blunt_probability),
        )
    }


def by_finding(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {d["finding"]: d for d in differences(document) if d["probe"] == "agreement"}


def reported(store: Path) -> dict[str, Mapping[str, Any]]:
    """The agreement probe's findings as the run's card reports them."""
    card = build_card(store)
    section = next(s for s in card["probes"] if s["name"] == "agreement")
    return {f["name"]: f for f in section["findings"]}


def test_an_auc_gap_is_paired_and_is_the_difference_of_the_two_reported_aucs(
    stores: dict[str, Path],
) -> None:
    document = compare_runs([stores["blunt"], stores["sharp"]])
    found = by_finding(document)
    blunt, sharp = reported(stores["blunt"]), reported(stores["sharp"])

    assert sharp["roc_auc"]["estimate"] - blunt["roc_auc"]["estimate"] > 0.2  # the planted gap
    for name in ("roc_auc", "judge_minus_best_baseline_auc", "pr_auc", "spearman", "kappa"):
        d = found[name]
        assert d["method"] == "paired" and d["unpaired_reason"] is None, name
        assert d["difference"]["n"] == N_ITEMS
        expected = sharp[name]["estimate"] - blunt[name]["estimate"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12), name
    margin = found["judge_minus_best_baseline_auc"]
    assert margin["labels"] == blunt["judge_minus_best_baseline_auc"]["labels"]
    # the baseline is the data's, the same in both runs: the margins differ as the AUCs do
    assert margin["difference"]["estimate"] == pytest.approx(
        found["roc_auc"]["difference"]["estimate"], abs=1e-12
    )
    assert margin["gated"] and margin["word"] == "better"
    assert "paired bootstrap" in margin["difference"]["ci"]["method"]
    validate_comparison(document)


def test_every_agreement_finding_is_paired(stores: dict[str, Path]) -> None:
    document = compare_runs([stores["blunt"], stores["sharp"]])

    found = by_finding(document)
    assert "expected_calibration_error" in found  # the judge gives a probability
    # the failed-call rate is over the calls, whose keys hold each judge's fingerprint
    assert found.pop("failed_call_rate")["method"] == "unpaired"
    assert {name: d["method"] for name, d in found.items()} == dict.fromkeys(found, "paired")


def test_the_paired_interval_is_narrower_than_the_unpaired_one_for_correlated_judges(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    """The card files of the same two runs give the unpaired difference (from the intervals)."""
    cards = []
    for name in ("blunt", "sharp"):
        cards.append(tmp_path / f"{name}.json")
        cards[-1].write_text(json.dumps(build_card(stores[name])), encoding="utf-8")
    paired = by_finding(compare_runs([stores["blunt"], stores["sharp"]]))
    unpaired = by_finding(compare_runs(cards))

    for name in ("roc_auc", "judge_minus_best_baseline_auc", "spearman"):
        a, b = paired[name]["difference"], unpaired[name]["difference"]
        assert unpaired[name]["method"] == "unpaired"
        assert a["estimate"] == pytest.approx(b["estimate"], abs=1e-12)
        width = a["ci"]["high"] - a["ci"]["low"]
        assert width < 0.75 * (b["ci"]["high"] - b["ci"]["low"]), name


def test_identical_judges_differ_by_zero_with_no_evidence(stores: dict[str, Path]) -> None:
    document = compare_runs([stores["blunt"], stores["blunt-again"]])

    for name, d in by_finding(document).items():
        if name == "failed_call_rate":  # over the calls, not the items: never paired
            continue
        assert d["method"] == "paired", name
        assert d["difference"]["estimate"] == pytest.approx(0.0, abs=1e-12), name
        assert d["word"] in ("no evidence", "n/a"), name
    assert by_finding(document)["judge_minus_best_baseline_auc"]["word"] == "no evidence"


def test_runs_without_per_item_units_stay_unpaired_saying_why(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    cards = []
    for name in ("blunt", "sharp"):
        cards.append(tmp_path / f"{name}.json")
        cards[-1].write_text(json.dumps(build_card(stores[name])), encoding="utf-8")

    found = by_finding(compare_runs(cards))
    found.pop("failed_call_rate")  # unpaired whatever the source, for its own reason

    assert found and {d["method"] for d in found.values()} == {"unpaired"}
    for d in found.values():
        assert d["unpaired_reason"].startswith("no per-item outcomes of both runs (a card file")


# -- the human-agreement probe: a pairwise judge against human votes ---------------------------
def votes_audit(folder: Path, choose: Any, *, name: str) -> Path:
    """A human-agreement audit of 40 pairs; the human's vote is the good response, A or B."""
    rows = []
    for i in range(40):
        good, weak = f"good answer {i:02d}", f"weak answer {i:02d}"
        first = i % 3 != 0
        rows.append(
            {
                "id": f"p{i:02d}",
                "prompt": f"question {i}",
                "response_a": good if first else weak,
                "response_b": weak if first else good,
                "winner": "A" if first else "B",
            }
        )
    probes = {"human_agreement": {"n_resamples": 200}}
    return pairwise_store(folder, rows, probes, choose, name=name)


def sloppy_choice(request: Request) -> str:
    """:func:`good_choice`, but "A" on every fourth question."""
    if int(request.field_map["prompt"].split()[1]) % 4 == 0:
        return "A"
    return good_choice(request)


def test_the_judges_kappa_against_human_votes_is_paired_by_item(tmp_path: Path) -> None:
    good = votes_audit(tmp_path / "good", good_choice, name="good")
    sloppy = votes_audit(tmp_path / "sloppy", sloppy_choice, name="sloppy")
    again = votes_audit(tmp_path / "again", good_choice, name="good")

    found = {d["finding"]: d for d in differences(compare_runs([good, sloppy]))}
    for name in ("judge_human_vote_kappa", "judge_human_majority_kappa"):
        d = found[name]
        assert d["method"] == "paired" and d["gated"], name
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert expected < -0.1  # the sloppy judge agrees less
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12), name
        assert d["word"] == "worse", name
    assert found["judge_human_vote_agreement"]["method"] == "paired"
    # one human vote per pair: no two human votes to compare, so no unit to pair
    assert found["human_human_kappa"]["method"] == "unpaired"
    for d in differences(compare_runs([good, again])):
        if d["method"] == "paired":
            assert d["difference"]["estimate"] == pytest.approx(0.0, abs=1e-12)
        assert d["word"] in ("no evidence", "n/a")


# -- several raters: the judge against every vote and the leave-one-rater-out ceiling ----------
def raters_audit(folder: Path, score: Any, *, name: str) -> Path:
    """An agreement audit of 45 items, each labelled 1-5 by three raters who split on a third."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    rows = []
    for i in range(45):
        label = 1 + 4 * (i % 2)  # harmless (1) or harmful (5)
        third = 6 - label if i % 3 == 0 else label  # the third rater disagrees on every third
        rows.append(
            {
                "id": f"r{i:02d}",
                "prompt": f"Question {i}?",
                "response": f"Answer {i} of level {label}.",
                "r1": label,
                "r2": label,
                "r3": third,
            }
        )
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "data_options": {"columns": {"labels": "r1,r2,r3"}},
            "out": str(folder / "out"),
            "probes": {"agreement": {"human_scale": [1, 5], "n_resamples": 200}},
            "seed": 3,
            "fail_on": "never",
        }
    )
    return run_audit(
        config, judge=CallableJudge(score, name=name, version="1"), write_card=False
    ).store_path


def level_score(request: Request) -> float:
    """The level the response states: the majority's label."""
    return float(request.field_map["response"].split()[-1].rstrip("."))


def contrary_on_fives(request: Request) -> float:
    """:func:`level_score`, but harmless (1) on every fifth item."""
    number = int(request.field_map["response"].split()[1])
    return 1.0 if number % 5 == 0 else level_score(request)


def test_the_rater_findings_are_paired_by_item(tmp_path: Path) -> None:
    level = raters_audit(tmp_path / "level", level_score, name="level")
    contrary = raters_audit(tmp_path / "contrary", contrary_on_fives, name="contrary")

    document = compare_runs([level, contrary])
    found = by_finding(document)
    strata = {
        d["labels"]["stratum"]: d
        for d in differences(document)
        if d["finding"] == "stratum_accuracy"
    }

    assert set(strata) == {"unanimous", "split"}
    for d in [found[n] for n in ("judge_vote_accuracy", "judge_loo_accuracy")] + [*strata.values()]:
        assert d["method"] == "paired", d["finding"]
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert expected < 0, d["finding"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12), d["finding"]
    ceiling = found["human_loo_accuracy"]  # the raters' own: the same in both runs
    assert ceiling["method"] == "paired" and ceiling["difference"]["estimate"] == 0.0
    alpha = [d for d in differences(document) if d["labels"].get("raters")]
    assert {d["labels"]["raters"] for d in alpha} == {"judge+humans", "humans"}
    assert all(d["method"] == "paired" for d in alpha)
