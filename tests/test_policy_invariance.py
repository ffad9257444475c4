"""Policy invariance: rubric variants, their validation, the generator, the nulls and the probe.

The probe is validated against judges whose behaviour is known: one that ignores the rubric text
(its flips must be rerun noise), one with a planted sensitivity to the words "strict" and
"lenient" (the threshold shift must be detected, in its direction), and hand-made ones for
pairwise, numeric, failing and unstable behaviour.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import data_root
from judgeprobe._util.codec import decode, dumps, loads
from judgeprobe._util.hashing import content_hash
from judgeprobe.core.plan import ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError, RubricError
from judgeprobe.judges import CallableJudge, verdict_from_distribution
from judgeprobe.probes import Finding, ProbeResult, get_probe_class
from judgeprobe.probes.decisions import base_request
from judgeprobe.probes.policy_invariance import (
    PairwisePolicyInvarianceProbe,
    PolicyDesign,
    PolicyInvarianceProbe,
    classify_reproduction,
    refusal_item_type,
)
from judgeprobe.rubrics import (
    Rubric,
    builtin_rubric,
    builtin_rubric_names,
    builtin_variants,
    load_variants,
)
from judgeprobe.rubrics.validation import validate_variant, validate_variants
from judgeprobe.rubrics.variants import TRANSFORMS, Variant, VariantSet
from judgeprobe.runs.probe import reanalyze, run_probe
from judgeprobe.runs.variants import (
    GeneratorPrompts,
    VariantGenerator,
    check_equivalence,
    engine_completion,
    parse_rewrite,
)
from judgeprobe.stats import Estimate, InvalidParameterError, proportion_above
from judgeprobe.stats.flips import (
    exchangeable_flip_test,
    flip_rate_excess,
    poisson_binomial_cdf,
    single_vs_majority_disagreement,
    spread_of_means,
    spread_test,
)

DATA = data_root()
JUDGING_RUBRICS = ("harmfulness", "refusal", "preference")


# -- helpers ------------------------------------------------------------------------------------


def run(
    probe: PolicyInvarianceProbe,
    items: Sequence[Item],
    fn: Callable[[Request], Any],
    rubric: Rubric,
    name: str = "judge",
    seed: int = 0,
) -> ProbeResult:
    engine = Engine(
        CallableJudge(fn, name=name), RunStore(":memory:"), EngineConfig(progress=False)
    )
    return run_probe(probe, items, engine, rubric, seed=seed)


def pointwise_items(n: int, label: Callable[[int], float] = lambda k: float(k % 2)) -> list[Item]:
    return [
        PointwiseItem(
            id=f"i{k}",
            prompt=f"request number {k}",
            response=f"response number {k}",
            labels=(HumanLabel(label(k), rater="r1"),),
        )
        for k in range(n)
    ]


def uniform(request: Request, salt: str = "") -> float:
    """A uniform draw that is independent for every (judge, rubric, fields, trial)."""
    return random.Random(content_hash([request.key, salt])).random()


def item_number(request: Request) -> int:
    return int(request.field_map["prompt"].rsplit(" ", 1)[-1])


def variant_name(request: Request) -> str:
    return request.rubric.name.partition("/")[2] or "base"


def by_class(result: ProbeResult, name: str, cls: str) -> Finding:
    """The class-level finding (per-variant findings carry the class label too)."""
    found = [
        f
        for f in result.findings
        if f.name == name and f.labels.get("class") == cls and "variant" not in f.labels
    ]
    assert len(found) == 1, (name, cls, len(found))
    return found[0]


# -- shipped variant sets -------------------------------------------------------------------


@pytest.mark.parametrize("name", JUDGING_RUBRICS)
def test_every_judging_rubric_ships_a_valid_set_with_two_variants_per_class(name: str) -> None:
    base = builtin_rubric(name)
    variants = builtin_variants(name)
    assert variants.rubric == name
    for transform in TRANSFORMS:
        assert len(variants.of(transform)) >= 2, transform
    reports = validate_variants(variants, base)
    assert [r.reasons for r in reports if not r.ok] == []
    shifts = {v.shift for v in variants.of("threshold")}
    assert shifts == {"stricter", "more_lenient"}
    assert all(v.source == "reviewed" for v in variants.variants)


def test_variant_files_are_not_listed_as_rubrics() -> None:
    names = builtin_rubric_names()
    assert "refusal" in names
    assert not any("." in n for n in names)


def test_classifier_templates_have_no_shipped_variants_and_say_what_to_do() -> None:
    with pytest.raises(RubricError, match="generate one"):
        builtin_variants("toxicity")


def test_variant_hash_covers_content_not_name() -> None:
    base = builtin_rubric("refusal")
    v = builtin_variants("refusal").of("lexicon")[0]
    renamed = v.model_copy(update={"name": "other"})
    assert Variant.model_validate(renamed.model_dump()).hash == v.hash
    changed = Variant(name=v.name, transform="lexicon", template=v.template + "Be brief.\n")
    assert changed.hash != v.hash
    rubric = v.rubric(base)
    assert rubric.hash != base.hash
    assert (rubric.labels, rubric.decision, rubric.answer_prefix) == (
        base.labels,
        base.decision,
        base.answer_prefix,
    )


def test_variant_set_survives_a_yaml_round_trip(tmp_path: Path) -> None:
    original = builtin_variants("preference")
    path = tmp_path / "set.yaml"
    path.write_text(original.to_yaml(), encoding="utf-8")
    loaded = load_variants(path)
    assert [v.hash for v in loaded.variants] == [v.hash for v in original.variants]
    assert loaded.of("threshold")[1].expected_toward == ("A", "B")


def test_a_bad_variant_file_names_the_variant_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "rubric: refusal\nvariants:\n  - name: shift\n    transform: threshold\n"
        "    template: 'x {prompt} {response}'\n",
        encoding="utf-8",
    )
    with pytest.raises(RubricError, match=r"variants\.0 \(shift\).*expected_toward"):
        load_variants(path)


def test_a_set_written_for_another_wording_is_refused() -> None:
    base = builtin_rubric("refusal")
    shipped = builtin_variants("refusal")
    stale = VariantSet(rubric="refusal", variants=shipped.variants, rubric_hash="0" * 16)
    with pytest.raises(RubricError, match="regenerate"):
        validate_variants(stale, base)


# -- validation -----------------------------------------------------------------------------


def refusal_lexicon() -> tuple[Rubric, Variant]:
    return builtin_rubric("refusal"), builtin_variants("refusal").of("lexicon")[0]


def test_validation_accepts_a_faithful_rewrite() -> None:
    base, good = refusal_lexicon()
    report = validate_variant(good, base)
    assert report.ok and report.reasons == ()
    assert set(report.checks) >= {"identical", "length", "placeholders", "keywords", "scale"}


def test_validation_rejects_identical_text() -> None:
    base, _ = refusal_lexicon()
    copy = Variant(name="copy", transform="syntax", template="  " + base.template.upper())
    report = validate_variant(copy, base)
    assert not report.ok and report.checks["identical"] is False
    assert "identical" in report.reasons[0]


def test_validation_rejects_a_dropped_placeholder() -> None:
    base, good = refusal_lexicon()
    dropped = Variant(
        name="drop", transform="lexicon", template=good.template.replace("{prompt}", "the goal")
    )
    report = validate_variant(dropped, base)
    assert report.checks["placeholders"] is False
    assert any("{prompt}" in r for r in report.reasons)
    added = Variant(name="add", transform="lexicon", template=good.template + "{context}\n")
    assert "adds placeholder {context}" in " ".join(validate_variant(added, base).reasons)


def test_validation_rejects_a_changed_scale() -> None:
    base = builtin_rubric("harmfulness")
    good = builtin_variants("harmfulness").of("lexicon")[0]
    ten = good.template.replace("from 1 to 5", "from 1 to 10").replace(
        "5 = severely", "10 = severely"
    )
    report = validate_variant(Variant(name="ten", transform="lexicon", template=ten), base)
    assert report.checks["scale"] is False
    assert any("10" in r and "scale" in r for r in report.reasons)


def test_validation_rejects_a_dropped_verdict_label() -> None:
    base = builtin_rubric("preference")
    good = builtin_variants("preference").of("lexicon")[0]
    no_tie = good.template.replace("A, B, or tie", "A or B")
    report = validate_variant(Variant(name="no-tie", transform="lexicon", template=no_tie), base)
    assert report.checks["keywords"] is False
    assert "'tie'" in " ".join(report.reasons)


def test_validation_rejects_a_length_out_of_bounds() -> None:
    base, good = refusal_lexicon()
    doubled = Variant(name="long", transform="lexicon", template=good.template * 2)
    report = validate_variant(doubled, base)
    assert report.checks["length"] is False
    assert "length ratio" in report.reasons[0]


def test_validation_rejects_a_direction_that_is_not_a_decision_class() -> None:
    base = builtin_rubric("refusal")
    good = builtin_variants("refusal").of("threshold")[0]
    wrong = good.model_copy(update={"expected_toward": ("unsafe",)})
    report = validate_variant(Variant.model_validate(wrong.model_dump()), base)
    assert report.checks["direction"] is False


def test_probe_refuses_rejected_variants_unless_told_to_skip_them() -> None:
    base, good = refusal_lexicon()
    bad = Variant(name="copy", transform="lexicon", template=base.template)
    items = pointwise_items(6)
    with pytest.raises(RubricError, match="'copy': identical"):
        run(PolicyInvarianceProbe(variants=(good, bad)), items, lambda r: "true", base)
    result = run(
        PolicyInvarianceProbe(variants=(good, bad), on_invalid="skip"),
        items,
        lambda r: "true",
        base,
    )
    assert [v["name"] for v in result.tables["key"]["variants"]] == [good.name]
    assert result.params["variants"][1] == {"name": "copy", "hash": bad.hash}
    assert any("copy" in note and "identical" in note for note in result.notes)


# -- nulls ----------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [0.0, 0.02, 0.2, 0.5])
def test_matched_null_for_three_runs_is_half_the_jitter_plus_its_square(d: float) -> None:
    assert single_vs_majority_disagreement(d, 3) == pytest.approx(d / 2 + d**2, abs=1e-12)


@pytest.mark.parametrize(("p", "n"), [(0.1, 3), (0.3, 3), (0.2, 5), (0.3, 4), (0.4, 1)])
def test_closed_form_null_matches_simulation(p: float, n: int) -> None:
    rng = np.random.default_rng(7)
    runs = rng.random((400_000, n + 1)) < p
    positives = runs[:, :n].sum(axis=1)
    defined = positives * 2 != n
    anchor = positives * 2 > n
    simulated = float(np.mean(runs[defined, n] != anchor[defined]))
    expected = single_vs_majority_disagreement(2 * p * (1 - p), n)
    se = math.sqrt(expected * (1 - expected) / defined.sum())
    assert abs(simulated - expected) < 4 * se


def test_poisson_binomial_cdf_matches_enumeration() -> None:
    probs = [0.1, 0.5, 0.8, 0.3]
    outcomes = np.array(np.meshgrid(*[[0, 1]] * 4)).T.reshape(-1, 4)
    weights = np.prod(np.where(outcomes == 1, probs, 1 - np.array(probs)), axis=1)
    for k in range(5):
        assert poisson_binomial_cdf(k, probs) == pytest.approx(weights[outcomes.sum(1) <= k].sum())


def test_matched_test_with_one_variant_is_the_one_sided_exact_mcnemar_test() -> None:
    # b = 9 items flip only under the variant, c = 2 only under the base run, 3 under both.
    null = [False] * 9 + [True] * 2 + [True] * 3 + [False] * 20
    variant = [[True]] * 9 + [[False]] * 2 + [[True]] * 3 + [[False]] * 20
    result = exchangeable_flip_test(null, variant)
    assert result.pvalue == pytest.approx(proportion_above(9, 11, 0.5).pvalue)
    assert result.n == 34


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: single_vs_majority_disagreement(0.2, 0), r"^n must be an integer >= 1, got 0"),
        (lambda: single_vs_majority_disagreement(-0.1, 3), r"^d must be a number in \[0, 1\]"),
        (lambda: poisson_binomial_cdf(1, [0.5, 1.5]), r"^probs\[1\] must be a number in \[0, 1\]"),
        (
            lambda: exchangeable_flip_test([True, False], [[True]]),
            r"^arguments must have the same length: len\(null_flips\) = 2",
        ),
        (
            lambda: flip_rate_excess([1, 0], [1], [0], [1]),
            r"^arguments must have the same length",
        ),
    ],
)
def test_flip_statistics_refuse_bad_arguments_with_the_statistics_error(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        call()


def test_excess_and_spread_are_undefined_without_data() -> None:
    assert not flip_rate_excess([0], [0], [0], [0]).defined
    assert not spread_of_means([[1.0, 0.0]]).defined
    spread = spread_of_means([[1.0, 1.0, math.nan], [0.0, 1.0, math.nan]], n_resamples=50)
    assert spread.estimate == 0.5 and spread.n == 2


def test_matched_test_keeps_its_level_when_noise_concentrates_on_few_items() -> None:
    # 85 % stable items, 15 % coin flips; one anchor of 3 reruns shared by 1 + 4 single runs.
    rng = np.random.default_rng(3)
    rejections = 0
    trials = 300
    for _ in range(trials):
        p = np.where(rng.random(100) < 0.85, 0.01, 0.5)
        anchor = (rng.random((100, 3)) < p[:, None]).sum(axis=1) >= 2
        single = rng.random((100, 5)) < p[:, None]
        flips = single != anchor[:, None]
        result = exchangeable_flip_test(list(flips[:, 0]), [list(row) for row in flips[:, 1:]])
        rejections += result.pvalue < 0.05
    rate = rejections / trials
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)


def test_matched_test_detects_a_wording_effect() -> None:
    rng = np.random.default_rng(5)
    p = np.where(rng.random(150) < 0.85, 0.01, 0.5)
    anchor = (rng.random((150, 3)) < p[:, None]).sum(axis=1) >= 2
    base = rng.random(150) < p
    shifted = rng.random((150, 2)) < np.minimum(1, p + 0.15)[:, None]
    result = exchangeable_flip_test(
        list(base != anchor), [list(row) for row in shifted != anchor[:, None]]
    )
    assert result.pvalue < 0.01


# -- the probe: self-validation -------------------------------------------------------------


def noisy_refusal_items(n: int = 160) -> list[Item]:
    return pointwise_items(n, label=lambda k: float(k % 3 == 0))


def item_noise(k: int) -> float:
    """P(true) of item k: most items stable, every fifth one a coin flip."""
    return 0.5 if k % 5 == 0 else (0.03 if k % 2 else 0.97)


def rubric_blind(request: Request) -> str:
    """Ignores the rubric text: every run, under any wording, draws from the item's noise."""
    return "true" if uniform(request) < item_noise(item_number(request)) else "false"


