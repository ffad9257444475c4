"""Bias edits: reviewed text added to a response, and the size-matched placebo edit.

Each bias the judge-bias probes test (verbosity, injection, authority, bandwagon, distraction)
is an *edit set* shipped with the package (``bias_templates/<name>.yaml``): several *forms*, each
with an id, a rationale and its wording, added before or after the response. A form may hold
placeholders, filled per item:

``{verdict}``        the verdict the edit argues for: the rubric's most favourable label
                     (pointwise) or the edited side, ``A`` or ``B`` (pairwise);
``{verdict_class}``  the decision class it argues for (e.g. ``safe``);
``{first_sentence}`` the response's first sentence (for restatements).

The *placebo* of an edit is an edit of the same character length that should not matter: the
edit set says which kind, ``whitespace`` (blank space, for the edits whose only content is the
added text itself: padding, distraction) or ``neutral`` (the neutral sentences of
``placebo.yaml``, for the edits whose content is a claim: an instruction, a citation, a claimed
majority). The flip rate of a bias is read against its placebo's.

Which form an item gets, and which side of a pair is edited, is a seeded, balanced assignment
that depends on the item ids and the seed only (:func:`assign`), never on the items' order.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgeprobe._util.hashing import content_hash
from judgeprobe._util.yaml_files import explain_validation, parse_yaml
from judgeprobe.errors import ConfigError

BIAS_EDITS = ("verbosity", "injection", "authority", "bandwagon", "distraction")
"""The edit sets that ship with judgeprobe."""

PLACEHOLDERS = ("verdict", "verdict_class", "first_sentence")
EditKind = Literal["pointwise", "pairwise"]
Placement = Literal["append", "prepend"]
PlaceboKind = Literal["whitespace", "neutral"]

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
FIRST_SENTENCE_CHARS = 300
"""A first sentence longer than this is cut (at a word) so a restatement stays a sentence."""


class EditForm(BaseModel):
    """One reviewed wording of an edit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    rationale: str = Field(min_length=1)
    text: str = Field(min_length=1)
    """The added text for pointwise items (and for pairwise ones without their own)."""
    pairwise: str | None = None
    """The added text for the edited side of a pair, when it differs."""
    where: Placement = "append"

    @model_validator(mode="after")
    def _known_placeholders(self) -> EditForm:
        for text in (self.text, self.pairwise or ""):
            unknown = sorted(set(_PLACEHOLDER.findall(text)) - set(PLACEHOLDERS))
            if unknown:
                raise ValueError(f"unknown placeholder(s) {unknown}; known: {list(PLACEHOLDERS)}")
        return self

    def wording(self, kind: EditKind) -> str:
        return self.pairwise if kind == "pairwise" and self.pairwise is not None else self.text


