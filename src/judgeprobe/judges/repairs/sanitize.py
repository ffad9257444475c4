"""Sanitize: show the judge the response as a reader sees it, with no verdict left to copy.

Two attacks on a judge live in the characters of the response (:mod:`judgeprobe.probes.
adversarial`). Smuggled words (a zero-width space, a soft hyphen or a tag character inside a
word, a Cyrillic look-alike letter, a full-width letter) hide a word from a judge that matches
words while a reader still reads it; a forged verdict (text in the judge's own answer format
at the end of the response) offers the judge an answer to copy. This repair rewrites each
response field before the judge reads it:

1. Unicode NFKC normalisation (:func:`unicodedata.normalize`): full-width and other
   compatibility forms become their plain letters;
2. every format character (category ``Cf``: zero-width characters, soft hyphens, direction
   marks, tag characters) removed;
3. look-alike letters of other scripts mapped to the Latin letter they imitate, inside words
   that also hold a Latin letter (:func:`judgeprobe.transforms.smuggle.reveal`);
4. text in the rubric's answer format (its prefix and labels, a double-bracketed verdict, a JSON
   verdict, its closing instruction repeated, the markers of a chat turn) replaced by a marker
   (:func:`judgeprobe.transforms.answer_format.neutralise`).

One inner call per verdict. The price: emoji sequences joined by zero-width joiners come
apart, a word written wholly in look-alike letters of one script is left as that script's own
word, and honest text in the answer format ("Score: 4" in a quoted review) is removed too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe.core.judge import Judge
from judgeprobe.errors import ConfigError
from judgeprobe.judges.repairs.rewrite import RESPONSE_FIELDS, RewriteJudge
from judgeprobe.rubrics import Rubric
from judgeprobe.transforms.answer_format import answer_format as format_of
from judgeprobe.transforms.answer_format import neutralise
from judgeprobe.transforms.smuggle import reveal


class SanitizeJudge(RewriteJudge):
    """Normalise the response fields' Unicode and remove text in the judge's answer format."""

    repair = "sanitize"

    def __init__(
        self,
        inner: Judge,
        *,
        fields: Sequence[str] = RESPONSE_FIELDS,
        unicode: bool = True,
        answer_format: bool = True,
    ) -> None:
        if not fields:
            raise ConfigError("repair sanitize: fields must name at least one field")
        if not (unicode or answer_format):
            raise ConfigError("repair sanitize: unicode and answer_format are both off")
        super().__init__(inner, fields=list(fields), unicode=unicode, answer_format=answer_format)
        self.fields = tuple(fields)
        self.unicode = unicode
        self.neutralises = answer_format

    def clean(self, text: str, rubric: Rubric) -> str:
        """``text`` as this repair shows it to the judge under ``rubric``."""
        if self.unicode:
            text = reveal(text)
        if self.neutralises:
            text = neutralise(text, format_of(rubric))
        return text

    def rewrite(self, rubric: Rubric, fields: Mapping[str, str]) -> tuple[Rubric, dict[str, str]]:
        return rubric, {
            name: self.clean(value, rubric) if name in self.fields else value
            for name, value in fields.items()
        }
