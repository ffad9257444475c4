"""The card's ``estimate`` section: the judge's raw rate, the humans' rate and the corrected one.

An audit whose agreement probe judged labelled items shows the rate of the rubric's positive
class three ways, every label used; the numbers are those of ``judgeprobe estimate
--label-budget all`` on the same data. A card without labels has no such section.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from audited import audited_store
from conftest import data_root
from judgeprobe._cli.main import app
from judgeprobe.report import build_card, render_html, render_markdown, validate_card
from judgeprobe.report.estimate import estimate_section
from judgeprobe.report.schema import card_errors

HARM = data_root() / "pyrit_scorer_evals" / "harm"
needs_pyrit = pytest.mark.skipif(not HARM.is_dir(), reason=f"shared data not found: {HARM}")
DATA = ("--judge", "profanity", "--rubric", "toxicity", "--data", "pyrit:harm/hate_speech")


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("estimate")
    out = folder / "out"
    done = CliRunner().invoke(
        app,
        ["audit", *DATA, "--probes", "agreement", "--fixed-size", "--fail-on", "never",
         "--out", str(out)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    card: dict[str, Any] = json.loads((out / "card.json").read_text("utf-8"))
    return out, card


@needs_pyrit
def test_the_section_equals_the_estimate_command_with_every_label(
    audited: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    _, card = audited
    section = card["estimate"]
    done = CliRunner().invoke(
        app,
        ["estimate", *DATA, "--label-budget", "all", "--json",
         "--store", str(tmp_path / "score.sqlite")],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    expected = json.loads(done.stdout)
    for name in ("naive", "labels_only", "corrected"):
        for key in ("estimate", "low", "high", "n"):
            assert section[name][key] == pytest.approx(expected[name][key], abs=1e-12), name
    assert section["corrected"]["lambda"] == pytest.approx(expected["corrected"]["lambda"])
    assert (section["items"], section["labels"]) == (expected["items"], expected["labels"])
    assert section["labels"] == 59 and section["what"] == "rate of toxic"
    assert section["probe"] == "agreement"
    # the judge's raw rate is far below the humans': the section shows the bias
    assert section["naive"]["estimate"] < section["corrected"]["estimate"]


@needs_pyrit
def test_the_card_with_the_section_matches_the_schema_and_moves_the_table_out_of_the_probe(
    audited: tuple[Path, dict[str, Any]],
) -> None:
    out, card = audited
    validate_card(card)
    assert card["card_version"] == "1.10"
    agreement = next(p for p in card["probes"] if p["kind"] == "agreement")
    assert "estimate" not in agreement["tables"]
    rebuilt = build_card(out / "run.sqlite")
    assert rebuilt["estimate"] == card["estimate"]
    broken = {**card, "estimate": {**card["estimate"], "naive": {"estimate": 0.1}}}
    assert any(error.startswith("estimate/naive") for error in card_errors(broken))


@needs_pyrit
def test_the_markdown_and_html_cards_show_the_three_rates(
    audited: tuple[Path, dict[str, Any]],
) -> None:
    _, card = audited
    markdown = render_markdown(card)
    assert "## The rate the humans would give" in markdown
    for name in ("naive", "labels\\_only", "corrected"):
        assert f"| {name} |" in markdown
    assert "59 human labels" in markdown
    html = render_html(card)
    assert '<section id="estimate">' in html and 'href="#estimate"' in html
    assert "<td>labels_only</td>" in html


def test_a_card_without_labels_has_no_estimate_section(tmp_path: Path) -> None:
    card = build_card(audited_store(tmp_path))
    validate_card(card)
    assert "estimate" not in card
    assert "The rate the humans would give" not in render_markdown(card)
    assert 'id="estimate"' not in render_html(card)


def test_an_agreement_probe_stored_without_the_table_gives_no_section() -> None:
    probe = {"name": "agreement", "id": "probe-1-agreement", "kind": "agreement", "tables": {}}
    assert estimate_section([probe]) is None
