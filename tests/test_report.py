"""Specifications of the Judge Card: its content, statuses, schema, escaping, figures and files."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from audited import CONFIGURED, audited_store, hostile_store
from judgeprobe.audit.config import parse_config
from judgeprobe.engine.store import SCHEMA_VERSION, RunStore
from judgeprobe.errors import ConfigError, StoreError
from judgeprobe.probes.base import FigureSpec, Finding, ProbeKind, ProbeResult, Threshold
from judgeprobe.report import (
    CARD_VERSION,
    CardValidationError,
    build_card,
    card_schema,
    escape_markdown,
    exit_code,
    nothing_assessed,
    overall_status,
    render_html,
    render_markdown,
    validate_card,
    write_card,
)
from judgeprobe.report.figures import FigureDataError, draw_figure, figure_bytes
from judgeprobe.report.html import CONTENT_SECURITY_POLICY
from judgeprobe.report.markdown import render_appendix
from judgeprobe.report.redact import REDACTED, redact
from judgeprobe.report.text import WORD_JOINER
from judgeprobe.stats.result import ConfidenceInterval, Estimate, TestResult

HOSTILE = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    '"><svg onload="window.__pwned=3">',
    "</td></tr></table><script>window.__pwned=4</script>",
    '<a href="javascript:window.__pwned=5">click</a>',
    "[click me](javascript:window.__pwned=6)",
    "![pixel](https://example.invalid/p.png)",
    "<https://example.invalid/autolink>",
    "| cell | break |",
    "```\nfence break\n```",
    "# heading\n\n- list",
    "{{ 7 * 7 }}",
    "$\\frac{1}{0$ mathtext",
    "\u202eevil bidi",
    "L" * 5000,
]
FIGURE_KINDS = ("distributions", "scatter", "counts", "heatmap", "intervals")


# -- fixtures -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run store of a real (small, deterministic) repetition audit."""
    return audited_store(tmp_path_factory.mktemp("example"))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_store(tmp_path_factory.mktemp("hostile"), HOSTILE)


