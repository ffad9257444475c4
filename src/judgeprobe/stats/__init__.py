"""Statistics for judge audits: every number comes with n, its counts and a confidence interval.

Each function returns a frozen :class:`Estimate` (``estimate``, ``ci``, ``n``, ``counts``) or a
:class:`TestResult`. Empty input gives an undefined (NaN) estimate, never a silent zero. Options
are keyword-only; bad ones raise :class:`InvalidParameterError` (a ``ConfigError`` and a
``ValueError``). Intervals that resample take ``clusters`` (one label per row, e.g. the question)
and ``seed``; the same seed reproduces the same interval.

Modules: ``proportions`` (rates, exact tests), ``resampling`` (bootstrap, mean),
``distances`` (Wasserstein), ``agreement`` (kappa, agreement, rerun jitter),
``regression`` (length-controlled rate).
"""

from __future__ import annotations

from judgeprobe.stats._validation import InvalidParameterError
from judgeprobe.stats.agreement import agreement, cohen_kappa, discordant_pair_rate, majority
from judgeprobe.stats.distances import (
    WassersteinMatrix,
    paired_mean_pairwise_wasserstein,
    paired_wasserstein,
    wasserstein,
    wasserstein_matrix,
)
from judgeprobe.stats.proportions import (
    difference_of_proportions,
    mcnemar_exact,
    proportion,
    proportion_above,
)
from judgeprobe.stats.regression import logistic_length_controlled_rate
from judgeprobe.stats.resampling import bootstrap, clustered_proportion, mean, mean_shift
from judgeprobe.stats.result import ConfidenceInterval, Estimate, TestResult

__all__ = [
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
