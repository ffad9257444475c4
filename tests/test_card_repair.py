"""The repair inside the Judge Card: before and after, the paired difference and the cost.

An audit with repairs (:func:`judgeprobe.run_repair_audit`) stores its repair summary with the
original run, so the original card (JSON, Markdown and its appendix, HTML) has a ``repair``
section, and ``judgeprobe card`` renders the very same card again from the run store. Planted
judges with one known failure each are repaired: an always-A pairwise judge under
``swap_average`` (position bias, two inner calls per verdict) and a judge that reads only the
first part of a response under ``chunked`` (the concatenation bypass). A card without repairs
has no such section.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe import RepairOutcome, run_repair_audit
from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card, render_html, render_markdown, validate_card
from judgeprobe.report.html import CONTENT_SECURITY_POLICY
from judgeprobe.report.markdown import render_appendix
from judgeprobe.report.repair import REPAIR_COLUMNS, repair_section
from test_repair import always_a, first_part, pairs, pointwise, write_pairs

CARD_FILES = ("card.json", "card.md", "card-appendix.md", "card.html")


def position_config(out: Path, data: Path, repairs: list[str] | None) -> Any:
    spec: dict[str, Any] = {
        "rubric": "preference",
        "data": str(data),
        "data_options": {"kind": "pairwise"},
        "out": str(out),
        "probes": {"position": {}},
    }
    if repairs:
        spec["repair"] = repairs
    return parse_config(spec)


@pytest.fixture(scope="module")
def swapped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RepairOutcome]:
    """An always-A judge audited by the position probe, before and after ``swap_average``."""
    root = tmp_path_factory.mktemp("swap")
    data = write_pairs(root / "pairs.jsonl", pairs(40))
    config = position_config(root / "out", data, ["swap_average"])
    outcome = run_repair_audit(config, judge=CallableJudge(always_a, name="a"), progress=False)
    return root / "out", outcome


def card_of(out: Path) -> dict[str, Any]:
    card: dict[str, Any] = json.loads((out / "card.json").read_text(encoding="utf-8"))
    return card


def rows_of(repair: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {row["finding"]: row for row in repair["target_findings"] if not row["labels"]}


def test_the_card_shows_each_repair_before_and_after_with_its_cost(
    swapped: tuple[Path, RepairOutcome],
) -> None:
    out, _ = swapped
    card = card_of(out)
    validate_card(card)
    (repair,) = card["repair"]["repairs"]
    assert (repair["repair"], repair["target_probe"]) == ("swap_average", "position")
    assert repair["cost_multiplier"] == 2.0
    # the swap flip rate's excess over the rerun null is the position probe's gated finding; the
    # raw rate is the one paired by pair, compared in the excess's direction
    flips, excess = rows_of(repair)["swap_flip_rate"], rows_of(repair)["swap_flip_excess"]
    assert flips["before"]["estimate"] == 1.0 and excess["before"]["status"] == "fail"
    # the excess is the gated one, as on the card; the raw rate is information with a direction
    assert not flips["gated"] and excess["gated"] and excess["method"] == "unpaired"
    assert flips["before"]["n"] == flips["after"]["n"] == 40
    # every repaired verdict is a tie in both orders: no decisive pick is left to flip
    assert flips["after"]["status"] == "n/a"
    assert (flips["method"], flips["word"]) == ("paired", "better")
    assert flips["difference"]["estimate"] == -1.0
    assert flips["adjusted_pvalue"] < 0.05
    consistency = rows_of(repair)["position_consistency"]
    assert consistency["before"]["estimate"] == 0.0 and consistency["after"]["estimate"] == 1.0
    assert (consistency["before"]["status"], consistency["after"]["status"]) == ("info", "info")
    assert {row["finding"] for row in repair["target_findings"]} >= {"swap_flip_rate"}


def test_the_section_links_the_repaired_card_and_the_comparison_and_says_its_verdict(
    swapped: tuple[Path, RepairOutcome],
) -> None:
    out, _ = swapped
    (repair,) = card_of(out)["repair"]["repairs"]
    assert repair["links"] == {"card": "repair-swap_average", "comparison": "repair-compare"}
    assert (out / repair["links"]["card"] / "card.html").is_file()
    assert (out / repair["links"]["comparison"] / "compare.md").is_file()
    repaired = card_of(out / repair["links"]["card"])
    assert repair["verdict"]["overall"] == repaired["summary"]["overall"]
    assert repair["verdict"]["sentence"].startswith(repaired["summary"]["overall"].upper() + ":")
    assert "repair" not in repaired  # the repaired run is not itself repaired


def test_the_html_card_renders_the_section_as_a_table_per_repair_and_still_runs_no_script(
    swapped: tuple[Path, RepairOutcome],
) -> None:
    out, _ = swapped
    html = (out / "card.html").read_text(encoding="utf-8")
    assert '<section id="repair">' in html and '<a href="#repair">Repair</a>' in html
    assert html.count('<table class="repair-findings">') == 1
    header = "".join(f"<th>{column}</th>" for column in REPAIR_COLUMNS)
    assert header in html
    assert re.search(r'class="cost">2</strong> inner judge calls per verdict', html)
    assert '<a href="repair-swap_average/card.html">repaired card</a>' in html
    assert f'content="{CONTENT_SECURITY_POLICY}"'.replace("'", "&#39;") in html
    assert "<script" not in html.lower()


def test_the_short_markdown_card_has_a_line_per_repair_and_the_appendix_its_table(
    swapped: tuple[Path, RepairOutcome],
) -> None:
    out, _ = swapped
    short = (out / "card.md").read_text(encoding="utf-8")
    section = short.split("## Repair\n", 1)[1].split("\n## ", 1)[0]
    (line,) = [text.replace("\\", "") for text in section.splitlines() if text.startswith("- ")]
    assert "cost 2 inner judge calls per verdict" in line
    assert line.startswith("- swap_average (targets position): ")
    assert "Swap flip rate 1 → n/a, difference -1 [" in line and "(paired): better" in line
    # the repaired judge ties every pair: its flip rate cannot be assessed, and 40 pairs do not
    # show its failed-call rate (0) below the warn line
    assert line.endswith(
        "repaired card: INCONCLUSIVE ([repaired card](repair-swap_average/card.md),"
        " [comparison](repair-compare/compare.md))"
    )
    assert "| Finding | Slice | Before |" not in short  # the tables are in the appendix
    appendix = (out / "card-appendix.md").read_text(encoding="utf-8")
    assert "## Repair" in appendix
    assert "| " + " | ".join(REPAIR_COLUMNS) + " |" in appendix
    row = (
        r"\| Swap flip rate \|  \| 1 \[0\.9\d*, 1\], n=40, info \| n/a, n=40, n/a \| "
        r"-1 \[-1, -1\] \| paired \| \d\.\d+e-\d+ \| better \|"
    )
    assert re.search(row, appendix.replace("\\", "")), appendix


def test_repair_md_holds_the_same_tables_as_the_card_appendix(
    swapped: tuple[Path, RepairOutcome],
) -> None:
    out, outcome = swapped
    appendix = (out / "card-appendix.md").read_text(encoding="utf-8")
    page = (out / "repair.md").read_text(encoding="utf-8")
    tables = [text for text in page.splitlines() if text.startswith("|")]
    assert tables and all(text in appendix.splitlines() for text in tables)
    assert "[card.md](card.md)" in page
    assert json.loads((out / "repair.json").read_text(encoding="utf-8")) == outcome.summary
    assert card_of(out)["repair"] == repair_section(outcome.summary)


def test_rendering_the_card_again_from_the_run_store_gives_the_same_card(
    swapped: tuple[Path, RepairOutcome], tmp_path: Path
) -> None:
    out, _ = swapped
    again = tmp_path / "again"
    result = CliRunner().invoke(app, ["card", str(out / "run.sqlite"), "--out", str(again)])
    assert result.exit_code == 0, result.output
    for name in CARD_FILES:
        assert (again / name).read_text(encoding="utf-8") == (out / name).read_text(
            encoding="utf-8"
        ), name


def test_chunked_repairs_the_bypass_of_a_first_part_judge_inside_the_card(
    tmp_path: Path,
) -> None:
    data = tmp_path / "items.jsonl"
    rows = [
        {"id": i.id, "prompt": i.prompt, "response": i.response, "label": i.labels[0].value}
        for i in pointwise(6, 12)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(tmp_path / "out"),
            "probes": {"bypass": {}},
            "repair": ["chunked"],
        }
    )
    run_repair_audit(config, judge=CallableJudge(first_part, name="first"), progress=False)
    card = card_of(tmp_path / "out")
    validate_card(card)
    (repair,) = card["repair"]["repairs"]
    assert repair["target_probe"] == "bypass" and 1.0 < repair["cost_multiplier"] < 4.0
    last = {
        row["finding"]: row
        for row in repair["target_findings"]
        if row["labels"] == {"k": "2", "position": "last"}
    }
    # the raw rate, paired by item, is information on the card; its excess over the rerun null is
    # gated, and the comparison reads the paired raw rate in the excess's direction
    rate, excess = last["bypass_rate"], last["bypass_excess"]
    assert (rate["before"]["estimate"], rate["after"]["estimate"]) == (1.0, 0.0)
    assert (rate["method"], rate["word"]) == ("paired", "better")
    assert (excess["before"]["status"], excess["word"]) == ("fail", "better")


def test_a_card_without_repairs_has_no_repair_section(tmp_path: Path) -> None:
    data = write_pairs(tmp_path / "pairs.jsonl", pairs(12))
    config = position_config(tmp_path / "out", data, None)
    outcome = run_audit(config, judge=CallableJudge(always_a, name="a"), progress=False)
    card = build_card(outcome.store_path)
    validate_card(card)
    assert "repair" not in card
    assert 'id="repair"' not in render_html(card) and "#repair" not in render_html(card)
    assert "## Repair" not in render_markdown(card) + render_appendix(card)
    assert not (tmp_path / "out" / "repair.md").exists()


def test_a_stored_summary_is_shown_as_text_and_links_are_plain_relative_folders(
    swapped: tuple[Path, RepairOutcome], tmp_path: Path
) -> None:
    _, outcome = swapped
    hostile = json.loads(json.dumps(outcome.summary))
    hostile["headline"] = "<script>alert(1)</script> [x](javascript:alert(2))"
    entry = hostile["repairs"][0]
    entry["verdict"]["sentence"] = '<img src=x onerror="alert(3)">'
    entry["links"] = {"card": "javascript:alert(4)", "comparison": "../elsewhere"}
    section = repair_section(hostile)
    assert section is not None
    assert section["repairs"][0]["links"] == {"card": None, "comparison": None}
    card = {**build_card(outcome.original.store_path), "repair": section}
    validate_card(card)
    html = render_html(card)
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript' not in html and "../elsewhere" not in html
    text = render_markdown(card) + render_appendix(card)
    assert "](javascript" not in text and "<script>" not in text
