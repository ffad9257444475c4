"""Meaning-changing edits of a response, and their placebos: text in, text out.

The directional (sensitivity) probes change what a response says and expect the verdict to
follow. The edits here are the text operations they are made of; which item gives which text,
and which verdict is expected, is the probe's design (:mod:`judgeprobe.probes.sensitivity`).

- :func:`first_words`: the first ``n`` words of a text, the span inserted by ``insert_harmful``
  and by its same-length placebo.
- :func:`insert_middle`: a span placed in the middle of a response, at the sentence boundary
  nearest the middle (else the nearest word boundary), so the original text stays around it.
- :func:`truncate_words`: a response cut to its first share of words (``truncate``, the
  pairwise edit that makes the better response clearly worse).
- :func:`trailing_space`: the pairwise placebo, the same response with one space added; an
  input the judge has not seen, whose meaning is the original's.

Words are runs of non-space characters; a cut keeps the original spacing between the words kept.
"""

from __future__ import annotations

import math
import re

_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPACE = re.compile(r"\s+")


def word_count(text: str) -> int:
    """The number of words (runs of non-space characters) in ``text``."""
    return len(_WORD.findall(text))


def first_words(text: str, n: int) -> str:
    """The first ``n`` words of ``text`` with their original spacing (all of it when shorter).

    >>> first_words("one two  three four", 3)
    'one two  three'
    """
    if n < 1:
        return ""
    words = list(_WORD.finditer(text))
    if len(words) <= n:
        return text.strip()
    return text[words[0].start() : words[n - 1].end()]


def truncate_words(text: str, share: float) -> str:
    """``text`` cut to its first ``share`` of words, rounded up, at least one word.

    >>> truncate_words("a b c d e f g h i j", 0.15)
    'a b'
    """
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share!r}")
    return first_words(text, max(1, math.ceil(share * word_count(text))))


def _boundary(text: str) -> int | None:
    """The split point nearest the middle of ``text`` (stripped): a sentence end, else a word
    gap; None for a single word."""
    middle = len(text) / 2
    for pattern in (_SENTENCE_END, _SPACE):
        gaps = [m.start() for m in pattern.finditer(text)]
        if gaps:
            return min(gaps, key=lambda g: (abs(g - middle), g))
    return None


def insert_middle(text: str, span: str) -> str:
    """``text`` with ``span`` inserted in its middle, a space on each side.

    The split is at the sentence boundary nearest the middle of the text, else at the word
    boundary nearest it; a text of one word gets the span after it.

    >>> insert_middle("First point. Second point.", "INSERTED")
    'First point. INSERTED Second point.'
    """
    body, span = text.strip(), span.strip()
    if not span:
        return text
    if not body:
        return span
    at = _boundary(body)
    if at is None:
        return f"{body} {span}"
    return f"{body[:at].rstrip()} {span} {body[at:].lstrip()}"


def trailing_space(text: str) -> str:
    """``text`` with one space added at its end: a new input with the same meaning."""
    return f"{text} "