def test_judge_that_ignores_the_rubric_flips_at_the_null_rate_and_no_class_is_significant() -> None:
    result = run(
        PolicyInvarianceProbe(), noisy_refusal_items(), rubric_blind, builtin_rubric("refusal")
    )
    null = result.finding("null_flip_rate").estimate
    assert null.estimate > 0 and result.finding("p_jitter").estimate.estimate > 0
    for cls in TRANSFORMS:
        delta = by_class(result, "flip_delta", cls)
        assert delta.test is not None and delta.test.pvalue >= 0.05, cls
        assert delta.estimate.ci.contains(0.0), cls
        rate = by_class(result, "flip_rate", cls).estimate
        assert rate.ci.contains(null.estimate), cls
    assert result.tables["noise"]["null_used"] == "matched"
    lexicon = by_class(result, "flip_delta", "lexicon").test
    assert lexicon is not None and "matched null" in lexicon.null


def half_coin_flips(request: Request) -> str:
    """Ignores the rubric text; every other item is a coin flip on every run, the rest stable."""
    k = item_number(request)
    p = 0.5 if k % 2 == 0 else (0.03 if k % 3 else 0.97)
    return "true" if uniform(request) < p else "false"


def test_a_wording_blind_noisy_judge_is_not_failed_on_the_direction_or_spread_of_noise() -> None:
    result = run(
        PolicyInvarianceProbe(n_resamples=200),
        noisy_refusal_items(60),
        half_coin_flips,
        builtin_rubric("refusal"),
    )
    # Its threshold-shift flips are rerun noise, which goes either way: no direction to judge.
    direction = by_class(result, "directional_ratio", "threshold")
    assert direction.status == "n/a"
    assert "do not exceed the matched rerun null" in direction.estimate.reason
    # The range of seven noisy accuracies is biased upward: its interval lies above 0.1 although
    # the true spread is 0. The paired permutation test finds no difference, which holds it back.
    spread = next(
        f for f in result.findings if f.name == "accuracy_spread" and f.threshold is not None
    )
    assert spread.estimate.ci.low >= 0.1
    assert spread.test is not None and spread.test.pvalue >= 0.05
    assert spread.status == "inconclusive"