@pytest.fixture(scope="module")
def example_files(example: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The audit's card written once (drawing figures is the slow part of a card)."""
    return write_card(example, tmp_path_factory.mktemp("example-card"))


@pytest.fixture(scope="module")
def hostile_texts(hostile: Path) -> dict[str, str]:
    """The hostile card as JSON, Markdown and HTML text."""
    card = build_card(hostile)
    markdown = render_markdown(card) + "\n" + render_appendix(card)
    return {"json": json.dumps(card), "md": markdown, "html": render_html(card)}


def estimate(value: float, low: float, high: float, n: int = 100) -> Estimate:
    return Estimate(value, ConfidenceInterval(low, high, 0.95, "wilson"), n, {"n": n})


def store_with(
    path: Path,
    results: Sequence[ProbeResult],
    *,
    config: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    finish: str = "complete",
) -> Path:
    """A run store holding one run with ``results``, as the audit writes it."""
    base: dict[str, Any] = {
        "tool_version": "0.1.0",
        "command": "judgeprobe audit --seed 1",
        "judge": {"backend": "callable", "name": "fn", "version": "1", "params": {}},
        "judge_fingerprint": "fp",
        "rubric": {"name": "harmfulness", "hash": "h", "kind": "scale", "template": "t"},
        "data": {"name": "d", "source": "d.csv", "n": 10, "sha256": "s", "skipped": 0},
        "probes": {r.probe: dict(r.params) for r in results},
        "seed": 1,
        "started_at": "2025-01-01T00:00:00+00:00",
    }
    base.update(config or {})
    with RunStore(path) as store:
        run_id = store.start_run(base)
        for result in results:
            store.put_result(run_id, result.probe, result.to_dict())
        store.put_run_meta(run_id, "engine", {"totals": {"called": 3, "cached": 1}})
        store.put_run_meta(run_id, "status", dict(status or {"state": "complete", "reason": None}))
        store.finish_run(run_id, finish)
    return path


def probe(
    findings: Sequence[Finding],
    *,
    name: str = "repetition",
    kind: ProbeKind = "invariance",
    figures: Sequence[FigureSpec] = (),
    usage: Mapping[str, int] | None = None,
) -> ProbeResult:
    return ProbeResult(
        name, kind, {"lengths": [2]}, list(findings), list(figures), usage=dict(usage or {})
    )


FLIP = Threshold(warn=0.05, fail=0.10)


def flip(value: float, low: float, high: float, **labels: str) -> Finding:
    return Finding("flip_rate", estimate(value, low, high), "flips", labels, FLIP)


def findings_of(card: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for entry in card["probes"]:
        yield from entry["findings"]


class Elements(HTMLParser):
    """Every start tag of an HTML document with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


# -- what the card says ---------------------------------------------------------------------------
def test_card_of_example_store_matches_the_shipped_schema(example: Path) -> None:
    card = build_card(example)
    validate_card(card)
    assert card["card_version"] == CARD_VERSION


def test_shipped_schema_is_a_valid_draft_2020_12_schema_with_the_card_version() -> None:
    from jsonschema import Draft202012Validator

    schema = card_schema()
    Draft202012Validator.check_schema(schema)
    assert re.fullmatch(schema["properties"]["card_version"]["pattern"], CARD_VERSION)


def test_schema_rejects_a_card_with_an_unknown_status(example: Path) -> None:
    card = build_card(example)
    card["probes"][0]["findings"][0]["status"] = "maybe"
    with pytest.raises(CardValidationError, match="maybe"):
        validate_card(card)


def test_card_says_what_was_tested(example: Path) -> None:
    tested = build_card(example)["tested"]
    judge = tested["judge"]
    assert re.fullmatch(r"[0-9a-f]{16}", judge["fingerprint"])
    assert (judge["model"], judge["backend"]) == ("hashed-judge", "callable")
    assert judge["description"]["version"] == "1"
    assert tested["rubric"]["name"] == "harmfulness"
    assert len(tested["rubric"]["hash"]) == 16
    assert "{response}" in tested["rubric"]["template"]
    data = tested["data"]
    assert (data["name"], data["n"], data["skipped"]) == ("items", 12, 0)
    assert Path(data["source"]).name == "items.jsonl"
    assert tested["probes"]["repetition"]["counts"] == [1, 2, 8]
    assert tested["seed"] == 7
    assert tested["tool_version"]
    assert tested["command"] == "judgeprobe audit audit.yaml"
    assert tested["thresholds"] == {
        name: {**value, "source": "config"} for name, value in CONFIGURED.items()
    }


def test_each_probe_brings_its_findings_figures_and_call_counts(example: Path) -> None:
    card = build_card(example)
    (repetition,) = card["probes"]
    modes = ("P*l,R", "P,R*l", "P*l,R*l")
    names = ("wasserstein_to_l1", "mean_shift", "decision_flip_rate", "decision_flip_excess")
    per_mode = [f for f in repetition["findings"] if "mode" in f["labels"]]
    assert [(f["labels"]["mode"], f["labels"]["l"], f["name"]) for f in per_mode] == [
        (mode, count, name) for mode in modes for count in ("2", "8") for name in names
    ]
    # the judge's own rerun noise and its failed calls, once for the probe
    assert [f["name"] for f in repetition["findings"] if "mode" not in f["labels"]] == [
        "rerun_flip_rate",
        "rerun_change_rate",
        "failed_call_rate",
    ]
    assert [f["file"] for f in repetition["figures"]] == [
        "figures/repetition-repetition-prompt",
        "figures/repetition-repetition-response",
        "figures/repetition-repetition-both",
    ]
    usage = repetition["usage"]
    # 12 base items and 12 per (mode, l); the inputs repeated 8 times that exceed the judge's
    # context window are skipped: every one of P,R*8 and P*8,R*8, and 4 of P*8,R
    # the variants and the rerun null's trial-1 requests (those of over-long inputs skipped too)
    assert (usage["requests"], usage["calls"], usage["skipped"], usage["ok"]) == (136, 93, 43, 93)
    assert card["usage"]["engine"]["called"] == usage["calls"]
    assert card["usage"]["probes"]["skipped"] == 43


def test_probes_are_grouped_by_kind_agreement_with_humans_first(tmp_path: Path) -> None:
    info = Finding("accuracy", estimate(0.8, 0.7, 0.9), "acc")
    results = [
        probe([info], name="length", kind="null"),
        probe([info], name="repetition", kind="invariance"),
        probe([info], name="agree", kind="agreement"),
        probe([info], name="swap", kind="invariance"),
    ]
    card = build_card(store_with(tmp_path / "s.sqlite", results))
    assert [p["name"] for p in card["probes"]] == ["agree", "repetition", "swap", "length"]
    assert [k["kind"] for k in card["summary"]["kinds"]] == ["agreement", "invariance", "null"]


# -- statuses and thresholds ----------------------------------------------------------------------
def test_status_is_judged_against_the_threshold_shown_with_it(tmp_path: Path) -> None:
    store = store_with(tmp_path / "s.sqlite", [probe([flip(0.14, 0.11, 0.18)])])
    (finding,) = findings_of(build_card(store))
    assert finding["status"] == "fail"
    assert finding["threshold"] == {"warn": 0.05, "fail": 0.10, "higher_is_worse": True}
    assert finding["threshold_source"] == "probe"


def test_configured_threshold_replaces_the_probe_default_and_the_card_says_so(
    example: Path,
) -> None:
    card = build_card(example)
    flips = [f for f in findings_of(card) if f["name"] == "decision_flip_rate"]
    distances = [f for f in findings_of(card) if f["name"] == "wasserstein_to_l1"]
    assert len(flips) == len(distances) == 6
    for finding in flips:
        assert finding["threshold"] == CONFIGURED["decision_flip_rate"]
        assert finding["threshold_source"] == "config"
    for finding in distances:  # not configured: the probe's default
        assert finding["threshold"] == {"warn": 0.2, "fail": 0.4, "higher_is_worse": True}
        assert finding["threshold_source"] == "probe"
    assert card["tested"]["thresholds"]["decision_flip_rate"]["source"] == "config"


def test_the_probe_specific_key_beats_the_finding_name_in_the_audit(tmp_path: Path) -> None:
    thresholds = {
        "decision_flip_rate": {"warn": 0.5, "fail": 0.6},
        "repetition.decision_flip_rate": {"warn": 0.01, "fail": 0.02},
    }
    store = audited_store(tmp_path, n_items=6, thresholds=thresholds)
    with RunStore(store) as opened:
        stored = opened.results(1)["repetition"]["findings"]
    card = build_card(store)
    flips = [f for f in findings_of(card) if f["name"] == "decision_flip_rate"]
    assert {json.dumps(f["threshold"], sort_keys=True) for f in flips} == {
        json.dumps({"fail": 0.02, "higher_is_worse": True, "warn": 0.01}, sort_keys=True)
    }
    assert [f["status"] for f in flips] == [
        f["status"] for f in stored if f["name"] == "decision_flip_rate"
    ]


def test_the_card_shows_and_counts_the_status_the_audit_stored(tmp_path: Path) -> None:
    # the audit decided "pass" (say, under the rule of the judgeprobe that wrote the store); the
    # CI against the threshold would say fail today: the card reports what was decided
    body = probe([flip(0.14, 0.11, 0.18)]).to_dict()
    body["findings"][0]["status"] = "pass"
    path = tmp_path / "s.sqlite"
    store_with(path, [])
    with RunStore(path) as store:
        store.put_result(1, "repetition", body)
    card = build_card(path)
    (finding,) = findings_of(card)
    assert finding["status"] == "pass"
    assert card["probes"][0]["status"] == "pass"
    assert card["summary"]["overall"] == "pass"
    assert card["summary"]["counts"]["pass"] == 1 and card["summary"]["counts"]["fail"] == 0


def test_a_stored_finding_without_a_status_is_a_damaged_store(tmp_path: Path) -> None:
    body = probe([flip(0.14, 0.11, 0.18)]).to_dict()
    del body["findings"][0]["status"]
    path = tmp_path / "s.sqlite"
    store_with(path, [])
    with RunStore(path) as store:
        store.put_result(1, "repetition", body)
    with pytest.raises(StoreError, match=r"damaged \(findings\.0\.status: Field required\)"):
        build_card(path)


def test_lower_is_worse_threshold_fails_low_agreement(tmp_path: Path) -> None:
    kappa = Threshold(warn=0.6, fail=0.4, higher_is_worse=False)
    low = Finding("cohen_kappa", estimate(0.3, 0.2, 0.38), "kappa", {}, kappa)
    store = store_with(tmp_path / "s.sqlite", [probe([low], name="agree", kind="agreement")])
    (finding,) = findings_of(build_card(store))
    assert (finding["status"], finding["certainty"]) == ("fail", "clear")


@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        ({"warn": "high"}, r"decision_flip_rate\.warn: Input should be a valid number"),
        ({"warn": "0.1"}, r"decision_flip_rate\.warn: Input should be a valid number"),
        ({"fail": 0.1, "higher": True}, r"decision_flip_rate\.higher: Extra inputs are not"),
        (
            {"fail": 0.1, "higher_is_worse": "yes"},
            r"decision_flip_rate\.higher_is_worse: Input should be a valid boolean",
        ),
    ],
)
def test_malformed_threshold_is_a_config_error_of_the_audit_that_says_what_to_fix(
    threshold: dict[str, Any], message: str
) -> None:
    config = {"judge": "profanity", "probes": ["repetition"]}
    with pytest.raises(ConfigError, match=f"^audit.yaml: thresholds\\.{message}"):
        parse_config(
            {**config, "thresholds": {"decision_flip_rate": threshold}}, source="audit.yaml"
        )


def test_overall_is_the_worst_headline_status_and_info_findings_do_not_count(
    tmp_path: Path,
) -> None:
    info = Finding("accuracy", estimate(0.1, 0.0, 0.2), "acc")  # no threshold
    results = [probe([flip(0.02, 0.0, 0.04), info]), probe([info], name="agree", kind="agreement")]
    card = build_card(store_with(tmp_path / "s.sqlite", results))
    assert overall_status(card) == card["summary"]["overall"] == "pass"
    assert card["summary"]["counts"] == {
        "pass": 1,
        "warn": 0,
        "fail": 0,
        "inconclusive": 0,
        "n/a": 0,
        "info": 2,
    }
    worse = [probe([flip(0.07, 0.06, 0.08), flip(0.2, 0.15, 0.25, l="4")])]
    assert overall_status(build_card(store_with(tmp_path / "w.sqlite", worse))) == "fail"


def test_card_without_headline_findings_is_not_assessable(tmp_path: Path) -> None:
    info = Finding("accuracy", estimate(0.1, 0.0, 0.2), "acc")
    card = build_card(store_with(tmp_path / "s.sqlite", [probe([info])]))
    assert card["summary"]["overall"] == "n/a"
    assert card["summary"]["headline"].startswith("N/A: no finding has a threshold")
    assert exit_code(card, fail_on="warn") == 4  # a gate has nothing to judge: never a pass


def test_exit_code_breaks_the_build_on_warn_only_when_asked(tmp_path: Path) -> None:
    card = build_card(store_with(tmp_path / "s.sqlite", [probe([flip(0.07, 0.06, 0.08)])]))
    assert overall_status(card) == "warn"
    assert exit_code(card) == 0
    assert exit_code(card, fail_on="fail") == 0
    assert exit_code(card, fail_on="warn") == 1
    with pytest.raises(ConfigError, match="fail_on"):
        exit_code(card, fail_on="pass")


def test_undefined_estimate_is_not_assessable_never_a_pass(tmp_path: Path) -> None:
    undefined = Finding("flip_rate", Estimate.undefined(0, reason="no items"), "flips", {}, FLIP)
    card = build_card(store_with(tmp_path / "s.sqlite", [probe([undefined])]))
    (finding,) = findings_of(card)
    assert finding["status"] == "n/a"
    assert finding["estimate"] is None
    assert finding["sentence"] == "Flip rate: not assessable, n=0 (no items)"
    assert (finding["reason"], finding["ci"]["method"]) == ("no items", "")
    assert "1 could not be assessed" in card["summary"]["headline"]
    assert "| \\[n/a, n/a\\] \\(95% no items\\) |" in render_appendix(card)


def test_findings_a_probe_could_not_assess_give_the_probe_s_reason(example: Path) -> None:
    card = build_card(example)
    missing = [f for f in findings_of(card) if f["status"] == "n/a"]
    assert len(missing) == 8  # P,R*8 and P*8,R*8: every input exceeds the context window
    for finding in missing:
        assert finding["ci"]["method"] == ""
        assert finding["reason"].endswith(
            "12 of 12 inputs exceed the judge's context window (not truncated)"
        )
        assert finding["reason"] in finding["sentence"]
    assert all(f["reason"] is None for f in findings_of(card) if f["status"] != "n/a")


def test_an_older_store_with_the_reason_in_the_ci_method_still_renders_it(tmp_path: Path) -> None:
    body = probe([Finding("flip_rate", Estimate.undefined(0, reason="x"), "f", {}, FLIP)]).to_dict()
    del body["findings"][0]["reason"]  # as judgeprobe wrote it before card version 1.3
    body["findings"][0]["ci"]["method"] = "no items"
    path = tmp_path / "old.sqlite"
    store_with(path, [])
    with RunStore(path) as store:
        store.put_result(1, "repetition", body)
    card = build_card(path)
    validate_card(card)
    (finding,) = findings_of(card)
    assert (finding["reason"], finding["ci"]["method"]) == ("no items", "")
    assert finding["sentence"] == "Flip rate: not assessable, n=0 (no items)"
    assert "(95% no items)" in render_html(card)


def test_summary_sentence_gives_estimate_ci_n_status_and_threshold(tmp_path: Path) -> None:
    bias = Finding(
        "position_bias", estimate(0.18, 0.12, 0.25, 120), "bias", {}, Threshold(None, 0.1)
    )
    card = build_card(store_with(tmp_path / "s.sqlite", [probe([bias], name="swap")]))
    (statement,) = card["summary"]["statements"]
    assert statement["sentence"] == (
        "Position bias 0.18 [0.12, 0.25], n=120 — fails (fail >= 0.1); the whole 95% CI is in fail"
    )


@pytest.mark.parametrize(
    ("low", "high", "certainty"),
    [(0.11, 0.18, "clear"), (0.06, 0.18, "borderline"), (0.09, 0.11, "borderline")],
)
def test_status_is_borderline_when_its_ci_crosses_a_threshold(
    tmp_path: Path, low: float, high: float, certainty: str
) -> None:
    card = build_card(store_with(tmp_path / "s.sqlite", [probe([flip(0.14, low, high)])]))
    (finding,) = findings_of(card)
    assert finding["certainty"] == certainty
    assert ("borderline" in finding["sentence"]) == (certainty == "borderline")


def test_summary_lists_failures_before_passes(tmp_path: Path) -> None:
    findings = [
        flip(0.02, 0.0, 0.04, l="1"),
        flip(0.05, 0.03, 0.07, l="2"),
        flip(0.14, 0.11, 0.18, l="3"),
        Finding("flip_rate", Estimate.undefined(0), "flips", {"l": "4"}, FLIP),
        flip(0.07, 0.06, 0.08, l="5"),
    ]
    card = build_card(store_with(tmp_path / "s.sqlite", [probe(findings)]))
    statements = card["summary"]["statements"]
    assert [(s["status"], s["labels"]["l"]) for s in statements] == [
        ("fail", "3"),
        ("warn", "5"),
        ("inconclusive", "2"),
        ("n/a", "4"),
        ("pass", "1"),
    ]


def test_incomplete_run_is_said_in_the_summary(tmp_path: Path) -> None:
    store = store_with(
        tmp_path / "s.sqlite",
        [probe([flip(0.02, 0.0, 0.04)])],
        status={"state": "incomplete", "reason": "call budget exhausted"},
        finish="stopped",
    )
    card = build_card(store)
    assert (card["run"]["state"], card["run"]["reason"]) == ("incomplete", "call budget exhausted")
    assert "incomplete (call budget exhausted)" in card["summary"]["headline"]


@pytest.mark.parametrize(
    ("finish", "state", "reason"),
    [
        (None, "incomplete", "the run store records the run as 'running'"),
        ("stopped", "incomplete", "the run store records the run as 'stopped'"),
        ("complete", "complete", None),
    ],
)
def test_run_without_status_row_is_incomplete_unless_the_store_says_complete(
    tmp_path: Path, finish: str | None, state: str, reason: str | None
) -> None:
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        run_id = store.start_run({"judge": {"backend": "callable", "name": "f"}})
        store.put_result(run_id, "repetition", probe([flip(0.02, 0.0, 0.04)]).to_dict())
        if finish is not None:
            store.finish_run(run_id, finish)
    card = build_card(path)
    assert (card["run"]["state"], card["run"]["reason"]) == (state, reason)
    assert ("The run is incomplete" in card["summary"]["headline"]) == (state == "incomplete")
    validate_card(card)


def test_card_is_rebuilt_identically_from_the_store_alone(
    example: Path, example_files: dict[str, Path], tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere" / example.name  # the card names the store's file
    moved.parent.mkdir()
    shutil.copyfile(example, moved)
    rebuilt = build_card(moved)  # another folder, a later build: only the stored data counts
    assert rebuilt == json.loads(example_files["json"].read_text("utf-8"))
    assert rebuilt == build_card(example)
    assert render_markdown(rebuilt) == example_files["md"].read_text("utf-8")
    assert render_appendix(rebuilt) == example_files["appendix"].read_text("utf-8")


def test_store_run_reader_returns_times_status_and_config(example: Path) -> None:
    with RunStore(example) as store:
        run = store.run(1)
        assert store.run(99) is None
    assert run is not None
    assert run["status"] == "complete"
    assert run["finished"] >= run["started"]
    assert run["config"]["seed"] == 7


def test_missing_store_is_an_error_and_no_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "nothing.sqlite"
    with pytest.raises(StoreError, match="no such run store"):
        build_card(path)
    assert not path.exists()


def test_store_without_a_run_is_an_error_that_says_to_run_an_audit(tmp_path: Path) -> None:
    RunStore(tmp_path / "empty.sqlite").close()
    with pytest.raises(StoreError, match="run an audit first"):
        build_card(tmp_path / "empty.sqlite")


def _make_schema_1(path: Path) -> None:
    """Turn ``path`` into a store as judgeprobe wrote it before schema 2 (no skipped rows)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("DROP TABLE skipped_rows")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        db.commit()


def test_a_store_of_schema_1_opens_migrated_and_its_card_lists_no_rows_left_out(
    tmp_path: Path,
) -> None:
    path = store_with(tmp_path / "old.sqlite", [probe([flip(0.01, 0.0, 0.03)])])
    _make_schema_1(path)
    card = build_card(path)
    assert card["tested"]["skipped_rows"] == {"count": 0, "rows": [], "left_out": 0}
    validate_card(card)
    assert "Rows left out" not in render_markdown(card) + render_appendix(card)
    assert "skipped-rows" not in render_html(card)
    with RunStore(path) as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert "repetition" in store.results(1)  # nothing stored before is lost


def test_a_store_of_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path) -> None:
    newer = SCHEMA_VERSION + 1
    path = tmp_path / "new.sqlite"
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (newer,))
        db.commit()
    with pytest.raises(
        StoreError,
        match=rf"schema {newer}, this judgeprobe reads schemas 1 to {SCHEMA_VERSION}; a newer",
    ):
        RunStore(path)


