"""Probe parameters, declared once and checked by one function.

Each probe declares its parameters' constraints in a class attribute, the way scikit-learn
declares ``_parameter_constraints`` for its estimators::

    constraints = {
        "ks": Counts(minimum=2),
        "quantile": Interval(float, 0, 0.5, closed="right"),
        "join": OneOf(JOIN_STYLES),
        **INTERVAL_CONSTRAINTS,
    }

and :meth:`judgeprobe.probes.Probe.__post_init__` checks every one of them when the probe is
made, so a bad value is refused before any data is read, in the same words for every probe
("ks must be integers >= 2, got (1,)"). What no single parameter can say (two thresholds in
order, a falsifier's bin among the bins) stays in the probe's own ``check_parameters``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from judgeprobe.errors import ConfigError
from judgeprobe.stats._validation import check_count, check_level

Closed = Literal["both", "left", "right", "neither"]


class Constraint(Protocol):
    """What a value of one parameter must be."""

    def check(self, name: str, value: Any) -> Any:
        """``value`` as the probe keeps it (e.g. counts sorted); ConfigError when it is bad."""
        ...

    def describe(self) -> str:
        """The constraint in words, e.g. ``"an integer >= 1"``."""
        ...


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Interval:
    """A number of ``kind`` between ``low`` and ``high`` (None: unbounded on that side)."""

    kind: type[int] | type[float]
    low: float | None = None
    high: float | None = None
    closed: Closed = "both"

    def check(self, name: str, value: Any) -> Any:
        fits = _is_int(value) if self.kind is int else _is_number(value)
        if not fits or (self.kind is float and math.isnan(value)) or not self._inside(value):
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def _inside(self, value: float) -> bool:
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not left)):
            return False
        return not (
            self.high is not None and (value > self.high or (value == self.high and not right))
        )

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        if self.low is not None and self.high is not None:
            return f"{what} in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"{what} {'>=' if left == '[' else '>'} {self.low:g}"
        if self.high is not None:
            return f"{what} {'<=' if right == ']' else '<'} {self.high:g}"
        return what


@dataclass(frozen=True, slots=True)
class OneOf:
    """One of a few names."""

    options: tuple[str, ...]

    def check(self, name: str, value: Any) -> Any:
        if value not in self.options:
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        names = [repr(o) for o in self.options]
        return names[0] if len(names) == 1 else f"one of {', '.join(names)}"


@dataclass(frozen=True, slots=True)
class SubsetOf:
    """A non-empty selection among ``options``, once each: in the options' order when
    ``canonical``, else in the order given."""

    options: tuple[str, ...]
    canonical: bool = True
    empty: bool = False
    """Whether no selection at all is allowed (e.g. no slices)."""

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        chosen = tuple(value)
        if (not chosen and not self.empty) or any(v not in self.options for v in chosen):
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        if self.canonical:
            return tuple(o for o in self.options if o in chosen)
        return tuple(dict.fromkeys(chosen))

    def describe(self) -> str:
        least = "zero" if self.empty else "one"
        return f"{least} or more of {', '.join(map(repr, self.options))}"


@dataclass(frozen=True, slots=True)
class Counts:
    """A non-empty set of integers >= ``minimum``, kept sorted and once each; ``include``
    values are added (e.g. 1, the reference of the repetition test)."""

    minimum: int
    include: tuple[int, ...] = ()

    def check(self, name: str, value: Any) -> Any:
        values = tuple(value) if isinstance(value, Iterable) and not isinstance(value, str) else ()
        if not values or any(not _is_int(v) or v < self.minimum for v in values):
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        return tuple(sorted(set(values) | set(self.include)))

    def describe(self) -> str:
        return f"integers >= {self.minimum}"


@dataclass(frozen=True, slots=True)
class Level:
    """A confidence level in (0, 1): the statistics' own check and words."""

    def check(self, name: str, value: Any) -> Any:
        return check_level(value)

    def describe(self) -> str:
        return "a number strictly between 0 and 1"


@dataclass(frozen=True, slots=True)
class Resamples:
    """A number of bootstrap resamples: the statistics' own check and words."""

    def check(self, name: str, value: Any) -> Any:
        return check_count(name, value, minimum=1)

    def describe(self) -> str:
        return "an integer >= 1"


@dataclass(frozen=True, slots=True)
class Scale:
    """None, or ``(low, high)`` with ``low < high``: the range human labels are given on."""

    def check(self, name: str, value: Any) -> Any:
        if value is None:
            return None
        pair = tuple(value) if isinstance(value, Iterable) and not isinstance(value, str) else ()
        if len(pair) != 2 or not all(_is_number(v) for v in pair) or not pair[0] < pair[1]:
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        return (float(pair[0]), float(pair[1]))

    def describe(self) -> str:
        return "(low, high) with low < high, e.g. (0, 1)"


@dataclass(frozen=True, slots=True)
class Text:
    """A non-empty string; ``what`` says what it names."""

    what: str = "a non-empty string"

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        return value

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True, slots=True)
class Texts:
    """A tuple of strings (not one string: ``("expert",)``, not ``"expert"``)."""

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise ConfigError(f"{name} must be {self.describe()}, e.g. ({value!r},)")
        values = tuple(value)
        if not all(isinstance(v, str) for v in values):
            raise ConfigError(f"{name} must be {self.describe()}, got {value!r}")
        return values

    def describe(self) -> str:
        return "a tuple of strings"


INTERVAL_CONSTRAINTS: Mapping[str, Constraint] = {
    "confidence_level": Level(),
    "n_resamples": Resamples(),
}
"""The interval options probes share."""


def check_parameters(target: Any, constraints: Mapping[str, Constraint]) -> None:
    """Check each declared parameter of the frozen dataclass ``target``, keeping the value each
    constraint returns (counts sorted, selections in order)."""
    for name, constraint in constraints.items():
        value = getattr(target, name)
        kept = constraint.check(name, value)
        if kept is not value:
            object.__setattr__(target, name, kept)
