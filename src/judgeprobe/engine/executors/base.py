"""Executors: who answers the requests the run store does not hold yet.

By default the engine calls the judge itself (the ``local`` executor: concurrency, retries,
rate limits). An :class:`Executor` handed to the :class:`~judgeprobe.engine.Engine` replaces
those calls: it gets every request still missing in one engine run and returns the verdicts it
stored, with a reason when some requests stay pending (a provider batch that expired). The
engine still deduplicates, answers from the store, skips what exceeds the context window and
reserves every request on the budget before handing it over: one call each. An executor that
makes a further call for a request (a retry) reserves it on the engine's ``meter`` first, so the
calls made never pass the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict

if TYPE_CHECKING:
    from judgeprobe.engine.limits import BudgetMeter
    from judgeprobe.engine.store import RunStore


@dataclass
class Executed:
    """What an executor did with the requests it was given."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    """The verdicts it stored in the run store, by request key (as stored)."""
    stopped: str | None = None
    """Why some requests are left without a verdict (they stay pending), or None."""


class Executor(Protocol):
    """Answers an engine run's missing requests, storing each verdict in ``store``."""

    name: str

    async def execute(
        self, requests: Sequence[Request], store: RunStore, meter: BudgetMeter | None = None
    ) -> Executed: ...
