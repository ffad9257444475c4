"""``judgeprobe demo``: two real judges on the demo data, each with its rubric, compared.

The embedded LLM judge is swapped out for a deterministic stand-in (the real one is audited by
``make demo``); the profanity classifier is the real one, which takes milliseconds per call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.demo import (
    DEMO_PROBES,
    LEFT_OUT_OF_DEMO,
    DemoOutcome,
    comparison_lines,
    demo_configs,
    run_demo,
)
from judgeprobe.compare import validate_comparison
from judgeprobe.core.request import Request
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import probe_names
from judgeprobe.report import validate_card

QUICK = ("repetition", "human_agreement", "position")
"""The demo probes of the quick run: both kinds of data, a pairwise probe the classifier lacks."""

FLIP_FINDINGS = ("wasserstein_to_l1", "mean_shift", "decision_flip_rate", "decision_flip_excess")
"""The repetition findings of each mode and count."""


def stand_in(request: Request) -> float | str:
    """Instead of the LLM: 1-5 from the text's length, 'A' or 'B' for a pair."""
    if request.rubric.kind == "pairwise":
        return "AB"[len(request.render()) % 2]
    return float(len(request.render()) % 5 + 1)


def stand_ins() -> dict[str, Any]:
    return {"llama": CallableJudge(stand_in, name="stand-in", version="1")}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoOutcome]:
    out = tmp_path_factory.mktemp("demo") / "judgeprobe-demo"
    return out, run_demo(out, judges=stand_ins(), progress=False, only=QUICK)


def test_the_demo_audits_both_judges_each_with_the_rubric_it_fits_on_the_same_items() -> None:
    configs = demo_configs("out")

    llama, profanity = configs["llama"], configs["profanity"]
    assert (llama.judge, llama.rubric, llama.out) == ("llama", "harmfulness", "out/llama")
    assert (profanity.judge, profanity.rubric, profanity.out) == (
        "profanity",
        "toxicity",
        "out/profanity",
    )
    assert llama.data == profanity.data == "demo" and llama.seed == profanity.seed
    assert set(llama.probes) == set(probe_names()) - set(LEFT_OUT_OF_DEMO)
    assert not llama.not_applicable


def test_the_classifier_runs_every_pointwise_demo_probe_with_the_same_parameters() -> None:
    """Shared probes with equal parameters are what lets compare pair their findings."""
    llama, profanity = demo_configs("out").values()

    assert set(profanity.probes) | set(profanity.not_applicable) == set(llama.probes)
    pairwise = {name for name, params in DEMO_PROBES.items() if params.get("data")}
    assert set(profanity.not_applicable) == pairwise | {"policy_invariance"}
    for name in pairwise:
        assert profanity.not_applicable[name] == (
            f"probe {name!r} needs a pairwise rubric, not the continuous rubric 'toxicity'"
        )
    assert "rubric 'toxicity' gives none" in profanity.not_applicable["policy_invariance"]
    assert all(profanity.probes[name] == llama.probes[name] for name in profanity.probes)


def test_a_probe_listed_as_not_applicable_must_be_known_and_must_not_run() -> None:
    base = {"judge": "profanity", "rubric": "toxicity", "probes": {"repetition": {}}}

    with pytest.raises(ConfigError, match="unknown probe 'nope'"):
        parse_config({**base, "not_applicable": {"nope": "why"}})
    with pytest.raises(ConfigError, match="'repetition' is both selected and listed as not"):
        parse_config({**base, "not_applicable": {"repetition": "why"}})


def test_the_demo_writes_both_cards_and_their_comparison(demo: tuple[Path, DemoOutcome]) -> None:
    out, outcome = demo

    for name in ("llama", "profanity"):
        for suffix in ("html", "md", "json"):
            assert (out / name / f"card.{suffix}").is_file(), (name, suffix)
        assert outcome.audits[name].complete
    for suffix in ("html", "md", "json"):
        assert outcome.comparison_paths[suffix] == out / f"compare.{suffix}"
    document = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    validate_comparison(document)
    assert [run["rubric"]["name"] for run in document["runs"]] == ["harmfulness", "toxicity"]


