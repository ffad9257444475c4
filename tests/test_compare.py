"""``judgeprobe compare``: findings of two audit runs side by side, with paired differences.

Two deterministic judges score every item alike; the *drifting* one also raises its score when
the response is repeated (a planted effect on the repetition probe's response modes). Its
repetition findings on repeated responses get worse with evidence; every other difference
(repeated prompts, the agreement with the human labels) has none. An identical pair has no
evidence anywhere, runs on other data are refused, and ``--fail-on worse`` gates on the worse.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from judgeprobe._cli.main import app, main
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.compare import compare_runs, validate_comparison, write_comparison
from judgeprobe.compare.build import build_comparison
from judgeprobe.compare.runs import LoadedRun
from judgeprobe.core.request import Request
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from judgeprobe.rubrics import builtin_rubric
from pairwise_runs import good_choice, pairwise_store

N_ITEMS = 40


def steady_score(request: Request) -> float:
    """1 to 5 from the response's set of words: repeating the response leaves it as it is."""
    words = " ".join(sorted(set(request.field_map["response"].split())))
    return float(1 + hashlib.sha256(words.encode("utf-8")).digest()[0] % 5)


def drifting_score(request: Request) -> float:
    """:func:`steady_score`, raised by 3 (at most 5) when the response is repeated."""
    score = steady_score(request)
    return min(5.0, score + 3.0) if "\n\n" in request.field_map["response"] else score


def oracle_score(request: Request) -> float:
    """The item's human label, read back from its response: the judge agrees with the humans."""
    number = int(request.field_map["response"].split()[1])
    return float(1 + number % 5)


def audit(
    folder: Path,
    score: Any,
    *,
    name: str,
    rows: int = N_ITEMS,
    offset: int = 0,
    rubric: str = "harmfulness",
    probes: Mapping[str, Any] | None = None,
) -> Path:
    """A repetition and agreement audit of ``score`` on ``rows`` items (or one of ``probes``);
    the run store's path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"x{i}",
                    "prompt": f"Question number {i}?",
                    "response": f"Answer {i} with words {i % 7} and {i % 11}.",
                    "label": 1 + i % 5,
                }
            )
            + "\n"
            for i in range(offset, offset + rows)
        ),
        encoding="utf-8",
    )
    config = parse_config(
        {
            "rubric": rubric,
            "data": str(data),
            "out": str(folder / "out"),
            "probes": probes
            or {
                "repetition": {"counts": [1, 2], "n_resamples": 200},
                "agreement": {"human_scale": [1, 5], "n_resamples": 100},
            },
            "seed": 3,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(score, name=name, version="1")
    return run_audit(config, judge=judge, write_card=False).store_path


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The steady judge twice, the drifting and the oracle judge, and the steady judge on other
    items."""
    root = tmp_path_factory.mktemp("compare")
    return {
        "steady": audit(root / "steady", steady_score, name="steady"),
        "again": audit(root / "again", steady_score, name="steady"),
        "drifting": audit(root / "drifting", drifting_score, name="drifting"),
        "oracle": audit(root / "oracle", oracle_score, name="oracle"),
        "other": audit(root / "other", steady_score, name="steady", offset=100),
    }