class EditSet(BaseModel):
    """An edit set: its forms (two or more, ids unique) and the kind of its placebo."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    placebo: PlaceboKind
    forms: tuple[EditForm, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _unique_ids(self) -> EditSet:
        ids = [form.id for form in self.forms]
        if len(set(ids)) != len(ids):
            raise ValueError(f"form ids must be unique, got {ids}")
        return self

    @property
    def form_ids(self) -> tuple[str, ...]:
        return tuple(form.id for form in self.forms)

    def form(self, form_id: str) -> EditForm:
        for form in self.forms:
            if form.id == form_id:
                return form
        raise ConfigError(
            f"edit set {self.name!r} has no form {form_id!r}; forms: {', '.join(self.form_ids)}"
        )


class _Placebo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    sentences: tuple[str, ...] = Field(min_length=1)


def _read(name: str) -> object:
    source = f"judgeprobe/transforms/bias_templates/{name}.yaml"
    folder = resources.files("judgeprobe.transforms") / "bias_templates"
    try:
        text = (folder / f"{name}.yaml").read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the edit set ({exc.strerror})") from exc
    return parse_yaml(text, source=source, error=ConfigError)


@cache
def edit_set(name: str) -> EditSet:
    """The shipped edit set ``name`` (one of :data:`BIAS_EDITS`); ConfigError otherwise."""
    if name not in BIAS_EDITS:
        raise ConfigError(f"no edit set {name!r}; choose one of {', '.join(BIAS_EDITS)}")
    try:
        return EditSet.model_validate(_read(name))
    except ValidationError as exc:
        where = f"judgeprobe/transforms/bias_templates/{name}.yaml"
        raise ConfigError(f"{where}: {explain_validation(exc, root='edit set')}") from exc


@cache
def placebo_sentences() -> tuple[str, ...]:
    """The neutral sentences neutral placebos are made of."""
    return _Placebo.model_validate(_read("placebo")).sentences


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (its first line's first sentence), at most
    :data:`FIRST_SENTENCE_CHARS` characters, cut at a word."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    sentence = _SENTENCE_END.split(line, maxsplit=1)[0]
    if len(sentence) > FIRST_SENTENCE_CHARS:
        sentence = sentence[:FIRST_SENTENCE_CHARS].rsplit(" ", 1)[0]
    return sentence


def render(form: EditForm, kind: EditKind, response: str, fill: Mapping[str, str]) -> str:
    """The text ``form`` adds to ``response``, its placeholders filled from ``fill`` (and the
    response's first sentence)."""
    values = {**fill, "first_sentence": first_sentence(response)}

    def substitute(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return _PLACEHOLDER.sub(substitute, form.wording(kind))


def placebo_text(kind: PlaceboKind, length: int) -> str:
    """Text of exactly ``length`` characters that should not change a verdict.

    ``whitespace``: spaces. ``neutral``: the neutral sentences in turn, cut to the length.
    """
    if kind == "whitespace":
        return " " * length
    sentences = placebo_sentences()
    parts: list[str] = []
    size = 0
    while size < length:
        sentence = sentences[len(parts) % len(sentences)]
        parts.append(sentence)
        size += len(sentence) + 1
    return " ".join(parts)[:length]


def add_text(response: str, addition: str, where: Placement, separator: str) -> str:
    """``response`` with ``addition`` after it (or before it), ``separator`` between."""
    if where == "prepend":
        return f"{addition}{separator}{response}"
    return f"{response}{separator}{addition}"


def assign(ids: Sequence[str], groups: int, *, seed: int, salt: str) -> dict[str, int]:
    """A balanced, seeded assignment of ``ids`` to ``groups`` groups (0..groups-1).

    The ids are sorted, permuted by a generator seeded with ``seed`` and ``salt`` (CRC-32, the
    same in every process), and dealt round-robin: group sizes differ by at most one, and the
    assignment depends on the set of ids, not on their order. (A subset is assigned afresh:
    for a split that must stay as items are added, see :func:`assign_by_id`.)
    """
    if groups < 1:
        raise ValueError(f"groups must be >= 1, got {groups}")
    ordered = sorted(ids)
    rng = np.random.default_rng([seed, zlib.crc32(salt.encode("utf-8"))])
    order = rng.permutation(len(ordered))
    start = int(rng.integers(groups))
    return {ordered[int(i)]: (start + rank) % groups for rank, i in enumerate(order)}


def assign_by_id(ids: Sequence[str], groups: int, *, seed: int, salt: str) -> dict[str, int]:
    """A seeded assignment of ``ids`` to ``groups`` groups (0..groups-1), id by id.

    Each id's group is a seeded hash of the id (``seed`` and ``salt``) modulo ``groups``: it
    depends on the id alone, not on the order of the ids nor on the others, so the assignment of
    a subset is the restriction of the assignment of the whole (an audit in rounds plans each
    longer prefix of the items and finds the earlier items' edits in the store). Group sizes are
    multinomial: about ``len(ids) / groups`` each, within a few times its square root.
    """
    if groups < 1:
        raise ValueError(f"groups must be >= 1, got {groups}")
    return {i: int(content_hash([seed, salt, i]), 16) % groups for i in ids}
