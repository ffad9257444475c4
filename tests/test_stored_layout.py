"""Specifications of how a run is stored: one finding schema, frozen results, run metadata apart.

A finding is written once (``Finding.to_dict``) and read once (``read_finding``), by the card and
by a comparison alike; a probe's result is frozen once analysed; a run's own records (its rounds,
the engine's totals, its state, its repairs) live in ``run_meta``, not among the probes' results.
A store written in the layout before (those records as ``_rounds``, ``_engine``, ``_status``,
``_repair`` results, findings without their threshold source) is upgraded when opened and
renders the card it rendered before.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from judgeprobe.audit.family import adjust_family, headline_thresholds
from judgeprobe.engine.store import SCHEMA_VERSION, RunStore
from judgeprobe.engine.store_merge import merge_stores
from judgeprobe.probes.base import Finding, ProbeResult, Threshold
from judgeprobe.report import build_card, validate_card
from judgeprobe.report.stored import read_finding, read_result
from judgeprobe.stats import proportion
from judgeprobe.stats.result import ConfidenceInterval, Estimate, TestResult

FLIP = Threshold(warn=0.05, fail=0.10)
CONFIGURED: dict[str, dict[str, Any]] = {
    "flip_rate": {"warn": 0.02, "fail": 0.2, "higher_is_worse": True}
}
"""The run's configured thresholds: ``flip_rate`` is the config's, ``mean_shift`` the probe's."""
ROUNDS: dict[str, Any] = {
    "method": "m",
    "alpha": 0.05,
    "max_calls": 100,
    "calls": 40,
    "stopped": "decided",
    "stopped_because": "every gated finding is decided",
    "cut_round": None,
    "rounds": [
        {"round": 1, "items": 10, "calls": 40, "level": 0.99, "alpha": 0.01, "gated": 2,
         "decided": 2, "inconclusive": 0, "not_assessable": 0},
    ],
}  # fmt: skip
ENGINE: dict[str, Any] = {"called": 40, "cached": 3, "retries": 1}
STATUS: dict[str, Any] = {"state": "incomplete", "reason": "the call budget ran out"}


def results() -> list[ProbeResult]:
    """Two probes' results as an audit stores them: thresholds applied, the family adjusted."""
    test = TestResult(2.5, 0.01, "greater", "no flips beyond noise", 120)
    repetition = ProbeResult(
        "repetition",
        "invariance",
        {"lengths": [2]},
        [
            Finding("flip_rate", proportion(18, 120), "flips", {"l": "2"}, FLIP, test),
            Finding(
                "flip_rate", Estimate.undefined(7, reason="no trials"), "flips", {"l": "8"}, FLIP
            ),
            Finding("flip_rate", proportion(3, 40), "flips", {"category": "a"}, FLIP),
            Finding(
                "mean_shift",
                Estimate(0.2, ConfidenceInterval(0.1, 0.3, 0.95, "basic bootstrap"), 120),
                "shift",
                threshold=Threshold(warn=0.1, fail=0.5),
            ),
        ],
        usage={"requests": 240, "calls": 200, "cached": 40, "ok": 240},
    )
    agreement = ProbeResult(
        "human_agreement",
        "agreement",
        {},
        [Finding("accuracy", proportion(90, 120), "agrees", threshold=Threshold(0.8, 0.6, False))],
    )
    configured = {name: Threshold(**value) for name, value in CONFIGURED.items()}
    return adjust_family([headline_thresholds(r, configured) for r in (repetition, agreement)])


def config() -> dict[str, Any]:
    return {
        "tool_version": "0.1.0",
        "command": "judgeprobe audit",
        "judge": {"backend": "callable", "name": "fn"},
        "judge_fingerprint": "fp",
        "rubric": {"name": "harmfulness", "hash": "h", "kind": "scale", "template": "t"},
        "data": {"name": "d", "source": "d.csv", "n": 120, "sha256": "s", "skipped": 0},
        "probes": {"repetition": {"lengths": [2]}, "human_agreement": {}},
        "seed": 1,
        "thresholds": CONFIGURED,
        "started_at": "2025-01-01T00:00:00+00:00",
    }