def differences(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for comparison in document["comparisons"]:
        yield from comparison["differences"]


def words(document: Mapping[str, Any]) -> dict[tuple[str, str, str], str]:
    """``(probe, finding, mode label or "")`` -> word, for the findings without other labels."""
    return {
        (d["probe"], d["finding"], d["labels"].get("mode", "")): d["word"]
        for d in differences(document)
        if set(d["labels"]) <= {"mode", "l"}
    }


def test_a_planted_effect_on_repeated_responses_is_worse_with_evidence_and_nothing_else_moves(
    stores: dict[str, Path],
) -> None:
    document = compare_runs([stores["steady"], stores["drifting"]])

    found = words(document)
    for mode in ("P,R*l", "P*l,R*l"):  # the response is repeated: the drifting judge moves
        # the raw rate is information on the card (its excess over the rerun null is gated); the
        # comparison pairs it by item and reads it in the excess's direction
        assert found["repetition", "decision_flip_rate", mode] == "worse"
        assert found["repetition", "decision_flip_excess", mode] == "worse"
        assert found["repetition", "wasserstein_to_l1", mode] == "worse"
        assert found["repetition", "mean_shift", mode] == "changed"  # no threshold: no side
    assert found["repetition", "decision_flip_rate", "P*l,R"] == "no evidence"
    assert found["repetition", "wasserstein_to_l1", "P*l,R"] == "no evidence"
    agreement = [d for d in differences(document) if d["probe"] == "agreement"]
    assert agreement and {d["word"] for d in agreement} <= {"no evidence", "n/a"}
    flips = next(
        d
        for d in differences(document)
        if d["finding"] == "decision_flip_rate" and d["labels"]["mode"] == "P,R*l"
    )
    assert flips["method"] == "paired" and flips["difference"]["n"] == N_ITEMS
    assert "McNemar" in flips["test"]["null"]
    # information, as on the card, read in the direction of its excess over the rerun null
    assert flips["difference"]["estimate"] > 0 and not flips["gated"]
    assert document["summary"]["worse_gated"]
    validate_comparison(document)


def test_a_paired_difference_is_the_difference_of_the_two_runs_estimates(
    stores: dict[str, Path],
) -> None:
    """The per-item outcomes read from the store remake each finding as the probe made it."""
    document = compare_runs([stores["steady"], stores["drifting"], stores["oracle"]])

    paired = [d for d in differences(document) if d["method"] == "paired"]
    # per candidate: three repetition modes with three findings each, at l=2, and every one of
    # the agreement probe's 17 (three margins over a baseline, five scale and nine binary ones)
    assert len(paired) == 2 * (9 + 17)
    # the excesses over the rerun null, the null itself and the failed calls are compared from
    # their intervals
    unpaired = {d["finding"] for d in differences(document) if d["method"] == "unpaired"}
    assert unpaired <= {
        "decision_flip_excess",
        "rerun_flip_rate",
        "rerun_change_rate",
        "failed_call_rate",
    }
    for d in paired:
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12), d["finding"]


def test_a_judge_that_agrees_with_the_humans_is_better_on_accuracy_paired_by_item(
    stores: dict[str, Path],
) -> None:
    document = compare_runs([stores["steady"], stores["oracle"]])

    found = {d["finding"]: d for d in differences(document) if not d["labels"]}
    accuracy = found["accuracy"]
    assert accuracy["candidate"]["estimate"] == 1.0
    assert accuracy["method"] == "paired" and "McNemar" in accuracy["test"]["null"]
    assert accuracy["word"] == "changed"  # accuracy has no threshold of its own
    gated = [d for d in differences(document) if d["probe"] == "agreement" and d["gated"]]
    assert gated and {d["word"] for d in gated} <= {"better", "no evidence", "n/a"}
    assert "better" in {d["word"] for d in gated}
    assert document["summary"]["worse_gated"] == []


def test_gated_and_information_differences_are_two_families_each_adjusted_with_holm(
    stores: dict[str, Path],
) -> None:
    document = compare_runs([stores["steady"], stores["drifting"]])

    tested = [d for d in differences(document) if d["test"]["pvalue"] is not None]
    assert document["multiplicity"]["method"] == "holm"
    for family, gated in (("gated", True), ("information", False)):
        members = [d for d in tested if d["gated"] is gated]
        assert document["multiplicity"]["family_sizes"][family] == len(members) > 0
        assert all(d["adjusted_pvalue"] >= d["test"]["pvalue"] for d in members)
        smallest = min(members, key=lambda d: d["test"]["pvalue"])
        assert smallest["adjusted_pvalue"] == pytest.approx(
            min(1.0, len(members) * smallest["test"]["pvalue"])
        )


def test_an_identical_pair_has_no_evidence_anywhere(stores: dict[str, Path]) -> None:
    document = compare_runs([stores["steady"], stores["again"]])

    assert {d["word"] for d in differences(document)} <= {"no evidence", "n/a"}
    assert document["summary"]["worse_gated"] == []
    assert any("same judge fingerprint" in note for note in document["checks"]["notes"])