def test_the_classifier_card_says_which_probes_do_not_apply_and_why(
    demo: tuple[Path, DemoOutcome],
) -> None:
    out, _ = demo

    card = json.loads((out / "profanity" / "card.json").read_text(encoding="utf-8"))
    validate_card(card)
    assert set(card["tested"]["not_applicable"]) == {"human_agreement", "position"}
    assert {p["name"] for p in card["probes"]} == {"repetition"}
    markdown = (out / "profanity" / "card-appendix.md").read_text(encoding="utf-8")
    assert "Not applicable to this judge, so not run:" in markdown
    assert "- position: probe 'position' needs a pairwise rubric, not the continuous" in markdown
    assert 'id="tested-not-applicable"' in (out / "profanity" / "card.html").read_text("utf-8")
    llama = json.loads((out / "llama" / "card.json").read_text(encoding="utf-8"))
    assert llama["tested"]["not_applicable"] == {}


def test_the_comparison_pairs_the_shared_findings_and_says_the_rubrics_differ(
    demo: tuple[Path, DemoOutcome],
) -> None:
    out, outcome = demo
    document = outcome.comparison
    assert document is not None

    (comparison,) = document["comparisons"]
    methods = {(d["probe"], d["method"]) for d in comparison["differences"]}
    assert ("repetition", "paired") in methods
    assert comparison["unmatched_probes"] == ["human_agreement", "position"]
    # the toxicity rubric shows the response alone: repeating the prompt is no probe of it
    assert comparison["unmatched_findings"] == {
        "baseline": [
            f"repetition {name} (l={times}, mode={mode})"
            for mode in ("P*l,R", "P*l,R*l")
            for times in DEMO_PROBES["repetition"]["counts"][1:]
            for name in FLIP_FINDINGS
        ],
        "candidate": [],
    }
    assert document["checks"]["different_rubric_allowed"] and not document["checks"]["problems"]
    notes = document["checks"]["notes"]
    assert notes[0] == (
        f"{out / 'profanity' / 'run.sqlite'}: rubrics differ: harmfulness (scale, score span 4) "
        "vs toxicity (continuous, score span 1); items are the same"
    )
    assert notes[1].startswith("findings in score units (Wasserstein distances, mean shifts)")
    markdown = (out / "compare.md").read_text(encoding="utf-8")
    assert "rubrics differ: harmfulness \\(scale, score span 4\\) vs toxicity" in markdown
    assert "In one run only: human\\_agreement, position" in markdown


def test_the_summary_names_each_gated_finding_that_differs_and_counts_the_rest(
    demo: tuple[Path, DemoOutcome],
) -> None:
    _, outcome = demo
    document = outcome.comparison
    assert document is not None

    lines = comparison_lines(document)
    gated = [d for d in document["comparisons"][0]["differences"] if d["gated"]]
    differing = [d for d in gated if d["word"] in ("better", "worse")]
    assert lines[0] == (
        "alt-profanity-check (toxicity) against stand-in (harmfulness), on the same 40 demo items:"
    )
    assert len(lines) == 1 + len(differing) + 4
    quiet = sum(d["word"] == "no evidence" for d in gated)
    assert f"  no evidence either way: {quiet} gated findings;" in "\n".join(lines)
    assert lines[-3] == "  run by one judge only: human_agreement, position"
    # the prompt-repeating modes (2) x counts above 1 x the findings per mode and count: the
    # toxicity rubric reads the response alone
    only = 2 * len(DEMO_PROBES["repetition"]["counts"][1:]) * len(FLIP_FINDINGS)
    assert lines[-2] == f"  findings of stand-in only: {only} (repetition; listed in compare.md)"
    assert lines[-1] == document["summary"]["headline"]


def test_the_demo_command_prints_the_cards_and_the_comparison(
    demo: tuple[Path, DemoOutcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, outcome = demo
    import judgeprobe.audit.demo

    asked: dict[str, Any] = {}

    def ran(where: Path, **options: Any) -> DemoOutcome:
        asked.update(options, out=where)
        return outcome

    monkeypatch.setattr(judgeprobe.audit.demo, "run_demo", ran)

    done = CliRunner().invoke(app, ["demo", "--out", str(out)])

    assert done.exit_code == 0, done.output
    assert asked["out"] == out and asked["fail_on"] == "never"
    shown = " ".join(done.output.split())
    assert f"card: {out / 'llama' / 'card.html'}" in shown
    assert f"card: {out / 'profanity' / 'card.html'}" in shown
    assert "alt-profanity-check (toxicity) against stand-in (harmfulness)" in shown
    assert "run by one judge only: human_agreement, position" in shown
    assert f"comparison: {out / 'compare.html'}" in shown
