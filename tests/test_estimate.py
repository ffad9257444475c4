"""``judgeprobe estimate``: the judge's rate three ways, label budgets, the labelling sheet.

The real-data tests run the profanity classifier on PyRIT's harm set (1005 items, every one
labelled); the others a function judge on items made here.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import data_root
from judgeprobe._cli.estimate import QuantityChoice
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data import Dataset
from judgeprobe.data.items import HumanLabel, PointwiseItem
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.estimate import (
    build_population,
    estimate,
    estimate_population,
    judge_population,
    read_labels,
    suggest,
    uniform_design,
    write_sheet,
)
from judgeprobe.estimate.run import suggest_labels
from judgeprobe.estimate.suggest import OVERSAMPLE, allocate
from judgeprobe.estimate.unstable import unstable_items
from judgeprobe.judges import CallableJudge
from judgeprobe.probes.agreement.corrected.population import QUANTITIES
from judgeprobe.probes.agreement.data import ScaleMap
from judgeprobe.rubrics import builtin_rubric

HARM = data_root() / "pyrit_scorer_evals" / "harm"
needs_pyrit = pytest.mark.skipif(not HARM.is_dir(), reason=f"shared data not found: {HARM}")
TOXICITY = builtin_rubric("toxicity")
IDENTITY = ScaleMap(0.0, 1.0, 0.0, 1.0)


def items(n: int, rate: float, seed: int = 0) -> list[PointwiseItem]:
    """``n`` items, a share ``rate`` of them labelled toxic (1), the others clean (0)."""
    rng = np.random.default_rng(seed)
    return [
        PointwiseItem(f"i{k}", f"prompt {k}", f"response {k}", labels=(HumanLabel(float(y)),))
        for k, y in enumerate(rng.random(n) < rate)
    ]


def probability_judge(truth_weight: float, seed: int = 1) -> CallableJudge:
    """A judge whose toxicity probability leans towards the label by ``truth_weight``."""
    noise = np.random.default_rng(seed)
    cache: dict[str, float] = {}

    def score(request: Request) -> float:
        text = request.field_map["response"]
        if text not in cache:
            cache[text] = float(noise.random())
        label = LABELS[text]
        return truth_weight * label + (1 - truth_weight) * cache[text]

    return CallableJudge(score, name=f"leaning-{truth_weight}-{seed}")


LABELS: dict[str, float] = {}


def dataset(n: int = 300, rate: float = 0.4, seed: int = 0) -> Dataset:
    made = items(n, rate, seed)
    LABELS.update({item.response: item.labels[0].value for item in made})
    return Dataset("made", tuple(made), source="tests", sha256="0" * 16, scale=(0.0, 1.0))


def truth(data: Dataset) -> dict[str, float]:
    """Each item's human label (one rater each)."""
    return {item.id: item.labels[0].value for item in data.items if isinstance(item, PointwiseItem)}


def test_the_cli_choices_of_quantity_are_the_estimates() -> None:
    from typing import get_args

    assert get_args(QuantityChoice) == QUANTITIES


def test_the_naive_rate_is_the_judges_and_the_others_estimate_the_humans(tmp_path: Path) -> None:
    data = dataset()
    result = estimate(
        probability_judge(0.3), TOXICITY, data, label_budget=60, seed=3, store=tmp_path / "s.db"
    )
    judged = judge_population(
        probability_judge(0.3), TOXICITY, data, store=tmp_path / "s.db"
    ).population
    assert result.naive.estimate == pytest.approx(judged.judge.mean())
    assert result.naive.n == result.items == 300
    assert result.labels_only.n == result.corrected.n == result.labels == 60
    human = judged.human.mean()
    for name in ("labels_only", "corrected"):
        assert getattr(result, name).ci.contains(human)
    assert result.corrected.ci.width <= result.labels_only.ci.width
    assert result.predictor == "probability" and 0 < result.lam <= 1


def test_every_label_gives_the_all_label_rate_exactly(tmp_path: Path) -> None:
    data = dataset()
    result = estimate(probability_judge(0.5), TOXICITY, data, store=tmp_path / "s.db")
    rate = float(np.mean(list(truth(data).values())))
    for est in (result.labels_only, result.corrected):
        assert est.estimate == pytest.approx(rate)
        assert est.ci.low == est.ci.high == pytest.approx(rate)
    assert any("Every item is labelled" in note for note in result.notes)


def test_a_label_budget_draws_that_many_labels_reproducibly_by_seed() -> None:
    pool = np.arange(0, 100, 2)
    first = uniform_design(pool, 100, 10, seed=4)
    assert first == uniform_design(pool, 100, 10, seed=4)
    assert first.rows != uniform_design(pool, 100, 10, seed=5).rows
    assert set(first.rows) <= set(pool.tolist()) and first.labels == 10
    with pytest.raises(ConfigError, match="more than the 50 labelled items"):
        uniform_design(pool, 100, 51, seed=0)