def test_the_spread_test_keeps_its_level_on_noise_and_detects_a_wording_effect() -> None:
    rng = np.random.default_rng(7)
    rejections, trials = 0, 100
    for _ in range(trials):
        p = np.where(rng.random(60) < 0.2, 0.5, 0.97)  # a few coin-flip items, the rest stable
        columns = (rng.random((7, 60)) < p).astype(float)
        rejections += spread_test(list(columns), n_resamples=100, seed=1).pvalue < 0.05
    assert rejections / trials <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)
    p = np.full(60, 0.9)
    shifted = np.array([p] * 6 + [p - 0.4])  # one wording is 0.4 less accurate
    effect = spread_test(list((rng.random((7, 60)) < shifted).astype(float)), n_resamples=200)
    assert effect.pvalue < 0.01 and effect.alternative == "greater"


def test_the_spread_test_does_not_depend_on_the_order_of_the_items() -> None:
    rng = np.random.default_rng(2)
    columns = np.where(rng.random((5, 40)) < 0.3, 1.0, 0.0)
    columns[1, 3] = math.nan  # an incomplete item is left out
    order = rng.permutation(40)
    first = spread_test(list(columns), n_resamples=300, seed=4)
    again = spread_test(list(columns[:, order]), n_resamples=300, seed=4)
    assert (first.pvalue, first.n) == (again.pvalue, 39)
    assert spread_test([[1.0, 0.0], [1.0, 0.0]]).pvalue == 1.0  # no item differs
    assert math.isnan(spread_test([[1.0, 0.0]]).pvalue)


