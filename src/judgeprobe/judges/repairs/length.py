"""Length-controlled pairwise preference: judge the two responses cut to the same length.

A judge that prefers the longer response whatever it says agrees with the length-only null
(:mod:`judgeprobe.probes.pairwise.length_null`) far more than humans do. This repair removes the
cue at
the source: both responses are cut to the length of the shorter one (in characters, the length
null's default unit, at the last word boundary within it when ``at_words``), and the judge
compares the cut responses. One inner call per verdict: the cost multiplier is 1.

Why truncation and not a statistical correction: a correction (a logistic model of the judge's
preference on the length difference, with the decision taken on the residual) needs the judge's
verdicts on all the audit's items before it can answer any one, which a judge answering one
request at a time cannot have, and its fitted slope would also remove the part of the length
effect that is real quality. Truncation needs nothing but the request and is exact: at equal
lengths the length cue carries no information. Its cost is information: what a longer response
says after the cut is not read, so a judge's agreement with humans can fall where the longer
response is better because of its end.
"""

from __future__ import annotations

from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.judges.repairs.base import RepairJudge, answer_of, first_failure


class LengthControlledJudge(RepairJudge):
    """Cut ``response_a`` and ``response_b`` to the shorter one's length, then judge."""

    repair = "length_controlled"

    def __init__(self, inner: Judge, *, at_words: bool = False) -> None:
        super().__init__(inner, at_words=at_words)
        self.at_words = at_words

    def cut(self, a: str, b: str) -> tuple[str, str]:
        """``a`` and ``b`` cut to the length of the shorter of the two."""
        n = min(len(a), len(b))
        return truncate(a, n, at_words=self.at_words), truncate(b, n, at_words=self.at_words)

    async def judge(self, request: Request) -> Verdict:
        fields = self.pair_of(request)
        a, b = self.cut(fields["response_a"], fields["response_b"])
        verdicts = await self.ask_many(
            [(request.rubric, {**fields, "response_a": a, "response_b": b})], request.trial
        )
        failed = first_failure(verdicts)
        if failed is not None:
            return self.combined(failed, verdicts)
        (inner,) = verdicts
        verdict = answer_of(inner, default=0.5)
        return self.combined(verdict, verdicts, cut_to=min(len(a), len(b)))


def truncate(text: str, n: int, *, at_words: bool = False) -> str:
    """``text`` cut to ``n`` characters; with ``at_words``, at the last space within them
    (the cut text stays whole words; no space: the plain cut).

    Examples
    --------
    >>> truncate("one two three", 9)
    'one two t'
    >>> truncate("one two three", 9, at_words=True)
    'one two'
    """
    if len(text) <= n:
        return text
    cut = text[:n]
    if at_words and " " in cut:
        return cut[: cut.rindex(" ")].rstrip()
    return cut
