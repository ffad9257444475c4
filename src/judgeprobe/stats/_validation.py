"""Input checks shared by the statistics: one error type, messages that say what to pass instead."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Mapping, Sized

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgeprobe.errors import ConfigError
from judgeprobe.stats.result import ConfidenceInterval, Estimate


class InvalidParameterError(ConfigError, ValueError):
    """A statistic got an invalid argument (bad option, NaN in the data, mismatched lengths).

    It is both a :class:`~judgeprobe.errors.ConfigError` (so the CLI reports it like any other
    judgeprobe error) and a :class:`ValueError` (so numeric code can catch it the usual way).
    """


def check_level(confidence_level: float) -> float:
    """``confidence_level`` must be a number strictly between 0 and 1."""
    if (
        isinstance(confidence_level, bool)
        or not isinstance(confidence_level, numbers.Real)
        or not 0.0 < float(confidence_level) < 1.0
    ):
        raise InvalidParameterError(
            f"confidence_level must be a number strictly between 0 and 1 (e.g. 0.95), "
            f"got {confidence_level!r}"
        )
    return float(confidence_level)


def check_choice(name: str, value: str, allowed: Iterable[str]) -> str:
    """``value`` must be one of ``allowed``."""
    options = tuple(allowed)
    if value not in options:
        raise InvalidParameterError(f"{name} must be one of {options}, got {value!r}")
    return value


def check_count(name: str, value: int, *, minimum: int = 0) -> int:
    """``value`` must be an integer (not a bool) at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_seed(seed: int | None) -> int | None:
    """``seed`` is an integer (reproducible) or None (fresh entropy)."""
    if seed is None:
        return None
    return check_count("seed", seed)


def check_probability(name: str, value: float) -> float:
    """``value`` must be a number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise InvalidParameterError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def finite_array(name: str, values: ArrayLike) -> NDArray[np.float64]:
    """A 1-D float array; NaN or infinite entries are rejected with their positions."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"{name} must be a sequence of numbers: {exc}") from exc
    if array.ndim != 1:
        raise InvalidParameterError(f"{name} must be one-dimensional, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        shown = ", ".join(str(int(i)) for i in bad[:10]) + (", ..." if bad.size > 10 else "")
        raise InvalidParameterError(
            f"{name} contains {bad.size} NaN or infinite value(s) at position(s) {shown}; "
            "drop or impute them before computing the statistic"
        )
    return array


def same_length(**named: Sized) -> int:
    """All arguments have the same length; returns it."""
    lengths = {name: len(value) for name, value in named.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"len({name}) = {n}" for name, n in lengths.items())
        raise InvalidParameterError(f"arguments must have the same length: {shown}")
    return next(iter(lengths.values()), 0)


def encode(values: Iterable[Hashable]) -> tuple[NDArray[np.intp], list[Hashable]]:
    """Integer codes for arbitrary hashable labels, in order of first appearance."""
    index: dict[Hashable, int] = {}
    codes = [index.setdefault(value, len(index)) for value in values]
    return np.asarray(codes, dtype=np.intp), list(index)


def undefined(
    n: int,
    reason: str,
    *,
    level: float = 0.95,
    counts: Mapping[str, float] | None = None,
) -> Estimate:
    """An undefined estimate (NaN, never a silent zero) that still carries its counts, with
    ``reason`` in :attr:`Estimate.reason`."""
    nan = math.nan
    return Estimate(nan, ConfidenceInterval(nan, nan, level, ""), n, dict(counts or {}), reason)