def test_judge_with_a_greedy_first_trial_that_ignores_the_rubric_has_no_excess_flips() -> None:
    # Like the local LLM judge: trial 0 is the argmax, reruns sample from the distribution.
    def greedy(request: Request) -> Verdict:
        p = item_noise(item_number(request))
        dist = {"true": p if p != 0.5 else 0.45, "false": 1 - p if p != 0.5 else 0.55}
        rubric = request.rubric
        return verdict_from_distribution(dist, rubric, key=request.key, trial=request.trial)

    result = run(PolicyInvarianceProbe(), noisy_refusal_items(), greedy, builtin_rubric("refusal"))
    null = result.finding("null_flip_rate").estimate.estimate
    for cls in TRANSFORMS:
        assert by_class(result, "decision_change_rate", cls).estimate.estimate == 0
        assert by_class(result, "flip_rate", cls).estimate.estimate == pytest.approx(null)
        test = by_class(result, "flip_delta", cls).test
        assert test is not None and not test.pvalue < 0.05


def strictness_sensitive(request: Request) -> str:
    """Its threshold moves when the rubric says "strict" (down) or "lenient" (up)."""
    k = item_number(request)
    latent = random.Random(k).random()
    text = request.rubric.template.lower()
    threshold = 0.35 if "strict" in text else 0.65 if "lenient" in text else 0.5
    noise = (uniform(request) - 0.5) * 0.06
    return "true" if latent + noise > threshold else "false"


def test_planted_strictness_sensitivity_is_detected_in_its_direction() -> None:
    result = run(
        PolicyInvarianceProbe(),
        noisy_refusal_items(),
        strictness_sensitive,
        builtin_rubric("refusal"),
    )
    shift = by_class(result, "flip_delta", "threshold")
    assert shift.test is not None and shift.test.pvalue < 0.001
    assert shift.estimate.ci.low > 0.05
    for variant in ("threshold-stricter", "threshold-lenient"):
        ratio = result.finding("directional_ratio", variant=variant).estimate
        assert ratio.estimate >= 0.95 and ratio.n >= 20
    assert by_class(result, "directional_ratio", "threshold").status == "pass"
    for cls in ("lexicon", "syntax", "format", "supplementary"):
        test = by_class(result, "flip_delta", cls).test
        assert test is not None and test.pvalue >= 0.05, cls
    rows = {r["variant"]: r for r in result.tables["variants"]}
    assert rows["threshold-stricter"]["expected_toward"] == ["refusal"]


def test_pairwise_judge_flips_toward_tie_under_the_stricter_wording() -> None:
    def pairwise(request: Request) -> str:
        quality = random.Random(item_number(request)).uniform(-1, 1)
        text = request.rubric.template
        margin = 0.4 if "clearly" in text else 0.02 if "slightly better" in text else 0.15
        return "A" if quality > margin else "B" if quality < -margin else "tie"

    items = [
        PairwiseItem(
            id=f"p{k}",
            prompt=f"question {k}",
            response_a=f"first answer {k}",
            response_b=f"second answer {k}",
            human_votes=(Vote("A" if k % 2 else "B", rater="h1"), Vote("A", rater="h2")),
        )
        for k in range(120)
    ]
    result = run(PairwisePolicyInvarianceProbe(), items, pairwise, builtin_rubric("preference"))
    assert result.finding("directional_ratio", variant="threshold-stricter").estimate.estimate == 1
    assert result.finding("directional_ratio", variant="threshold-lenient").estimate.estimate == 1
    assert by_class(result, "flip_rate", "lexicon").estimate.estimate == 0
    assert result.finding("accuracy", wording="base").estimate.n == 60  # items with a majority
    strata = {(r["by"], r["stratum"]) for r in result.tables["strata"]}
    assert ("ambiguity", "split") in strata and ("ambiguity", "unanimous") in strata


def test_a_pairwise_score_without_a_label_is_decided_by_the_rubric_rule() -> None:
    # A judge that scores its preference as a probability: 0.7 is "A", 0.3 is "B" (the rule
    # of Rubric.decision_of, as for the position probe), not an undecided verdict.
    rubric = builtin_rubric("preference")
    assert (rubric.decision_of(0.7), rubric.decision_of(0.3)) == ("A", "B")

    def probability(request: Request) -> float:
        return 0.3 if variant_name(request) == "lexicon-1" else 0.7

    items = [
        PairwiseItem(
            id=f"p{k}",
            prompt=f"question {k}",
            response_a=f"first answer {k}",
            response_b=f"second answer {k}",
            human_votes=(Vote("A", rater="h1"), Vote("A", rater="h2")),
        )
        for k in range(12)
    ]
    result = run(PairwisePolicyInvarianceProbe(), items, probability, rubric)
    assert result.tables["noise"]["anchor"] == {"ok": 12}
    flipped = result.finding("flip_rate", variant="lexicon-1").estimate
    assert (flipped.estimate, flipped.n) == (1.0, 12)
    assert result.finding("flip_rate", variant="lexicon-2").estimate.estimate == 0
    assert result.finding("accuracy", wording="base").estimate.estimate == 1
    assert result.finding("accuracy", wording="lexicon-1").estimate.estimate == 0


def test_analysis_reads_the_validated_wordings_from_the_plan() -> None:
    rubric = builtin_rubric("refusal")
    items = pointwise_items(8)
    engine = Engine(
        CallableJudge(strictness_sensitive, name="j"),
        RunStore(":memory:"),
        EngineConfig(progress=False),
    )
    result = run_probe(PolicyInvarianceProbe(), items, engine, rubric)
    assert result.plan is not None
    design = result.plan.design
    assert isinstance(design, PolicyDesign)
    assert [w.name for w in design.wordings][:2] == ["base", "lexicon-1"]
    assert decode(loads(dumps(design))) == design
    # the analysis neither resolves nor validates the variants again: a probe whose variant
    # file is gone still analyses the stored plan
    elsewhere = PolicyInvarianceProbe(variants="no/such/variants.yaml")
    with pytest.raises(ConfigError, match=r"^variants: no file 'no/such/variants\.yaml'"):
        elsewhere.plan(items, result.plan.context)
    known = engine.store.get_many(sorted(result.plan.keys))
    again = elsewhere.analyze(result.plan, Verdicts(result.plan, known))
    assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in result.findings]


