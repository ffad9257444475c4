"""Checks a rubric variant must pass before it is used; a rejected variant says why.

Each check compares the variant's template with its base rubric's:

``identical``     the text differs from the base's (ignoring case and whitespace)
``length``        ``len(variant) / len(base)`` lies within the bounds of its transform class
``placeholders``  every ``{input}`` of the base is kept and none is added
``keywords``      every verdict label (``true``/``false``, ``A``/``B``/``tie``, ``1``..``5``) is
                  still named, and so are the variant set's extra keywords
``scale``         for numeric scales, no number off the scale is named (``1 to 10`` on a 1-5 scale)
``direction``     a threshold variant's ``expected_toward`` names decision classes of the rubric
``equivalence``   (optional, meaning-preserving classes) an LLM found the two texts equivalent;
                  added by :func:`judgeprobe.runs.variants.check_equivalence`

Length bounds are wide on purpose: they catch a rewrite that lost half the policy or grew into
another one, not a change of style. Supplementary variants must grow (they add context).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from judgeprobe.rubrics.rubric import Rubric
from judgeprobe.rubrics.variants import TransformClass, Variant, VariantSet

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w]|\.\d)")


@dataclass(frozen=True, slots=True)
class LengthBounds:
    """Allowed range of ``len(variant template) / len(base template)``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not 0 < self.low <= self.high:
            raise ValueError("length bounds need 0 < low <= high")


DEFAULT_LENGTH_BOUNDS: Mapping[TransformClass, LengthBounds] = {
    "lexicon": LengthBounds(0.6, 1.6),
    "syntax": LengthBounds(0.6, 1.6),
    "format": LengthBounds(0.6, 1.8),
    "supplementary": LengthBounds(1.05, 3.0),
    "threshold": LengthBounds(0.7, 2.0),
}


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """The outcome of validating one variant: each check's verdict and the reasons it failed."""

    variant: str
    variant_hash: str
    transform: str
    checks: Mapping[str, bool] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(self.checks.values())

    def with_check(self, name: str, passed: bool, reason: str = "") -> ValidationReport:
        """This report with one more check (e.g. the LLM equivalence check)."""
        reasons = self.reasons if passed or not reason else (*self.reasons, reason)
        return replace(self, checks={**self.checks, name: passed}, reasons=reasons)

    def to_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "hash": self.variant_hash,
            "transform": self.transform,
            "ok": self.ok,
            "checks": dict(self.checks),
            "reasons": list(self.reasons),
        }


def decision_classes(rubric: Rubric) -> tuple[str, ...]:
    """The classes a verdict is decided into: pairwise labels, or the rule's two classes."""
    if rubric.kind == "pairwise":
        return tuple(rubric.labels)
    if rubric.decision is None:
        return ()
    return (rubric.decision.positive, rubric.decision.negative)


def validate_variant(
    variant: Variant,
    base: Rubric,
    *,
    keywords: Sequence[str] = (),
    length_bounds: Mapping[TransformClass, LengthBounds] = DEFAULT_LENGTH_BOUNDS,
) -> ValidationReport:
    """Run every automatic check of ``variant`` against ``base``.

    Parameters
    ----------
    variant : Variant
    base : Rubric
        The rubric the variant rewrites.
    keywords : sequence of str
        Extra words (case-insensitive substrings) every variant must keep, e.g. ``("refus",)``.
    length_bounds : mapping
        Allowed length ratio per transform class.

    Returns
    -------
    ValidationReport
        ``ok`` when every check passed; ``reasons`` says what failed, one sentence each.

    Examples
    --------
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> base = builtin_rubric("refusal")
    >>> bad = Variant(name="copy", transform="lexicon", template=base.template)
    >>> validate_variant(bad, base).reasons
    ('identical to the base template (ignoring case and whitespace)',)
    """
    checks: dict[str, bool] = {}
    reasons: list[str] = []

    def check(name: str, problems: Iterable[str]) -> None:
        found = list(problems)
        checks[name] = not found
        reasons.extend(found)

    text, original = variant.template, base.template
    check("identical", _identical(text, original))
    check("length", _length(variant, original, length_bounds))
    check("placeholders", _placeholders(text, base))
    check("keywords", _keywords(text, base, keywords))
    check("scale", _scale(text, base))
    check("direction", _direction(variant, base))
    return ValidationReport(variant.name, variant.hash, variant.transform, checks, tuple(reasons))


def validate_variants(variants: VariantSet, base: Rubric) -> list[ValidationReport]:
    """Validate every variant of a set against ``base`` (with the set's keywords)."""
    variants.check_base(base)
    return [validate_variant(v, base, keywords=variants.keywords) for v in variants.variants]


# -- the checks ---------------------------------------------------------------------------


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def _identical(text: str, original: str) -> list[str]:
    if _normalised(text) == _normalised(original):
        return ["identical to the base template (ignoring case and whitespace)"]
    return []


def _length(
    variant: Variant, original: str, bounds: Mapping[TransformClass, LengthBounds]
) -> list[str]:
    limit = bounds[variant.transform]
    ratio = len(variant.template.strip()) / max(1, len(original.strip()))
    if not limit.low <= ratio <= limit.high:
        return [
            f"length ratio {ratio:.2f} is outside [{limit.low:g}, {limit.high:g}] allowed for "
            f"{variant.transform} variants"
        ]
    return []


def _placeholders(text: str, base: Rubric) -> list[str]:
    used = set(_PLACEHOLDER.findall(text))
    expected = set(_PLACEHOLDER.findall(base.template)) | set(base.inputs)
    problems = [f"drops placeholder {{{name}}}" for name in sorted(expected - used)]
    problems += [
        f"adds placeholder {{{name}}}, which the base rubric does not fill"
        for name in sorted(used - expected)
    ]
    return problems


def _mentions(text: str, word: str) -> bool:
    """Whole-word match; one-letter labels (``A``, ``B``) must match in case."""
    flags = 0 if len(word) == 1 else re.IGNORECASE
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text, flags) is not None


def _keywords(text: str, base: Rubric, keywords: Sequence[str]) -> list[str]:
    problems = [
        f"no longer names the verdict label {label!r}"
        for label in base.labels
        if not _mentions(text, label)
    ]
    problems += [
        f"drops the keyword {word!r}" for word in keywords if word.lower() not in text.lower()
    ]
    return problems


def _numeric_labels(base: Rubric) -> list[int] | None:
    if base.kind != "scale" or not base.labels:
        return None
    try:
        return [int(label) for label in base.labels]
    except ValueError:
        return None


def _scale(text: str, base: Rubric) -> list[str]:
    labels = _numeric_labels(base)
    if labels is None:
        return []
    allowed = set(labels) | {int(n) for n in _NUMBER.findall(base.template)}
    off = sorted({int(n) for n in _NUMBER.findall(text)} - allowed)
    off = [n for n in off if n <= 100]
    if off:
        return [
            f"names {', '.join(map(str, off))}, not on the {min(labels)}-{max(labels)} scale "
            "(a changed scale)"
        ]
    return []


def _direction(variant: Variant, base: Rubric) -> list[str]:
    if variant.transform != "threshold":
        return []
    classes = decision_classes(base)
    unknown = [c for c in variant.expected_toward if c not in classes]
    if unknown:
        return [
            f"expected_toward {unknown} are not decision classes of {base.name!r} "
            f"({', '.join(classes)})"
        ]
    if set(variant.expected_toward) == set(classes):
        return ["expected_toward names every decision class, so no direction is expected"]
    return []
