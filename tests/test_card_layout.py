"""The Judge Card at a glance: the overview figure, the verdict sentence, the findings that matter
most, the evidence behind each finding, slices folded, and the short Markdown card with its
appendix."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from audited import with_evidence
from judgeprobe.engine.store import RunStore
from judgeprobe.probes.base import Finding, ProbeResult, Threshold
from judgeprobe.report import build_card, render_html, render_markdown, write_card
from judgeprobe.report.evidence_view import evidence_view
from judgeprobe.report.markdown import APPENDIX_FILE, render_appendix
from judgeprobe.report.overview import margin, top_findings, verdict_sentence
from judgeprobe.report.overview_figure import overview_bytes
from judgeprobe.stats.result import ConfidenceInterval, Estimate

FLIP = Threshold(warn=0.05, fail=0.10)
KAPPA = Threshold(warn=0.4, fail=0.2, higher_is_worse=False)
SCRIPT = "<script>window.__pwned=1</script>"
RAW = '<img src=x onerror="window.__pwned=2">'


def finding(
    name: str, value: float, low: float, high: float, threshold: Threshold | None, **labels: str
) -> Finding:
    interval = ConfidenceInterval(low, high, 0.95, "wilson")
    return Finding(name, Estimate(value, interval, 100, {"n": 100}), name, labels, threshold)


def store_of(path: Path, results: Sequence[ProbeResult]) -> Path:
    """A run store holding one complete run with ``results``."""
    config: dict[str, Any] = {
        "tool_version": "0.1.0",
        "command": "judgeprobe audit",
        "judge": {"backend": "callable", "name": "fn", "version": "1", "params": {}},
        "judge_fingerprint": "fp",
        "rubric": {"name": "harmfulness", "hash": "h", "kind": "scale", "template": "t"},
        "data": {"name": "d", "source": "d.csv", "n": 100, "sha256": "s", "skipped": 0},
        "probes": {r.probe: dict(r.params) for r in results},
        "seed": 1,
        "started_at": "2025-01-01T00:00:00+00:00",
    }
    with RunStore(path) as store:
        run_id = store.start_run(config)
        for result in results:
            store.put_result(run_id, result.probe, result.to_dict())
        store.put_run_meta(run_id, "status", {"state": "complete", "reason": None})
        store.finish_run(run_id, "complete")
    return path


RESULTS = [
    ProbeResult(
        "repetition",
        "invariance",
        {},
        [
            finding("flip_rate", 0.30, 0.20, 0.40, FLIP, l="2"),  # fail, clears 0.1 by 0.1
            finding("flip_rate", 0.60, 0.50, 0.70, FLIP, l="4"),  # fail, clears it by 0.4
            finding("flip_rate", 0.07, 0.06, 0.09, FLIP, l="8"),  # warn
            finding("flip_rate", 0.01, 0.0, 0.02, FLIP, l="16"),  # pass
            finding("flip_rate", 0.2, 0.1, 0.3, None, category="a"),  # a slice: information
        ],
        [],
    ),
    ProbeResult(
        "agreement",
        "agreement",
        {},
        [finding("kappa", 0.1, 0.0, 0.15, KAPPA), finding("kappa", 0.38, 0.2, 0.6, KAPPA, s="x")],
        [],
    ),
]


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_card(store_of(tmp_path_factory.mktemp("layout") / "run.sqlite", RESULTS))


def statuses(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[str]:
    return [f"{p['name']}:{f['status']}:{f['labels']}" for p, f in pairs]


# -- what matters most ----------------------------------------------------------------------------
def test_the_findings_that_matter_most_are_fails_by_margin_then_warns_then_nearest_undecided(
    card: dict[str, Any],
) -> None:
    assert statuses(top_findings(card, count=10)) == [
        "repetition:fail:{'l': '4'}",  # its CI clears fail 0.1 by 0.4: 8 warn-fail gaps of 0.05
        "repetition:fail:{'l': '2'}",  # by 0.1: 2 gaps
        "agreement:fail:{}",  # kappa's CI ends 0.05 below fail 0.2: 0.25 gaps of 0.2
        "repetition:warn:{'l': '8'}",
        "agreement:inconclusive:{'s': 'x'}",
    ]
    ranked = top_findings(card, count=10)
    margins = [round(margin(f), 6) for _, f in ranked if f["status"] == "fail"]
    assert margins == sorted(margins, reverse=True) == [8.0, 2.0, 0.25]
    assert [f["status"] for _, f in ranked] == ["fail", "fail", "fail", "warn", "inconclusive"]
    assert len(top_findings(card)) == 3 and "pass" not in [f["status"] for _, f in ranked]


def test_an_undecided_finding_nearer_to_deciding_comes_first() -> None:
    def undecided(needed: int | None) -> dict[str, Any]:
        return {"headline": True, "status": "inconclusive", "needed_n": needed, "name": str(needed)}

    card = {
        "probes": [
            {"name": "p", "kind": "invariance", "findings": [undecided(None), undecided(800)]},
            {"name": "q", "kind": "agreement", "findings": [undecided(30)]},
        ]
    }
    assert [f["name"] for _, f in top_findings(card)] == ["30", "800", "None"]


def test_the_verdict_is_one_sentence_counting_the_findings_with_a_threshold(
    card: dict[str, Any],
) -> None:
    assert verdict_sentence(card) == (
        "FAIL: of 6 findings with a threshold, 3 fail, 1 warns, 1 passes and 1 is undecided."
    )
    incomplete = {**card, "run": {**card["run"], "state": "incomplete"}}
    assert verdict_sentence(incomplete).endswith(
        "; the run is incomplete, so they cover only what was judged."
    )


# -- the overview figure --------------------------------------------------------------------------
def test_overview_figure_is_a_static_svg_of_every_gated_finding_drawn_the_same_each_time(
    card: dict[str, Any],
) -> None:
    svg = overview_bytes(card, "svg")
    assert svg is not None and svg.startswith(b"<?xml") and b"<svg" in svg
    assert svg == overview_bytes(card, "svg")
    assert not re.search(rb"<script|onload=|href=\"(https?|javascript):", svg)
    png = overview_bytes(card, "png")
    assert png is not None and png.startswith(b"\x89PNG")
    without = copy.deepcopy(card)
    for probe in without["probes"]:
        probe["findings"] = [f for f in probe["findings"] if not f["headline"]]
    assert overview_bytes(without) is None


# -- HTML -----------------------------------------------------------------------------------------
def test_html_opens_with_the_figure_the_verdict_and_the_top_three_linked_to_their_rows(
    card: dict[str, Any],
) -> None:
    html = render_html(with_evidence(copy.deepcopy(card), [SCRIPT, RAW, "plain text"]))
    sections = re.findall(r'<section (?:class="probe" )?id="([^"]+)"', html)
    assert sections[:2] == ["glance", "summary"]
    glance = html.split('<section id="glance">')[1].split("</section>")[0]
    assert glance.count('<img src="data:image/svg+xml;base64,') == 1
    assert "FAIL: of 6 findings with a threshold, 3 fail" in glance
    top = glance.split('<ol id="top-findings">')[1].split("</ol>")[0]
    anchors = re.findall(r'<a href="#([^"]+)">', top)
    assert len(anchors) == 6  # the finding's row and its evidence, three times
    for anchor in anchors:
        assert f'id="{anchor}"' in html, anchor
    assert "evidence: 3 of 37 items" in top


def test_html_folds_slices_and_tables_and_keeps_gated_findings_open(card: dict[str, Any]) -> None:
    html = render_html(card)
    repetition = html.split('data-kind="invariance">')[1].split("</section>")[0]
    gated, folded = repetition.split('<details class="slices">')
    assert gated.count('<tr id="probe-') == 4
    slices = folded.split("</details>")[0]
    assert "<summary>1 slice and other findings for information (no threshold)</summary>" in slices
    assert slices.count('<tr id="probe-') == 1 and "category=a" in slices
    assert "<details open" not in html and '<details class="evidence"' not in html


def test_html_evidence_sits_behind_details_escaped_and_capped_with_a_count(
    card: dict[str, Any],
) -> None:
    html = render_html(with_evidence(copy.deepcopy(card), [SCRIPT, RAW, "plain text"]))
    blocks = re.findall(r'<details class="evidence" id="[^"]+">.*?</details>', html, re.S)
    assert len(blocks) == 7  # one per finding, the slice's inside its fold
    block = blocks[0]
    assert re.search(r"<summary>Evidence for Kappa: 3 of 37 items</summary>", block)
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in block
    assert "&lt;img src=x onerror=&#34;window.__pwned=2&#34;&gt;" in block
    assert "<script>" not in html and "<img src=x" not in html
    assert "34 more items behind this finding, not kept in the card." in block
    assert block.count("<strong>original</strong>: safe (score 0.1)") == 3


def test_a_finding_without_evidence_shows_none_and_one_with_no_items_says_so(
    card: dict[str, Any],
) -> None:
    plain = render_html(card)
    assert 'class="evidence"' not in plain and "no items kept" not in plain
    emptied = copy.deepcopy(card)
    emptied["probes"][0]["findings"][0]["evidence"] = {"total": 0, "shown": 0, "items": []}
    html = render_html(emptied)
    # in the finding's row and in the top three, which it is one of; no fold to link to
    assert html.count("no items kept") == 2 and 'class="evidence"' not in html
    assert "-evidence" not in html
    assert evidence_view({"evidence": None}) is None
    assert evidence_view({"evidence": {"total": 5, "items": "not a list"}}) is not None


def test_an_excerpt_is_cut_on_a_word_boundary_with_an_ellipsis() -> None:
    long = {"evidence": {"total": 1, "items": [{"item_id": "a", "excerpt": "word " * 100}]}}
    view = evidence_view(long)
    assert view is not None
    excerpt = view.items[0].excerpt
    assert len(excerpt) <= 240 and excerpt.endswith("word…")


# -- Markdown -------------------------------------------------------------------------------------
def test_markdown_card_is_short_and_links_to_its_appendix_of_full_tables(
    card: dict[str, Any],
) -> None:
    shown = with_evidence(copy.deepcopy(card), [SCRIPT, RAW, "plain text"])
    short, appendix = render_markdown(shown), render_appendix(shown)
    assert len(short.splitlines()) < 45 < len(appendix.splitlines())
    assert "![Every gated finding against its thresholds](figures/overview.png)" in short
    assert "**Verdict:** FAIL: of 6 findings with a threshold, 3 fail" in short
    numbered = [line for line in short.splitlines() if re.match(r"\d\. ", line)]
    assert [line[:13] for line in numbered] == ["1. FAIL repet", "2. FAIL repet", "3. FAIL agree"]
    assert "(card-appendix.md#probe-repetition)" in short and f"]({APPENDIX_FILE})" in short
    assert "Table:" not in short and "## What was tested" in appendix
    assert (
        "## Probe: repetition\n" in appendix and "The short card is [card.md](card.md)" in appendix
    )
    assert "Evidence for Flip rate \\(l=2\\): 3 of 37 items" in appendix
    assert "&lt;script&gt;window.\\_\\_pwned=1&lt;/script&gt;" in appendix
    assert "<script>" not in short + appendix and "<img" not in short + appendix


def test_write_card_writes_the_appendix_and_the_overview_beside_the_card(
    tmp_path: Path,
) -> None:
    store = store_of(tmp_path / "run.sqlite", RESULTS)
    written = write_card(store, tmp_path / "card")
    assert written["appendix"] == tmp_path / "card" / "card-appendix.md"
    assert written["appendix"].read_text("utf-8").startswith("# Appendix: Judge Card: ")
    assert (tmp_path / "card" / "figures" / "overview.svg").read_bytes().startswith(b"<?xml")
    assert (tmp_path / "card" / "figures" / "overview.png").stat().st_size > 1000
    html = written["html"].read_text("utf-8")
    assert html.count('<img src="data:image/svg+xml;base64,') == 1
