"""What every repaired judge shares: an inner judge, its own fingerprint, a count of inner calls.

A repair is a judge that wraps the judge under audit and asks it more than once per verdict
(both orders, every part, several wordings) or asks it something else (equal-length responses).
It is a :class:`~judgeprobe.core.judge.Judge` like any other, so the same probes audit it and the
engine caches, retries and counts its verdicts as it does any judge's.

Its fingerprint hashes the inner judge's fingerprint, the repair's name and its parameters, so
a run store never mixes a repaired judge's verdicts with the original's. Each verdict records
in its ``meta`` how many inner calls it took (``inner_calls``): the repair's cost multiplier is
their mean over the verdicts of a run (:func:`cost_multiplier`).

The inner calls are made directly on the inner judge, not through the engine: the engine's
unit of caching and retry is the repaired verdict. A rerun of the same audit finds every
repaired verdict in the store and calls nothing; an interrupted run re-judges only the
repaired verdicts it had not stored, inner calls included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.judge import Judge, JudgeCapabilities
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus, check_verdict
from judgeprobe.errors import FatalJudgeError
from judgeprobe.judges.base import BaseJudge
from judgeprobe.rubrics import Rubric

INNER_CALLS = "inner_calls"
"""The ``meta`` key of a repaired verdict that holds its number of inner judge calls."""


class RepairJudge(BaseJudge):
    """A judge that answers each request by calling ``inner`` (see the module docstring).

    Subclasses set :attr:`repair` and implement :meth:`judge` with :meth:`ask_many`.
    """

    backend = "repair"
    repair = "none"

    def __init__(self, inner: Judge, **params: Any) -> None:
        self.inner = inner
        self.params = dict(params)
        self.inner_calls = 0
        """Inner calls this instance made (the stored ``meta`` counts survive a rerun)."""
        self.verdicts = 0
        """Verdicts this instance answered."""

    forwards_window = True
    """Whether the inner judge's context window holds for the request as a whole (False for a
    repair that asks about parts of it)."""

    @property
    def capabilities(self) -> JudgeCapabilities:
        """The inner judge's concurrency, window and in-process flag; one request a call."""
        inner = self.inner.capabilities
        return JudgeCapabilities(
            max_concurrency=inner.max_concurrency,
            context_window=inner.context_window if self.forwards_window else None,
            in_process=inner.in_process,
        )

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        """The inner judge's count of each request (None where the window is not forwarded),
        so the engine skips a request too long for the inner judge, never truncates it."""
        if not self.forwards_window:
            return [None] * len(requests)
        return self.inner.count_tokens_many(requests)

    def describe(self) -> dict[str, Any]:
        inner = self.inner.describe()
        return {
            "backend": self.backend,
            "repair": self.repair,
            "params": self.params,
            "model": f"{inner.get('model') or inner.get('name') or inner.get('backend')}"
            f" + {self.repair}",
            "inner": inner,
            "inner_fingerprint": self.inner.fingerprint,
        }

    @property
    def fingerprint(self) -> str:
        return content_hash(self.describe())

    def secrets(self) -> list[str]:
        return list(self.inner.secrets())

    async def aclose(self) -> None:
        await self.inner.aclose()

    def pair_of(self, request: Request) -> dict[str, str]:
        """The fields of ``request``, which must be pairwise (a repair that reads both
        responses); FatalJudgeError naming the repair and the rubric otherwise."""
        rubric = request.rubric
        if rubric.kind != "pairwise":
            raise FatalJudgeError(
                f"repair {self.repair} needs a pairwise rubric, not the {rubric.kind} rubric "
                f"{rubric.name!r}"
            )
        return request.field_map

    async def ask_many(
        self, asks: Sequence[tuple[Rubric, Mapping[str, str]]], trial: int
    ) -> list[Verdict]:
        """The inner judge's verdicts on each (rubric, fields), scores checked against the
        rubric's range; batched as the inner judge declares."""
        requests = [
            Request.make(self.inner.fingerprint, rubric, fields, trial=trial)
            for rubric, fields in asks
        ]
        size = self.inner.capabilities.batch_size
        verdicts: list[Verdict] = []
        for start in range(0, len(requests), size):
            batch = requests[start : start + size]
            if size == 1:
                answered = [await self.inner.judge(batch[0])]
            else:
                answered = list(await self.inner.judge_batch(batch))
            verdicts += [check_verdict(v, r.rubric) for v, r in zip(answered, batch, strict=True)]
        self.inner_calls += len(requests)
        return verdicts

    def combined(self, verdict: Verdict, inner: Sequence[Verdict], **meta: Any) -> Verdict:
        """``verdict`` with the cost of the ``inner`` verdicts (calls, tokens, latency)
        recorded on it; an inner verdict that is itself repaired (a chain) counts the calls
        it made, so ``inner_calls`` is always calls to the judge under repair."""
        self.verdicts += 1
        calls = sum(int(p.meta.get(INNER_CALLS, 1)) for p in inner)
        return verdict.but(
            prompt_tokens=sum(p.prompt_tokens for p in inner),
            completion_tokens=sum(p.completion_tokens for p in inner),
            latency_s=sum(p.latency_s for p in inner),
            meta={**verdict.meta, "repair": self.repair, INNER_CALLS: calls, **meta},
        )


def first_failure(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The first verdict that is not ok, as the repaired verdict (a copy without cost): a
    repair decides only on a complete set of inner answers."""
    for verdict in verdicts:
        if verdict.status is not VerdictStatus.OK:
            return Verdict(
                verdict.status,
                raw_text=verdict.raw_text,
                error=f"inner verdict {verdict.status.value}: {verdict.error or verdict.raw_text}",
            )
    return None


def answer_of(verdict: Verdict, *, default: float) -> Verdict:
    """The inner ``verdict`` a repair decided on, as the repaired verdict's answer (a copy
    without its cost, which :meth:`RepairJudge.combined` adds up over every inner call)."""
    return Verdict.scored(
        verdict.score if verdict.score is not None else default,
        label=verdict.label,
        distribution=verdict.distribution,
        raw_text=verdict.raw_text,
    )


def cost_multiplier(verdicts: Sequence[Verdict]) -> float | None:
    """Mean inner calls per repaired verdict (None without any verdict recording them)."""
    counts = [v.meta[INNER_CALLS] for v in verdicts if INNER_CALLS in v.meta]
    if not counts:
        return None
    return float(sum(counts)) / len(counts)
