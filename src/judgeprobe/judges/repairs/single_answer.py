"""Single-answer grading: grade each response of a pair on its own, prefer the higher grade.

A pairwise judge that reads both responses at once can favour a position: the embedded judge
answers "A" to every pair whichever response is shown first. Grading each response alone, on a
pointwise rubric (by default the built-in ``quality``, 1 to 5), leaves no position to favour:
the grade of a response does not depend on where the pair showed it, so swapping A and B swaps
the verdict exactly. This is the single-answer grading of Zheng et al. (2023), which they
recommend where position bias is a concern; the price is that the judge never sees the two
responses side by side, so a small difference it would notice in a comparison can be lost.

The grade of a response is its verdict's expected score under the judge's distribution over
the scale where the judge reports one (``meta["expected"]``, as the embedded llama judge does;
a probability-weighted grade, as in G-Eval, Liu et al. 2023), else its score; ``expected:
false`` always takes the score. The pair's verdict is ``A`` when A's grade is better than B's by
more than ``margin``, ``B`` the other way round, else ``tie``; better is higher (``prefer:
higher``, as on ``quality``) or, for a rubric whose high end is the bad one (``harmfulness``,
``toxicity``), lower (``prefer: lower``). Two inner calls per verdict.

The pointwise rubric's inputs are filled from the pair: ``response`` with each response in
turn, every other input (``prompt``) from the pair's field of the same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError
from judgeprobe.judges.parsing import label_score
from judgeprobe.judges.repairs.base import RepairJudge, first_failure
from judgeprobe.rubrics import get_rubric

POINTWISE_KINDS = ("scale", "binary", "continuous")
"""The rubric kinds a response can be graded on alone."""


class SingleAnswerJudge(RepairJudge):
    """Grade ``response_a`` and ``response_b`` alone on ``rubric``; the higher grade wins."""

    repair = "single_answer"
    forwards_window = False  # each inner call reads one response, not the pair

    def __init__(
        self,
        inner: Judge,
        *,
        rubric: str = "quality",
        margin: float = 0.0,
        expected: bool = True,
        prefer: Literal["higher", "lower"] = "higher",
    ) -> None:
        grading = get_rubric(rubric)
        if grading.kind not in POINTWISE_KINDS:
            raise ConfigError(
                f"repair single_answer: the grading rubric {grading.name!r} is {grading.kind}; "
                f"give a pointwise one ({', '.join(POINTWISE_KINDS)})"
            )
        if "response" not in grading.inputs:
            raise ConfigError(
                f"repair single_answer: the grading rubric {grading.name!r} has no input "
                f"'response' to grade (its inputs: {', '.join(grading.inputs)})"
            )
        if margin < 0:
            raise ConfigError(f"repair single_answer: margin must be >= 0, got {margin}")
        if prefer not in ("higher", "lower"):
            raise ConfigError(
                f"repair single_answer: prefer must be 'higher' or 'lower', got {prefer!r}"
            )
        # The rubric's hash, not only its name, enters the fingerprint: an edited rubric file
        # is another judge.
        super().__init__(
            inner,
            rubric=rubric,
            rubric_hash=grading.hash,
            margin=margin,
            expected=expected,
            prefer=prefer,
        )
        self.grading = grading
        self.margin = margin
        self.expected = expected
        self.sign = 1.0 if prefer == "higher" else -1.0

    def grade(self, verdict: Verdict) -> float:
        """A response's grade: the expected score where reported (and wanted), else the score."""
        expected = verdict.meta.get("expected")
        if self.expected and isinstance(expected, int | float):
            return float(expected)
        return float(verdict.score if verdict.score is not None else 0.0)

    def fields_for(self, pair: Mapping[str, str], response: str) -> dict[str, str]:
        """The grading rubric's fields for one ``response`` of the ``pair``."""
        missing = [n for n in self.grading.inputs if n != "response" and n not in pair]
        if missing:
            raise FatalJudgeError(
                f"repair single_answer: the grading rubric {self.grading.name!r} needs "
                f"{', '.join(missing)}, which the pair does not have "
                f"(its fields: {', '.join(pair)})"
            )
        return {
            name: response if name == "response" else pair[name] for name in self.grading.inputs
        }

    async def judge(self, request: Request) -> Verdict:
        rubric = request.rubric
        pair = self.pair_of(request)
        asks = [
            (self.grading, self.fields_for(pair, pair[side]))
            for side in ("response_a", "response_b")
        ]
        verdicts = await self.ask_many(asks, request.trial)
        failed = first_failure(verdicts)
        if failed is not None:
            return self.combined(failed, verdicts)
        grade_a, grade_b = (self.grade(v) for v in verdicts)
        gap = self.sign * (grade_a - grade_b)
        label = "A" if gap > self.margin else "B" if gap < -self.margin else "tie"
        verdict = Verdict.scored(
            label_score(label, rubric),
            label=label,
            raw_text=f"A graded {grade_a:.4g} | B graded {grade_b:.4g}",
        )
        return self.combined(verdict, verdicts, grades=[grade_a, grade_b])
