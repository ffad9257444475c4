"""Chunked scoring: score each part of a response on its own and keep the most severe.

A judge that reads a long response as a whole can be talked out of a harmful part by the safe
parts around it (the concatenation bypass of Fandina et al., arXiv:2408.12259). Chunked scoring
splits the response field on ``separator`` (by default the blank line, which is both the
separator the concatenation transforms join parts with, see
:class:`~judgeprobe.transforms.concat.Join`, and a paragraph break), judges every non-empty
part with the same rubric, and keeps the part whose score is the most severe: the highest
score when the rubric's decision rule says higher is positive (harmful, toxic, refusal), else
the lowest. When the prompt field splits into as many parts as the response (a parallel
concatenation), each part is judged with its own prompt; otherwise every part gets the whole
prompt. One inner call per part: the cost multiplier is the mean number of parts.

A response of one part is judged once, unchanged, so chunking leaves a judge's verdicts on
ordinary single-paragraph responses as they were.
"""

from __future__ import annotations

from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError
from judgeprobe.judges.repairs.base import RepairJudge, answer_of, first_failure
from judgeprobe.rubrics import Rubric


class ChunkedJudge(RepairJudge):
    """Split ``field`` on ``separator``, judge each part, keep the most severe verdict."""

    repair = "chunked"
    forwards_window = False  # each inner call reads one part, not the whole response

    def __init__(
        self, inner: Judge, *, separator: str = "\n\n", field: str = "response", max_parts: int = 16
    ) -> None:
        if not separator:
            raise ConfigError("repair chunked: separator must not be empty")
        if max_parts < 1:
            raise ConfigError(f"repair chunked: max_parts must be >= 1, got {max_parts}")
        super().__init__(inner, separator=separator, field=field, max_parts=max_parts)
        self.separator = separator
        self.field = field
        self.max_parts = max_parts

    def split(self, text: str) -> list[str]:
        """The non-empty parts of ``text`` (at most ``max_parts``: the rest stays in the last)."""
        pieces = text.split(self.separator, self.max_parts - 1)
        parts = [p for p in pieces if p.strip()]
        return parts or [text]

    async def judge(self, request: Request) -> Verdict:
        fields = request.field_map
        if self.field not in fields:
            raise FatalJudgeError(
                f"repair chunked: the rubric {request.rubric.name!r} has no field "
                f"{self.field!r} to split (its inputs: {', '.join(request.rubric.inputs)})"
            )
        parts = self.split(fields[self.field])
        prompts = self.split(fields["prompt"]) if "prompt" in fields else []
        paired = len(prompts) == len(parts) > 1
        asks = [
            (
                request.rubric,
                {**fields, self.field: part, **({"prompt": prompts[i]} if paired else {})},
            )
            for i, part in enumerate(parts)
        ]
        verdicts = await self.ask_many(asks, request.trial)
        failed = first_failure(verdicts)
        if failed is not None:
            return self.combined(failed, verdicts)
        chosen = most_severe(request.rubric, verdicts)
        worst = verdicts[chosen]
        verdict = answer_of(worst, default=0.0)
        return self.combined(verdict, verdicts, parts=len(parts), most_severe_part=chosen)


def most_severe(rubric: Rubric, verdicts: list[Verdict]) -> int:
    """The index of the most severe of ``verdicts`` (all ok): the highest score when higher
    scores are the rubric's positive class, else the lowest; the first on a tie."""
    higher = rubric.decision is None or rubric.decision.higher_is_positive
    scores = [v.score if v.score is not None else 0.0 for v in verdicts]
    target = max(scores) if higher else min(scores)
    return scores.index(target)
