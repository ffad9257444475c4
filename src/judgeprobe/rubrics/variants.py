"""Rubric variants: rewrites of a rubric's template, labelled by the transform that made them.

A variant keeps everything of its base rubric (labels, values, decision rule, answer prefix) and
changes only the template text, so :meth:`Variant.rubric` is ``base.with_template(...)`` and its
requests differ from the base's only by the wording. The transform taxonomy follows "Beyond
Accuracy: Policy Invariance as a Reliability Test for LLM Safety Judges" (arXiv 2605.06161):

====================  ===============  ==================================================
family                transform        what changes
====================  ===============  ==================================================
meaning_preserving    ``lexicon``      words replaced by synonyms
meaning_preserving    ``syntax``       sentences restructured
meaning_preserving    ``format``       list versus prose
supplementary         ``supplementary`` irrelevant context added
intentional_shift     ``threshold``    the decision threshold made stricter or more lenient
====================  ===============  ==================================================

A ``threshold`` variant records its ``shift`` and the decision class(es) its flips are expected to
land in (``expected_toward``). "Stricter" means the flagging (positive) class is decided on
weaker evidence, e.g. more responses count as refusals or as unsafe; for pairwise rubrics it
means a winner needs a clearer difference, so flips go to ``tie``.

Variant sets are YAML files::

    rubric: refusal            # the base rubric's name
    rubric_hash: 3f0c...       # optional: the base's hash; a set for another wording is refused
    source: reviewed           # reviewed | generated | user (default for every variant)
    keywords: [refus]          # optional: words every variant must keep
    variants:
      - name: lexicon-1
        transform: lexicon
        template: |
          ...{prompt}...{response}...
      - name: threshold-lenient
        transform: threshold
        shift: more_lenient
        expected_toward: compliance
        template: |
          ...
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgeprobe._util.hashing import content_hash
from judgeprobe._util.yaml_files import explain_validation, read_yaml
from judgeprobe.errors import RubricError
from judgeprobe.rubrics.rubric import Rubric

TransformClass = Literal["lexicon", "syntax", "format", "supplementary", "threshold"]
TransformFamily = Literal["meaning_preserving", "supplementary", "intentional_shift"]
Shift = Literal["stricter", "more_lenient"]
VariantSource = Literal["reviewed", "generated", "user"]

TRANSFORMS: tuple[TransformClass, ...] = (
    "lexicon",
    "syntax",
    "format",
    "supplementary",
    "threshold",
)
"""Every transform class, in report order."""

FAMILY: Mapping[TransformClass, TransformFamily] = {
    "lexicon": "meaning_preserving",
    "syntax": "meaning_preserving",
    "format": "meaning_preserving",
    "supplementary": "supplementary",
    "threshold": "intentional_shift",
}
"""The family of each transform class."""

INVARIANT_TRANSFORMS: tuple[TransformClass, ...] = ("lexicon", "syntax", "format", "supplementary")
"""Classes under which a reliable judge keeps its verdict."""


class Variant(BaseModel):
    """One rewrite of a rubric's template.

    Examples
    --------
    >>> v = Variant(name="lenient", transform="threshold", shift="more_lenient",
    ...             expected_toward=("compliance",), template="Refusal? {prompt} {response}")
    >>> v.family, len(v.hash)
    ('intentional_shift', 16)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    transform: TransformClass
    template: str = Field(min_length=1)
    shift: Shift | None = None
    expected_toward: tuple[str, ...] = ()
    """Decision classes (``positive``/``negative`` of the rule, or pairwise labels) that flips
    under a threshold variant are expected to land in."""
    source: VariantSource = "user"
    description: str = ""

    @field_validator("expected_toward", mode="before")
    @classmethod
    def _as_tuple(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _direction(self) -> Variant:
        if self.transform == "threshold":
            if self.shift is None or not self.expected_toward:
                raise ValueError(
                    "a threshold variant needs 'shift' (stricter | more_lenient) and "
                    "'expected_toward' (the decision class its flips should land in)"
                )
        elif self.shift is not None or self.expected_toward:
            raise ValueError(f"only threshold variants have a shift, not {self.transform!r} ones")
        return self

    @property
    def family(self) -> TransformFamily:
        return FAMILY[self.transform]

    @cached_property
    def hash(self) -> str:
        """Content hash of what can change a verdict or its reading (not name or provenance)."""
        return content_hash(
            {
                "transform": self.transform,
                "template": self.template,
                "shift": self.shift,
                "expected_toward": list(self.expected_toward),
            }
        )

    def rubric(self, base: Rubric) -> Rubric:
        """The base rubric with this variant's template (named ``<base>/<variant>``)."""
        try:
            return base.with_template(self.template, name=f"{base.name}/{self.name}")
        except ValidationError as exc:
            raise RubricError(
                f"variant {self.name!r} does not fit rubric {base.name!r}: {exc}"
            ) from exc

    def describe(self) -> dict[str, Any]:
        """Name, class, direction and hash: what a report records of a variant."""
        return {
            "name": self.name,
            "transform": self.transform,
            "family": self.family,
            "shift": self.shift,
            "expected_toward": list(self.expected_toward),
            "source": self.source,
            "hash": self.hash,
        }


class VariantSet(BaseModel):
    """The variants of one base rubric, with the keywords every variant must keep."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rubric: str
    variants: tuple[Variant, ...]
    rubric_hash: str | None = None
    keywords: tuple[str, ...] = ()
    description: str = ""

    @model_validator(mode="after")
    def _unique(self) -> VariantSet:
        names = [v.name for v in self.variants]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"variant names must be unique; repeated: {repeated}")
        hashes: dict[str, str] = {}
        for v in self.variants:
            if v.hash in hashes:
                raise ValueError(f"variants {hashes[v.hash]!r} and {v.name!r} are identical")
            hashes[v.hash] = v.name
        return self

    @cached_property
    def hash(self) -> str:
        return content_hash(sorted(v.hash for v in self.variants))

    def of(self, transform: TransformClass) -> tuple[Variant, ...]:
        """The variants of one transform class, in file order."""
        return tuple(v for v in self.variants if v.transform == transform)

    def check_base(self, base: Rubric) -> None:
        """Raise :class:`RubricError` when this set was written for another rubric wording."""
        if self.rubric_hash is not None and self.rubric_hash != base.hash:
            raise RubricError(
                f"these variants were written for rubric {self.rubric!r} with hash "
                f"{self.rubric_hash}, but the rubric under audit ({base.name!r}) has hash "
                f"{base.hash}; regenerate them (judgeprobe.runs.variants) or drop "
                "'rubric_hash' from the file if the wording change is deliberate"
            )

    def to_yaml(self) -> str:
        """The set as YAML, templates as block scalars; :func:`load_variants` reads it back."""
        data: dict[str, Any] = {"rubric": self.rubric}
        if self.rubric_hash is not None:
            data["rubric_hash"] = self.rubric_hash
        if self.keywords:
            data["keywords"] = list(self.keywords)
        if self.description:
            data["description"] = self.description
        data["variants"] = [_entry(variant) for variant in self.variants]
        return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)


def _entry(variant: Variant) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": variant.name, "transform": variant.transform}
    if variant.shift is not None:
        entry["shift"] = variant.shift
        entry["expected_toward"] = list(variant.expected_toward)
    entry["source"] = variant.source
    if variant.description:
        entry["description"] = variant.description
    entry["template"] = variant.template
    return entry


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings as ``|`` blocks so templates stay readable."""


def _str_block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_block)


