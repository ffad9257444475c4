"""Prediction-powered inference for a mean: a judge's verdicts on every item, human labels on some.

A judge scores every item; humans label a few. The labels alone give a classical estimate of the
human mean (wide); the verdicts alone give the judge's mean (narrow, but biased by every error the
judge makes). Prediction-powered inference (PPI) adds the two: the judge's mean over all items,
plus the mean error of the judge measured on the labelled items,

    theta = lam * mean(f over all items) + mean(y - lam * f over the labelled items),

which is unbiased for the human mean whatever the judge's errors are, for any fixed ``lam``. PPI++
tunes ``lam`` to the value that minimises the variance, so that a judge unrelated to the labels
(``lam`` near 0) gives back the classical estimate and a good one (``lam`` near 1) narrows it.

:func:`ppi_mean` is PPI++ as its authors wrote it, for a labelled sample and an independent
unlabelled sample from the same distribution (an infinite population);
``tests/test_estimate_stats.py`` checks it against the authors' package, ``ppi-python``, on
the same numbers. The judge audits of :mod:`judgeprobe.estimate` ask a finite question instead
(the rate over the items the judge scored, a few of which are labelled):
:mod:`judgeprobe.stats.stratified_difference` answers it.

References
----------
A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan and T. Zrnic (2023), "Prediction-powered
inference", Science 382:669-674. A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++:
Efficient prediction-powered inference", arXiv:2311.01453 (the power-tuned ``lam``, Example 6.1).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_level,
    finite_array,
    same_length,
    undefined,
)
from judgeprobe.stats.result import ConfidenceInterval, Estimate


def power_tuned_lambda(
    labels: ArrayLike, predictions: ArrayLike, unlabelled_predictions: ArrayLike
) -> float:
    """The PPI++ weight of the predictions for a mean, clipped to [0, 1].

    ``lam = cov(y, f) / ((1 + n / N) * var(f))`` over the ``n`` labelled and ``N`` unlabelled
    items, the covariance over the labelled items (divided by ``n``) and the variance of the
    predictions over all ``n + N`` (divided by ``n + N - 1``), as the authors' package computes
    it. Clipped to [0, 1], so the estimate lies between the classical one (0) and plain PPI (1);
    0 where the predictions do not vary.

    Examples
    --------
    A perfect judge, 4 labelled and 8 unlabelled items: ``0.25 / (1.5 * 3/11)``:

    >>> round(power_tuned_lambda([1, 0, 1, 0], [1, 0, 1, 0], [1, 0, 1, 0, 1, 0, 1, 0]), 4)
    0.6111
    >>> power_tuned_lambda([1, 0, 1, 0], [1, 1, 1, 1], [1, 1, 1, 1])
    0.0
    """
    y, f, unlabelled = _samples(labels, predictions, unlabelled_predictions)
    return _lambda(y, f, unlabelled)


def ppi_mean(
    labels: ArrayLike,
    predictions: ArrayLike,
    unlabelled_predictions: ArrayLike,
    *,
    lam: float | None = None,
    confidence_level: float = 0.95,
) -> Estimate:
    """The prediction-powered (PPI++) estimate of a mean, with its normal interval.

    Parameters
    ----------
    labels : array of float
        The gold values ``y`` of the ``n`` labelled items (a 0/1 label for a rate).
    predictions : array of float
        The judge's value ``f`` of the same items, in the same order.
    unlabelled_predictions : array of float
        The judge's value on ``N`` other items, drawn from the same distribution.
    lam : float, optional
        The weight of the predictions; None (default) tunes it (:func:`power_tuned_lambda`).
        1 is plain PPI, 0 the classical mean of the labels.
    confidence_level : float, default 0.95

    Returns
    -------
    Estimate
        ``estimate`` = ``lam * mean(unlabelled f) + mean(y - lam * f)``; the interval is normal,
        with the variance ``lam^2 var(unlabelled f) / N + var(y - lam * f) / n`` (variances
        divided by the count, as in the authors' package); ``n`` the labelled items; counts
        ``labelled``, ``unlabelled`` and ``lambda``. Undefined without labelled or unlabelled
        items.

    Examples
    --------
    >>> ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1, 1, 0], lam=1.0).estimate
    0.875
    """
    y, f, unlabelled = _samples(labels, predictions, unlabelled_predictions)
    level = check_level(confidence_level)
    n, big_n = len(y), len(unlabelled)
    if n == 0 or big_n == 0:
        return undefined(n, "PPI needs labelled and unlabelled items", level=level)
    weight = _lambda(y, f, unlabelled) if lam is None else check_lambda(lam)
    estimate = weight * float(unlabelled.mean()) + float((y - weight * f).mean())
    variance = float((weight * unlabelled).var()) / big_n + float((y - weight * f).var()) / n
    half = float(sps.norm.ppf(0.5 + level / 2)) * math.sqrt(variance)
    return Estimate(
        estimate,
        ConfidenceInterval(estimate - half, estimate + half, level, "ppi++ normal"),
        n,
        {"labelled": n, "unlabelled": big_n, "lambda": weight},
    )


def _lambda(
    y: NDArray[np.float64], f: NDArray[np.float64], unlabelled: NDArray[np.float64]
) -> float:
    n, big_n = len(y), len(unlabelled)
    if n == 0 or big_n == 0:
        return 0.0
    covariance = float(np.mean((y - y.mean()) * (f - f.mean())))
    every = np.concatenate([f, unlabelled])
    variance = float(every.var(ddof=1)) if len(every) > 1 else 0.0
    if variance <= 0.0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def check_lambda(lam: float) -> float:
    """``lam`` must be a finite number."""
    if isinstance(lam, bool) or not isinstance(lam, int | float) or not math.isfinite(lam):
        raise InvalidParameterError(
            f"lam must be a finite number (or None to tune it), got {lam!r}"
        )
    return float(lam)


def _samples(
    labels: ArrayLike, predictions: ArrayLike, unlabelled_predictions: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    y = finite_array("labels", labels)
    f = finite_array("predictions", predictions)
    same_length(labels=y, predictions=f)
    return y, f, finite_array("unlabelled_predictions", unlabelled_predictions)
