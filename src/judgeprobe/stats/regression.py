"""Length-controlled win rate: a logistic regression on the length difference."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy.special import expit

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_count,
    check_level,
    check_seed,
    finite_array,
    same_length,
    undefined,
)
from judgeprobe.stats.resampling import ClusterIndex, interval_from_replicates, resample_weights
from judgeprobe.stats.result import ConfidenceInterval, Estimate

L2_PENALTY = 1e-6
"""Ridge penalty on both coefficients; keeps the fit finite under complete separation."""


def _objective(
    beta: NDArray[np.float64],
    z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64]]:
    """Penalised negative log-likelihood and its gradient."""
    eta = beta[0] + beta[1] * z
    loss = float(w @ (np.logaddexp(0.0, eta) - y * eta)) + 0.5 * L2_PENALTY * float(beta @ beta)
    r = w * (expit(eta) - y)
    grad = np.array([r.sum(), r @ z]) + L2_PENALTY * beta
    return loss, grad


def _hessian(
    beta: NDArray[np.float64],
    z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
) -> NDArray[np.float64]:
    p = expit(beta[0] + beta[1] * z)
    v = w * p * (1.0 - p)
    s0, s1, s2 = v.sum(), v @ z, v @ (z * z)
    return np.array([[s0 + L2_PENALTY, s1], [s1, s2 + L2_PENALTY]])


def fit_logistic(
    z: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64] | None = None,
    x0: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Coefficients ``(b0, b1)`` of ``P(y = 1) = sigmoid(b0 + b1 * z)``, weights ``w``.

    Maximises the (weighted) Bernoulli log-likelihood minus ``L2_PENALTY / 2 * |b|^2`` with
    SciPy's exact trust-region Newton method. ``y`` may hold fractional values (ties as 0.5).
    """
    weights = np.ones_like(y) if w is None else w
    start = np.zeros(2) if x0 is None else x0
    result = optimize.minimize(
        _objective,
        start,
        args=(z, y, weights),
        jac=True,
        hess=_hessian,
        method="trust-exact",
        options={"gtol": 1e-8},
    )
    return np.asarray(result.x, dtype=np.float64)


def fit_logistic_batch(
    z: NDArray[np.float64],
    y: NDArray[np.float64],
    weights: NDArray[np.float64],
    start: NDArray[np.float64],
    *,
    max_iter: int = 50,
    max_step: float = 2.0,
) -> NDArray[np.float64]:
    """:func:`fit_logistic` for every row of ``weights`` at once -> ``(rows, 2)``.

    Newton steps on the same penalised objective, vectorised across rows and started from
    ``start``; each step is capped at ``max_step`` in each coordinate. A row is done when its
    Newton step falls below ``1e-9`` (the objective is strictly convex, so a vanishing Newton
    step means the optimum is reached). Rows still moving after ``max_iter`` steps are refitted
    one by one with :func:`fit_logistic`.
    """
    beta = np.tile(start, (weights.shape[0], 1))
    active = np.arange(weights.shape[0])
    for _ in range(max_iter):
        if active.size == 0:
            break
        b, w = beta[active], weights[active]
        p = expit(b[:, :1] + b[:, 1:] * z)
        r = w * (p - y)
        v = w * p * (1.0 - p)
        g0 = r.sum(axis=1) + L2_PENALTY * b[:, 0]
        g1 = r @ z + L2_PENALTY * b[:, 1]
        h00, h01, h11 = v.sum(axis=1) + L2_PENALTY, v @ z, v @ (z * z) + L2_PENALTY
        det = h00 * h11 - h01 * h01
        step = np.column_stack([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det])
        step = -np.clip(step, -max_step, max_step)
        beta[active] = b + step
        done = np.max(np.abs(step), axis=1) < 1e-9 * (1.0 + np.abs(b).max(axis=1))
        active = active[~done]
    for row in active:
        beta[row] = fit_logistic(z, y, weights[row], x0=start)
    return beta


def separation(z: NDArray[np.float64], y: NDArray[np.float64]) -> str | None:
    """Why the logistic fit of ``y`` on ``z`` has no finite maximum, or None when it has one.

    Each outcome counts as a win where ``y > 0`` and as a loss where ``y < 1`` (a tie is
    both). The maximum-likelihood fit diverges when every outcome is of one kind, or when
    the wins and the losses are (quasi-)completely separated by a length threshold: no
    loss longer than the shortest win, or no win longer than the shortest loss. A fit there
    only reports the size of the penalty, so the rate is not assessable.
    """
    wins, losses = z[y > 0], z[y < 1]
    if len(losses) == 0 or len(wins) == 0:
        return f"every outcome is a {'win' if len(losses) == 0 else 'loss'}: the fit diverges"
    if losses.max() <= wins.min() or wins.max() <= losses.min():
        return (
            "the length difference separates wins from losses (perfect separation): "
            "the logistic fit diverges"
        )
    return None