def new_store(path: Path, meta: Mapping[str, Mapping[str, Any]]) -> Path:
    """A run store as an audit writes it now: results, and the run's records in ``run_meta``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with RunStore(path) as store:
        run_id = store.start_run(config())
        for result in results():
            store.put_result(run_id, result.probe, result.to_dict())
        for name, body in meta.items():
            store.put_run_meta(run_id, name, body)
        store.finish_run(run_id, "complete")
    return path


def old_store(path: Path, pseudo: Mapping[str, Mapping[str, Any]]) -> Path:
    """A run store as judgeprobe wrote it before schema 5: the run's records as results named
    ``_rounds``, ``_engine``, ``_status``..., and findings without their threshold source."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with RunStore(path) as store:
        run_id = store.start_run(config())
        for result in results():
            body = result.to_dict()
            for finding in body["findings"]:
                del finding["threshold_source"]
            store.put_result(run_id, result.probe, body)
        for name, record in pseudo.items():
            store.put_result(run_id, name, record)
        store.finish_run(run_id, "complete")
    with closing(sqlite3.connect(path)) as db:
        db.execute("DROP TABLE run_meta")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        db.commit()
    return path


def timeless(card: Mapping[str, Any]) -> dict[str, Any]:
    """``card`` without what depends on when it was written."""
    out: dict[str, Any] = json.loads(json.dumps(card))
    out["run"].pop("finished_at")
    return out


# -- one finding schema ---------------------------------------------------------------------------
def test_an_estimate_a_test_and_a_threshold_read_back_what_they_wrote() -> None:
    rate = proportion(18, 120)
    assert Estimate.from_dict(rate.to_dict()) == rate
    undefined = Estimate.from_dict(Estimate.undefined(7, reason="no trials").to_dict())
    assert math.isnan(undefined.estimate) and math.isnan(undefined.ci.low)
    assert (undefined.n, undefined.reason, undefined.defined) == (7, "no trials", False)
    test = TestResult(2.5, 0.01, "greater", "no flips", 120)
    assert TestResult.from_dict(test.to_dict()) == test
    for threshold in (FLIP, Threshold(warn=None, fail=0.6, higher_is_worse=False)):
        assert Threshold.from_dict(threshold.to_dict()) == threshold


def test_a_finding_reads_the_same_from_the_store_and_from_the_card(tmp_path: Path) -> None:
    path = new_store(tmp_path / "run.sqlite", {"status": {"state": "complete", "reason": None}})
    card = build_card(path)
    validate_card(card)
    with RunStore(path) as store:
        stored = store.results(1)
    for result in results():
        entries = next(p for p in card["probes"] if p["name"] == result.probe)["findings"]
        from_store = read_result(stored[result.probe]).findings
        for finding, entry, kept in zip(result.findings, entries, from_store, strict=True):
            for read in (read_finding(entry), kept):  # the comparison's reader is the card's
                estimate = read.estimate_of()
                if finding.estimate.defined:
                    assert estimate == finding.estimate
                else:
                    assert (estimate.defined, estimate.n, estimate.reason) == (
                        False,
                        finding.estimate.n,
                        finding.estimate.reason,
                    )
                assert read.threshold_of() == finding.threshold
                assert read.status == finding.status
            source = None if finding.threshold is None else finding.threshold_source
            assert entry["threshold_source"] == source


def test_the_threshold_source_is_stored_by_the_audit_that_applied_it() -> None:
    bodies = {r.probe: r.to_dict() for r in results()}
    sources = {
        (f["name"], tuple(f["labels"].items())): f["threshold_source"]
        for f in bodies["repetition"]["findings"]
    }
    assert sources == {
        ("flip_rate", (("l", "2"),)): "config",
        ("flip_rate", (("l", "8"),)): "config",
        ("flip_rate", (("category", "a"),)): "config",  # configured: the slice is gated too
        ("mean_shift", ()): "probe",
    }
    (accuracy,) = bodies["human_agreement"]["findings"]
    assert accuracy["threshold_source"] == "probe"


# -- a frozen result ------------------------------------------------------------------------------
def test_a_probe_result_cannot_be_changed_after_analysis() -> None:
    result = ProbeResult("repetition", "invariance", {}, [Finding("x", proportion(1, 10), "x")])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.findings = []  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.usage = {"calls": 1}  # type: ignore[misc]


