"""Judge repair: wrapper judges that fix one failure each, audited by the same probes.

=====================  ==========  =============================================  ===========
repair                 rubric      what it does                                   inner calls
=====================  ==========  =============================================  ===========
``swap_average``       pairwise    both orders; a tie when they disagree          2
``chunked``            pointwise   each part of the response; the most severe     parts
``rubric_ensemble``    any         median (majority) over k validated wordings    k
``length_controlled``  pairwise    both responses cut to the shorter's length     1
``single_answer``      pairwise    each response graded alone; the higher wins    2
``sanitize``           any         Unicode normalised, answer-format text removed 1
``delimit``            any         the response fenced and declared as data       1
=====================  ==========  =============================================  ===========

:func:`build_repair` wraps a judge by the repair's name; :mod:`judgeprobe.audit.repair` audits
the original and each repaired judge side by side.

Repairs chain: ``single_answer+length_controlled`` wraps the judge in ``single_answer``, then
wraps that in ``length_controlled`` (the pair is cut first, then each cut response is graded).
A chain targets the failure of its last repair; its cost is counted in calls to the judge under
repair (for parts that each multiply their calls, the product of their multipliers); its
options are a mapping of part name to that part's options. Each part must accept what the part
around it asks (``single_answer`` asks pointwise questions, which ``swap_average`` refuses).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from judgeprobe.core.judge import Judge
from judgeprobe.errors import ConfigError
from judgeprobe.judges.registry import _construct
from judgeprobe.judges.repairs.base import INNER_CALLS, RepairJudge, cost_multiplier
from judgeprobe.judges.repairs.chunked import ChunkedJudge
from judgeprobe.judges.repairs.delimit import DelimitJudge
from judgeprobe.judges.repairs.ensemble import RubricEnsembleJudge
from judgeprobe.judges.repairs.length import LengthControlledJudge
from judgeprobe.judges.repairs.sanitize import SanitizeJudge
from judgeprobe.judges.repairs.single_answer import SingleAnswerJudge
from judgeprobe.judges.repairs.swap import SwapAverageJudge

REPAIRS: dict[str, Callable[..., RepairJudge]] = {
    "swap_average": SwapAverageJudge,
    "chunked": ChunkedJudge,
    "rubric_ensemble": RubricEnsembleJudge,
    "length_controlled": LengthControlledJudge,
    "single_answer": SingleAnswerJudge,
    "sanitize": SanitizeJudge,
    "delimit": DelimitJudge,
}
"""Each repair by name."""

CHAIN = "+"
"""What joins the parts of a chained repair's name, innermost first."""

TARGETS: dict[str, str] = {
    "swap_average": "position",
    "chunked": "bypass",
    "rubric_ensemble": "policy_invariance",
    "length_controlled": "length_null",
    "single_answer": "position",
    "sanitize": "smuggling",
    "delimit": "forged_verdict",
}
"""The probe that measures the failure each repair targets."""


def chain_parts(name: str) -> list[str]:
    """The repairs of ``name``, innermost first (one for a plain repair)."""
    return [part.strip() for part in name.split(CHAIN)]


def target_of(name: str) -> str:
    """The probe measuring the failure repair (or chain) ``name`` targets: its last part's."""
    return TARGETS[chain_parts(name)[-1]]


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
    unknown = [name for name in chosen if any(p not in REPAIRS for p in chain_parts(name))]
    if unknown:
        raise ValueError(
            f"unknown repair {', '.join(map(repr, unknown))}; available: {', '.join(REPAIRS)}"
            f", or a chain of them joined by {CHAIN!r}"
        )
    for name, options in chosen.items():
        parts = chain_parts(name)
        stray = [k for k in (options or {}) if k not in parts] if len(parts) > 1 else []
        if stray:
            raise ValueError(
                f"repair {name!r}: a chain's options are keyed by its parts "
                f"({', '.join(parts)}), got {', '.join(map(repr, stray))}"
            )
    return {name: dict(options or {}) for name, options in chosen.items()}


def build_repair(name: str, inner: Judge, options: Mapping[str, Any] | None = None) -> RepairJudge:
    """``inner`` wrapped by repair ``name`` (or a chain, innermost first) with ``options`` (for
    a chain: part name -> that part's options); ConfigError naming an unknown repair or option.

    Examples
    --------
    >>> from judgeprobe.judges import CallableJudge
    >>> judge = CallableJudge(lambda request: "A", name="first", version="1")
    >>> chained = build_repair("single_answer+length_controlled", judge)
    >>> chained.repair, chained.inner.repair
    ('length_controlled', 'single_answer')
    """
    parts = chain_parts(name)
    chained = len(parts) > 1
    judge: Judge = inner
    for part in parts:
        factory = REPAIRS.get(part)
        if factory is None:
            raise ConfigError(f"unknown repair {part!r}; available: {', '.join(REPAIRS)}")
        own = dict((options or {}).get(part) or {}) if chained else dict(options or {})
        judge = _construct(factory, f"repair {part}", judge, **own)
    assert isinstance(judge, RepairJudge)
    return judge


__all__ = [
    "INNER_CALLS",
    "REPAIRS",
    "TARGETS",
    "ChunkedJudge",
    "DelimitJudge",
    "LengthControlledJudge",
    "RepairJudge",
    "RubricEnsembleJudge",
    "SanitizeJudge",
    "SingleAnswerJudge",
    "SwapAverageJudge",
    "build_repair",
    "chain_parts",
    "cost_multiplier",
    "repair_options",
    "target_of",
]