def test_the_card_lists_the_rows_left_out_and_caps_the_list_with_a_count(tmp_path: Path) -> None:
    path = store_with(tmp_path / "s.sqlite", [probe([flip(0.01, 0.0, 0.03)])])
    reason = "label '<script>window.__pwned=7</script>' is not a number"
    with RunStore(path) as store:
        store.put_skipped_rows(
            1,
            [
                {"dataset": "d", "path": "d.csv", "row": n, "column": "label", "reason": reason}
                for n in range(1, 251)
            ],
        )
        assert store.count_skipped_rows(1) == 250
    card = build_card(path)
    validate_card(card)
    listed = card["tested"]["skipped_rows"]
    assert (listed["count"], len(listed["rows"]), listed["left_out"]) == (250, 100, 150)
    assert listed["rows"][0] == {
        "dataset": "d",
        "path": "d.csv",
        "row": 1,
        "column": "label",
        "reason": reason,
    }
    markdown = render_appendix(card)
    assert "250 data rows could not be loaded and were left out:" in markdown
    assert "(230 more in the card's JSON and the run store)" in markdown
    assert "<script>" not in markdown
    html = render_html(card)
    table = html.split('id="skipped-rows"')[1].split("</table>")[0]
    assert table.count("<tr>") == 21  # the header and 20 rows
    assert "<script>" not in html and "&lt;script&gt;" in table


