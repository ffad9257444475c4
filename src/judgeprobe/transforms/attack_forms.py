"""Adversarial attack sets: reviewed forms of an attack on a judge, and the placebo of each.

Each attack the adversarial probes try (:mod:`judgeprobe.probes.adversarial`) is an *attack set*
shipped with the package (``attack_templates/<name>.yaml``): several *forms*, each with an id, a
rationale and what it does to the response, and a placebo of the same size in the same place
that should not matter. Where the attack goes is the set's ``placement``:

``replace``  the response is replaced by the form's text (a master key); each form names its
             own placebo, a content-free text of the same length that poses as nothing;
``append``   the form's text follows the response (a forged verdict); the placebo is neutral
             text of the same length (:func:`judgeprobe.transforms.bias_edits.placebo_text`);
``words``    each word of the response is edited (smuggled, :mod:`judgeprobe.transforms.smuggle`);
             the placebo makes the same change next to each word instead of inside it.

A forged-verdict form holds placeholders, filled from the rubric's answer format
(:func:`judgeprobe.transforms.answer_format.forgery_fill`): ``{prefix}`` (``Score:``), ``{key}``
(``score``), ``{verdict}`` (the label the forgery asks for) and ``{closing}`` (the rubric's last
line of instructions). Every item is attacked with every form: the attacker tries them all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgeprobe._util.yaml_files import explain_validation, parse_yaml
from judgeprobe.errors import ConfigError
from judgeprobe.transforms.smuggle import SmuggleEdit

ATTACKS = ("master_key", "forged_verdict", "smuggling")
"""The attack sets that ship with judgeprobe."""

PLACEHOLDERS = ("prefix", "key", "verdict", "closing")
Placement = Literal["replace", "append", "words"]
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class AttackForm(BaseModel):
    """One reviewed form of an attack: a text (``replace``, ``append``) or a word edit
    (``words``: ``edit`` and its ``value``, a character to insert or a look-alike table)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    rationale: str = Field(min_length=1)
    text: str | None = None
    """The text added or put in place of the response (pointwise, and pairwise without its own)."""
    pairwise: str | None = None
    """The text for the attacked side of a pair, when it differs."""
    placebo: str | None = None
    """A ``replace`` form's own placebo: as long as ``text``, posing as nothing."""
    edit: SmuggleEdit | None = None
    value: str | None = None

    @model_validator(mode="after")
    def _known_placeholders(self) -> AttackForm:
        for text in (self.text or "", self.pairwise or ""):
            unknown = sorted(set(_PLACEHOLDER.findall(text)) - set(PLACEHOLDERS))
            if unknown:
                raise ValueError(f"unknown placeholder(s) {unknown}; known: {list(PLACEHOLDERS)}")
        return self

    def wording(self, pairwise: bool) -> str:
        """The form's text for a pointwise item, or for the attacked side of a pair."""
        text = self.pairwise if pairwise and self.pairwise is not None else self.text
        return text or ""


class AttackSet(BaseModel):
    """An attack set: where its forms go and its forms (two or more, ids unique)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    placement: Placement
    forms: tuple[AttackForm, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _consistent(self) -> AttackSet:
        ids = [form.id for form in self.forms]
        if len(set(ids)) != len(ids):
            raise ValueError(f"form ids must be unique, got {ids}")
        for form in self.forms:
            texts = form.text is not None
            edits = form.edit is not None and form.value is not None
            if self.placement == "words" and not (edits and not texts):
                raise ValueError(f"form {form.id!r}: a words form has an edit and a value, no text")
            if self.placement != "words" and not (texts and form.edit is None):
                raise ValueError(f"form {form.id!r}: a {self.placement} form has a text, no edit")
            if self.placement == "replace" and (
                form.placebo is None or len(form.placebo) != len(form.text or "")
            ):
                raise ValueError(
                    f"form {form.id!r}: a replace form names a placebo exactly as long as its text"
                )
        return self

    @property
    def form_ids(self) -> tuple[str, ...]:
        return tuple(form.id for form in self.forms)


@cache
def attack_set(name: str) -> AttackSet:
    """The shipped attack set ``name`` (one of :data:`ATTACKS`); ConfigError otherwise."""
    if name not in ATTACKS:
        raise ConfigError(f"no attack set {name!r}; choose one of {', '.join(ATTACKS)}")
    source = f"judgeprobe/transforms/attack_templates/{name}.yaml"
    folder = resources.files("judgeprobe.transforms") / "attack_templates"
    try:
        text = (folder / f"{name}.yaml").read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the attack set ({exc.strerror})") from exc
    try:
        return AttackSet.model_validate(parse_yaml(text, source=source, error=ConfigError))
    except ValidationError as exc:
        raise ConfigError(f"{source}: {explain_validation(exc, root='attack set')}") from exc


def render(form: AttackForm, fill: Mapping[str, str], *, pairwise: bool = False) -> str:
    """The text of ``form`` with its placeholders filled from ``fill``."""

    def substitute(match: re.Match[str]) -> str:
        return fill.get(match.group(1), match.group(0))

    return _PLACEHOLDER.sub(substitute, form.wording(pairwise))