def test_thresholds_and_the_family_make_new_results_and_leave_the_analysed_one_alone() -> None:
    analysed = ProbeResult(
        "repetition", "invariance", {}, [Finding("flip_rate", proportion(40, 100), "flips")]
    )
    judged = headline_thresholds(analysed, {"flip_rate": FLIP})
    (adjusted,) = adjust_family([judged])
    assert analysed.findings[0].threshold is None
    assert judged.findings[0].threshold == FLIP and judged.findings[0].family is None
    assert adjusted.findings[0].family is not None
    assert adjusted.findings[0].family.family_size == 1


# -- run metadata in its own table ----------------------------------------------------------------
def test_the_runs_records_are_kept_apart_from_the_probes_results(tmp_path: Path) -> None:
    meta = {"rounds": ROUNDS, "engine": ENGINE, "status": STATUS}
    path = new_store(tmp_path / "run.sqlite", meta)
    with RunStore(path) as store:
        assert list(store.results(1)) == ["repetition", "human_agreement"]
        assert store.run_meta(1) == meta
    card = build_card(path)
    assert (card["run"]["state"], card["run"]["reason"]) == ("incomplete", STATUS["reason"])
    assert card["usage"]["engine"] == ENGINE
    assert card["rounds"]["rounds"][0]["calls"] == 40


def test_a_merged_store_keeps_each_runs_records(tmp_path: Path) -> None:
    meta = {"engine": ENGINE, "status": STATUS}
    first = new_store(tmp_path / "a" / "run.sqlite", meta)
    merged = tmp_path / "merged.sqlite"
    merge_stores(first, first, merged)
    with RunStore(merged) as store:
        assert store.run_ids() == [1]
        assert store.run_meta(1) == meta


# -- stores written before ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "records",
    [
        {"rounds": ROUNDS, "engine": ENGINE, "status": STATUS},
        {"engine": {"totals": ENGINE}, "status": {"state": "complete", "reason": None}},
        {},
    ],
    ids=["rounds", "engine-totals", "nothing"],
)
def test_a_store_in_the_layout_before_renders_the_card_it_rendered(
    tmp_path: Path, records: Mapping[str, Mapping[str, Any]]
) -> None:
    old = old_store(tmp_path / "old" / "run.sqlite", {f"_{k}": v for k, v in records.items()})
    new = new_store(tmp_path / "new" / "run.sqlite", records)
    card = build_card(old)
    validate_card(card)
    assert timeless(card) == timeless(build_card(new))
    with RunStore(old) as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert list(store.results(1)) == ["repetition", "human_agreement"]
        assert store.run_meta(1) == records
    assert timeless(build_card(old)) == timeless(card)  # opened again: nothing more to move


def test_the_upgrade_gives_the_threshold_source_the_card_worked_out_before(tmp_path: Path) -> None:
    old = old_store(tmp_path / "run.sqlite", {"_status": {"state": "complete", "reason": None}})
    with RunStore(old) as store:
        body = store.results(1)["repetition"]
    sources = [(f["name"], f["threshold_source"]) for f in body["findings"]]
    assert sources == [
        ("flip_rate", "config"),
        ("flip_rate", "config"),
        ("flip_rate", "config"),
        ("mean_shift", "probe"),
    ]


def test_the_oldest_stores_state_inside_the_engine_totals_becomes_the_runs_state(
    tmp_path: Path,
) -> None:
    engine = {**ENGINE, "_status": STATUS}
    old = old_store(tmp_path / "run.sqlite", {"_engine": engine})
    card = build_card(old)
    assert (card["run"]["state"], card["run"]["reason"]) == ("incomplete", STATUS["reason"])
    assert card["usage"]["engine"] == ENGINE  # the totals, without the state
    with RunStore(old) as store:
        assert store.run_meta(1) == {"engine": engine, "status": STATUS}


def test_a_repair_summary_stored_as_a_result_moves_to_the_runs_records(tmp_path: Path) -> None:
    summary: dict[str, Sequence[Any]] = {"repairs": []}
    old = old_store(tmp_path / "run.sqlite", {"_repair": summary})
    with RunStore(old) as store:
        assert store.run_meta(1) == {"repair": summary}
        assert "_repair" not in store.results(1)
