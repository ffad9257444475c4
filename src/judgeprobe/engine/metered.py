"""A judge whose every call is reserved on a budget shared with an engine: one budget for an
audit and the repaired audits beside it.

A repaired judge asks the judge under repair several times for each verdict (both orders, each
part, several wordings), directly, not through the engine, whose unit is the repaired verdict.
``--max-calls N`` on ``audit --repair`` is still a hard limit on the calls the judge receives:
the original audit's engine and each repair's inner calls draw on one
:class:`~judgeprobe.engine.limits.BudgetMeter`. :class:`MeteredJudge` wraps the judge under
repair for that: it reserves each call on the meter before it is made and raises
:class:`~judgeprobe.errors.BudgetExhausted` when the budget has no room, which the engine reads
as it reads its own budget running out (the request stays pending, the run ends incomplete with
the reason). Before, each repaired audit had the whole budget again and counted repaired
verdicts, not calls: 90 requests reached the server for ``--max-calls 30`` with one repair.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgeprobe.core.judge import InTheNameOf, Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.engine.limits import BudgetMeter
from judgeprobe.errors import BudgetExhausted


class MeteredJudge(InTheNameOf):
    """``inner``, each call reserved on ``meter`` first (see the module docstring).

    It is ``inner`` in every other respect: the same fingerprint, description, capabilities,
    secrets and token counts, so a judge built on it (a repair) has the fingerprint it has on
    ``inner`` and finds the verdicts stored for it.
    """

    def __init__(self, inner: Judge, meter: BudgetMeter) -> None:
        super().__init__(inner)
        self.meter = meter

    async def judge(self, request: Request) -> Verdict:
        [verdict] = await self.judge_batch([request])
        return verdict

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        """The inner judge's verdicts, once the whole batch is reserved on the meter (one call a
        request); BudgetExhausted, with nothing sent, when it does not fit."""
        estimates = self._estimates(requests)
        allowed = self.meter.reserve(estimates)
        if allowed < len(requests):
            reason = self.meter.refusal(estimates[allowed])  # before the release: what binds
            self.meter.release(allowed, sum(estimates[:allowed]))
            raise BudgetExhausted(f"{reason} (shared with the audit beside this one)")
        if len(requests) == 1 and self.inner.capabilities.batch_size == 1:
            verdicts = [await self.inner.judge(requests[0])]
        else:
            verdicts = list(await self.inner.judge_batch(requests))
        spent = sum(
            (v.tokens if isinstance(v, Verdict) else 0) or e
            for v, e in zip(verdicts, estimates, strict=False)
        )
        self.meter.settle(sum(estimates), spent)
        return verdicts

    def _estimates(self, requests: Sequence[Request]) -> list[int]:
        """What each request is charged on the token budget before it is sent (0: no budget)."""
        if self.meter.budget.max_tokens is None:
            return [0] * len(requests)
        counts = self.inner.count_tokens_many(requests)
        return [n or len(r.render()) // 4 for r, n in zip(requests, counts, strict=True)]