# -- secrets --------------------------------------------------------------------------------------
def test_environment_secrets_never_reach_any_card_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("EXAMPLE_API_KEY", secret)
    store = store_with(
        tmp_path / "s.sqlite",
        [probe([flip(0.02, 0.0, 0.04, leaked=secret)])],
        config={
            "command": f"judgeprobe audit --api-key {secret}",
            "judge": {"backend": "openai-compatible", "model": "m", "api_key": "other-literal"},
        },
    )
    written = write_card(store, tmp_path / "card")
    for path in (tmp_path / "card").rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert secret.encode() not in content, path.name
            assert b"other-literal" not in content, path.name
    card = json.loads(written["json"].read_text("utf-8"))
    assert card["tested"]["command"] == f"judgeprobe audit --api-key {REDACTED}"
    assert card["tested"]["judge"]["description"]["api_key"] == REDACTED


def test_redact_keeps_short_values_and_names_of_key_variables() -> None:
    value = {"api_key_env": "OPENAI_API_KEY", "n": 1, "text": "sk-abcdefgh here"}
    assert redact(value, ["sk-abcdefgh"]) == {
        "api_key_env": "OPENAI_API_KEY",
        "n": 1,
        "text": f"{REDACTED} here",
    }


# -- Markdown -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"),
        ("[a](javascript:b)", "\\[a\\]\\(javascript:b\\)"),
        ("![i](http://x/y.png)", "\\!\\[i\\]\\(http\\://x/y.png\\)"),
        ("a|b", "a\\|b"),
        ("`code`", "\\`code\\`"),
        ("*em* _em_ ~del~", "\\*em\\* \\_em\\_ \\~del\\~"),
        ("# title", "\\# title"),
        ("1. item", "1\\. item"),
        ("- item", "\\- item"),
        ("0.25 - 0.5", "0.25 - 0.5"),
        ("&lt;", "&amp;lt;"),
        ("back\\slash", "back\\\\slash"),
        ("line\nbreak\r\nagain", "line break again"),
        ("a\u202eb", "a\ufffdb"),
    ],
)
def test_escape_markdown_makes_text_inert(text: str, escaped: str) -> None:
    assert escape_markdown(text) == escaped


