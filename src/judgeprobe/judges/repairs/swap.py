"""Swap-average: a pairwise verdict from both orders, a tie when the orders disagree.

The judge sees (A, B) and (B, A); the second verdict is mapped back to the first order's terms
(its A is the original B). When both orders pick the same response, that is the verdict; when
they disagree (a flip, or a winner in one order and a tie in the other) the verdict is a tie.
The score is the preference on the A = 1, tie = 0.5, B = 0 scale of the label. Two inner calls
per verdict. A judge that always picks the response shown first thus answers tie everywhere:
its position bias becomes an honest "cannot tell", never a wrong winner.

Reference: P. Wang et al. (2023), "Large Language Models are not Fair Evaluators",
arXiv:2305.17926 (balanced position calibration).
"""

from __future__ import annotations

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.judges.parsing import label_score
from judgeprobe.judges.repairs.base import RepairJudge, first_failure
from judgeprobe.rubrics import Rubric

_MIRROR = {"A": "B", "B": "A", "tie": "tie"}


class SwapAverageJudge(RepairJudge):
    """Judge each pair in both orders; agree -> that choice, disagree -> tie."""

    repair = "swap_average"

    async def judge(self, request: Request) -> Verdict:
        rubric = request.rubric
        fields = self.pair_of(request)
        swapped = {**fields, "response_a": fields["response_b"], "response_b": fields["response_a"]}
        verdicts = await self.ask_many([(rubric, fields), (rubric, swapped)], request.trial)
        failed = first_failure(verdicts)
        if failed is not None:
            return self.combined(failed, verdicts)
        first, second = verdicts
        original = _decision(rubric, first)
        mirrored = _MIRROR[_decision(rubric, second)]
        label = original if original == mirrored else "tie"
        verdict = Verdict.scored(
            label_score(label, rubric),
            label=label,
            raw_text=f"{first.raw_text!r} | swapped: {second.raw_text!r}",
        )
        return self.combined(verdict, verdicts, orders=[original, mirrored])


def _decision(rubric: Rubric, verdict: Verdict) -> str:
    score = verdict.score if verdict.score is not None else 0.5
    return rubric.decision_of(score, verdict.label)
