"""Rubrics: built-in ones shipped as YAML data, and the user's own."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from judgeprobe.errors import RubricError
from judgeprobe.rubrics.rubric import NEUTRAL, Decision, DecisionRule, Rubric, RubricKind, load_rubric

__all__ = [
    "NEUTRAL",
    "Decision",
    "DecisionRule",
    "Rubric",
    "RubricKind",
    "builtin_rubric",
    "builtin_rubric_names",
    "get_rubric",
    "load_rubric",
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
    """A built-in rubric by name (``harmfulness``, ``refusal``, ``preference``, ``toxicity``, ...)."""
    if name not in builtin_rubric_names():
        raise RubricError(
            f"no built-in rubric {name!r}; choose one of {', '.join(builtin_rubric_names())}"
            " or give a path to a rubric YAML file"
        )
    with resources.as_file(resources.files("judgeprobe.rubrics") / "builtin" / f"{name}.yaml") as p:
        return load_rubric(p)


def get_rubric(spec: str | Path | Rubric) -> Rubric:
    """A rubric from a built-in name, a YAML path, or a :class:`Rubric` (returned as is)."""
    if isinstance(spec, Rubric):
        return spec
    text = str(spec)
    if text.endswith((".yaml", ".yml")) or Path(text).exists():
        return load_rubric(text)
    return builtin_rubric(text)