def test_a_target_width_says_how_many_labels_each_estimate_needs(tmp_path: Path) -> None:
    result = estimate(
        probability_judge(0.8),
        TOXICITY,
        dataset(),
        label_budget=50,
        target_width=0.05,
        store=tmp_path / "s.db",
    )
    needed = result.labels_needed
    assert needed is not None and needed.half_width == 0.05
    assert 2 <= needed.corrected < needed.labels_only <= 300


def test_human_values_are_the_share_of_raters_in_the_positive_class() -> None:
    item = PointwiseItem(
        "a", "p", "r", labels=(HumanLabel(0.75), HumanLabel(0.25), HumanLabel(0.5))
    )
    population = build_population([item], {"a": Verdict.scored(0.2)}, TOXICITY, "rate", IDENTITY)
    assert population.human.tolist() == [pytest.approx(2 / 3)]  # 0.5 is toxic (positive_at)
    mean = build_population([item], {"a": Verdict.scored(0.2)}, TOXICITY, "mean", IDENTITY)
    assert mean.human.tolist() == [pytest.approx(0.5)] and mean.judge.tolist() == [0.2]


def test_items_without_an_ok_verdict_are_outside_the_population_and_counted() -> None:
    made = items(4, 0.5)
    verdicts = {
        "i0": Verdict.scored(0.9),
        "i1": Verdict.failed("timeout"),
        "i2": Verdict.scored(0.1),
    }
    population = build_population(made, verdicts, TOXICITY, "rate", IDENTITY)
    assert population.ids == ["i0", "i2"] and population.left_out == 2
    assert population.judge.tolist() == [1.0, 0.0]


def test_a_sheet_label_is_a_number_on_the_data_scale_or_a_class_name() -> None:
    population = build_population(items(2, 0.5), {}, TOXICITY, "rate", IDENTITY)
    assert [population.label_value(v) for v in ("toxic", "Clean", "1", 0.25, "0.5")] == [
        1.0,
        0.0,
        1.0,
        0.0,
        1.0,
    ]
    with pytest.raises(DataError, match="not a number or 'toxic' / 'clean'"):
        population.label_value("maybe")


def test_a_rubric_without_the_quantity_asked_for_is_refused() -> None:
    with pytest.raises(ConfigError, match="estimates a win_rate"):
        build_population([], {}, builtin_rubric("preference"), "rate", None)
    with pytest.raises(ConfigError, match="estimates a rate or mean"):
        build_population([], {}, TOXICITY, "win_rate", IDENTITY)


def test_the_suggestion_labels_unsure_items_more_often_and_knows_each_chance(
    tmp_path: Path,
) -> None:
    population = judge_population(
        probability_judge(0.5), TOXICITY, dataset(), store=tmp_path / "s.db"
    ).population
    chosen = suggest(population, 60, seed=2)
    sizes, given = chosen.design.sizes, chosen.allocation
    assert sum(given.values()) == 60 == len(chosen.rows) == len(set(chosen.design.rows))
    assert sum(sizes.values()) == population.size
    assert "unsure" in sizes and "judge toxic" in sizes and "judge clean" in sizes
    unsure_rate = given["unsure"] / sizes["unsure"]
    clean_rate = given["judge clean"] / sizes["judge clean"]
    assert unsure_rate == pytest.approx(OVERSAMPLE * clean_rate, rel=0.35)
    for row in chosen.rows:
        assert row.inclusion_probability == given[row.stratum] / sizes[row.stratum]
        assert row.stratum_items == sizes[row.stratum] and row.label == ""
    assert chosen == suggest(population, 60, seed=2)


