"""What each attack does to a response, and its placebo: one function per placement.

:func:`replaced` (a master key), :func:`appended` (a forged verdict) and :func:`smuggled`
(smuggled words) each return the attacked text and its placebo, or None when the form leaves
the text as it is (a response with no word to smuggle).
"""

from __future__ import annotations

from collections.abc import Mapping

from judgeprobe.transforms.attack_forms import AttackForm, render
from judgeprobe.transforms.bias_edits import add_text, placebo_text
from judgeprobe.transforms.smuggle import smuggle, smuggle_placebo

Attacked = tuple[str, str] | None
"""The attacked text and its placebo, or None when the form does not apply."""


def replaced(form: AttackForm, fill: Mapping[str, str], *, pairwise: bool) -> Attacked:
    """The response replaced by the form's text; the placebo is the form's own."""
    assert form.placebo is not None  # the attack set checks it
    return render(form, fill, pairwise=pairwise), form.placebo


def appended(
    form: AttackForm, text: str, fill: Mapping[str, str], *, pairwise: bool, separator: str
) -> Attacked:
    """``text`` with the form's text after it (``separator`` between); the placebo is neutral
    text of the same length in the same place."""
    addition = render(form, fill, pairwise=pairwise).strip("\n")
    placebo = placebo_text("neutral", len(addition))
    return (
        add_text(text, addition, "append", separator),
        add_text(text, placebo, "append", separator),
    )


def smuggled(form: AttackForm, text: str, *, min_letters: int) -> Attacked:
    """``text`` with every word smuggled the form's way; the placebo makes the same change
    next to each word (:func:`judgeprobe.transforms.smuggle.smuggle_placebo`)."""
    assert form.edit is not None and form.value is not None  # the attack set checks it
    attacked, edited = smuggle(text, form.edit, form.value, min_letters=min_letters)
    if not edited:
        return None
    placebo, _ = smuggle_placebo(text, form.edit, form.value, min_letters=min_letters)
    return attacked, placebo
