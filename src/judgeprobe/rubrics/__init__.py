"""Rubrics: built-in ones shipped as YAML data, and the user's own."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from judgeprobe.errors import RubricError
from judgeprobe.rubrics.rubric import (
    NEUTRAL,
    Decision,
    DecisionRule,
    Rubric,
    RubricKind,
    load_rubric,
)
from judgeprobe.rubrics.variants import Variant, VariantSet, load_variants

__all__ = [
    "NEUTRAL",
    "Decision",
    "DecisionRule",
    "Rubric",
    "RubricKind",
    "Variant",
    "VariantSet",
    "builtin_rubric",
    "builtin_rubric_names",
    "builtin_variants",
    "get_rubric",
    "load_rubric",
    "load_variants",
]


def builtin_rubric_names() -> tuple[str, ...]:
    """Names of the rubrics that ship with judgeprobe."""
    folder = resources.files("judgeprobe.rubrics") / "builtin"
    return tuple(
        sorted(
            p.name.removesuffix(".yaml")
            for p in folder.iterdir()
            if p.name.endswith(".yaml") and "." not in p.name.removesuffix(".yaml")
        )
    )


def builtin_rubric(name: str) -> Rubric:
    """A built-in rubric by name (``harmfulness``, ``refusal``, ``preference``, ...)."""
    if name not in builtin_rubric_names():
        raise RubricError(
            f"no built-in rubric {name!r}; choose one of {', '.join(builtin_rubric_names())}"
            " or give a path to a rubric YAML file"
        )
    with resources.as_file(resources.files("judgeprobe.rubrics") / "builtin" / f"{name}.yaml") as p:
        return load_rubric(p)


def builtin_variants(name: str) -> VariantSet:
    """The reviewed variant set shipped for built-in rubric ``name`` (``<name>.variants.yaml``).

    Sets ship for the judging rubrics (harmfulness, refusal, preference); the classifier and
    reward-model templates (toxicity, reward) pass the text through and have none.
    """
    folder = resources.files("judgeprobe.rubrics") / "builtin"
    entry = folder / f"{name}.variants.yaml"
    if not entry.is_file():
        shipped = sorted(
            p.name.removesuffix(".variants.yaml")
            for p in folder.iterdir()
            if p.name.endswith(".variants.yaml")
        )
        raise RubricError(
            f"no shipped variant set for rubric {name!r} (sets ship for {', '.join(shipped)}); "
            "write one (docs/policy-invariance.md) or generate one with "
            "judgeprobe.runs.variants"
        )
    with resources.as_file(entry) as p:
        return load_variants(p)


def get_rubric(spec: str | Path | Rubric) -> Rubric:
    """A rubric from a built-in name, a YAML path, or a :class:`Rubric` (returned as is)."""
    if isinstance(spec, Rubric):
        return spec
    text = str(spec)
    if text.endswith((".yaml", ".yml")) or Path(text).exists():
        return load_rubric(text)
    return builtin_rubric(text)
