"""Repairs that rewrite the request before the judge reads it, and ask once.

A rewriting repair changes what the judge is shown (the response cleaned, the response fenced
and declared as data) and asks the inner judge that one rewritten request: one inner call per
verdict, a cost multiplier of 1. The inner judge's context window holds for the rewritten
request, which is what the repair counts, so a request the rewriting makes too long for the
inner judge is skipped, never truncated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.judges.repairs.base import RepairJudge, answer_of, first_failure
from judgeprobe.rubrics import Rubric

RESPONSE_FIELDS = ("response", "response_a", "response_b")
"""The fields the evaluated model wrote: what a rewriting repair rewrites by default."""


class RewriteJudge(RepairJudge):
    """Ask the inner judge :meth:`rewrite` of each request, once."""

    def rewrite(self, rubric: Rubric, fields: Mapping[str, str]) -> tuple[Rubric, dict[str, str]]:
        """The rubric and fields the inner judge is asked instead of ``rubric`` and ``fields``."""
        raise NotImplementedError

    def rewritten(self, request: Request) -> Request:
        """``request`` as the inner judge is asked it."""
        rubric, fields = self.rewrite(request.rubric, request.field_map)
        return Request.make(self.inner.fingerprint, rubric, fields, trial=request.trial)

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        """The inner judge's count of each rewritten request."""
        return self.inner.count_tokens_many([self.rewritten(r) for r in requests])

    async def judge(self, request: Request) -> Verdict:
        rubric, fields = self.rewrite(request.rubric, request.field_map)
        verdicts = await self.ask_many([(rubric, fields)], request.trial)
        failed = first_failure(verdicts)
        if failed is not None:
            return self.combined(failed, verdicts)
        (inner,) = verdicts
        changed = fields != dict(request.field_map) or rubric.hash != request.rubric.hash
        return self.combined(answer_of(inner, default=0.5), verdicts, rewritten=changed)
