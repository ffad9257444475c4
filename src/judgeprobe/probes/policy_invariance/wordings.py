"""The wordings a policy-invariance audit asks for: the base rubric and its validated variants.

A variant set is resolved from the probe's ``variants`` parameter (the reviewed set shipped for a
built-in rubric, a YAML file, or variants made in code) and validated once, when the probe plans;
the plan's design keeps the validated wordings and the reports, so the analysis never validates
again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judgeprobe.errors import ConfigError, RubricError
from judgeprobe.rubrics import Rubric, builtin_rubric, builtin_rubric_names, builtin_variants
from judgeprobe.rubrics.validation import ValidationReport, validate_variants
from judgeprobe.rubrics.variants import TRANSFORMS, Variant, VariantSet, load_variants

BASE = "base"
"""The name (and transform class) of the base rubric among the wordings."""

VariantSpec = str | VariantSet | tuple[Variant, ...]
"""``"builtin"``, a variant YAML path, a :class:`VariantSet` or variants made in code."""


@dataclass(frozen=True, slots=True)
class Wording:
    """The base rubric or one variant of it, ready to be requested."""

    name: str
    transform: str
    rubric: Rubric
    variant: Variant | None = None


def variant_set(spec: VariantSpec, base: Rubric) -> VariantSet:
    """The variant set ``spec`` names for ``base`` (not yet validated); ConfigError if none."""
    if isinstance(spec, VariantSet):
        return spec
    if isinstance(spec, tuple):
        return VariantSet(rubric=base.name, variants=spec)
    if spec == "builtin":
        return _builtin_set(base)
    path = Path(spec)
    if not path.exists():
        raise ConfigError(f"variants: no file {spec!r}; give 'builtin' or a variant YAML path")
    return load_variants(path)


def validated_wordings(
    spec: VariantSpec, base: Rubric, *, on_invalid: str
) -> tuple[tuple[Wording, ...], tuple[ValidationReport, ...]]:
    """The base and every valid variant (in transform order), and every validation report.

    A rejected variant raises :class:`RubricError` naming it and its reasons, unless
    ``on_invalid`` is ``"skip"``: then it is left out (its report says why).
    """
    variants = variant_set(spec, base)
    reports = tuple(validate_variants(variants, base))
    rejected = [r for r in reports if not r.ok]
    if rejected and on_invalid == "raise":
        lines = "; ".join(f"{r.variant!r}: {' '.join(r.reasons)}" for r in rejected)
        raise RubricError(
            f"{len(rejected)} rubric variant(s) rejected: {lines}. Fix or drop them, or run "
            "with on_invalid='skip'"
        )
    ok = {r.variant for r in reports if r.ok}
    order = {t: i for i, t in enumerate(TRANSFORMS)}
    chosen = sorted(
        (v for v in variants.variants if v.name in ok), key=lambda v: order[v.transform]
    )
    wordings = (
        Wording(BASE, BASE, base),
        *(Wording(v.name, v.transform, v.rubric(base), v) for v in chosen),
    )
    return wordings, reports


def transform_groups(variants: tuple[Wording, ...]) -> list[tuple[str, list[Wording]]]:
    """The variants by transform class, in report order; classes without a variant left out."""
    groups: list[tuple[str, list[Wording]]] = []
    for cls in TRANSFORMS:
        members = [w for w in variants if w.transform == cls]
        if members:
            groups.append((cls, members))
    return groups


def _builtin_set(base: Rubric) -> VariantSet:
    if base.name not in builtin_rubric_names():
        raise ConfigError(
            f"rubric {base.name!r} is not built in, so no reviewed variants ship for it; pass "
            "variants=<path to a variant YAML> (write one, or generate one with "
            "judgeprobe.runs.variants)"
        )
    shipped = builtin_rubric(base.name)
    if shipped.hash != base.hash:
        raise ConfigError(
            f"the shipped variants rewrite the built-in {base.name!r} rubric, but the rubric under "
            "audit is worded differently; pass variants=<path> with variants of your wording"
        )
    return builtin_variants(base.name)
