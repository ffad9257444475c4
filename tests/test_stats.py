"""Specification of judgeprobe.stats.

Reference values come from R or from hand arithmetic written next to them, each with a stated
tolerance. Property tests pin what must hold for any input (identical labels agree perfectly, a
seed reproduces, clusters widen intervals); the undefined cases must give NaN, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import optimize
from scipy import stats as sps

import judgeprobe.stats as js
from judgeprobe.errors import ConfigError
from judgeprobe.stats import (
    Estimate,
    InvalidParameterError,
    agreement,
    bootstrap,
    clustered_proportion,
    cohen_kappa,
    difference_of_proportions,
    discordant_pair_rate,
    logistic_length_controlled_rate,
    majority,
    mcnemar_exact,
    mean,
    proportion,
    proportion_above,
    wasserstein,
    wasserstein_matrix,
)
from judgeprobe.stats.regression import fit_logistic, fit_logistic_batch

# --------------------------------------------------------------------------------------------
# Public surface


def test_all_is_pinned() -> None:
    assert sorted(js.__all__) == [
        "ConfidenceInterval",
        "Estimate",
        "InvalidParameterError",
        "TestResult",
        "WassersteinMatrix",
        "agreement",
        "bootstrap",
        "clustered_proportion",
        "cohen_kappa",
        "difference_of_proportions",
        "discordant_pair_rate",
        "logistic_length_controlled_rate",
        "majority",
        "mcnemar_exact",
        "mean",
        "mean_shift",
        "paired_mean_pairwise_wasserstein",
        "paired_wasserstein",
        "proportion",
        "proportion_above",
        "wasserstein",
        "wasserstein_matrix",
    ]
    for name in js.__all__:
        assert hasattr(js, name)


# Every function taking confidence_level, called with valid data.
WITH_LEVEL: dict[str, Callable[..., Any]] = {
    "proportion": lambda **kw: proportion(3, 10, **kw),
    "difference_of_proportions": lambda **kw: difference_of_proportions(3, 10, 4, 10, **kw),
    "mean": lambda **kw: mean([1.0, 2.0, 3.0], **kw),
    "bootstrap": lambda **kw: bootstrap([1.0, 2.0, 3.0], np.mean, **kw),
    "clustered_proportion": lambda **kw: clustered_proportion([1, 0, 1], ["a", "a", "b"], **kw),
    "wasserstein": lambda **kw: wasserstein([0.0, 1.0], [1.0, 2.0], **kw),
    "cohen_kappa": lambda **kw: cohen_kappa("abab", "abba", **kw),
    "agreement": lambda **kw: agreement("abab", "abba", **kw),
    "discordant_pair_rate": lambda **kw: discordant_pair_rate([["a", "b"], ["a", "a"]], **kw),
    "logistic_length_controlled_rate": lambda **kw: logistic_length_controlled_rate(
        [1, 0, 1, 0], [1.0, -1.0, -2.0, 0.5], n_resamples=20, **kw
    ),
    "mean_shift": lambda **kw: js.mean_shift([0.5, 1.0, 1.5], **kw),
    "paired_wasserstein": lambda **kw: js.paired_wasserstein([0.0, 1.0], [1.0, 2.0], **kw),
    "paired_mean_pairwise_wasserstein": lambda **kw: js.paired_mean_pairwise_wasserstein(
        [[0.0, 1.0], [1.0, 2.0], [0.5, 0.5]], **kw
    ),
}


@pytest.mark.parametrize("name", sorted(WITH_LEVEL))
@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1, "0.95", True])
def test_invalid_confidence_level_is_rejected_everywhere(name: str, level: Any) -> None:
    with pytest.raises(InvalidParameterError, match="confidence_level"):
        WITH_LEVEL[name](confidence_level=level)


@pytest.mark.parametrize("name", sorted(WITH_LEVEL))
def test_every_estimate_reports_its_level_and_is_json_ready(name: str) -> None:
    est = WITH_LEVEL[name](confidence_level=0.9)
    assert isinstance(est, Estimate)
    assert est.ci.level == 0.9
    assert est.n > 0
    assert set(est.to_dict()) == {"estimate", "ci", "n", "counts", "reason"}


def test_invalid_parameter_error_is_a_config_error_and_a_value_error() -> None:
    with pytest.raises(ConfigError, match=r"method must be one of \('wilson', 'exact'"):
        proportion(3, 10, method="agresti")
    with pytest.raises(ValueError, match=r"method must be one of \('wilson', 'exact'"):
        proportion(3, 10, method="agresti")


def test_other_invalid_arguments() -> None:
    with pytest.raises(InvalidParameterError, match="k must not exceed n"):
        proportion(11, 10)
    with pytest.raises(InvalidParameterError, match="n must be an integer"):
        proportion(1, 2.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="p0"):
        proportion_above(1, 10, 1.2)
    with pytest.raises(InvalidParameterError, match="alternative"):
        proportion_above(1, 10, 0.2, alternative="bigger")
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        bootstrap([1.0, 2.0], np.mean, n_resamples=0)
    with pytest.raises(InvalidParameterError, match="same length"):
        agreement("ab", "abc")
    with pytest.raises(InvalidParameterError, match="one label per observation"):
        clustered_proportion([1, 0, 1], ["a", "b"])
    with pytest.raises(InvalidParameterError, match="True/False"):
        clustered_proportion([1, 2], ["a", "b"])


# --------------------------------------------------------------------------------------------
# Proportions


def test_wilson_interval_7_of_169() -> None:
    # Hand arithmetic, z = 1.959964, z^2 = 3.841459:
    #   centre = (7 + z^2/2) / (169 + z^2) = 8.920729 / 172.841459 = 0.051612
    #   half   = z / (169 + z^2) * sqrt(7 * 162 / 169 + z^2 / 4) = 0.0113396 * 2.769553 = 0.031405
    # R: prop.test(7, 169, correct = FALSE)$conf.int -> 0.02021 0.08302
    est = proportion(7, 169)
    assert est.estimate == pytest.approx(7 / 169, abs=1e-12)
    assert est.ci.low == pytest.approx(0.020206, abs=2e-6)
    assert est.ci.high == pytest.approx(0.083018, abs=2e-6)
    assert (est.n, est.counts, est.ci.method) == (169, {"k": 7, "n": 169}, "wilson")


def test_clopper_pearson_matches_r_binom_test() -> None:
    # R: binom.test(7, 169)$conf.int = qbeta(0.025, 7, 163), qbeta(0.975, 8, 162)
    #    -> 0.01681272 0.08347673
    est = proportion(7, 169, method="exact")
    assert est.ci.low == pytest.approx(0.01681272, rel=1e-6)
    assert est.ci.high == pytest.approx(0.08347673, rel=1e-6)
    assert est.ci.method == "clopper-pearson"


def test_wilson_with_continuity_correction_matches_r_prop_test() -> None:
    # R: prop.test(7, 169)$conf.int (continuity-corrected Wilson, Newcombe 1998 method 4)
    #    -> 0.01826998 0.08683307
    est = proportion(7, 169, method="wilsoncc")
    assert est.ci.low == pytest.approx(0.01826998, rel=1e-6)
    assert est.ci.high == pytest.approx(0.08683307, rel=1e-6)


def test_exact_interval_at_the_boundary() -> None:
    # 0 of 10: the exact upper bound solves (1 - p)^10 = 0.025, p = 1 - 0.025^(1/10) = 0.30850
    est = proportion(0, 10, method="exact")
    assert est.ci.low == 0.0
    assert est.ci.high == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)


def test_wilson_coverage_is_close_to_nominal() -> None:
    # 2000 seeded draws of Bin(60, 0.3): the Wilson interval should cover p about 95% of the
    # time (its actual coverage oscillates around nominal); Monte Carlo SE is ~0.005.
    rng = np.random.default_rng(2024)
    p, n = 0.3, 60
    draws = rng.binomial(n, p, size=2000)
    covers = {int(k): proportion(int(k), n).ci.contains(p) for k in np.unique(draws)}
    coverage = np.mean([covers[int(k)] for k in draws])
    assert coverage == pytest.approx(0.95, abs=0.02)


def test_binomial_test_greater_by_hand() -> None:
    # R: binom.test(3, 5, p = 0.2, alternative = "greater")$p.value
    # P(X >= 3) = 10 * .2^3 * .8^2 + 5 * .2^4 * .8 + .2^5 = .0512 + .0064 + .00032 = .05792
    res = proportion_above(3, 5, 0.2)
    assert res.pvalue == pytest.approx(0.05792, rel=1e-9)
    assert (res.statistic, res.alternative, res.n) == (0.6, "greater", 5)


def test_binomial_test_two_sided_and_less() -> None:
    # R: binom.test(1, 7, 0.5)$p.value = 2 * (1 + 7) / 2^7 = 0.125
    assert proportion_above(1, 7, 0.5, alternative="two-sided").pvalue == pytest.approx(0.125)
    # R: binom.test(1, 7, 0.5, alternative = "less")$p.value = 8 / 128 = 0.0625
    assert proportion_above(1, 7, 0.5, alternative="less").pvalue == pytest.approx(0.0625)


def test_mcnemar_exact_by_hand() -> None:
    # 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * 8 / 128 = 0.125; R: binom.test(1, 7)$p.value
    res = mcnemar_exact(1, 6)
    assert res.pvalue == pytest.approx(0.125, rel=1e-12)
    assert res.n == 7
    # symmetric in b and c
    assert mcnemar_exact(6, 1).pvalue == pytest.approx(res.pvalue)


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2", "low", "high"),
    [
        # Newcombe (1998), Stat. Med. 17:873-890, Table II, method 10, examples (a)-(h)
        (56, 70, 48, 80, 0.0524, 0.3339),
        (9, 10, 3, 10, 0.1705, 0.8090),
        (6, 7, 2, 7, 0.0582, 0.8062),
        (5, 56, 0, 29, -0.0381, 0.1926),
        (0, 10, 0, 20, -0.1611, 0.2775),
        (0, 10, 0, 10, -0.2775, 0.2775),
        (10, 10, 0, 20, 0.6791, 1.0000),
        (10, 10, 0, 10, 0.6075, 1.0000),
    ],
)
def test_newcombe_difference_matches_published_table(
    k1: int, n1: int, k2: int, n2: int, low: float, high: float
) -> None:
    est = difference_of_proportions(k1, n1, k2, n2)
    assert est.estimate == pytest.approx(k1 / n1 - k2 / n2)
    assert est.ci.low == pytest.approx(low, abs=6e-5)  # table gives 4 decimals
    assert est.ci.high == pytest.approx(high, abs=6e-5)
    assert est.n == n1 + n2


# --------------------------------------------------------------------------------------------
# Mean and bootstrap


def test_mean_t_interval_matches_r_t_test() -> None:
    # R: t.test(c(2, 4, 6))$conf.int: 4 -/+ qt(0.975, 2) * 2 / sqrt(3)
    #    = 4 -/+ 4.302653 * 1.154701 = -0.9682754, 8.9682754
    est = mean([2.0, 4.0, 6.0])
    assert est.estimate == 4.0
    assert est.ci.low == pytest.approx(-0.9682754, rel=1e-6)
    assert est.ci.high == pytest.approx(8.9682754, rel=1e-6)
    assert est.counts == {"n": 3, "sd": 2.0}


def test_mean_rejects_nan_naming_positions() -> None:
    with pytest.raises(ValueError, match=r"NaN or infinite value\(s\) at position\(s\) 1, 3"):
        mean([1.0, math.nan, 2.0, math.inf])


def test_mean_bootstrap_is_seeded_and_near_the_t_interval() -> None:
    x = np.random.default_rng(5).normal(10.0, 2.0, size=200)
    a = mean(x, method="bootstrap", seed=3, n_resamples=500)
    b = mean(x, method="bootstrap", seed=3, n_resamples=500)
    t = mean(x)
    assert a == b
    assert a.ci.low == pytest.approx(t.ci.low, abs=0.1)
    assert a.ci.high == pytest.approx(t.ci.high, abs=0.1)


def test_bootstrap_matches_scipy_percentile_bootstrap() -> None:
    # Same generator, same draws: the unclustered bootstrap is SciPy's percentile bootstrap.
    x = np.random.default_rng(0).exponential(size=300)
    ours = bootstrap(x, np.mean, n_resamples=400, seed=11)
    ref = sps.bootstrap(
        (x,), np.mean, n_resamples=400, method="percentile", rng=np.random.default_rng(11)
    ).confidence_interval
    assert ours.ci.low == pytest.approx(ref.low, rel=1e-12)
    assert ours.ci.high == pytest.approx(ref.high, rel=1e-12)
    assert ours.estimate == pytest.approx(float(np.mean(x)))


def test_bootstrap_seed_reproduces_and_differs_across_seeds() -> None:
    x = np.random.default_rng(1).normal(size=100)
    assert bootstrap(x, np.median, seed=4, n_resamples=300) == bootstrap(
        x, np.median, seed=4, n_resamples=300
    )
    assert bootstrap(x, np.median, seed=4, n_resamples=300) != bootstrap(
        x, np.median, seed=5, n_resamples=300
    )


def test_bootstrap_vectorised_and_looped_statistics_agree() -> None:
    x = np.random.default_rng(2).normal(size=120)
    ragged = np.random.default_rng(3).integers(0, 30, size=120)  # clusters of unequal size
    for clusters in (None, np.repeat(np.arange(40), 3), ragged):
        fast = bootstrap(x, np.mean, clusters=clusters, n_resamples=200, seed=9)
        slow = bootstrap(x, lambda v: float(np.mean(v)), clusters=clusters, n_resamples=200, seed=9)
        assert fast.ci.low == pytest.approx(slow.ci.low, rel=1e-12)
        assert fast.ci.high == pytest.approx(slow.ci.high, rel=1e-12)


def test_bootstrap_paired_data() -> None:
    rng = np.random.default_rng(6)
    a = rng.normal(size=200)
    b = a + rng.normal(0.5, 0.1, size=200)
    est = bootstrap([a, b], lambda x, y, axis: np.mean(y - x, axis=axis), n_resamples=300)
    assert est.estimate == pytest.approx(float(np.mean(b - a)))
    assert est.ci.contains(0.5)
    assert est.ci.width < 0.1  # pairing removes the between-item variance of a
    with pytest.raises(InvalidParameterError, match="equal lengths"):
        bootstrap([a, b[:10]], lambda x, y: 0.0)


def test_cluster_bootstrap_is_wider_when_clusters_are_perfectly_correlated() -> None:
    # 40 questions x 10 identical rows: the information is 40 outcomes, not 400.
    rng = np.random.default_rng(7)
    per_question = rng.random(40) < 0.5
    y = np.repeat(per_question, 10).astype(float)
    questions = np.repeat(np.arange(40), 10)
    naive = bootstrap(y, np.mean, n_resamples=500)
    clustered = bootstrap(y, np.mean, clusters=questions, n_resamples=500)
    assert clustered.ci.method == "cluster bootstrap percentile"
    assert clustered.ci.width > 2.0 * naive.ci.width  # expected ratio ~ sqrt(10) = 3.2
    cp = clustered_proportion(y, questions, n_resamples=500)
    assert cp.ci.width > 2.0 * proportion(int(y.sum()), 400).ci.width
    assert cp.counts == {"k": y.sum(), "n": 400, "clusters": 40}


def test_clustered_proportion_agrees_with_generic_cluster_bootstrap() -> None:
    rng = np.random.default_rng(8)
    y = rng.random(600) < 0.3
    clusters = rng.integers(0, 150, size=600)
    fast = clustered_proportion(y, clusters, seed=2)
    generic = bootstrap(y.astype(float), np.mean, clusters=clusters, seed=2)
    assert fast.ci.low == pytest.approx(generic.ci.low, rel=1e-12)
    assert fast.ci.high == pytest.approx(generic.ci.high, rel=1e-12)


def test_clustered_proportion_with_singleton_clusters_is_wilson() -> None:
    y = [True] * 7 + [False] * 162
    est = clustered_proportion(y, list(range(169)))
    assert est.ci == proportion(7, 169).ci


def test_clustered_proportion_at_the_boundary_uses_wilson_over_clusters() -> None:
    est = clustered_proportion([1] * 30, np.repeat(np.arange(10), 3))
    assert est.estimate == 1.0
    assert est.ci.method == "wilson over clusters"
    assert est.ci.low == pytest.approx(proportion(10, 10).ci.low)
    assert est.ci.low < 1.0


# --------------------------------------------------------------------------------------------
# Distances


def test_wasserstein_shift_by_hand() -> None:
    # Every point of [0, 1, 3] moves by 5 to reach [5, 6, 8]: distance 5.
    est = wasserstein([0, 1, 3], [5, 6, 8], n_resamples=200)
    assert est.estimate == pytest.approx(5.0, abs=1e-12)
    assert est.counts == {"n_a": 3, "n_b": 3}
    assert est.ci.contains(5.0)


def test_wasserstein_area_between_cdfs_by_hand() -> None:
    # F_a = F_b = 1/2 on [0, 1); on [1, 2) F_a = 1, F_b = 1/2: area 1 * 1/2 = 0.5
    est = wasserstein([0.0, 1.0], [0.0, 2.0], n_resamples=50)
    assert est.estimate == pytest.approx(0.5, abs=1e-12)


def test_wasserstein_bootstrap_replicates_match_scipy() -> None:
    from judgeprobe.stats.distances import _replicates
    from judgeprobe.stats.resampling import draw_weights

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=40).round(1), rng.normal(0.5, 1, size=25).round(1)
    ours = _replicates(x, y, 6, np.random.default_rng(3))
    g = np.random.default_rng(3)
    wx, wy = draw_weights(g, 40, 6), draw_weights(g, 25, 6)
    ref = [
        sps.wasserstein_distance(np.sort(x), np.sort(y), u, v) for u, v in zip(wx, wy, strict=True)
    ]
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_wasserstein_n_is_the_smaller_sample_and_seed_reproduces() -> None:
    a = np.random.default_rng(1).normal(size=50)
    b = np.random.default_rng(2).normal(1.0, 1.0, size=80)
    est = wasserstein(a, b, seed=1, n_resamples=300)
    assert est.n == 50
    assert est == wasserstein(a, b, seed=1, n_resamples=300)
    assert est.ci.low < est.estimate < est.ci.high


def test_wasserstein_matrix() -> None:
    m = wasserstein_matrix({"a": [0, 1, 3], "b": [5, 6, 8], "c": [0, 1, 3], "empty": []})
    assert m.names == ("a", "b", "c", "empty")
    assert m["a", "b"] == pytest.approx(5.0) and m["b", "a"] == pytest.approx(5.0)
    assert m["a", "c"] == 0.0 and m["a", "a"] == 0.0
    assert math.isnan(m["a", "empty"])
    assert m.pairs()[("c", "b")] == pytest.approx(5.0)
    assert m.to_dict()["matrix"][0][3] is None
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        m.matrix[0, 0] = 1.0  # frozen


# --------------------------------------------------------------------------------------------
# Agreement


def test_cohen_kappa_on_a_hand_worked_table() -> None:
    #            b = y   b = n
    #   a = y      20       5     (25)
    #   a = n      10      15     (25)
    #             (30)    (20)    N = 50
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    est = cohen_kappa(a, b, n_resamples=300)
    assert est.estimate == pytest.approx(0.4, abs=1e-12)
    assert est.counts["observed_agreement"] == pytest.approx(0.7)
    assert est.counts["expected_agreement"] == pytest.approx(0.5)
    assert est.n == 50
    assert est.ci.low < 0.4 < est.ci.high


def test_cohen_kappa_three_labels_by_hand() -> None:
    # a: x x y y z z, b: x y y z z x -> p_o = 3/6; marginals 2/2/2 each, p_e = 3 * (1/3)^2 = 1/3
    # kappa = (1/2 - 1/3) / (2/3) = 0.25
    est = cohen_kappa(list("xxyyzz"), list("xyyzzx"), n_resamples=100)
    assert est.estimate == pytest.approx(0.25, abs=1e-12)


def test_identical_sequences_agree_perfectly() -> None:
    labels = ["pass", "fail", "pass", None, "fail", "pass"]
    assert cohen_kappa(labels, labels, n_resamples=100).estimate == pytest.approx(1.0)
    assert agreement(labels, labels).estimate == 1.0


def test_cohen_kappa_is_symmetric_and_label_order_free() -> None:
    rng = np.random.default_rng(3)
    a = list(rng.choice(["A", "B", "C"], size=80))
    b = [x if rng.random() < 0.6 else "B" for x in a]
    k = cohen_kappa(a, b, n_resamples=100).estimate
    assert cohen_kappa(b, a, n_resamples=100).estimate == pytest.approx(k)
    assert cohen_kappa(a, b, labels=["C", "B", "A"], n_resamples=100).estimate == pytest.approx(k)
    with pytest.raises(InvalidParameterError, match="add them to `labels`"):
        cohen_kappa(a, b, labels=["A", "B"])


def test_cohen_kappa_undefined_when_expected_agreement_is_one() -> None:
    est = cohen_kappa(["y"] * 5, ["y"] * 5)
    assert not est.defined
    assert est.counts["expected_agreement"] == 1.0
    assert est.to_dict()["estimate"] is None


def test_cohen_kappa_cluster_bootstrap() -> None:
    rng = np.random.default_rng(4)
    base = rng.choice(["A", "B"], size=30)
    a = list(np.repeat(base, 5))
    b = [x if rng.random() < 0.8 else ("A" if x == "B" else "B") for x in a]
    questions = np.repeat(np.arange(30), 5)
    plain = cohen_kappa(a, b, n_resamples=300, seed=1)
    clustered = cohen_kappa(a, b, clusters=questions, n_resamples=300, seed=1)
    assert clustered.estimate == plain.estimate
    assert clustered.ci.method == "cluster bootstrap percentile"
    assert clustered.counts["clusters"] == 30


def test_agreement_wilson_and_clustered() -> None:
    a, b = ["y", "n", "y", "y"], ["y", "n", "n", "y"]
    est = agreement(a, b)
    assert est.estimate == 0.75
    assert est.ci == proportion(3, 4).ci
    clustered = agreement(a * 10, b * 10, clusters=np.repeat(np.arange(10), 4))
    assert clustered.estimate == 0.75
    assert clustered.ci.method == "cluster bootstrap percentile"


def test_discordant_pair_rate_by_hand() -> None:
    # [A, A, B]: 3 pairs, 2 discordant; [A, A, A]: 3 pairs, 0; [A, None, B]: 1 pair, 1;
    # [None, A]: fewer than two verdicts, excluded. Rate = 3 / 7.
    est = discordant_pair_rate([["A", "A", "B"], ["A", "A", "A"], ["A", None, "B"], [None, "A"]])
    assert est.estimate == pytest.approx(3 / 7)
    assert est.counts == {"discordant": 3, "pairs": 7, "items": 3, "items_excluded": 1}
    assert est.n == 3


def test_discordant_pair_rate_of_a_deterministic_judge_is_zero_with_an_upper_bound() -> None:
    est = discordant_pair_rate([["A"] * 5, ["B"] * 5, ["A"] * 5] * 10)
    assert est.estimate == 0.0
    assert est.ci.low == 0.0
    assert est.ci.high == pytest.approx(proportion(0, 30).ci.high)  # Wilson over 30 items
    assert est.ci.method == "wilson over items"


def test_discordant_pair_rate_cluster_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(5)
    trials = [list(rng.choice(["A", "B"], p=[0.8, 0.2], size=4)) for _ in range(200)]
    est = discordant_pair_rate(trials, seed=3)
    assert est == discordant_pair_rate(trials, seed=3)
    assert est.ci.low < est.estimate < est.ci.high
    assert est.ci.method == "cluster bootstrap percentile"


def test_majority() -> None:
    assert majority(["A", "A", "B"]) == "A"
    assert majority(["A", "B"]) is None  # a tie is no strict majority
    assert majority(["A", "A", None, None]) is None
    assert majority([]) is None


# --------------------------------------------------------------------------------------------
# Length-controlled rate


def test_length_controlled_rate_by_hand() -> None:
    # Two length groups, x = -1 (2 wins in 10) and x = +1 (6 wins in 10): the model is saturated,
    # so it reproduces both group rates and, z being symmetric about 0,
    # b0 = (logit(0.6) + logit(0.2)) / 2 = (0.405465 - 1.386294) / 2 = -0.490415,
    # sigmoid(b0) = 0.379796. The raw win rate is 0.4.
    y = [1] * 2 + [0] * 8 + [1] * 6 + [0] * 4
    x = [-1.0] * 10 + [1.0] * 10
    est = logistic_length_controlled_rate(y, x, n_resamples=200)
    assert est.estimate == pytest.approx(0.379796, abs=1e-5)
    assert est.counts["raw_rate"] == 0.4
    assert est.counts["intercept"] == pytest.approx(-0.490415, abs=1e-5)
    assert est.ci.contains(est.estimate)


def test_length_controlled_rate_is_scale_free_and_reads_at_zero() -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(50.0, 100.0, size=300)  # candidates are longer on average
    y = (rng.random(300) < 1 / (1 + np.exp(-(0.0 + 0.01 * x)))).astype(float)
    est = logistic_length_controlled_rate(y, x, n_resamples=200)
    scaled = logistic_length_controlled_rate(y, 10 * x, n_resamples=200)
    assert scaled.estimate == pytest.approx(est.estimate, abs=1e-7)
    # The true rate at zero length difference is sigmoid(0) = 0.5; the raw rate is higher.
    assert est.counts["raw_rate"] > 0.55
    assert est.ci.contains(0.5)


def test_logistic_fit_matches_an_independent_optimiser() -> None:
    rng = np.random.default_rng(10)
    z = rng.normal(size=200)
    y = (rng.random(200) < 1 / (1 + np.exp(-(0.3 + 1.2 * z)))).astype(float)

    def nll(b: np.ndarray) -> float:  # unpenalised negative log-likelihood
        eta = b[0] + b[1] * z
        return float(np.sum(np.logaddexp(0.0, eta) - y * eta))

    ref = optimize.minimize(nll, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-9}).x
    np.testing.assert_allclose(fit_logistic(z, y), ref, atol=1e-4)
    weights = rng.multinomial(200, np.full(200, 1 / 200), size=5).astype(float)
    batch = fit_logistic_batch(z, y, weights, fit_logistic(z, y))
    one_by_one = np.array([fit_logistic(z, y, w) for w in weights])
    np.testing.assert_allclose(batch, one_by_one, atol=1e-6)


@pytest.mark.parametrize(
    ("y", "why"),
    [
        ((np.linspace(-1.0, 1.0, 40) > 0.05).astype(float), "perfect separation"),
        ((np.linspace(-1.0, 1.0, 40) < 0.05).astype(float), "perfect separation"),
        (np.ones(40), "every outcome is a win"),
    ],
)
def test_length_controlled_rate_under_separation_is_not_assessable(
    y: NDArray[np.float64], why: str
) -> None:
    x = np.linspace(-1.0, 1.0, 40)
    est = logistic_length_controlled_rate(y, x, n_resamples=100)
    assert not est.defined and why in (est.reason or "")
    assert "intercept" not in est.counts  # no coefficient that only measures the penalty


def test_a_tie_at_the_separating_length_is_still_separation_and_overlap_is_assessable() -> None:
    x = np.asarray([-2.0, -1.0, 0.0, 1.0, 2.0])
    est = logistic_length_controlled_rate([0.0, 0.0, 0.5, 1.0, 1.0], x, n_resamples=50)
    assert not est.defined  # the tie is a win and a loss at the threshold: quasi-separation
    overlap = logistic_length_controlled_rate([0.0, 1.0, 0.5, 0.0, 1.0], x, n_resamples=50)
    assert overlap.defined and overlap.estimate == pytest.approx(0.5, abs=0.1)


def test_length_controlled_rate_clustered() -> None:
    rng = np.random.default_rng(11)
    x = np.repeat(rng.normal(size=50), 4)
    y = (rng.random(200) < 0.5).astype(float)
    est = logistic_length_controlled_rate(y, x, clusters=np.repeat(np.arange(50), 4))
    assert est.ci.method == "cluster bootstrap percentile"
    assert est.ci.contains(est.estimate)


# --------------------------------------------------------------------------------------------
# Undefined cases: NaN with a reason, never a silent zero


@pytest.mark.parametrize(
    "make",
    [
        lambda: proportion(0, 0),
        lambda: difference_of_proportions(1, 2, 0, 0),
        lambda: mean([]),
        lambda: bootstrap([], np.mean),
        lambda: clustered_proportion([], []),
        lambda: wasserstein([], [1.0, 2.0]),
        lambda: cohen_kappa([], []),
        lambda: agreement([], []),
        lambda: discordant_pair_rate([]),
        lambda: discordant_pair_rate([["A"], [None, "B"]]),
        lambda: logistic_length_controlled_rate([1], [3.0]),
        lambda: logistic_length_controlled_rate([1, 0], [3.0, 3.0]),
    ],
)
def test_empty_or_unidentified_input_is_undefined(make: Callable[[], Estimate]) -> None:
    est = make()
    assert not est.defined
    assert math.isnan(est.ci.low) and math.isnan(est.ci.high)
    assert est.reason  # why, in a field of its own: the interval's method is not a reason
    assert est.ci.method == ""
    assert est.to_dict()["estimate"] is None
    assert est.to_dict()["reason"] == est.reason


def test_an_undefined_estimate_says_why_in_its_reason_and_a_defined_one_has_none() -> None:
    undefined = Estimate.undefined(3, reason="no items in this slice")
    assert (undefined.n, undefined.reason, undefined.ci.method) == (3, "no items in this slice", "")
    assert undefined.to_dict() == {
        "estimate": None,
        "ci": {"low": None, "high": None, "level": 0.95, "method": ""},
        "n": 3,
        "counts": {},
        "reason": "no items in this slice",
    }
    assert Estimate.undefined().reason == "no data"
    assert proportion(7, 169).reason is None
    assert proportion(7, 169).to_dict()["reason"] is None


def test_undefined_tests_and_intervals() -> None:
    for res in (proportion_above(0, 0, 0.1), mcnemar_exact(0, 0)):
        assert math.isnan(res.pvalue) and math.isnan(res.statistic) and res.n == 0
    single = mean([3.0])
    assert single.estimate == 3.0 and math.isnan(single.ci.low)
    one_cluster = bootstrap([1.0, 2.0, 3.0], np.mean, clusters=["q"] * 3)
    assert one_cluster.estimate == 2.0 and math.isnan(one_cluster.ci.high)