def test_escape_markdown_truncates_and_says_how_much_is_left_out() -> None:
    assert escape_markdown("x" * 50, max_len=10) == "x" * 10 + "… \\[+40 characters\\]"


def test_markdown_appendix_has_summary_what_was_tested_and_each_probe(example: Path) -> None:
    text = render_appendix(build_card(example))
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Summary", "## What was tested"]
    assert headings[2:] == ["## Probe: repetition", "## Calls and tokens"]
    # its two warns (n=12 each) do not survive the adjustment across the run's 8 gated
    # findings: undecided, so neither the probe nor the card passes
    assert "## Probe: repetition\n\n**INCONCLUSIVE** (invariance)\n" in text
    assert (
        "![Scores S\\(P,R\\*l\\) by repetition count l](figures/repetition-repetition-response.png)"
        in text
    )


def test_markdown_of_hostile_card_has_no_html_link_or_image_from_data(
    hostile_texts: dict[str, str],
) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    text = hostile_texts["md"]
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    parsed = elements(html)
    tags = {tag for tag, _ in parsed.tags}
    assert not tags & {"script", "iframe", "svg", "meta", "style"}
    for tag, attrs in parsed.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        if tag == "a":  # only the card's own links, between card.md and its appendix
            assert re.fullmatch(CARD_LINK, attrs["href"] or ""), attrs
        if tag == "img":
            assert re.fullmatch(r"figures/[a-z0-9-]+\.png", attrs["src"] or ""), attrs
    rendered = "".join(parsed.text)
    assert "<script>window.__pwned=1</script>" in rendered
    assert "[click me](javascript:window.__pwned=6)" in rendered