def test_too_few_labels_for_the_strata_are_refused_saying_how_many_are_needed() -> None:
    with pytest.raises(ConfigError, match="at least 6"):
        allocate(5, {"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 9, "b": 9, "c": 9})
    assert allocate(6, {"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 9, "b": 9, "c": 9}) == {
        "a": 2,
        "b": 2,
        "c": 2,
    }


def fill(sheet: Path, truth: dict[str, float], *, leave_empty: int = 0) -> Path:
    """The sheet as a person returns it: the label column filled from ``truth``, the first
    ``leave_empty`` rows left empty."""
    with sheet.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for k, row in enumerate(rows):
        row["label"] = "" if k < leave_empty else ("toxic" if truth[row["id"]] else "clean")
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return sheet


def test_a_suggested_sheet_filled_in_and_read_back_gives_the_corrected_estimate(
    tmp_path: Path,
) -> None:
    data = dataset()
    labels = truth(data)
    judge = probability_judge(0.5)
    store = tmp_path / "s.db"
    chosen, (csv_path, jsonl_path) = suggest_labels(
        judge, TOXICITY, data, 40, sheet=tmp_path / "sheet.csv", seed=1, store=store
    )
    assert csv_path.is_file() and jsonl_path.is_file()
    first = json.loads(jsonl_path.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) >= {"id", "prompt", "response", "judge_verdict", "why", "label"}
    result = estimate(judge, TOXICITY, data, labels=fill(csv_path, labels), store=store)
    assert result.labels == result.corrected.n == 40
    assert "drawn by 3 strata" in result.design
    direct = estimate_population(
        judge_population(judge, TOXICITY, data, store=store).population, chosen.design
    )
    assert result.corrected.estimate == pytest.approx(direct.corrected.estimate)
    assert result.corrected.ci.low == pytest.approx(direct.corrected.ci.low)
    rate = float(np.mean(list(labels.values())))
    assert result.corrected.ci.contains(rate)


def test_rows_left_empty_are_left_out_and_counted(tmp_path: Path) -> None:
    data = dataset()
    _, (csv_path, _) = suggest_labels(
        probability_judge(0.5), TOXICITY, data, 40, sheet=tmp_path / "s.csv", store=tmp_path / "d"
    )
    sheet = read_labels(fill(csv_path, truth(data), leave_empty=3))
    assert len(sheet.labels) == 37 and sheet.empty == 3


def test_a_plain_file_of_ids_and_labels_is_taken_as_a_random_draw(tmp_path: Path) -> None:
    data = dataset()
    path = tmp_path / "labels.jsonl"
    chosen = list(truth(data).items())[:30]
    path.write_text(
        "".join(json.dumps({"id": i, "label": value}) + "\n" for i, value in chosen),
        encoding="utf-8",
    )
    result = estimate(probability_judge(0.5), TOXICITY, data, labels=path, store=tmp_path / "d")
    assert result.labels == 30 and "taken as a random draw" in result.design
    assert result.labels_only.estimate == pytest.approx(np.mean([v for _, v in chosen]))


def test_a_labels_file_naming_an_unknown_item_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("id,label\ni1,1\nnot-an-item,0\n", encoding="utf-8")
    with pytest.raises(DataError, match="not-an-item"):
        estimate(probability_judge(0.5), TOXICITY, dataset(), labels=path, store=tmp_path / "d")


def test_a_sheet_for_other_data_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sheet.jsonl"
    rows = [{"id": f"i{k}", "label": 1, "stratum": "a", "stratum_items": 7} for k in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match="strata hold 7 items but the judge scored 300"):
        estimate(probability_judge(0.5), TOXICITY, dataset(), labels=path, store=tmp_path / "d")


def test_the_sheet_csv_escapes_formulas_and_reads_them_back(tmp_path: Path) -> None:
    from judgeprobe.estimate import SheetRow

    row = SheetRow("=cmd", "=1+1", "-2", "toxic", 0.9, "why", "unsure", 3, 0.5, label="1")
    csv_path, _ = write_sheet([row], tmp_path / "sheet.csv")
    assert "'=1+1" in csv_path.read_text(encoding="utf-8")
    assert read_labels(csv_path).labels == {"=cmd": "1"}


def test_unstable_items_are_read_from_an_audit_and_labelled_first(tmp_path: Path) -> None:
    from audited import audited_store

    store = audited_store(tmp_path / "audit", n_items=12)
    flagged = unstable_items(store)
    assert flagged and all("repetition" in why for why in flagged.values())
    population = build_population(
        [PointwiseItem(f"x{i}", "p", "r") for i in range(12)],
        {f"x{i}": Verdict.scored(1.0 + i % 5) for i in range(12)},
        builtin_rubric("harmfulness"),
        "rate",
        ScaleMap(1, 5, 1, 5),
    )
    chosen = suggest(population, 8, unstable=flagged)
    unstable_rows = [row for row in chosen.rows if row.stratum == "unstable"]
    assert unstable_rows and all("unstable" in row.why for row in unstable_rows)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    source = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": str(source), "JUDGEPROBE_DATA": str(data_root())}
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe", "estimate", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@needs_pyrit
def test_the_command_prints_the_three_estimates_as_json(tmp_path: Path) -> None:
    done = run_cli(
        "--judge", "profanity", "--rubric", "toxicity", "--data", "pyrit:harm",
        "--label-budget", "100", "--seed", "7", "--json", "--store", str(tmp_path / "s.db"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed: dict[str, Any] = json.loads(done.stdout)
    for name in ("naive", "labels_only", "corrected"):
        assert set(printed[name]) >= {"estimate", "low", "high", "n"}
    assert printed["naive"]["n"] == 1005 and printed["corrected"]["n"] == 100
    assert printed["naive"]["high"] < printed["labels_only"]["low"]  # the judge's bias


@needs_pyrit
def test_over_seeds_the_corrected_interval_covers_the_all_label_rate(tmp_path: Path) -> None:
    """The 'done when' of the command, over 300 seeds of --label-budget 100 (the judge scores
    once; the draws are what the command does with each seed)."""
    judged = judge_population("profanity", "toxicity", "pyrit:harm", store=tmp_path / "s.db")
    population = judged.population
    every = estimate_population(population, uniform_design(population.labelled, 1005, None, 0))
    rate = every.corrected.estimate
    covered = 0
    for seed in range(300):
        design = uniform_design(population.labelled, population.size, 100, seed)
        covered += estimate_population(population, design).corrected.ci.contains(rate)
    assert 0.92 <= covered / 300 <= 0.98


def test_a_label_budget_that_is_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("--judge", "profanity", "--label-budget", "lots", "--store", str(tmp_path / "s"))
    assert done.returncode == 2 and "--label-budget" in done.stderr
