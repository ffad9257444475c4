"""What a probe needs before it can run, declared once on its class, and the one check of it.

Each probe class sets :attr:`~judgeprobe.probes.Probe.requirements`: the rubric kinds it audits,
whether it needs a decision rule, the item kind, the rubric inputs it can vary or must find,
whether it needs human labels or votes, a rubric with instructions, or a judge that writes
answers. :func:`not_applicable` checks a declaration against a rubric, items and a judge's
capabilities and returns why the probe does not apply, naming the probe and what is missing
(None when it applies). :meth:`Probe.check <judgeprobe.probes.Probe.check>` calls it before
anything else, so a probe selected by name fails with that reason before the first judge call;
the audit's default probe set, the demo and ``judgeprobe probes`` call it to choose the probes
that apply and to say why each other one does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from judgeprobe.core.judge import JudgeCapabilities
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.rubrics import Rubric
from judgeprobe.rubrics.rubric import RubricKind

ItemKind = Literal["pointwise", "pairwise"]

POINTWISE_RUBRICS: tuple[RubricKind, ...] = ("scale", "binary", "continuous")
"""The rubric kinds a pointwise probe audits: every kind that scores one response."""


@dataclass(frozen=True, slots=True)
class Requirements:
    """What a probe needs of the rubric, the items and the judge before it can run.

    Examples
    --------
    >>> Requirements(rubric_kinds=("pairwise",), items="pairwise", human_votes=True).items
    'pairwise'
    """

    rubric_kinds: tuple[RubricKind, ...] = POINTWISE_RUBRICS
    """The rubric kinds the probe audits."""
    items: ItemKind = "pointwise"
    """The kind every item must be."""
    decision_rule: bool = False
    """The rubric must have a decision rule (flips and classes are decisions)."""
    inputs_among: tuple[str, ...] | None = None
    """The only item fields the rubric may read (the fields the probe varies or fills); None:
    any."""
    reads: tuple[str, ...] = ()
    """Item fields the rubric must read (what the probe edits)."""
    does: str = ""
    """What the probe does to the input, for the reason (e.g. ``"concatenates prompts and
    responses"``)."""
    human_labels: bool = False
    """At least one pointwise item must carry a human label."""
    human_votes: bool = False
    """At least one pairwise item must carry a human vote."""
    instructions: bool = False
    """The rubric must give the judge instructions: a template that is more than its inputs."""
    generates: bool = False
    """The judge must write answers (:attr:`JudgeCapabilities.generates`)."""


class Declares(Protocol):
    """A probe class (or probe): its name and its :class:`Requirements`."""

    @property
    def name(self) -> str: ...

    @property
    def requirements(self) -> Requirements: ...


def not_applicable(
    probe: Declares,
    rubric: Rubric,
    items: Sequence[Item],
    capabilities: JudgeCapabilities | None = None,
) -> str | None:
    """Why ``probe`` does not apply to ``rubric``, ``items`` and a judge with ``capabilities``
    (None when it applies).

    The reason names the probe and what is missing. ``capabilities`` None (the judge is not
    built yet) leaves what the probe needs of the judge unchecked; the audit's check before the
    first call finds it.
    """
    needs, name = probe.requirements, repr(probe.name)
    for why in (
        _rubric_reason(needs, rubric),
        _items_reason(needs, items),
        _judge_reason(needs, capabilities),
    ):
        if why is not None:
            return f"probe {name} {why}"
    return None


def _rubric_reason(needs: Requirements, rubric: Rubric) -> str | None:
    name = repr(rubric.name)
    if rubric.kind not in needs.rubric_kinds:
        kinds = " or ".join(needs.rubric_kinds)
        return f"needs a {kinds} rubric, not the {rubric.kind} rubric {name}"
    if needs.inputs_among is not None:
        extra = [field for field in rubric.inputs if field not in needs.inputs_among]
        if extra:
            does = needs.does or f"fills the inputs {list(needs.inputs_among)}"
            return (
                f"{does} only, but rubric {name} also needs {extra}; use a rubric whose inputs "
                f"are among {list(needs.inputs_among)}"
            )
    unread = [field for field in needs.reads if field not in rubric.inputs]
    if unread:
        does = needs.does or f"needs the input {unread[0]!r}"
        return f"{does}, but rubric {name} does not read one (inputs {list(rubric.inputs)})"
    if needs.decision_rule and rubric.decision is None:
        return f"needs a rubric with a decision rule; rubric {name} has none"
    if needs.instructions and not rubric.render(dict.fromkeys(rubric.inputs, "")).strip():
        return (
            f"rewords the rubric's instructions, but rubric {name} gives none (its template is "
            f"only its inputs {list(rubric.inputs)}), so no rewording can change a verdict"
        )
    return None


def _items_reason(needs: Requirements, items: Sequence[Item]) -> str | None:
    wanted = PairwiseItem if needs.items == "pairwise" else PointwiseItem
    other = sum(not isinstance(item, wanted) for item in items)
    if other:
        held = "pointwise" if needs.items == "pairwise" else "pairwise"
        return f"needs {needs.items} items, but {other} of the {len(items)} items are {held}"
    if needs.human_labels and not any(
        isinstance(item, PointwiseItem) and item.labels for item in items
    ):
        return "needs pointwise items with human labels; none has one"
    if needs.human_votes and not any(
        isinstance(item, PairwiseItem) and item.human_votes for item in items
    ):
        return "needs pairwise items with human votes; none has one"
    return None


def _judge_reason(needs: Requirements, capabilities: JudgeCapabilities | None) -> str | None:
    if capabilities is not None and needs.generates and not capabilities.generates:
        return (
            "needs a judge that writes its own answers (a generating model); this judge "
            "declares none (JudgeCapabilities.generates)"
        )
    return None