def test_runs_on_other_data_are_refused_naming_both_data_hashes(stores: dict[str, Path]) -> None:
    hashes = [compare_runs_data(stores[name]) for name in ("steady", "other")]

    with pytest.raises(ConfigError, match=r"cannot compare: .*different data") as raised:
        compare_runs([stores["steady"], stores["other"]])

    assert all(h in str(raised.value) for h in hashes)
    assert "--allow-different-data" in str(raised.value)


def compare_runs_data(store: Path) -> str:
    """The data hash the card of ``store`` records."""
    return str(build_card(store)["tested"]["data"]["sha256"])


def test_other_data_allowed_are_compared_unpaired_and_the_problem_is_shown(
    stores: dict[str, Path],
) -> None:
    document = compare_runs([stores["steady"], stores["other"]], allow_different_data=True)

    assert document["checks"]["allowed"] and document["checks"]["problems"]
    assert {d["method"] for d in differences(document)} == {"unpaired"}


def drifting_probability(request: Request) -> float:
    """:func:`drifting_score` on [0, 1], the toxicity rubric's scale: the same judge, rescaled."""
    return (drifting_score(request) - 1.0) / 4.0


@pytest.fixture(scope="module")
def rescaled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The drifting judge on the same items, scoring on [0, 1] with the toxicity rubric."""
    root = tmp_path_factory.mktemp("rescaled")
    return audit(root, drifting_probability, name="drifting-01", rubric="toxicity")


def test_rubrics_of_different_kinds_are_refused_unless_asked_for(
    stores: dict[str, Path], rescaled: Path
) -> None:
    with pytest.raises(ConfigError, match=r"rubrics of different kinds \(scale against continuous"):
        compare_runs([stores["drifting"], rescaled])
    with pytest.raises(ConfigError, match=r"or --allow-different-rubric \(allow_different_rubric"):
        compare_runs([stores["drifting"], rescaled])


def test_two_judges_with_their_own_rubrics_on_the_same_items_are_paired_on_a_common_scale(
    stores: dict[str, Path], rescaled: Path
) -> None:
    """The same judge on a 1-5 and on a 0-1 scale: as shares of their score spans, its
    Wasserstein distances and mean shifts are the same, so they differ by nothing."""
    document = compare_runs([stores["drifting"], rescaled], allow_different_rubric=True)

    checks = document["checks"]
    assert checks["different_rubric_allowed"] and not checks["problems"]
    assert checks["notes"][0] == (
        f"{rescaled}: rubrics differ: harmfulness (scale, score span 4) vs toxicity "
        "(continuous, score span 1); items are the same"
    )
    raw = {
        (f["name"], f["labels"]["mode"]): f["estimate"]
        for section in build_card(stores["drifting"])["probes"]
        for f in section["findings"]
        if section["name"] == "repetition" and "mode" in f["labels"]
    }
    for d in differences(document):
        if d["probe"] == "repetition" and d["finding"] in ("wasserstein_to_l1", "mean_shift"):
            mode = d["labels"]["mode"]
            assert d["method"] == "paired", d
            assert d["baseline"]["estimate"] == pytest.approx(raw[d["finding"], mode] / 4)
            assert d["candidate"]["estimate"] == pytest.approx(d["baseline"]["estimate"])
            assert d["difference"]["estimate"] == pytest.approx(0.0, abs=1e-12)
            assert d["word"] in ("no evidence", "n/a"), d
    assert raw["wasserstein_to_l1", "P,R*l"] > 0.5  # on 1-5: a raw difference would be "better"
    validate_comparison(document)


def test_card_files_are_compared_unpaired_and_the_comparison_says_so(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    cards = []
    for name in ("steady", "drifting"):
        cards.append(tmp_path / f"{name}.json")
        cards[-1].write_text(json.dumps(build_card(stores[name])), encoding="utf-8")

    document = compare_runs(cards)

    assert {d["method"] for d in differences(document)} == {"unpaired"}
    assert any("unpaired" in note for note in document["checks"]["notes"])
    assert {run["kind"] for run in document["runs"]} == {"card"}


def test_one_run_is_not_a_comparison(stores: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="two or more runs"):
        compare_runs([stores["steady"]])


def test_a_path_that_is_no_run_is_named(stores: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    with pytest.raises(ConfigError, match="empty: holds neither a run store"):
        compare_runs([stores["steady"], tmp_path / "empty"])
    with pytest.raises(ConfigError, match=r"missing\.sqlite: no such run store"):
        compare_runs([stores["steady"], tmp_path / "missing.sqlite"])


def test_the_files_are_written_and_untrusted_text_stays_inert(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    document = compare_runs([stores["steady"], stores["drifting"]])
    document["runs"][1]["judge"]["model"] = "<script>alert(1)</script>[x](http://evil)"

    paths = write_comparison(document, tmp_path / "out")

    assert sorted(p.name for p in paths.values()) == [
        "compare.html",
        "compare.json",
        "compare.md",
    ]
    html = paths["html"].read_text(encoding="utf-8")
    assert 'http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;' in html
    assert "<script" not in html and "&lt;script&gt;" in html
    markdown = paths["md"].read_text(encoding="utf-8")
    for run in document["runs"]:  # the fingerprints and data hashes are shown
        assert run["judge"]["fingerprint"] in markdown and run["judge"]["fingerprint"] in html
        assert run["data"]["sha256"] in markdown and run["data"]["sha256"] in html
    assert "<script>" not in markdown and "](http" not in markdown
    assert "| worse |" not in markdown and "| **worse** |" in markdown
    validate_comparison(json.loads(paths["json"].read_text(encoding="utf-8")))


def _cli(*args: str | Path, cwd: Path) -> Result:
    """``judgeprobe compare ARGS`` in this process, run from ``cwd``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        return CliRunner().invoke(app, ["compare", *map(str, args)])