def logistic_length_controlled_rate(
    y: ArrayLike,
    x: ArrayLike,
    *,
    at: float = 0.0,
    clusters: Sequence[Hashable] | NDArray[Any] | None = None,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    n_resamples: int = 1000,
) -> Estimate:
    """Win rate predicted at zero length difference by a logistic regression on length.

    Fits ``P(y = 1) = sigmoid(b0 + b1 * z)`` with ``z = (x - at) / sd(x)`` and reports
    ``sigmoid(b0)``: the rate the judge would give if the two outputs had length difference
    ``at`` (0 by default), the idea behind AlpacaEval's length-controlled win rate.

    Parameters
    ----------
    y : array_like
        Outcome per comparison: 1 = win, 0 = loss, 0.5 = tie (any value in [0, 1]).
    x : array_like of float
        Length difference per comparison (e.g. tokens of the candidate minus the baseline).
    at : float, default 0.0
        The length difference at which the rate is predicted. ``z`` is centred on ``at``, not
        on ``mean(x)``: centring on the mean would predict the rate at the *average* length
        difference, which is about the raw win rate and controls for nothing.
    clusters : sequence of hashable, optional
        One label per comparison; the bootstrap resamples clusters whole.
    confidence_level : float, default 0.95
    seed : int or None, default 0
    n_resamples : int, default 1000

    Returns
    -------
    Estimate
        Rate in (0, 1); ``n`` comparisons; counts ``{"n", "raw_rate", "intercept", "slope",
        "sd_x"}`` (``slope`` is per standard deviation of ``x``). Percentile (cluster)
        bootstrap interval; every replicate is a weighted refit (:func:`fit_logistic_batch`).
        Undefined when there are fewer than 2 comparisons, when ``x`` is constant and
        differs from ``at`` (the rate at ``at`` is then not identified), or when the fit
        diverges: every outcome alike, or wins and losses separated by length
        (:func:`separation`).

    Notes
    -----
    AlpacaEval 2.0 also conditions on instruction difficulty and passes the standardized
    length difference through ``tanh``; this is the plain one-covariate version. Under
    separation the point fit is refused; a ridge penalty of ``1e-6`` on both coefficients keeps
    a bootstrap replicate's refit finite when a resample happens to be separated.

    References
    ----------
    Y. Dubois, B. Galambosi, P. Liang and T. B. Hashimoto (2024), "Length-Controlled
    AlpacaEval: A Simple Way to Debias Automatic Evaluators", arXiv:2404.04475. Fit by
    :func:`scipy.optimize.minimize` (``method="trust-exact"``).

    Examples
    --------
    >>> y = [1, 1, 1, 0, 1, 0, 0, 1, 0, 0]
    >>> x = [9, 7, 8, 1, 3, -2, -6, 0, -4, -8]
    >>> est = logistic_length_controlled_rate(y, x, n_resamples=200)
    >>> est.counts["raw_rate"], round(est.estimate, 2), est.ci.contains(est.estimate)
    (0.5, 0.38, True)
    """
    yy = finite_array("y", y)
    xx = finite_array("x", x)
    n = same_length(y=yy, x=xx)
    if not np.all((yy >= 0) & (yy <= 1)):
        raise InvalidParameterError("y must hold outcomes in [0, 1] (1 win, 0 loss, 0.5 tie)")
    if isinstance(at, bool) or not math.isfinite(at):
        raise InvalidParameterError(f"at must be a finite number, got {at!r}")
    level = check_level(confidence_level)
    seed = check_seed(seed)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    if n < 2:
        return undefined(n, "needs at least 2 comparisons", level=level, counts={"n": n})
    sd = float(xx.std(ddof=1))
    counts: dict[str, float] = {"n": n, "raw_rate": float(yy.mean()), "sd_x": sd}
    if sd == 0.0:
        if not np.all(xx == at):
            reason = "x is constant and differs from `at`; the rate there is not identified"
            return undefined(n, reason, level=level, counts=counts)
        sd = 1.0
    z = (xx - at) / sd
    separated = separation(z, yy)
    if separated is not None:
        return undefined(n, separated, level=level, counts=counts)
    beta = fit_logistic(z, yy)
    counts["intercept"], counts["slope"] = float(beta[0]), float(beta[1])
    estimate = float(expit(beta[0]))
    index = ClusterIndex.build(clusters, n)
    name = "cluster bootstrap" if clusters is not None and not index.singletons else "bootstrap"
    if index.n_clusters < 2:
        reason = f"{name} percentile: needs at least 2 clusters"
        return Estimate(estimate, ConfidenceInterval(math.nan, math.nan, level, reason), n, counts)
    rng = np.random.default_rng(seed)
    fits = [
        fit_logistic_batch(z, yy, weights[:, index.codes].astype(np.float64), beta)
        for weights in resample_weights(index.n_clusters, n_resamples=n_resamples, rng=rng)
    ]
    replicates = expit(np.concatenate(fits)[:, 0])
    low, high, _ = interval_from_replicates(replicates, estimate, level)
    ci = ConfidenceInterval(low, high, level, f"{name} percentile")
    return Estimate(estimate, ci, n, counts)
