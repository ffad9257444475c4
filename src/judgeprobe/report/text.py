"""Text for the Judge Card: number formatting, truncation and Markdown escaping.

Dataset and model text is untrusted (responses to adversarial prompts contain markup, URLs and
e-mail addresses), so every string that reaches Markdown goes through :func:`escape_markdown`,
which also keeps GitHub's autolinking from turning it into links; HTML is escaped by the template
engine. Control and bidirectional-override characters are replaced before either, so a string
cannot reorder what a reader sees. The card's JSON keeps the full, unmodified text.
"""

from __future__ import annotations

import math
import re
from typing import Any

_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
)
_NEWLINES = re.compile(r"[\r\n\t]+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()#|!~])")
_MD_LIST_MARKER = re.compile(r"(\s*)(\d{1,9}\.|[-+])(?=\s|$)")
_MD_UNDERLINE = re.compile(r"(\s*)([-=]+\s*)$")
_SLUG = re.compile(r"[^a-z0-9]+")
_AUTOLINK_SCHEME = re.compile(r"(?<=[A-Za-z]):(?=/)")
_AUTOLINK_WWW = re.compile(r"(?i)(www)\.")
WORD_JOINER = "\u2060"
"""Invisible; put before each ``@`` so no e-mail autolink can form (see :func:`escape_markdown`)."""

ELLIPSIS = "…"


def clean_text(value: object) -> str:
    """``value`` as one line of text without control, zero-width or bidi-override characters.

    Examples
    --------
    >>> clean_text("a\\nb\\u202ec")
    'a b\\ufffdc'
    """
    text = value if isinstance(value, str) else str(value)
    return _NEWLINES.sub(" ", _INVISIBLE.sub("\ufffd", text))


def truncate(text: str, max_len: int | None) -> str:
    """``text`` cut to ``max_len`` characters, saying how many were left out.

    Examples
    --------
    >>> truncate("abcdefghij", 4)
    'abcd… [+6 characters]'
    """
    if max_len is None or len(text) <= max_len:
        return text
    return f"{text[:max_len]}{ELLIPSIS} [+{len(text) - max_len} characters]"


def display_text(value: object, max_len: int | None = None) -> str:
    """Untrusted ``value`` ready to show: cleaned, on one line, truncated (not yet escaped)."""
    return truncate(clean_text(value), max_len)


def short_label(value: object, max_len: int) -> str:
    """``value`` cleaned to one line and cut to ``max_len`` characters with an ellipsis, for a
    figure's axis label, where there is no room to say how much was left out."""
    clean = display_text(value)
    return clean if len(clean) <= max_len else clean[: max_len - 1] + ELLIPSIS


def finite_number(value: Any) -> float | None:
    """``value`` as a float to draw, or None for anything else (a bool, a string, NaN, inf)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


def escape_markdown(value: object, *, max_len: int | None = None) -> str:
    r"""``value`` as inert Markdown text: no markup, link, image, HTML or table cell break.

    Angle brackets and ampersands become HTML entities (so raw HTML cannot start), inline
    Markdown punctuation and a leading list or heading marker are backslash-escaped (CommonMark
    lets any ASCII punctuation be escaped), line breaks become spaces (so a string cannot start a
    block) and long text is truncated.

    GitHub-flavoured Markdown also links bare URLs (``http://``, ``https://``, ``ftp://``),
    ``www.`` names and e-mail addresses (with ``mailto:`` and ``xmpp:``). Escaping the ``:`` of a
    ``scheme://`` and the dot of ``www.`` stops the first two, since GFM looks for them in the
    source text. An e-mail address is found in the text after escapes are resolved, so a
    backslash cannot stop it; a word joiner (U+2060, invisible) before every ``@`` does, as no
    address can then have a local part. The rendered text reads the same.

    Examples
    --------
    >>> escape_markdown("<b>[x](javascript:y)</b>")
    '&lt;b&gt;\\[x\\]\\(javascript:y\\)&lt;/b&gt;'
    >>> escape_markdown("1. a|b"), escape_markdown("0.25"), escape_markdown("- x")
    ('1\\. a\\|b', '0.25', '\\- x')
    >>> escape_markdown("https://x.org www.x.org a@x.org").replace(WORD_JOINER, "+")
    'https\\://x.org www\\.x.org a+@x.org'
    """
    text = display_text(value, max_len)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = _escape_block_start(text)
    text = _defuse_autolinks(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _defuse_autolinks(text: str) -> str:
    """Markdown-escaped ``text`` that GFM's autolink extension finds no URL or address in."""
    if ":" in text:
        text = _AUTOLINK_SCHEME.sub(r"\\:", text)
    if "." in text:
        text = _AUTOLINK_WWW.sub(r"\1\\.", text)
    return text.replace("@", WORD_JOINER + "@")


def _escape_block_start(text: str) -> str:
    """Escape a list marker (``- ``, ``+ ``, ``1. ``) or setext underline starting ``text``."""
    match = _MD_LIST_MARKER.match(text) or _MD_UNDERLINE.match(text)
    if match is None:
        return text
    indent = match.group(1)
    rest = text[len(indent) :]
    if rest[:1].isdigit():
        number = match.group(2)[:-1]
        return f"{indent}{number}\\.{text[match.end() :]}"
    return f"{indent}\\{rest}"


def clean_block(value: object) -> str:
    """Multi-line ``value`` without control, zero-width or bidi-override characters."""
    text = value if isinstance(value, str) else str(value)
    return _INVISIBLE.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a fenced code block whose fence is longer than any backtick run inside it.

    Examples
    --------
    >>> print(fenced("a ``` b"))
    ````text
    a ``` b
    ````
    """
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{clean_block(text)}\n{fence}"


def fmt_number(value: Any) -> str:
    """A number for a reader: three significant digits, integers as integers, None as "n/a".

    Examples
    --------
    >>> [fmt_number(v) for v in (0.18234, 120, 1234.5, None, float("nan"), 0.0001234)]
    ['0.182', '120', '1234', 'n/a', 'n/a', '0.000123']
    """
    if value is None or isinstance(value, bool):
        return "n/a" if value is None else str(value)
    if not isinstance(value, int | float):
        return str(value)
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return "n/a"
    if number == int(number) and abs(number) < 1e15:
        return str(int(number))
    if abs(number) >= 100:
        return f"{number:.0f}"
    return f"{number:.3g}" if abs(number) >= 1e-4 else f"{number:.2e}"


def humanize(name: str) -> str:
    """A finding or probe name as words: ``position_bias`` becomes ``Position bias``.

    Examples
    --------
    >>> humanize("flip_rate")
    'Flip rate'
    """
    words = name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else name


def slug(text: str) -> str:
    """A safe identifier / file name part: lowercase ASCII letters, digits and hyphens.

    Examples
    --------
    >>> slug("../Repetition Probe!")
    'repetition-probe'
    """
    return _SLUG.sub("-", text.lower()).strip("-")[:80] or "x"