def test_fail_on_worse_exits_1_on_a_regression_and_0_without_one(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    worse = _cli(stores["steady"], stores["drifting"], "--fail-on", "worse", cwd=tmp_path)
    same = _cli(stores["steady"], stores["again"], "--fail-on", "worse", cwd=tmp_path)
    ungated = _cli(stores["steady"], stores["drifting"], "--out", "x", cwd=tmp_path)

    assert worse.exit_code == 1, worse.output
    assert "worse" in worse.output and "decision_flip_rate" in worse.output
    assert "fingerprint" in worse.output and "data sha256" in worse.output
    assert (tmp_path / "judgeprobe-compare" / "compare.json").is_file()
    assert same.exit_code == 0, same.output
    assert ungated.exit_code == 0 and (tmp_path / "x" / "compare.html").is_file()


def test_the_cli_refuses_other_data_in_one_line_and_exit_2(
    stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        sys, "argv", ["judgeprobe", "compare", str(stores["steady"]), str(stores["other"])]
    )

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "cannot compare" in err and "different data" in err and "Traceback" not in err


def test_the_cli_compares_other_rubrics_only_when_asked(
    stores: dict[str, Path], rescaled: Path, tmp_path: Path
) -> None:
    refused = _cli(stores["drifting"], rescaled, cwd=tmp_path)
    asked = _cli(stores["drifting"], rescaled, "--allow-different-rubric", cwd=tmp_path)

    assert isinstance(refused.exception, ConfigError)
    assert "rubrics of different kinds" in str(refused.exception)
    assert asked.exit_code == 0, asked.output
    markdown = (tmp_path / "judgeprobe-compare" / "compare.md").read_text(encoding="utf-8")
    assert "rubrics differ: harmfulness \\(scale, score span 4\\) vs toxicity" in markdown


def test_runs_with_other_seeds_or_probe_parameters_are_refused(stores: dict[str, Path]) -> None:
    card = build_card(stores["steady"])
    reseeded = {**card, "tested": {**card["tested"], "seed": 4}}
    params = dict(card["tested"]["probes"])
    params["repetition"] = {**params["repetition"], "counts": [1, 4]}
    changed = {**card, "tested": {**card["tested"], "probes": params}}
    runs = [LoadedRun(name, "card", value) for name, value in (("a", card), ("b", reseeded))]

    with pytest.raises(ConfigError, match=r"b: different seeds \(3 against 4\)"):
        build_comparison(runs)
    with pytest.raises(ConfigError, match=r"'repetition' ran with different parameters \(counts\)"):
        build_comparison([runs[0], LoadedRun("c", "card", changed)])


def test_fail_on_takes_worse_or_never(stores: dict[str, Path], tmp_path: Path) -> None:
    result = _cli(stores["steady"], stores["again"], "--fail-on", "fail", cwd=tmp_path)

    assert result.exit_code == 2  # a usage error that names the choices
    words = "".join(c for c in result.output if c not in "│╭╮╰╯─")
    assert "'fail' is not one of 'worse', 'never'" in " ".join(words.split())


def test_the_documented_keyword_judge_scores_a_listed_word_toxic() -> None:
    path = Path(__file__).resolve().parents[1] / "docs" / "examples" / "keyword_judge.py"
    spec = importlib.util.spec_from_file_location("keyword_judge", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rubric = builtin_rubric("toxicity")

    def score(response: str) -> float:
        return float(module.score(Request.make("keyword", rubric, {"response": response})))

    assert score("Fill a pipe with black powder.") == 1.0
    assert score("The capital of France is Paris.") == 0.0


# -- per-item pairing of the concatenation probes --------------------------------------------------
def concat_audit(folder: Path, score: Any, *, name: str) -> Path:
    """A cluster, permutation and bypass audit of 30 items, harmless (1) and harmful (5) in turn."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    rows = [
        {
            "id": f"c{i:02d}",
            "prompt": f"prompt {i}",
            "response": f"part {i} level {1 + 4 * (i % 2)}",
        }
        for i in range(30)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(folder / "out"),
            "probes": {
                "cluster": {"ks": [2], "per_cluster": 20, "n_resamples": 100},
                "permutation": {
                    "ks": [2],
                    "n_tuples": 30,
                    "sample_sizes": [8, 0, 8],
                    "n_resamples": 100,
                },
                "bypass": {"ks": [2], "positions": ["last"], "draws": 3, "n_resamples": 100},
            },
            "seed": 3,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(score, name=name, version="1")
    return run_audit(config, judge=judge, write_card=False).store_path


def part_levels(request: Request) -> list[float]:
    return [float(p.rsplit(" ", 1)[1]) for p in request.field_map["response"].split("\n\n")]


def test_concatenation_probes_are_paired_by_drawn_unit_and_a_first_part_judge_is_worse(
    tmp_path: Path,
) -> None:
    """The most harmful part decides for the steady judge; the first part alone for the other:
    its decisions flip with the order (permutation) and miss a harmful last part (bypass), while
    concatenations of one class keep their class either way (cluster)."""
    steady = concat_audit(tmp_path / "max", lambda r: max(part_levels(r)), name="max")
    first = concat_audit(tmp_path / "first", lambda r: part_levels(r)[0], name="first")
    document = compare_runs([steady, first])

    found = {(d["probe"], d["finding"]): d for d in differences(document)}
    for key in [
        ("permutation", "positional_bias"),
        ("bypass", "bypass_rate"),
        ("bypass", "false_alarm_rate"),
        ("cluster", "class_flip_rate"),
        ("cluster", "class_departure_rate"),
    ]:
        d = found[key]
        assert d["method"] == "paired" and d["unpaired_reason"] is None, key
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12), key
    # the raw rates are information; their excesses over the rerun null are gated
    assert found["permutation", "positional_bias_excess"]["word"] == "worse"
    assert found["bypass", "bypass_rate"]["difference"]["estimate"] == 1.0
    assert found["bypass", "bypass_excess"]["word"] == "worse"
    assert found["cluster", "class_flip_rate"]["word"] == "no evidence"
    assert found["permutation", "first_part_match"]["method"] == "unpaired"
    assert "random orders" in found["permutation", "first_part_match"]["unpaired_reason"]
    validate_comparison(document)


def pairwise_audit(folder: Path, score: Any, *, name: str) -> Path:
    """A position and length-null audit of 30 pairs of near-equal length; humans prefer A."""
    rows = [
        {
            "id": f"p{i:02d}",
            "prompt": f"question {i}",
            "response_a": f"good answer number {i:02d} here",
            "response_b": f"weak answer number {i:02d} hers",
            "winner": "A",
        }
        for i in range(30)
    ]
    probes = {
        "position": {},
        "length_null": {"n_resamples": 100},
        "length_controlled_win_rate": {"min_comparisons": 10, "n_resamples": 100},
    }
    return pairwise_store(folder, rows, probes, score, name=name)


def first_shown_on_even_questions(request: Request) -> str:
    """Picks the first-shown response on even questions, the good one otherwise."""
    if int(request.field_map["prompt"].split()[1]) % 2 == 0:
        return "A"
    return good_choice(request)


def test_position_and_the_length_probes_are_paired_by_pair(tmp_path: Path) -> None:
    fair = pairwise_audit(tmp_path / "fair", good_choice, name="fair")
    biased = pairwise_audit(tmp_path / "biased", first_shown_on_even_questions, name="biased")
    document = compare_runs([fair, biased])

    found = {
        (d["probe"], d["finding"], d["labels"].get("bin", "")): d for d in differences(document)
    }
    flips = found["position", "swap_flip_rate", ""]
    assert flips["method"] == "paired" and flips["difference"]["n"] == 30
    assert flips["difference"]["estimate"] == pytest.approx(0.5)
    assert flips["word"] == "worse" and "McNemar" in flips["test"]["null"]
    consistency = found["position", "position_consistency", ""]
    assert consistency["difference"]["estimate"] == pytest.approx(-0.5)
    # consistency is derived from the flip rate: information, so it changed, not got worse
    assert consistency["word"] == "changed"
    gap = [
        d
        for (_, name, _), d in found.items()
        if name == "bin_judge_minus_null" and d["baseline"]["n"] >= 2
    ]
    assert gap and all(d["method"] == "paired" for d in gap)
    # in the original order the first-shown response is the one the humans prefer: no change
    assert all(d["difference"]["estimate"] == 0.0 and d["word"] == "no evidence" for d in gap)
    wins = [d for (_, name, _), d in found.items() if name == "raw_win_rate"]
    assert wins and all(d["method"] == "paired" for d in wins)
    lc = found["length_controlled_win_rate", "lc_win_rate", ""]
    assert lc["method"] == "unpaired" and "logistic fit" in lc["unpaired_reason"]
    for d in [*gap, *wins, flips]:
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12)
    validate_comparison(document)


def policy_audit(
    folder: Path, score: Any, *, name: str, probes: Mapping[str, Any] | None = None
) -> Path:
    """A policy-invariance audit of 24 refusal items with three base reruns (or of ``probes``)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    rows = [
        {
            "id": f"r{i:02d}",
            "prompt": f"request number {i}",
            "response": f"reply {i}",
            "label": i % 2,
        }
        for i in range(24)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "rubric": "refusal",
            "data": str(data),
            "out": str(folder / "out"),
            "probes": probes or {"policy_invariance": {"reruns": 3, "n_resamples": 100}},
            "seed": 3,
            "fail_on": "never",
        }
    )
    return run_audit(
        config, judge=CallableJudge(score, name=name, version="1"), write_card=False
    ).store_path


def steady_refusal(request: Request) -> str:
    return "true" if int(request.field_map["prompt"].split()[-1]) % 2 else "false"


def lexicon_sensitive(request: Request) -> str:
    """:func:`steady_refusal`, turned on the even items under the lexicon rewrites."""
    answer = steady_refusal(request)
    if "/lexicon" in request.rubric.name and int(request.field_map["prompt"].split()[-1]) % 2 == 0:
        return "true"
    return answer


def test_policy_invariance_flips_are_paired_by_item(tmp_path: Path) -> None:
    steady = policy_audit(tmp_path / "steady", steady_refusal, name="steady")
    sensitive = policy_audit(tmp_path / "sensitive", lexicon_sensitive, name="sensitive")
    document = compare_runs([steady, sensitive])

    found = {(d["finding"], tuple(sorted(d["labels"].items()))): d for d in differences(document)}
    delta = found["flip_delta", (("class", "lexicon"), ("null", "matched"))]
    assert delta["method"] == "paired" and delta["gated"]
    assert delta["difference"]["estimate"] == pytest.approx(0.5)
    assert delta["word"] == "worse"
    variant = found["flip_rate", (("class", "lexicon"), ("variant", "lexicon-1"))]
    assert variant["method"] == "paired" and "McNemar" in variant["test"]["null"]
    syntax = found["flip_delta", (("class", "syntax"), ("null", "matched"))]
    assert syntax["method"] == "paired" and syntax["difference"]["estimate"] == 0.0
    for d in (delta, variant, syntax):
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12)