CARD_LINK = r"card\.md|card-appendix\.md(#probe-[a-z0-9_-]+)?"
"""The links the Markdown card makes itself (from card.md to its appendix and back)."""
LINKY = [
    "see https://evil.example/a?b=c now",
    "http://evil.example",
    "ftp://evil.example/f",
    "www.evil.example",
    "(www.evil.example)",
    "*https://evil.example/em*",
    "mail admin@evil.example",
    "first.last+tag@mail.evil.example",
    "mailto:admin@evil.example",
    "xmpp:admin@evil.example",
    "<https://evil.example/autolink>",
    "[click](https://evil.example)",
    "![pixel](https://evil.example/p.png)",
]


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("see https://evil.example/a", "see https\\://evil.example/a"),
        ("ftp://evil.example", "ftp\\://evil.example"),
        ("www.evil.example", "www\\.evil.example"),
        ("WWW.evil.example", "WWW\\.evil.example"),
        ("admin@evil.example", f"admin{WORD_JOINER}@evil.example"),
        ("ratio 2:1, at 12:30", "ratio 2:1, at 12:30"),
    ],
)
def test_escape_markdown_leaves_github_no_url_or_address_to_autolink(
    text: str, escaped: str
) -> None:
    assert escape_markdown(text) == escaped


def test_markdown_of_a_card_with_urls_and_addresses_has_no_link_on_github(
    tmp_path: Path,
) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm", reason="the test extra's GFM renderer is missing")
    from cmarkgfm.cmark import Options

    store = hostile_store(tmp_path, LINKY)
    card = build_card(store)
    text = render_markdown(card) + "\n" + render_appendix(card)
    html = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
    parsed = elements(html)
    links = [attrs["href"] for tag, attrs in parsed.tags if tag == "a"]
    assert all(re.fullmatch(CARD_LINK, link or "") for link in links), links
    for tag, attrs in parsed.tags:
        if tag == "img":  # only the card's own figures
            assert re.fullmatch(r"figures/[a-z0-9-]+\.png", attrs["src"] or ""), attrs
    rendered = "".join(parsed.text).replace(WORD_JOINER, "")
    for hostile in LINKY:
        assert hostile in rendered, hostile


def test_markdown_table_rows_stay_one_row_per_item(hostile_texts: dict[str, str]) -> None:
    text = hostile_texts["md"]
    rows = [line for line in text.splitlines() if re.match(r"\| 1 \| x\d+ \| ", line)]
    assert len(rows) == len(HOSTILE)
    for line in rows:  # base | item | response | variant: five unescaped pipes
        assert len(re.findall(r"(?<!\\)\|", line)) == 5, line
        assert line.endswith(" | 4 |")


# -- HTML -----------------------------------------------------------------------------------------
def test_html_escapes_hostile_text_so_no_markup_comes_from_data(
    hostile_texts: dict[str, str],
) -> None:
    html = hostile_texts["html"]
    parsed = elements(html)
    allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "p", "span",
               "code", "nav", "a", "main", "section", "h2", "table", "thead", "tr", "th", "tbody",
               "td", "h3", "ul", "li", "strong", "em", "pre", "figure", "img", "figcaption",
               "footer", "details", "summary", "ol", "br"}  # fmt: skip
    assert {tag for tag, _ in parsed.tags} <= allowed
    for tag, attrs in parsed.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        if tag == "a":
            assert (attrs.get("href") or "").startswith("#"), attrs
        if tag == "img":
            src = attrs.get("src") or ""
            assert src.startswith(("data:image/png;base64,", "data:image/svg+xml;base64,")), tag
        if tag == "meta" and "http-equiv" in attrs:
            assert attrs["http-equiv"] == "Content-Security-Policy"
    text = "".join(parsed.text)
    assert "<script>window.__pwned=1</script>" in text
    assert "{{ 7 * 7 }}" in text
    assert "&lt;script&gt;window.__pwned=1" in html


def test_html_is_self_contained_with_a_restrictive_content_security_policy(
    example_files: dict[str, Path],
) -> None:
    card = json.loads(example_files["json"].read_text("utf-8"))
    html = example_files["html"].read_text("utf-8")
    policy = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
    assert policy.replace("'", "&#39;") in html or policy in html
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "<link" not in html and "<script" not in html
    figures = sum(len(p["figures"]) for p in card["probes"])
    assert html.count('src="data:image/png;base64,') == figures
    assert "@media print" in html


def test_long_text_is_shortened_in_markdown_and_html_but_whole_in_json(
    hostile_texts: dict[str, str],
) -> None:
    assert "L" * 5000 in hostile_texts["json"]
    for fmt in ("md", "html"):
        text = hostile_texts[fmt]
        assert "L" * 5000 not in text and "L" * 100 in text, fmt
        assert re.search(r"L… \\?\[\+\d+ characters\\?\]", text), fmt


# -- figures --------------------------------------------------------------------------------------
SPECS: dict[str, dict[str, Any]] = {
    "distributions": {"series": {"a": [1, 2, 2, 3], "b": [0.5, 4.25, None], "empty": []}},
    "scatter": {"series": {"s": {"x": [1, 2, 3], "y": [1, 3, 2]}}, "diagonal": True},
    "counts": {"rows": ["r1", "r2"], "columns": ["c1", "c2"], "values": [[1, 2], [3, None]]},
    "heatmap": {"names": ["a", "b"], "values": [[0.0, 0.3], [0.3, 0.0]]},
    "intervals": {
        "rows": [{"label": "x", "estimate": 0.5, "low": 0.4, "high": 0.6}],
        "reference": 0.5,
    },
}


