"""Smuggled text: words a reader still reads but a word-matcher or a tokenizer no longer sees.

Three Unicode routes hide a word from a judge that matches words (a bag-of-words classifier, a
keyword filter) or splits it into other tokens (a language model), while a reader, or the model
the text is passed on to, still reads it:

- an invisible character inside the word: a zero-width space (U+200B), a soft hyphen (U+00AD)
  or a Unicode tag character (U+E0000 block), all of category ``Cf`` (format), drawn as nothing;
- a look-alike letter: a Latin letter replaced by the Cyrillic or Greek letter drawn the same
  (``o`` -> ``о``), :data:`HOMOGLYPHS`;
- a compatibility form: a letter replaced by its full-width form (``a`` -> ``ａ``), which
  Unicode's NFKC normalisation maps back.

:func:`smuggle` edits every word of the response (a run of at least ``min_letters`` ASCII
letters) one of these ways; :func:`smuggle_placebo` makes the same number of the same
characters' changes *next to* each word instead of inside it (an invisible character before
the word; a no-break space in place of the space before it), so the text has the same length
and the same foreign characters, but every word stays whole. :func:`reveal` undoes all three
routes, which is the Unicode half of the ``sanitize`` repair.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Literal

SmuggleEdit = Literal["insert", "lookalike"]
LookalikeTable = Literal["homoglyph", "fullwidth"]

HOMOGLYPHS: Mapping[str, str] = {
    "a": "\u0430",  # CYRILLIC SMALL LETTER A
    "c": "\u0441",  # CYRILLIC SMALL LETTER ES
    "e": "\u0435",  # CYRILLIC SMALL LETTER IE
    "i": "\u0456",  # CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
    "j": "\u0458",  # CYRILLIC SMALL LETTER JE
    "o": "\u043e",  # CYRILLIC SMALL LETTER O
    "p": "\u0440",  # CYRILLIC SMALL LETTER ER
    "s": "\u0455",  # CYRILLIC SMALL LETTER DZE
    "x": "\u0445",  # CYRILLIC SMALL LETTER HA
    "y": "\u0443",  # CYRILLIC SMALL LETTER U
    "A": "\u0410",
    "B": "\u0412",
    "C": "\u0421",
    "E": "\u0415",
    "H": "\u041d",
    "I": "\u0406",
    "K": "\u041a",
    "M": "\u041c",
    "O": "\u041e",
    "P": "\u0420",
    "S": "\u0405",
    "T": "\u0422",
    "X": "\u0425",
    "Y": "\u04ae",
}
"""Latin letters and the Cyrillic letters drawn the same, the look-alikes :func:`smuggle` writes."""

CONFUSABLES: Mapping[str, str] = {
    **{cyrillic: latin for latin, cyrillic in HOMOGLYPHS.items()},
    "\u0391": "A",  # GREEK CAPITAL LETTER ALPHA
    "\u0392": "B",
    "\u0395": "E",
    "\u0396": "Z",
    "\u0397": "H",
    "\u0399": "I",
    "\u039a": "K",
    "\u039c": "M",
    "\u039d": "N",
    "\u039f": "O",
    "\u03a1": "P",
    "\u03a4": "T",
    "\u03a5": "Y",
    "\u03a7": "X",
    "\u03bf": "o",  # GREEK SMALL LETTER OMICRON
    "\u0501": "d",  # CYRILLIC SMALL LETTER KOMI DE
    "\u04bb": "h",  # CYRILLIC SMALL LETTER SHHA
}
"""Letters of other scripts drawn like a Latin letter, and that letter: what :func:`reveal`
maps back inside a word that also holds Latin letters."""

NO_BREAK_SPACE = "\u00a0"
_WORD = re.compile(r"[A-Za-z]+")
_LETTERS = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[A-Za-z]")


def words(text: str, min_letters: int) -> list[tuple[int, int]]:
    """The spans of the words :func:`smuggle` edits: runs of at least ``min_letters`` ASCII
    letters."""
    return [m.span() for m in _WORD.finditer(text) if len(m.group()) >= min_letters]


def _lookalike(table: str) -> Callable[[str], str | None]:
    if table == "homoglyph":
        return HOMOGLYPHS.get
    if table != "fullwidth":
        raise ValueError(f"no look-alike table {table!r}; tables: homoglyph, fullwidth")

    def fullwidth(letter: str) -> str | None:
        return chr(ord(letter) + 0xFEE0) if letter.isascii() and letter.isalpha() else None

    return fullwidth


def _edit_word(word: str, edit: SmuggleEdit, value: str) -> str | None:
    """``word`` smuggled, or None when this edit cannot change it (no letter has a look-alike)."""
    if edit == "insert":
        middle = len(word) // 2
        return word[:middle] + value + word[middle:]
    swap = _lookalike(value)
    for k, letter in enumerate(word):
        other = swap(letter)
        if other is not None:
            return word[:k] + other + word[k + 1 :]
    return None


def smuggle(text: str, edit: SmuggleEdit, value: str, *, min_letters: int = 3) -> tuple[str, int]:
    """``text`` with every word of at least ``min_letters`` ASCII letters smuggled, and the
    number of words edited.

    ``edit`` ``insert`` puts the character ``value`` in the middle of each word; ``lookalike``
    replaces the word's first letter that has one by its look-alike from the table ``value``
    (``homoglyph`` or ``fullwidth``).

    Examples
    --------
    >>> smuggle("bad words", "insert", "\\u200b")
    ('b\\u200bad wo\\u200brds', 2)
    >>> smuggle("bad words", "lookalike", "homoglyph")[0] == "b\\u0430d w\\u043erds"
    True
    """
    out: list[str] = []
    last = edited = 0
    for start, end in words(text, min_letters):
        changed = _edit_word(text[start:end], edit, value)
        if changed is None:
            continue
        out += [text[last:start], changed]
        last, edited = end, edited + 1
    out.append(text[last:])
    return "".join(out), edited


def smuggle_placebo(
    text: str, edit: SmuggleEdit, value: str, *, min_letters: int = 3
) -> tuple[str, int]:
    """The placebo of :func:`smuggle`: the same characters placed next to each word it edits,
    not inside, and the number of changes made.

    ``insert``: the character before the word (every word stays whole, the length grows by
    the same amount as under the edit). ``lookalike``: the space before the word replaced by a
    no-break space (a foreign character in the same place, the length unchanged; a word with
    no space before it gets none).
    """
    out: list[str] = []
    last = changes = 0
    for start, end in words(text, min_letters):
        if _edit_word(text[start:end], edit, value) is None:
            continue
        if edit == "insert":
            out += [text[last:start], value]
            last, changes = start, changes + 1
        elif start > 0 and text[start - 1] == " ":
            out += [text[last : start - 1], NO_BREAK_SPACE]
            last, changes = start, changes + 1
    out.append(text[last:])
    return "".join(out), changes


def strip_format_characters(text: str) -> str:
    """``text`` without its invisible format characters (Unicode category ``Cf``: zero-width
    spaces and joiners, soft hyphens, direction marks, tag characters)."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def map_confusables(text: str) -> str:
    """``text`` with each look-alike letter of another script mapped to the Latin letter it
    imitates, inside words that also hold a Latin letter (a mixed-script word); a word
    written wholly in one script is left as it is, since it may be that language's own word."""

    def fix(match: re.Match[str]) -> str:
        word = match.group()
        if not _LATIN.search(word):
            return word
        return "".join(CONFUSABLES.get(ch, ch) for ch in word)

    return _LETTERS.sub(fix, text)


def reveal(text: str) -> str:
    """``text`` as a reader sees it: NFKC-normalised (full-width and other compatibility forms
    to their plain letters), format characters removed, look-alike letters in mixed-script
    words mapped back to Latin.

    Examples
    --------
    >>> smuggled = "b\\u0430d w\\u200bords ｂａｄ"
    >>> reveal(smuggled)
    'bad words bad'
    """
    return map_confusables(strip_format_characters(unicodedata.normalize("NFKC", text)))
