"""Scoring a labelled dataset: the verdicts' label probabilities are written out, and the
agreement with the human labels is the agreement probe's, number for number."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from conftest import data_root
from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import HumanLabel, PointwiseItem
from judgeprobe.data.pyrit import load_pyrit_csv
from judgeprobe.engine import Engine, EngineConfig
from judgeprobe.engine.store import RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.probes.agreement.probe import AgreementProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import run_probe
from judgeprobe.runs.scoring import score_items_sync
from judgeprobe.runs.scoring_agreement import score_agreement

REFUSAL = builtin_rubric("refusal")
TOXICITY = builtin_rubric("toxicity")
DATA = data_root()
FAST = 200


def labelled(n: int = 60) -> list[PointwiseItem]:
    """Items whose response names their human class ("truth 1" / "truth 0")."""
    return [
        PointwiseItem(
            f"i{k}",
            f"prompt {k % 20}",
            f"reply {k} truth {k % 3 == 0:d}",
            labels=(HumanLabel(float(k % 3 == 0)),),
        )
        for k in range(n)
    ]


def with_distribution(request: Request) -> Verdict:
    """A judge that is right except on every seventh item and says how sure it is."""
    text = request.field_map["response"]
    truth = text.endswith("truth 1")
    k = int(text.split()[1])
    refused = truth != (k % 7 == 0)
    p = 0.8 if refused else 0.3
    label = "true" if refused else "false"
    return Verdict.scored(float(refused), label=label, distribution={"true": p, "false": 1 - p})


def engine(judge: Judge) -> Engine:
    return Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))


def test_the_csv_carries_the_probability_of_every_label_the_judge_gave(tmp_path: Path) -> None:
    result = score_items_sync(labelled(6), engine(CallableJudge(with_distribution)), REFUSAL)
    rows = list(csv.DictReader(result.write(tmp_path / "v.csv").open(encoding="utf-8")))
    assert [(r["label"], r["p_true"], r["p_false"]) for r in rows[:2]] == [
        ("false", "0.3", "0.7"),
        ("false", "0.3", "0.7"),
    ]
    assert rows[3]["p_true"] == "0.8"


def test_a_judge_without_probabilities_leaves_the_probability_columns_empty(
    tmp_path: Path,
) -> None:
    judge = CallableJudge(lambda request: 1.0, name="always")
    result = score_items_sync(labelled(3), engine(judge), REFUSAL)
    rows = list(csv.DictReader(result.write(tmp_path / "v.csv").open(encoding="utf-8")))
    assert [(r["p_true"], r["p_false"]) for r in rows] == [("", "")] * 3
    assert [r["p_true"] for r in result.to_records()] == [None] * 3


def test_the_agreement_of_a_score_run_is_the_agreement_probes_number_for_number() -> None:
    items = labelled()
    judge = CallableJudge(with_distribution)
    result = score_items_sync(items, engine(judge), REFUSAL)
    agreement = score_agreement(result, REFUSAL, n_resamples=FAST)
    assert agreement is not None
    probe = run_probe(AgreementProbe(n_resamples=FAST), items, engine(judge), REFUSAL)
    expected = {(f.name, tuple(f.labels.items())): f.estimate for f in probe.findings}
    names = [f.name for f in agreement.findings]
    for name in ("accuracy", "balanced_accuracy", "kappa", "mcc", "f1"):
        assert name in names
    assert "expected_calibration_error" in names  # the judge gave probabilities
    assert "mae" not in names  # a binary rubric: no scale metrics
    for finding in agreement.findings:
        assert finding.estimate == expected[(finding.name, tuple(finding.labels.items()))]
    accuracy = next(f for f in agreement.findings if f.name == "accuracy").estimate
    assert (accuracy.n, accuracy.ci.level) == (60, 0.95)
    assert accuracy.ci.low < accuracy.estimate < accuracy.ci.high
    assert agreement.best_baseline is not None
    assert list(agreement.baselines) == probe.tables["baselines"]


def test_items_without_labels_have_no_agreement() -> None:
    items = [PointwiseItem(f"u{k}", "p", f"r{k}") for k in range(3)]
    result = score_items_sync(items, engine(CallableJudge(lambda r: 0.0, name="z")), REFUSAL)
    assert score_agreement(result, REFUSAL) is None


def test_the_profanity_judge_on_a_small_pyrit_set_gets_scale_and_binary_agreement() -> None:
    path = DATA / "pyrit_scorer_evals" / "harm" / "mini_hate_speech.csv"
    if not path.exists():
        pytest.skip(f"shared data not found: {path} (set JUDGEPROBE_DATA to the data folder)")
    pytest.importorskip("profanity_check")
    items = load_pyrit_csv(path).items
    result = score_items_sync(items, engine(build_judge("profanity")), TOXICITY)
    agreement = score_agreement(result, TOXICITY, n_resamples=FAST)
    assert agreement is not None
    assert (agreement.items, agreement.binary_items) == (15, 15)
    found = {f.name: f.estimate for f in agreement.findings if not f.labels}
    for name in ("kappa", "mae", "rmse", "spearman", "quadratic_weighted_kappa"):
        assert found[name].n == 15
    # accuracy is a rate clustered by prompt: 8 prompts, too few to resample, so n counts them
    assert found["accuracy"].n == 8
    # the judge's score is a probability in [0, 1]: it is calibrated against the humans
    assert found["expected_calibration_error"].defined
    assert found["accuracy"].estimate == pytest.approx(0.6)


def test_labelled_items_whose_verdict_failed_are_left_out_and_counted() -> None:
    def flaky(request: Request) -> Verdict:
        if request.field_map["response"].startswith("reply 1 "):
            raise RuntimeError("backend down")
        return with_distribution(request)

    result = score_items_sync(labelled(12), engine(CallableJudge(flaky)), REFUSAL)
    agreement = score_agreement(result, REFUSAL, n_resamples=FAST)
    assert agreement is not None
    assert agreement.items == 11
    assert "1 labelled items without an ok verdict are left out." in agreement.notes