@pytest.mark.parametrize("kind", FIGURE_KINDS)
def test_every_figure_kind_draws_as_png_and_svg(kind: str) -> None:
    spec = FigureSpec("f", kind, f"{kind} $x$", SPECS[kind], "x", "y").to_dict()  # type: ignore[arg-type]
    assert figure_bytes(spec, "png").startswith(b"\x89PNG\r\n\x1a\n")
    svg = figure_bytes(spec, "svg")
    assert b"<svg" in svg and b"<script" not in svg


def test_a_scatter_with_limits_spans_them_and_its_diagonal_runs_corner_to_corner() -> None:
    """A reliability diagram is read on the whole unit square, wherever its points lie."""
    data = {"series": {"judge": {"x": [0.02, 0.13], "y": [0.45, 0.25]}}, "diagonal": True}
    figure = draw_figure({"kind": "scatter", "title": "t", "data": {**data, "limits": [0, 1]}})
    ax = figure.axes[0]
    assert (ax.get_xlim(), ax.get_ylim()) == ((0.0, 1.0), (0.0, 1.0))
    (diagonal,) = ax.get_lines()
    assert list(diagonal.get_xdata()) == [0.0, 1.0]
    unbounded = draw_figure({"kind": "scatter", "title": "t", "data": data}).axes[0]
    assert list(unbounded.get_lines()[0].get_xdata()) == [0.02, 0.45]


def test_svg_figures_are_byte_for_byte_reproducible() -> None:
    spec = FigureSpec("f", "heatmap", "t", SPECS["heatmap"]).to_dict()
    assert figure_bytes(spec, "svg") == figure_bytes(spec, "svg")


def test_large_count_tables_draw_as_a_heatmap_with_values() -> None:
    rows = [f"row {i}" for i in range(9)]
    columns = [f"col {j}" for j in range(7)]
    values = [[i * j for j in range(7)] for i in range(9)]
    spec = FigureSpec("c", "counts", "t", {"rows": rows, "columns": columns, "values": values})
    assert figure_bytes(spec.to_dict(), "svg").count(b'<g id="text_') >= 9 * 7


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        (
            "heatmap",
            {"names": ["a", "b"], "values": [[1.0], [1.0, 2.0]]},
            r"heatmap figure: malformed data \(values are 2 x \[1, 2\], expected 2 x 2\)",
        ),
        (
            "scatter",
            {"series": {"s": {"x": [1, 2], "y": [1]}}},
            r"scatter figure: malformed data \(series 's': x and y differ in length\)",
        ),
        (
            "counts",
            {"rows": ["a"], "values": [[1]]},
            r"counts figure: malformed data \('columns'\)",
        ),
        (
            "scatter",
            {"series": {"s": {"x": [0.2], "y": [0.4]}}, "limits": [1, 0]},
            r"scatter figure: malformed data \(limits must be two numbers, low < high, "
            r"not \[1, 0\]\)",
        ),
        ("pie", {}, r"unknown figure kind 'pie'"),
    ],
)
def test_malformed_figure_data_is_a_figure_data_error(
    kind: str, data: dict[str, Any], message: str
) -> None:
    with pytest.raises(FigureDataError, match=f"^{message}$"):
        figure_bytes({"kind": kind, "title": "t", "data": data}, "png")


def test_card_with_a_malformed_figure_is_still_written_and_says_why(tmp_path: Path) -> None:
    broken = FigureSpec("broken", "heatmap", "t", {"names": ["a"], "values": [[1.0, 2.0]]})
    good = FigureSpec("good", "heatmap", "t", {"names": ["a"], "values": [[1.0]]})
    store = store_with(
        tmp_path / "s.sqlite", [probe([flip(0.02, 0.0, 0.04)], figures=[broken, good])]
    )
    written = write_card(store, tmp_path / "card")
    assert "Figure could not be drawn" in written["html"].read_text("utf-8")
    assert sorted(p.name for p in written["figures"].iterdir()) == [
        "overview.png",  # the overview of the gated findings
        "overview.svg",
        "repetition-good.png",
        "repetition-good.svg",
    ]


def test_write_card_writes_every_format_and_a_png_and_svg_per_figure(
    example: Path, example_files: dict[str, Path]
) -> None:
    assert sorted(example_files) == ["appendix", "figures", "html", "json", "md"]
    card = json.loads(example_files["json"].read_text("utf-8"))
    assert card == build_card(example)
    stems = [f["file"] for p in card["probes"] for f in p["figures"]]
    assert len(stems) == 3
    root = example_files["json"].parent
    for stem in stems:
        assert (root / f"{stem}.png").stat().st_size > 1000
        assert (root / f"{stem}.svg").stat().st_size > 1000


def test_write_card_writes_only_the_formats_asked_for(tmp_path: Path) -> None:
    store = store_with(tmp_path / "s.sqlite", [probe([flip(0.02, 0.0, 0.04)])])
    written = write_card(store, tmp_path / "card", formats=("md",))
    assert sorted(written) == ["appendix", "figures", "md"]  # the figures: the overview's
    assert sorted(p.name for p in (tmp_path / "card").iterdir()) == [
        "card-appendix.md",
        "card.md",
        "figures",
    ]
    with pytest.raises(ConfigError, match="formats"):
        write_card(store, tmp_path / "card", formats=("pdf",))