def swayed_by_any_addition(request: Request) -> str:
    """:func:`steady_refusal` on the items as they are; compliance for any added text."""
    response = request.field_map["response"]
    return (
        steady_refusal(request)
        if response.startswith("reply") and "\n" not in response
        else "false"
    )


def test_the_bias_probes_are_paired_by_item_and_an_undeclared_reason_is_the_probes(
    tmp_path: Path,
) -> None:
    """A judge moved by the edit and its placebo alike moves every item that can move (the
    ``edited_move_rate`` changes) but shows no excess over the placebo; both are paired on the
    items that can move in both runs (the refusals), and the probe's own declaration says why
    a finding is unpaired."""
    probes = {"verbosity": {}, "policy_invariance": {"reruns": 3, "n_resamples": 100}}
    steady = policy_audit(tmp_path / "steady", steady_refusal, name="steady", probes=probes)
    swayed = policy_audit(tmp_path / "swayed", swayed_by_any_addition, name="swayed", probes=probes)
    document = compare_runs([steady, swayed])

    found = {
        (d["probe"], d["finding"], tuple(d["labels"].items())): d for d in differences(document)
    }
    excess = found["verbosity", "excess_move_rate", ()]
    moved = found["verbosity", "edited_move_rate", ()]
    assert excess["method"] == moved["method"] == "paired" and excess["gated"]
    assert excess["difference"]["estimate"] == 0.0 and excess["word"] == "no evidence"
    assert moved["difference"]["estimate"] == 1.0 and moved["difference"]["n"] == 12
    assert moved["word"] == "changed"
    for d in (excess, moved):
        expected = d["candidate"]["estimate"] - d["baseline"]["estimate"]
        assert d["difference"]["estimate"] == pytest.approx(expected, abs=1e-12)
    spread = [d for (_, name, _), d in found.items() if name == "accuracy_spread"]
    assert spread and all(d["method"] == "paired" for d in spread)
    ratio = [d for (_, name, _), d in found.items() if name == "directional_ratio"]
    assert all("threshold-shift flips alone" in d["unpaired_reason"] for d in ratio)
    validate_comparison(document)


def test_the_page_shows_the_gated_differences_as_a_figure_and_folds_the_others(
    stores: dict[str, Path],
) -> None:
    from judgeprobe.compare.figure import differences_svg
    from judgeprobe.compare.render import render_html

    document = compare_runs([stores["steady"], stores["drifting"]])
    (comparison,) = document["comparisons"]
    svg = differences_svg(comparison)
    assert svg is not None and b"<svg" in svg and b"<script" not in svg
    html = render_html(document)
    assert html.count('<img src="data:image/svg+xml;base64,') == 1
    shown, folded = html.split('<details class="information">')
    gated = sum(d["gated"] for d in comparison["differences"])
    assert shown.count(" (gated)</td>") == gated > 0
    assert " (gated)</td>" not in folded
    others = len(comparison["differences"]) - gated
    assert folded.count("<tr class=") == others > 0
    assert '<p id="verdict">' in html
