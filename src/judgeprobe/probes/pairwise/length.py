"""Length measures of the length probes: units, the relative gap, gap bins, the length-only null.

The relative length gap of a pair is ``|len_a - len_b| / max(len_a, len_b)`` (0 when both are
empty): the share of the longer response that the shorter one lacks. It lies in [0, 1], is
symmetric in A and B, and a 10% gap means the shorter response has 90% of the longer's length.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from judgeprobe.data.items import PairwiseChoice, PairwiseItem, require_texts
from judgeprobe.errors import ConfigError
from judgeprobe.probes.pairwise.votes import length_tie_break

LengthUnit = Literal["chars", "words", "tokens"]
"""``chars``: characters; ``words``: whitespace-separated words; ``tokens``: a tokenizer-free
proxy, runs of word characters plus each punctuation mark (``\\w+|[^\\w\\s]``)."""

LENGTH_UNITS: tuple[LengthUnit, ...] = ("chars", "words", "tokens")
OnEqual = Literal["random", "tie"]
_TOKEN = re.compile(r"\w+|[^\w\s]")

BinSpec = tuple[str, float, float | None]
"""A gap bin as a parameter: (label, low, high); ``high`` None is unbounded."""

DEFAULT_BINS: tuple[BinSpec, ...] = (
    ("<5%", 0.0, 0.05),
    ("<10%", 0.0, 0.10),
    ("10-30%", 0.10, 0.30),
    (">30%", 0.30, None),
)
"""The bins of the MT-Bench length study: ``<5%`` nested in ``<10%``, then ``10-30%`` and
``>30%``; the last three partition all pairs."""


def text_length(text: str, unit: LengthUnit) -> int:
    """Length of ``text`` in ``unit`` (see :data:`LengthUnit`).

    Examples
    --------
    >>> [text_length("Hi, there.", u) for u in LENGTH_UNITS]
    [10, 2, 4]
    """
    if unit == "chars":
        return len(text)
    if unit == "words":
        return len(text.split())
    return len(_TOKEN.findall(text))


def relative_gap(len_a: float, len_b: float) -> float:
    """``|len_a - len_b| / max(len_a, len_b)``, 0 when both are 0.

    Examples
    --------
    >>> relative_gap(90, 100), relative_gap(100, 90), relative_gap(0, 0)
    (0.1, 0.1, 0.0)
    """
    longest = max(len_a, len_b)
    return 0.0 if longest == 0 else abs(len_a - len_b) / longest


def response_lengths(item: PairwiseItem, unit: LengthUnit) -> tuple[int, int]:
    """The lengths of response A and response B in ``unit``.

    Lengths given as data (``item.lengths``) are used as they are; otherwise they are measured
    from the texts. An item with neither raises :class:`~judgeprobe.errors.DataError`.
    """
    given = item.lengths.get(unit)
    if given is not None:
        return given
    require_texts(item, f"length unit {unit!r}")
    return text_length(item.response_a, unit), text_length(item.response_b, unit)


def check_lengths(items: Sequence[PairwiseItem], units: Iterable[tuple[str, LengthUnit]]) -> None:
    """Every item must have a length in each ``(option, unit)``: from its texts or as data.

    Raises :class:`~judgeprobe.errors.ConfigError` naming the option and the units the items
    do have, so that a length is never measured on the empty placeholders of an item without
    texts.
    """
    for option, unit in units:
        missing = [i for i in items if not i.has_texts and unit not in i.lengths]
        if missing:
            given = sorted({u for i in missing for u in i.lengths})
            offer = f"their source gives lengths in {given} only" if given else "nor lengths"
            raise ConfigError(
                f"{option}: length unit {unit!r} needs the response texts, and {len(missing)} "
                f"item(s) have none (e.g. {missing[0].id!r}); {offer}"
            )


def length_null_choice(
    item: PairwiseItem, unit: LengthUnit, *, on_equal: OnEqual = "random", seed: int = 0
) -> PairwiseChoice:
    """The length-only null's vote: the longer response; on equal lengths a seeded coin flip
    (``on_equal="random"``) or ``tie``."""
    a, b = response_lengths(item, unit)
    if a != b:
        return "A" if a > b else "B"
    return "tie" if on_equal == "tie" else length_tie_break(item, seed)


def item_gap(item: PairwiseItem, unit: LengthUnit) -> float:
    """The relative length gap of ``item``'s two responses."""
    return relative_gap(*response_lengths(item, unit))


@dataclass(frozen=True, slots=True)
class LengthBin:
    """Pairs whose relative gap lies in ``[low, high)``."""

    label: str
    low: float
    high: float = math.inf

    def contains(self, gap: float) -> bool:
        return self.low <= gap < self.high


def parse_bins(spec: Sequence[Sequence[Any]]) -> tuple[LengthBin, ...]:
    """Bins from ``(label, low, high)`` triples (``high`` None = unbounded); bins may nest."""
    bins: list[LengthBin] = []
    for entry in spec:
        if len(entry) != 3:
            raise ConfigError(f"a length bin is (label, low, high), got {entry!r}")
        label, low, high = entry
        upper = math.inf if high is None else float(high)
        if not isinstance(label, str) or not label or not 0.0 <= float(low) < upper:
            raise ConfigError(
                f"bad length bin {entry!r}: need a label and 0 <= low < high (high None = no limit)"
            )
        bins.append(LengthBin(label, float(low), upper))
    labels = [b.label for b in bins]
    if not bins or len(set(labels)) != len(labels):
        raise ConfigError(f"length bins need distinct labels and at least one bin, got {labels}")
    return tuple(bins)