def test_report_exports_are_pinned() -> None:
    import judgeprobe.report as report

    assert sorted(report.__all__) == [
        "CARD_VERSION",
        "CardValidationError",
        "NOTHING_ASSESSED_EXIT",
        "build_card",
        "card_schema",
        "escape_markdown",
        "exit_code",
        "nothing_assessed",
        "overall_status",
        "render_html",
        "render_markdown",
        "validate_card",
        "write_card",
    ]


# -- status from evidence -------------------------------------------------------------------------
def test_ci_spanning_the_fail_threshold_is_inconclusive_with_a_count_that_would_decide_it() -> None:
    finding = flip(0.15, 0.0, 0.2)  # point estimate beyond fail (0.10), CI from pass into fail
    assert finding.status == "inconclusive"
    # the CI reaches 0.15 below the estimate, which is 0.05 above the nearest threshold (fail):
    # 100 * (0.15 / 0.05) ** 2 - 100 more
    assert finding.needed_n == 800
    assert finding.to_dict()["needed_n"] == 800


def test_ci_wholly_beyond_fail_fails_and_wholly_on_the_pass_side_passes() -> None:
    assert flip(0.14, 0.11, 0.18).status == "fail"
    assert flip(0.02, 0.0, 0.04).status == "pass"
    assert flip(0.02, 0.0, 0.04).needed_n is None


def test_ci_wholly_beyond_warn_warns_even_when_it_reaches_into_fail() -> None:
    assert flip(0.07, 0.06, 0.08).status == "warn"
    assert flip(0.09, 0.06, 0.12).status == "warn"
    assert flip(0.05, 0.03, 0.07).status == "inconclusive"  # pass or warn: undecided
    assert flip(0.09, 0.06, 0.12).needed_n is None


def test_lower_is_worse_thresholds_are_decided_from_the_ci_too() -> None:
    kappa = Threshold(warn=0.6, fail=0.4, higher_is_worse=False)
    assert kappa.decide(0.3, 0.2, 0.38) == "fail"
    assert kappa.decide(0.8, 0.7, 0.9) == "pass"
    assert kappa.decide(0.5, 0.3, 0.7) == "inconclusive"
    assert kappa.decide(0.5, 0.3, 0.55) == "warn"


def test_a_finding_without_a_ci_is_undecided_whatever_its_point_estimate() -> None:
    for value in (0.0, 0.2):
        assert FLIP.decide(value, None, None) == "inconclusive"
        assert FLIP.decide(value, float("nan"), float("nan")) == "inconclusive"
    assert FLIP.decide(float("nan"), 0.1, 0.3) == "n/a"


def test_an_excess_whose_own_exact_test_does_not_reject_is_inconclusive_not_fail() -> None:
    # the interval alone would say fail; the probe's one-sided exact test gives p = 0.33
    unbacked = TestResult(0.06, 0.33, "greater", "jitter", 38)
    backed = TestResult(0.2, 0.001, "greater", "jitter", 38)
    delta = estimate(0.08, 0.06, 0.1, 38)
    threshold = Threshold(warn=0.02, fail=0.05)
    assert Finding("flip_delta", delta, "d", {}, threshold, unbacked).status == "inconclusive"
    assert Finding("flip_delta", delta, "d", {}, threshold, backed).status == "fail"
    # a test whose alternative is the good side (ratio above one half) does not hold back a fail
    ratio = Threshold(warn=0.8, fail=0.6, higher_is_worse=False)
    good_side = TestResult(0.4, 0.9, "greater", "p = 0.5", 20)
    low = estimate(0.4, 0.2, 0.55, 20)
    assert Finding("directional_ratio", low, "r", {}, ratio, good_side).status == "fail"


def test_card_reports_inconclusive_findings_apart_and_never_as_failures(tmp_path: Path) -> None:
    results = [probe([flip(0.02, 0.0, 0.04), flip(0.15, 0.0, 0.2, l="4")])]
    card = build_card(store_with(tmp_path / "s.sqlite", results))
    validate_card(card)
    by_length = {f["labels"].get("l"): f for f in findings_of(card)}
    undecided = by_length["4"]
    assert (undecided["status"], undecided["certainty"]) == ("inconclusive", "borderline")
    assert undecided["needed_n"] == 800
    assert "inconclusive (fail >= 0.1, warn >= 0.05)" in undecided["sentence"]
    assert "borderline: the 95% CI spans pass to fail" in undecided["sentence"]
    assert "roughly 800 more would likely decide it" in undecided["sentence"]
    # one pass beside one undecided finding is not shown to pass
    assert overall_status(card) == "inconclusive"
    assert card["summary"]["counts"]["inconclusive"] == 1
    assert card["summary"]["headline"].startswith(
        "INCONCLUSIVE: of 2 findings with a threshold, 1 passes and 1 is undecided;"
        " about 800 more units would likely decide it."
    )
    assert exit_code(card, fail_on="fail") == exit_code(card, fail_on="warn") == 0
    assert exit_code(card, fail_on="inconclusive") == 1
    markdown = render_appendix(card)
    assert "**Inconclusive (not counted as failures)**" in markdown
    assert "INCONCLUSIVE" in markdown
    assert "1 inconclusive (not counted as failures)" in render_markdown(card)


def test_gate_passes_a_card_whose_only_headline_findings_are_inconclusive(tmp_path: Path) -> None:
    store = store_with(tmp_path / "run.sqlite", [probe([flip(0.15, 0.0, 0.2)])])
    card = build_card(store)
    assert card["summary"]["overall"] == "inconclusive"
    assert nothing_assessed(card, fail_on="warn") is None
    for fail_on in ("warn", "fail"):
        done = subprocess.run(
            [sys.executable, "-m", "judgeprobe", "card", str(store), "--fail-on", fail_on],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    html = (tmp_path / "card.html").read_text(encoding="utf-8")
    assert 'class="status inconclusive"' in html