def test_a_stored_run_is_analysed_again_from_the_store_alone(tmp_path: Path) -> None:
    rubric = builtin_rubric("refusal")
    store = RunStore(tmp_path / "runs.sqlite")
    engine = Engine(
        CallableJudge(strictness_sensitive, name="j"), store, EngineConfig(progress=False)
    )
    probe = PolicyInvarianceProbe(reproduction_trials=1, n_resamples=100)
    result = run_probe(probe, noisy_refusal_items(30), engine, rubric)
    assert result.plan is not None and result.plan.stage == 2 and result.plan.design.flipped
    run_id = store.start_run({})
    store.put_plan(run_id, probe.name, result.plan)
    store.put_result(run_id, probe.name, result.to_dict())
    again = reanalyze(RunStore(tmp_path / "runs.sqlite"), run_id, probe.name).to_dict()
    first = result.to_dict()
    assert (
        again.pop("usage")["ok"]
        == first.pop("usage")["ok"]
        == 30 * 14
        + len(result.plan.design.flipped or ())
        + len({i for i, _ in result.plan.design.flipped or ()})
    )
    assert again == first  # no judge call: the run's plan and its verdicts


def test_reproduction_is_a_second_stage_planned_from_the_flips() -> None:
    rubric = builtin_rubric("refusal")

    def judge(request: Request) -> str:
        flips = variant_name(request) == "lexicon-1" and item_number(request) < 3
        return "false" if flips else "true"

    once = run(PolicyInvarianceProbe(), pointwise_items(6), judge, rubric)
    assert once.plan is not None and once.plan.stage == 1
    assert once.plan.design.flipped is None
    twice = run(PolicyInvarianceProbe(reproduction_trials=2), pointwise_items(6), judge, rubric)
    assert twice.plan is not None and twice.plan.stage == 2
    assert twice.plan.design.flipped == (
        ("i0", "lexicon-1"),
        ("i1", "lexicon-1"),
        ("i2", "lexicon-1"),
    )
    fresh = [role for role in twice.plan.requests if role not in once.plan.requests]
    assert len(fresh) == 3 * 2 + 3 * 2  # base trials 4-5 and variant trials 1-2 per flip
    assert ("wording", "base", "i0", 4) in fresh and ("wording", "lexicon-1", "i2", 2) in fresh


def harm_items(n: int = 100) -> list[Item]:
    levels = (0.0, 0.25, 0.5, 0.75, 1.0)
    return pointwise_items(n, label=lambda k: levels[k % 5])


def test_numeric_judge_gets_accuracy_and_mae_per_wording_on_the_rescaled_scale() -> None:
    levels = (0.0, 0.25, 0.5, 0.75, 1.0)

    def harm(request: Request) -> float:
        human = levels[item_number(request) % 5]
        score = 1 + 4 * human  # (score - 1) / 4 is the human label
        return min(5.0, score + 1) if "strict" in request.rubric.template else score

    result = run(PolicyInvarianceProbe(), harm_items(), harm, builtin_rubric("harmfulness"))
    assert result.finding("mae", wording="base").estimate.estimate == pytest.approx(0)
    assert result.finding("accuracy", wording="base").estimate.estimate == 1
    stricter = result.finding("mae", wording="threshold-stricter").estimate.estimate
    assert stricter == pytest.approx(np.mean([0.25, 0.25, 0.25, 0.25, 0.0]))
    assert result.finding("accuracy_spread", wordings="9").estimate.estimate == 0
    assert result.finding("accuracy_spread", wordings="all").estimate.estimate > 0


def test_a_move_into_neutral_is_counted_but_is_not_a_flip() -> None:
    def harm(request: Request) -> float:
        return 3.0 if variant_name(request) == "lexicon-1" else 4.0

    result = run(PolicyInvarianceProbe(), harm_items(20), harm, builtin_rubric("harmfulness"))
    row = {r["variant"]: r for r in result.tables["variants"]}["lexicon-1"]
    assert (row["flips"], row["neutral_moves"], row["n"]) == (0, 20, 20)


def test_failed_and_unparseable_calls_are_excluded_from_flips_and_reported() -> None:
    def flaky(request: Request) -> str | None:
        k = item_number(request)
        if variant_name(request) == "syntax-1" and k < 5:
            return None  # unparseable
        if variant_name(request) == "syntax-1" and k < 10:
            raise RuntimeError("backend fell over")
        return "true"

    result = run(PolicyInvarianceProbe(), pointwise_items(30), flaky, builtin_rubric("refusal"))
    row = {r["variant"]: r for r in result.tables["variants"]}["syntax-1"]
    assert (row["flips"], row["n"]) == (0, 20)
    failures = {r["wording"]: r for r in result.tables["failures"]}["syntax-1"]
    assert (failures["unparseable"], failures["error"]) == (5, 5)
    rate = result.finding("failed_call_rate").estimate
    assert rate.counts["k"] == 10
    assert any("10 of" in note for note in result.notes)


def test_failed_calls_are_counted_per_item_run_when_items_share_their_text() -> None:
    # i0 and i1 ask the same question: one request, judged once, but two runs of the variant
    # in every count (flips count both items, so the failures table does too)
    items = [
        PointwiseItem(id=f"i{k}", prompt=f"request number {k // 2}", response="same response")
        for k in range(6)
    ]

    def judge(request: Request) -> str | None:
        first = item_number(request) == 0 and variant_name(request) == "syntax-1"
        return None if first else "true"

    result = run(PolicyInvarianceProbe(), items, judge, builtin_rubric("refusal"))
    failures = {r["wording"]: r for r in result.tables["failures"]}
    assert (failures["syntax-1"]["ok"], failures["syntax-1"]["unparseable"]) == (4, 2)
    assert failures["base"]["ok"] == 6 * 4
    rate = result.finding("failed_call_rate").estimate
    assert (rate.counts["k"], rate.n) == (2, 6 * 14)
    row = {r["variant"]: r for r in result.tables["variants"]}["syntax-1"]
    assert row["n"] == 4


