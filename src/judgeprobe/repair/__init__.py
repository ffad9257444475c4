"""Judge repair: wrapper judges that fix one failure each, audited by the same probes.

=====================  ==========  =============================================  ===========
repair                 rubric      what it does                                   inner calls
=====================  ==========  =============================================  ===========
``swap_average``       pairwise    both orders; a tie when they disagree          2
``chunked``            pointwise   each part of the response; the most severe     parts
``rubric_ensemble``    any         median (majority) over k validated wordings    k
``length_controlled``  pairwise    both responses cut to the shorter's length     1
=====================  ==========  =============================================  ===========

:func:`build_repair` wraps a judge by the repair's name; :mod:`judgeprobe.repair_audit` audits
the original and each repaired judge side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from judgeprobe.errors import ConfigError
from judgeprobe.judge import Judge
from judgeprobe.judges.registry import _construct
from judgeprobe.repair.base import INNER_CALLS, RepairJudge, cost_multiplier
from judgeprobe.repair.chunked import ChunkedJudge
from judgeprobe.repair.ensemble import RubricEnsembleJudge
from judgeprobe.repair.length import LengthControlledJudge
from judgeprobe.repair.swap import SwapAverageJudge

REPAIRS: dict[str, Callable[..., RepairJudge]] = {
    "swap_average": SwapAverageJudge,
    "chunked": ChunkedJudge,
    "rubric_ensemble": RubricEnsembleJudge,
    "length_controlled": LengthControlledJudge,
}
"""Each repair by name."""

TARGETS: dict[str, str] = {
    "swap_average": "position",
    "chunked": "bypass",
    "rubric_ensemble": "policy_invariance",
    "length_controlled": "length_null",
}
"""The probe that measures the failure each repair targets."""


def repair_options(specs: Any) -> dict[str, dict[str, Any]]:
    """Repair names (a list), or a mapping of name to options (None: none), as a mapping of
    name to options; ValueError naming an unknown repair or a value of another shape (the
    config's ``repair`` key)."""
    if specs is None:
        return {}
    if isinstance(specs, str):
        specs = [specs]
    if isinstance(specs, Mapping):
        chosen = {str(k): v for k, v in specs.items()}
    elif isinstance(specs, list | tuple):
        chosen = {str(name): None for name in specs}
    else:
        raise ValueError(
            f"repair must be a list of names or a mapping of name to options, got {specs!r}"
        )
    for name, options in chosen.items():
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"repair {name!r}: options must be a mapping, got {options!r}")
    unknown = [name for name in chosen if name not in REPAIRS]
    if unknown:
        raise ValueError(
            f"unknown repair {', '.join(map(repr, unknown))}; available: {', '.join(REPAIRS)}"
        )
    return {name: dict(options or {}) for name, options in chosen.items()}


def build_repair(name: str, inner: Judge, options: Mapping[str, Any] | None = None) -> RepairJudge:
    """``inner`` wrapped by repair ``name`` with ``options``; ConfigError naming an unknown
    repair or option."""
    factory = REPAIRS.get(name)
    if factory is None:
        raise ConfigError(f"unknown repair {name!r}; available: {', '.join(REPAIRS)}")
    return _construct(factory, f"repair {name}", inner, **dict(options or {}))


__all__ = [
    "INNER_CALLS",
    "REPAIRS",
    "TARGETS",
    "ChunkedJudge",
    "LengthControlledJudge",
    "RepairJudge",
    "RubricEnsembleJudge",
    "SwapAverageJudge",
    "build_repair",
    "cost_multiplier",
    "repair_options",
]
