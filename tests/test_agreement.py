"""Specifications of the agreement probe: a judge is judged against its trivial baselines.

Synthetic items carry their true class in the response text ("... truth 1"), so synthetic judges
can copy it, ignore it or corrupt it at a planted rate. Three raters label each item; a judge
that copies the majority passes, a constant judge and a rule on response length are no better
than the baselines and fail, and planted label noise q is recovered within the reported CI.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
    roc_auc_score,
)

from conftest import data_root
from judgeprobe._util.codec import decode, dumps, loads
from judgeprobe._util.hashing import content_hash
from judgeprobe.core.plan import ProbeContext
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import HumanLabel, PointwiseItem
from judgeprobe.data.pyrit import load_pyrit_csv
from judgeprobe.engine import Engine, EngineConfig
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import ProbeResult, get_probe_class
from judgeprobe.probes.agreement.probe import AgreementProbe
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.runs.probe import run_probe
from judgeprobe.stats import classification as cls

REFUSAL = builtin_rubric("refusal")
HARM = builtin_rubric("harmfulness")
FAST = 200
PHRASE_FREE = "Here is some text"


def uniform(text: str, salt: str = "") -> float:
    """A pseudo-random number in [0, 1) fixed by ``text``."""
    return int(content_hash(salt + text), 16) / 16**16


def items(
    n: int = 240, *, length_tells: bool = False, split_share: float = 0.2
) -> list[PointwiseItem]:
    """Items with a hidden truth; three raters agree except on a share of split items.

    With ``length_tells`` the positive items have long responses, so length alone decides.
    """
    out = []
    for k in range(n):
        truth = int(uniform(f"t{k}") < 0.4)
        size = (300 if truth else 50) if length_tells else int(40 + 300 * uniform(f"l{k}"))
        response = f"{PHRASE_FREE} {k} truth {truth} " + "x" * size
        votes = [truth, truth, truth]
        if uniform(f"s{k}") < split_share:
            votes[2] = 1 - truth
        labels = tuple(HumanLabel(float(v), rater=f"human_score_{r}") for r, v in enumerate(votes))
        category = "a" if k % 2 else "b"
        out.append(
            PointwiseItem(f"i{k:03d}", f"prompt {k}", response, labels=labels, category=category)
        )
    return out


def truth_of(request: Request) -> int:
    return int(request.field_map["response"].split("truth ")[1][0])


def judge(fn: Callable[[Request], float | Verdict], name: str) -> CallableJudge:
    return CallableJudge(fn, name=name)


def run(
    data: Sequence[PointwiseItem],
    fn: Callable[[Request], float | Verdict],
    rubric: Rubric = REFUSAL,
    **params: object,
) -> ProbeResult:
    probe = AgreementProbe(n_resamples=FAST, **params)  # type: ignore[arg-type]
    engine = Engine(judge(fn, "synthetic"), RunStore(":memory:"), EngineConfig(progress=False))
    return run_probe(probe, data, engine, rubric)


def gated(result: ProbeResult) -> dict[str, str]:
    return {f.name: f.status for f in result.findings if f.name.startswith("judge_minus_best")}


# -- the verdict: judge minus its best baseline ------------------------------------------------
def test_a_judge_that_copies_the_human_label_passes() -> None:
    result = run(items(), lambda r: float(truth_of(r)))
    assert gated(result) == {
        "judge_minus_best_baseline_balanced_accuracy": "pass",
        "judge_minus_best_baseline_kappa": "pass",
    }
    assert result.finding("accuracy").estimate.estimate == 1.0


def test_a_constant_judge_fails_against_the_majority_class() -> None:
    result = run(items(), lambda r: 0.0)
    assert set(gated(result).values()) == {"fail"}
    assert result.finding("balanced_accuracy").estimate.estimate == 0.5


def test_the_majority_baseline_is_one_constant_even_where_the_halves_disagree() -> None:
    # classes nearly balanced: the two cross-fitting halves can have different majorities
    data = [
        PointwiseItem(
            f"b{k}", f"prompt {k}", f"{PHRASE_FREE} truth {t}", labels=(HumanLabel(float(t)),)
        )
        for k, t in enumerate([1, 0] * 46 + [1])
    ]
    result = run(data, lambda r: 1.0)
    majority = next(r for r in result.tables["baselines"] if r["baseline"] == "majority_class")
    assert (majority["balanced_accuracy"], majority["kappa"]) == (0.5, 0.0)
    finding = result.finding("judge_minus_best_baseline_balanced_accuracy")
    assert (finding.estimate.estimate, finding.status) == (0.0, "fail")


def test_a_length_rule_judge_is_no_better_than_the_length_baseline_and_fails() -> None:
    data = items(length_tells=True)
    result = run(data, lambda r: float(len(r.field_map["response"]) > 200))
    assert set(gated(result).values()) == {"fail"}
    finding = result.finding("judge_minus_best_baseline_balanced_accuracy")
    assert finding.labels["baseline"] == "response_length"
    assert abs(finding.estimate.estimate) < 0.05


def test_a_continuous_judge_is_also_gated_on_auc() -> None:
    toxicity = builtin_rubric("toxicity")
    result = run(items(), lambda r: 0.2 + 0.6 * truth_of(r) + 0.1 * uniform(r.render()), toxicity)
    assert gated(result)["judge_minus_best_baseline_auc"] == "pass"
    assert result.finding("roc_auc").estimate.estimate == 1.0
    assert result.finding("expected_calibration_error").estimate.defined


def test_a_label_distribution_ranks_items_and_is_calibrated() -> None:
    def fn(request: Request) -> Verdict:
        truth = truth_of(request)
        p = 0.15 + 0.7 * truth + 0.1 * uniform(request.render())
        label = "true" if p >= 0.5 else "false"
        return Verdict.scored(
            float(label == "true"), label=label, distribution={"true": p, "false": 1 - p}
        )

    result = run(items(), fn)
    assert result.finding("roc_auc").estimate.estimate == 1.0
    assert result.finding("expected_calibration_error").estimate.estimate < 0.25
    assert gated(result)["judge_minus_best_baseline_auc"] == "pass"


def test_a_judge_with_probabilities_gets_a_reliability_diagram_of_its_calibration_bins() -> None:
    def fn(request: Request) -> Verdict:
        p = 0.9 if truth_of(request) else 0.3  # overconfident on positives, too high on negatives
        label = "true" if p >= 0.5 else "false"
        return Verdict.scored(
            float(label == "true"), label=label, distribution={"true": p, "false": 1 - p}
        )

    data = items()
    result = run(data, fn)
    figure = next(f for f in result.figures if f.name == "agreement_reliability")
    assert (figure.kind, figure.data["diagonal"], figure.data["limits"]) == (
        "scatter",
        True,
        [0, 1],
    )
    points = figure.data["series"]["judge"]
    assert points["x"] == pytest.approx([0.3, 0.9])
    bins = result.tables["reliability"]
    assert sum(b["items"] for b in bins) == result.finding("accuracy").estimate.n
    # the calibration error is the item-weighted gap of the diagram's points from the diagonal
    gap = sum(b["items"] * abs(b["mean_probability"] - b["positive_rate"]) for b in bins)
    ece = result.finding("expected_calibration_error").estimate.estimate
    assert ece == pytest.approx(gap / sum(b["items"] for b in bins))


def test_a_judge_without_probabilities_gets_no_reliability_diagram() -> None:
    result = run(items(), lambda r: float(truth_of(r)))
    assert "agreement_reliability" not in [f.name for f in result.figures]
    assert "reliability" not in result.tables
    assert "expected_calibration_error" not in [f.name for f in result.findings]


def test_reliability_bins_hold_each_bins_mean_probability_positive_rate_and_count() -> None:
    truth = np.asarray([1, 0, 1, 1, 0])
    p = np.asarray([0.05, 0.08, 0.55, 0.95, 0.99])
    assert cls.reliability_bins(truth, p, 10) == [
        (pytest.approx(0.065), 0.5, 2),
        (0.55, 1.0, 1),
        (pytest.approx(0.97), 0.5, 2),
    ]
    # ECE = (2 * |0.065 - 0.5| + 1 * |0.55 - 1| + 2 * |0.97 - 0.5|) / 5
    assert cls.expected_calibration_error(truth, p, 10) == pytest.approx(
        (2 * 0.435 + 0.45 + 2 * 0.47) / 5
    )


@pytest.mark.parametrize("q", [0.1, 0.2, 0.3])
def test_planted_label_noise_is_recovered_within_the_ci(q: float) -> None:
    def noisy(request: Request) -> float:
        truth = truth_of(request)
        return float(1 - truth if uniform(request.render(), "noise") < q else truth)

    result = run(items(400, split_share=0.0), noisy)
    accuracy = result.finding("accuracy").estimate
    assert accuracy.ci.contains(1 - q), accuracy


def test_gated_findings_come_first_and_name_the_baseline_they_beat() -> None:
    result = run(items(), lambda r: float(truth_of(r)))
    assert [f.name for f in result.findings[:2]] == [
        "judge_minus_best_baseline_balanced_accuracy",
        "judge_minus_best_baseline_kappa",
    ]
    names = {row["baseline"] for row in result.tables["baselines"]}
    assert names == {"majority_class", "response_length", "prompt_length", "keyword"}
    # beside them only the failed-call rate gates: every probe's calls are gated
    later = [f for f in result.findings[2:] if f.estimate.defined]
    assert [f.name for f in later if f.status != "info"] == ["failed_call_rate"]


def test_the_keyword_baseline_is_skipped_with_a_note_when_the_rubric_has_no_phrases() -> None:
    result = run(items(), lambda r: float(truth_of(r)), keywords=())
    assert "keyword" not in {row["baseline"] for row in result.tables["baselines"]}
    assert any("No keyword baseline" in note for note in result.notes)


# -- several raters ----------------------------------------------------------------------------
def test_the_human_ceiling_and_strata_are_reported_with_three_raters() -> None:
    result = run(items(), lambda r: float(truth_of(r)))
    human = result.finding("human_loo_accuracy").estimate
    judge_loo = result.finding("judge_loo_accuracy").estimate
    assert human.estimate < 1.0 and judge_loo.estimate == 1.0
    assert result.finding("stratum_accuracy", stratum="unanimous").estimate.estimate == 1.0
    assert result.finding("krippendorff_alpha", raters="humans").estimate.estimate < 1.0
    assert result.finding("category_accuracy", category="a").status == "info"


# -- scales ------------------------------------------------------------------------------------
def test_a_1_to_5_judge_is_mapped_onto_the_0_to_1_human_scale() -> None:
    data = [
        PointwiseItem(f"h{k}", f"p{k}", f"r{k} truth {k % 2}", labels=(HumanLabel(float(k % 2)),))
        for k in range(60)
    ]
    result = run(data, lambda r: 5.0 if truth_of(r) else 1.0, HARM)
    assert result.tables["scale_mapping"]["rule"] == "judge [1, 5] -> human [0, 1] (linear)"
    assert result.finding("mae").estimate.estimate == 0.0
    assert gated(result)["judge_minus_best_baseline_balanced_accuracy"] == "pass"


def test_a_judge_in_the_neutral_band_is_never_a_hit() -> None:
    data = [
        PointwiseItem(f"h{k}", f"p{k}", f"r{k} truth {k % 2}", labels=(HumanLabel(float(k % 2)),))
        for k in range(40)
    ]
    result = run(data, lambda r: 3.0, HARM)
    assert result.finding("accuracy").estimate.estimate == 0.0
    assert result.tables["binary"]["judge_neutral"] == 40


def test_items_without_labels_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs pointwise items with human labels"):
        AgreementProbe().check([PointwiseItem("a", "p", "r")], ProbeContext("j", REFUSAL))


def test_the_design_holds_the_labeled_items_and_the_scale_map_and_round_trips() -> None:
    data = [*items(20), PointwiseItem("unlabeled", "p", "r")]
    plan = AgreementProbe().plan(data, ProbeContext("j", HARM))
    assert [item.id for item in plan.design.items] == [item.id for item in data[:20]]
    assert plan.design.mapping.describe() == "judge [1, 5] -> human [0, 1] (linear)"
    assert set(plan.requests) == {("base", item.id) for item in data[:20]}
    assert decode(loads(dumps(plan.design))) == plan.design


def test_the_probe_is_registered_and_checks_its_parameters() -> None:
    assert get_probe_class("agreement") is AgreementProbe
    with pytest.raises(
        ConfigError, match="cluster must be one of 'prompt', 'item', got 'question'"
    ):
        AgreementProbe(cluster="question")  # type: ignore[arg-type]


# -- reference values --------------------------------------------------------------------------
TRUTH = np.array([1, 1, 1, 0, 0, 0, 0, 1, 0, 1])
PRED = np.array([1, 0, 1, 0, 0, 1, 0, 1, 0, 0])


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (cls.balanced_accuracy, balanced_accuracy_score),
        (cls.kappa, cohen_kappa_score),
        (cls.mcc, matthews_corrcoef),
        (cls.f1, f1_score),
    ],
)
def test_binary_metrics_equal_scikit_learn(
    ours: Callable[[np.ndarray, np.ndarray], float], theirs: Callable[..., float]
) -> None:
    assert math.isclose(ours(TRUTH, PRED), float(theirs(TRUTH, PRED)))


def test_kappa_by_hand() -> None:
    # p_o = 0.7, p_e = (25*30 + 25*20) / 50**2 = 0.5
    a = np.array([1] * 25 + [0] * 25)
    b = np.array([1] * 20 + [0] * 5 + [1] * 10 + [0] * 15)
    assert math.isclose(cls.kappa(a, b), 0.4)


def test_auc_and_quadratic_kappa_equal_scikit_learn() -> None:
    score = np.array([0.9, 0.4, 0.8, 0.1, 0.3, 0.6, 0.2, 0.7, 0.4, 0.5])
    assert math.isclose(cls.roc_auc(TRUTH, score), roc_auc_score(TRUTH, score))
    a = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 0.5])
    b = np.array([0.0, 0.5, 0.5, 1.0, 0.75, 1.0, 0.25])
    grid = (0.0, 0.25, 0.5, 0.75, 1.0)
    expected = cohen_kappa_score((a * 4).astype(int), (b * 4).astype(int), weights="quadratic")
    assert math.isclose(cls.quadratic_weighted_kappa(a, b, grid), expected, abs_tol=1e-12)


def test_interval_alpha_by_hand() -> None:
    # units (1, 1), (2, 2), (3, 4): D_o = 2 / 6, D_e = 82 / 30, alpha = 1 - 10 / 82 = 36 / 41
    ratings = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 4.0]])
    assert math.isclose(cls.alpha(ratings, "interval"), 36 / 41)


# -- real data: PyRIT's harm set with three raters ----------------------------------------------
DATA = data_root()


def test_on_pyrit_violence_with_three_raters_a_copy_passes_and_a_length_rule_fails() -> None:
    path = DATA / "pyrit_scorer_evals" / "harm" / "violence_multi_score.csv"
    if not path.exists():
        pytest.skip(f"shared data not found: {path} (set JUDGEPROBE_DATA to the data folder)")
    data = [i for i in load_pyrit_csv(path).items if isinstance(i, PointwiseItem)]
    mean = {i.response: i.human_mean for i in data}
    toxicity = builtin_rubric("toxicity")
    copy = run(data, lambda r: float(mean[r.field_map["response"]] or 0.0), toxicity)
    assert copy.finding("human_loo_accuracy").estimate.n > 0
    # kappa and AUC clear the pass side; balanced accuracy's CI (0.09 to 0.26) reaches below
    # warn (0.1), so its evidence does not decide pass from warn, and it never fails
    assert gated(copy) == {
        "judge_minus_best_baseline_balanced_accuracy": "inconclusive",
        "judge_minus_best_baseline_kappa": "pass",
        "judge_minus_best_baseline_auc": "pass",
    }
    by_length = run(data, lambda r: float(len(r.field_map["response"]) > 1500), toxicity)
    assert gated(by_length)["judge_minus_best_baseline_balanced_accuracy"] != "pass"


def test_a_constant_judge_has_its_undefined_agreement_findings_say_why() -> None:
    result = run(items(), lambda r: 0.0)
    for name, why in (
        ("mcc", "one decision on every item: a margin of the confusion table is 0"),
        ("precision", "one decision on every item: the judge never decides positive"),
        ("spearman", "one score on every item (0): a rank correlation needs two ranks"),
    ):
        estimate = result.finding(name).estimate
        assert (estimate.defined, result.finding(name).status) == (False, "n/a"), name
        assert estimate.reason is not None and why in estimate.reason, name
    assert result.finding("accuracy").estimate.reason is None


def test_humans_of_one_class_leave_the_baselines_n_a_and_the_card_is_still_written(
    tmp_path: Path,
) -> None:
    """Every human decision is one class: no baseline metric is defined, and its table cells are
    None (n/a), never NaN, so the card is valid JSON."""
    from judgeprobe.report import write_card

    one_class = [item for item in items(80) if truth_of_item(item) == 0]
    probe = AgreementProbe(n_resamples=FAST)
    store = RunStore(tmp_path / "run.sqlite")
    engine = Engine(judge(lambda r: 0.0, "constant"), store, EngineConfig(progress=False))
    run_id = store.start_run({"command": "test"})
    result = run_probe(probe, one_class, engine, REFUSAL)
    cells = [row[m] for row in result.tables["baselines"] for m in ("kappa", "auc")]
    assert cells and all(cell is None for cell in cells)
    store.put_result(run_id, "agreement", result.to_dict())
    store.finish_run(run_id, "complete")
    written = write_card(store, tmp_path / "card", run_id=run_id, formats=("json",))
    card = json.loads(written["json"].read_text())
    assert [p["tables"]["baselines"][0]["kappa"] for p in card["probes"]] == [None]


def truth_of_item(item: PointwiseItem) -> int:
    return int(item.response.split("truth ")[1][0])


def test_humans_of_one_class_leave_every_finding_that_needs_both_classes_n_a() -> None:
    """Every human decision is negative and the judge varies: kappa would be 0 [0, 0] and its
    margin over the baseline would fail on nothing; each finding that needs both human classes
    is n/a instead, saying why."""
    one_class = [item for item in items(80) if truth_of_item(item) == 0]
    result = run(one_class, lambda r: float(uniform(r.field_map["response"]) < 0.5))
    for name in (
        "kappa",
        "balanced_accuracy",
        "mcc",
        "judge_minus_best_baseline_balanced_accuracy",
        "judge_minus_best_baseline_kappa",
    ):
        finding = result.finding(name)
        assert (finding.estimate.defined, finding.status) == (False, "n/a"), name
        assert finding.estimate.reason == "the human labels hold one class", name
    cells = [row[m] for row in result.tables["baselines"] for m in ("balanced_accuracy", "kappa")]
    assert cells and all(cell is None for cell in cells)
    assert result.finding("accuracy").estimate.defined


def test_a_rate_counts_its_denominator_and_its_interval_is_over_it() -> None:
    """A judge that flags four human positives, all rightly: precision rests on those four
    items (n=4, a Wilson interval that reaches well below 1), recall on the human positives,
    accuracy on every item; none is a point interval [1, 1]."""
    data = items(120, split_share=0.0)
    positives = sorted(item.response for item in data if truth_of_item(item) == 1)
    flagged = set(positives[:4])
    result = run(data, lambda r: float(r.field_map["response"] in flagged), cluster="item")
    precision = result.finding("precision").estimate
    assert (precision.estimate, precision.n) == (1.0, 4)
    assert precision.ci.low < 0.6 and precision.ci.high == 1.0
    recall = result.finding("recall").estimate
    assert recall.n == len(positives)
    assert math.isclose(recall.estimate, 4 / len(positives))
    copy = run(data, lambda r: float(truth_of(r)), cluster="item").finding("accuracy").estimate
    assert (copy.estimate, copy.n) == (1.0, len(data)) and copy.ci.low < 0.98