def test_reproduction_separates_deterministic_flips_from_induced_instability() -> None:
    def judge(request: Request) -> str:
        k = item_number(request)
        if variant_name(request) == "lexicon-1":
            if k < 10:
                return "true"  # a clean reversal on every run
            if k < 20:
                return "true" if request.trial % 2 == 0 else "false"  # alternates
        return "false"

    result = run(
        PolicyInvarianceProbe(reproduction_trials=3),
        pointwise_items(40),
        judge,
        builtin_rubric("refusal"),
    )
    outcomes = {
        f["item"]: f["outcome"]
        for f in result.tables["reproduction"]["flips"]
        if f["variant"] == "lexicon-1"
    }
    assert {k for k, v in outcomes.items() if v == "deterministic"} == {f"i{k}" for k in range(10)}
    assert {k for k, v in outcomes.items() if v == "induced_instability"} == {
        f"i{k}" for k in range(10, 20)
    }
    assert by_class(result, "deterministic_share", "lexicon").estimate.estimate == 0.5
    assert result.usage["requests"] == 40 * 14 + 20 * 3 + 20 * 3


def test_classify_reproduction_calls_a_flip_with_failed_runs_undetermined() -> None:
    rubric = builtin_rubric("refusal")
    assert classify_reproduction(rubric, ["refusal"] * 3, ["compliance", None, "compliance"]) == (
        "undetermined"
    )
    assert classify_reproduction(rubric, ["refusal"] * 3, ["refusal"] * 3) == "not_reproduced"


def test_flips_are_stratified_by_item_type_category_and_ambiguity() -> None:
    items = [
        PointwiseItem(
            id=f"i{k}",
            prompt=f"request number {k}",
            response=f"response number {k}",
            labels=tuple(
                HumanLabel(v, rater=f"r{j}") for j, v in enumerate((1.0, 1.0, float(k % 2)))
            ),
            item_type="deflection" if k < 20 else "explicit",
            category="a" if k % 4 else "b",
        )
        for k in range(40)
    ]

    def judge(request: Request) -> str:
        flips = variant_name(request) == "threshold-lenient" and item_number(request) < 20
        return "false" if flips else "true"

    result = run(PolicyInvarianceProbe(), items, judge, builtin_rubric("refusal"))
    rows = {(r["by"], r["stratum"], r["class"]): r for r in result.tables["strata"]}
    assert rows[("item_type", "deflection", "threshold")]["flip_rate"] == 0.5
    assert rows[("item_type", "explicit", "threshold")]["flips"] == 0
    assert {("ambiguity", "unanimous"), ("ambiguity", "split")} <= {(b, s) for b, s, _ in rows}
    assert ("category", "b", "base") in rows
    finding = result.finding("flip_rate_by_stratum", by="item_type", stratum="deflection")
    assert finding.labels["class"] == "base"


def test_the_run_seed_draws_the_stratum_intervals_as_it_draws_every_other_interval() -> None:
    items = [
        dataclasses.replace(item, category="a" if k % 3 else "b")
        for k, item in enumerate(noisy_refusal_items(90))
    ]
    probe = PolicyInvarianceProbe(n_resamples=200)
    rubric = builtin_rubric("refusal")

    def bootstrapped(seed: int) -> dict[str, dict[tuple[tuple[str, str], ...], Estimate]]:
        result = run(probe, items, rubric_blind, rubric, seed=seed)
        out: dict[str, dict[tuple[tuple[str, str], ...], Estimate]] = {}
        for f in result.findings:
            if f.estimate.ci.method == "cluster bootstrap percentile":
                out.setdefault(f.name, {})[tuple(sorted(f.labels.items()))] = f.estimate
        return out

    runs = bootstrapped(1), bootstrapped(1), bootstrapped(2)
    for name in ("flip_rate", "flip_rate_by_stratum"):
        first, again, other = (found.get(name, {}) for found in runs)
        assert first, name
        assert first == again, name  # the same seed, the same intervals
        assert first.keys() == other.keys(), name
        assert [e.estimate for e in first.values()] == [e.estimate for e in other.values()]
        redrawn = [key for key in first if first[key].ci != other[key].ci]
        assert redrawn, f"{name}: no interval changed with the run seed"


def test_results_are_keyed_by_the_judge_fingerprint_with_every_variant_hash() -> None:
    rubric = builtin_rubric("refusal")
    result = run(PolicyInvarianceProbe(), pointwise_items(4), lambda r: "true", rubric, name="k")
    key = result.tables["key"]
    assert key["judge"] == CallableJudge(lambda r: "true", name="k").fingerprint
    assert key["rubric"] == {"name": "refusal", "hash": rubric.hash}
    shipped = {v.name: v.hash for v in builtin_variants("refusal").variants}
    assert {v["name"]: v["hash"] for v in key["variants"]} == shipped
    assert all(v["rubric_hash"] != rubric.hash for v in key["variants"])
    assert not any(f.name == "composite" for f in result.findings)


def test_base_single_run_is_the_request_every_other_probe_makes() -> None:
    rubric = builtin_rubric("refusal")
    items = pointwise_items(3)
    ctx = ProbeContext(judge="j", rubric=rubric)
    planned = {r.key for r in PolicyInvarianceProbe().plan(items, ctx).requests.values()}
    assert all(base_request(ctx, item).key in planned for item in items)  # type: ignore[arg-type]
    assert len(planned) == 3 * (1 + 3 + 10)


def test_human_threshold_maps_the_dataset_scale_to_decisions() -> None:
    items = pointwise_items(10, label=lambda k: 0.5)
    rubric = builtin_rubric("refusal")
    default = run(PolicyInvarianceProbe(), items, lambda r: "true", rubric)
    assert default.finding("accuracy", wording="base").estimate.estimate == 1
    higher = run(PolicyInvarianceProbe(human_threshold=0.6), items, lambda r: "true", rubric)
    assert higher.finding("accuracy", wording="base").estimate.estimate == 0
    scaled = pointwise_items(10, label=lambda k: 4.0)
    on_1_to_5 = run(PolicyInvarianceProbe(human_scale=(1, 5)), scaled, lambda r: "true", rubric)
    assert on_1_to_5.finding("accuracy", wording="base").estimate.estimate == 1


def test_human_scale_is_inferred_from_labels_on_the_rubric_scale() -> None:
    items = pointwise_items(20, label=lambda k: float(1 + k % 5))  # labels 1..5, like the demo

    def same_as_humans(request: Request) -> float:
        return float(1 + item_number(request) % 5)

    result = run(PolicyInvarianceProbe(), items, same_as_humans, builtin_rubric("harmfulness"))
    assert result.tables["human_scale"] == [1.0, 5.0]
    assert result.finding("accuracy", wording="base").estimate.estimate == 1
    assert result.finding("mae", wording="base").estimate.estimate == 0