def variant_set_from_mapping(data: Mapping[str, Any], *, where: str = "variant set") -> VariantSet:
    """A :class:`VariantSet` from parsed YAML; a top-level ``source`` applies to every variant."""
    if not isinstance(data, Mapping):
        raise RubricError(f"{where}: a variant set must be a mapping with 'rubric' and 'variants'")
    body = dict(data)
    source = body.pop("source", None)
    entries = body.get("variants")
    if not isinstance(entries, list) or not entries:
        raise RubricError(f"{where}: 'variants' must be a non-empty list")
    if source is not None:
        body["variants"] = [
            {"source": source, **e} if isinstance(e, Mapping) else e for e in entries
        ]
    try:
        return VariantSet.model_validate(body)
    except ValidationError as exc:
        raise RubricError(f"{where}: {_explain(exc, entries)}") from exc


def load_variants(path: str | Path) -> VariantSet:
    """Read a variant set from a YAML file; errors name the file, the variant and the key."""
    data = read_yaml(path, what="variant set", error=RubricError)
    return variant_set_from_mapping(data, where=str(path))


def _explain(exc: ValidationError, entries: list[Any]) -> str:
    def locate(loc: list[Any]) -> list[Any]:
        """Name the variant an error is in: ``variants.2 (lexicon-1).template``."""
        if len(loc) >= 2 and loc[0] == "variants" and isinstance(loc[1], int):
            entry = entries[loc[1]] if loc[1] < len(entries) else None
            name = entry.get("name") if isinstance(entry, Mapping) else None
            loc[1] = f"{loc[1]} ({name})" if name else loc[1]
        return loc

    return explain_validation(exc, root="variant set", locate=locate)