def _order_free(result: ProbeResult) -> dict[str, Any]:
    """Everything in a result that must not depend on the order of the items: every finding's
    point estimate, n and counts (not the resampled intervals), and the tables without their
    interval columns, with per-item rows sorted."""
    intervals = {"low", "high", "delta_low", "delta_high"}

    def number(value: float | None) -> float | None:
        return None if value is None or math.isnan(value) else value

    def rows(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = [{k: v for k, v in row.items() if k not in intervals} for row in table]
        return sorted(kept, key=repr)

    findings = {
        (f.name, tuple(sorted(f.labels.items()))): (
            number(f.estimate.estimate),
            f.estimate.n,
            dict(f.estimate.counts),
            None if f.test is None else number(f.test.pvalue),
        )
        for f in result.findings
    }
    tables = {
        name: rows(result.tables[name])
        for name in ("variants", "classes", "accuracy", "strata", "failures")
    }
    tables["anchor"] = result.tables["noise"]["anchor"]
    tables["reproduction"] = rows(result.tables["reproduction"]["flips"])
    return {"findings": findings, "tables": tables}


def test_item_order_does_not_change_the_findings() -> None:
    # Shuffled, not reversed: under a reversal a list read backwards against the items (human
    # labels, strata, anchors) pairs them the same way again and would go unnoticed.
    rubric = builtin_rubric("refusal")
    items = [
        dataclasses.replace(item, category="a" if k % 3 else "b", item_type="t" if k % 4 else "u")
        for k, item in enumerate(noisy_refusal_items(60))
    ]
    shuffled = list(items)
    random.Random(11).shuffle(shuffled)
    probe = PolicyInvarianceProbe(reproduction_trials=1, n_resamples=100)
    forward = _order_free(run(probe, items, strictness_sensitive, rubric))
    again = _order_free(run(probe, shuffled, strictness_sensitive, rubric))
    assert again == forward
    # ... and what is compared depends on which verdict goes with which item
    accuracy = {r["wording"]: r["accuracy"] for r in forward["tables"]["accuracy"]}
    assert 0.3 < accuracy["base"] < 0.7
    assert sum(r["flips"] for r in forward["tables"]["classes"]) > 0
    assert forward["tables"]["reproduction"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"reruns": 0}, r"reruns must be an integer >= 1, got 0"),
        ({"reproduction_trials": -1}, r"reproduction_trials must be an integer >= 0"),
        ({"null": "fisher"}, r"null must be one of 'matched', 'pairwise', got 'fisher'"),
        ({"alpha": 1.5}, r"alpha must be a number in \(0, 1\), got 1\.5"),
        ({"human_scale": (1, 1)}, r"human_scale must be \(low, high\) with low < high"),
        ({"human_threshold": 2}, r"human_threshold must be a number in \[0, 1\], got 2"),
        ({"item_type_rule": "guess"}, r"item_type_rule must be one of 'given', 'refusal-phrase'"),
        ({"on_invalid": "ignore"}, r"on_invalid must be one of 'raise', 'skip', got 'ignore'"),
    ],
)
def test_bad_parameters_raise_a_config_error(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        PolicyInvarianceProbe(**bad)


def test_shipped_variants_are_refused_for_a_reworded_or_unknown_rubric() -> None:
    reworded = builtin_rubric("refusal").with_template(
        "Refusal? {prompt} {response} Answer true or false."
    )
    ctx = ProbeContext(judge="j", rubric=reworded)
    with pytest.raises(ConfigError, match="worded differently"):
        PolicyInvarianceProbe().plan(pointwise_items(2), ctx)
    own = reworded.with_template(reworded.template, name="mine")
    with pytest.raises(ConfigError, match="not built in"):
        PolicyInvarianceProbe().plan(pointwise_items(2), ProbeContext("j", own))


def test_pairwise_null_follows_the_paper_convention_when_asked() -> None:
    result = run(
        PolicyInvarianceProbe(null="pairwise"),
        noisy_refusal_items(60),
        rubric_blind,
        builtin_rubric("refusal"),
    )
    delta = result.finding("flip_delta", variant="lexicon-1")
    assert delta.labels["null"] == "pairwise"
    # the paper's test: the variant's flip count, exact binomial against the rerun jitter
    row = next(r for r in result.tables["variants"] if r["variant"] == "lexicon-1")
    jitter = result.finding("p_jitter").estimate.estimate
    assert delta.test == proportion_above(row["flips"], row["n"], jitter)
    assert result.tables["noise"]["null_used"] == "pairwise"
    (said,) = [note for note in result.notes if note.startswith("test null: ")]
    assert said.startswith("test null: pairwise (exact one-sided binomial test of the flip count")


def test_probe_is_registered_by_name_for_pointwise_and_pairwise_judges() -> None:
    assert get_probe_class("policy_invariance") is PolicyInvarianceProbe
    pairwise = get_probe_class("policy_invariance_pairwise")
    assert pairwise is PairwisePolicyInvarianceProbe
    assert (pairwise.item_kind, pairwise.rubric_kinds) == ("pairwise", ("pairwise",))


def test_refusal_item_type_separates_deflections_on_pyrit_refusal_data() -> None:
    folder = DATA / "pyrit_scorer_evals" / "refusal_scorer"
    if not (folder / "refusal.csv").exists():
        pytest.skip(f"PyRIT refusal data not found under {DATA} (set JUDGEPROBE_DATA)")
    from judgeprobe.data.pyrit import load_pyrit_csv

    items = load_pyrit_csv([folder / "refusal.csv", folder / "refusal_extra.csv"]).items
    assert len(items) == 169
    types = [refusal_item_type(i) for i in items if isinstance(i, PointwiseItem)]
    counts = {t: types.count(t) for t in set(types)}
    assert counts == {"explicit_refusal": 61, "deflection": 48, "compliance": 60}


# -- the generator --------------------------------------------------------------------------


def rewrite_by_shipped(prompt: str) -> str:
    """A fake model: answers the equivalence question, else returns a shipped rewrite."""
    if "Version 1:" in prompt:
        return "EQUIVALENT\nSame criteria."
    shipped = builtin_variants("refusal")
    attempt = int(prompt.rsplit("This is attempt ", 1)[1].split(".", 1)[0])
    for transform in ("lexicon", "syntax", "format", "supplementary"):
        if GeneratorPrompts.load().transforms[transform][:40] in prompt:
            if transform == "lexicon" and attempt == 1 and "earlier rewrites" not in prompt:
                return f"<rubric>\n{builtin_rubric('refusal').template}</rubric>"  # identical
            pick = shipped.of(transform)[1 if "earlier rewrites" in prompt else 0]
            return f"Here it is:\n<rubric>\n{pick.template}</rubric>"
    wanted = "threshold-stricter" if "stricter" in prompt else "threshold-lenient"
    return next(v.template for v in shipped.variants if v.name == wanted)


def test_generator_validates_every_candidate_and_keeps_rejections_with_reasons() -> None:
    calls: list[str] = []

    async def complete(prompt: str) -> str:
        calls.append(prompt)
        return rewrite_by_shipped(prompt)

    base = builtin_rubric("refusal")
    result = VariantGenerator(complete).generate_sync(base)
    assert len(result.accepted) == 10
    assert [c.report.reasons for c in result.rejected] == [
        ("identical to the base template (ignoring case and whitespace)",)
    ]
    shifts = {v.shift: v.expected_toward for v in result.accepted if v.transform == "threshold"}
    assert shifts == {"stricter": ("refusal",), "more_lenient": ("compliance",)}
    variant_set = result.variant_set()
    assert variant_set.rubric_hash == base.hash
    assert all(v.source == "generated" for v in variant_set.variants)
    assert sum("Version 1:" in c for c in calls) == 6  # equivalence for meaning-preserving only
    assert all("{prompt}, {response}" in c for c in calls if "Version 1:" not in c)


def test_equivalence_check_rejects_a_change_of_meaning() -> None:
    async def different(prompt: str) -> str:
        return "DIFFERENT\nThe second version no longer counts deflection as refusal."

    base, good = refusal_lexicon()
    report = asyncio.run(check_equivalence(base, good, different))
    assert report.checks["equivalence"] is False
    assert "deflection" in report.reasons[-1]

    async def vague(prompt: str) -> str:
        return "Probably fine."

    assert "no verdict" in asyncio.run(check_equivalence(base, good, vague)).reasons[-1]


def test_generator_records_a_failed_call_as_a_rejected_attempt() -> None:
    async def broken(prompt: str) -> str:
        raise ConnectionError("no route to model")

    result = VariantGenerator(broken, attempts=2).generate_sync(
        builtin_rubric("harmfulness"), transforms=("lexicon",)
    )
    assert len(result.candidates) == 4 and not result.accepted
    assert "no route to model" in result.rejected[0].report.reasons[0]
    with pytest.raises(RubricError, match="no generated variant"):
        result.variant_set()


def test_generator_prompts_are_read_from_yaml(tmp_path: Path) -> None:
    prompts = GeneratorPrompts.load()
    assert {"lexicon", "syntax", "format", "supplementary"} <= set(prompts.transforms)
    generator = VariantGenerator(lambda p: asyncio.sleep(0, result=p), prompts=prompts)
    text = generator.rewrite_prompt(builtin_rubric("harmfulness"), "threshold", "stricter", 1)
    assert '"unsafe" (answer 4 or 5)' in text and "numeric scale" in text
    custom = tmp_path / "prompts.yaml"
    custom.write_text("rewrite: x\ntransforms: {}\n", encoding="utf-8")
    with pytest.raises(RubricError, match="avoid"):
        GeneratorPrompts.load(custom)


def test_parse_rewrite_takes_the_tagged_block() -> None:
    assert parse_rewrite("Sure!\n<rubric>\nA {x}\n</rubric>\nDone.") == "A {x}\n"
    assert parse_rewrite("no tags {x}") == "no tags {x}\n"


def test_engine_completion_sends_generation_requests_through_the_engine() -> None:
    seen: list[Request] = []

    def model(request: Request) -> Verdict:
        seen.append(request)
        return Verdict.scored(3, raw_text="rewritten " + request.field_map["prompt"])

    engine = Engine(
        CallableJudge(model, name="writer"), RunStore(":memory:"), EngineConfig(progress=False)
    )
    complete = engine_completion(engine, max_new_tokens=50)

    async def twice() -> list[str]:
        return [await complete("hello"), await complete("hello")]

    assert asyncio.run(twice()) == ["rewritten hello"] * 2  # the second from the run store
    assert len(seen) == 1 and seen[0].rubric.kind == "generation"


def test_a_constant_judge_has_no_flips_by_construction_and_its_flip_findings_are_n_a() -> None:
    result = run(
        PolicyInvarianceProbe(),
        noisy_refusal_items(60),
        lambda r: "false",
        builtin_rubric("refusal"),
    )
    for cls in TRANSFORMS:
        for name in ("flip_rate", "flip_delta"):
            finding = by_class(result, name, cls)
            assert (finding.estimate.defined, finding.status) == (False, "n/a"), (name, cls)
            reason = finding.estimate.reason
            assert reason is not None and "one decision" in reason, (name, cls)


def test_a_constant_judge_has_no_stratum_flips_either() -> None:
    items = [
        dataclasses.replace(item, category="a" if k % 2 else "b")
        for k, item in enumerate(noisy_refusal_items(40))
    ]
    result = run(PolicyInvarianceProbe(), items, lambda r: "false", builtin_rubric("refusal"))
    strata = [f for f in result.findings if f.name == "flip_rate_by_stratum"]
    assert strata and all(not f.estimate.defined for f in strata)
    assert all("one decision" in (f.estimate.reason or "") for f in strata)


def test_one_item_is_too_few_for_the_spread_test_and_its_spread_is_n_a_saying_so() -> None:
    """One item judged under every wording: no permutation within it can draw a null, so the
    test is not run (NaN p-value, never a crash) and the gated accuracy spread is n/a."""
    test = spread_test([[1.0], [0.0], [1.0]])
    assert math.isnan(test.pvalue) and test.n == 1

    def reads_its_wording(request: Request) -> str:
        return "true" if len(variant_name(request)) % 2 else "false"

    result = run(
        PolicyInvarianceProbe(n_resamples=50),
        pointwise_items(1),
        reads_its_wording,
        builtin_rubric("refusal"),
    )
    spread = next(
        f for f in result.findings if f.name == "accuracy_spread" and f.threshold is not None
    )
    assert spread.status == "n/a"
    assert spread.estimate.reason is not None
    assert spread.estimate.reason.startswith("too few items for a test: 1 ")
