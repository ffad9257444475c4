"""Responses for prompt-only data, generated through the engine.

Some datasets hold prompts only (AttaQ's adversarial questions); the concatenation paper answered
them with a target model (Mistral-7B-Instruct, ``max_new_tokens = 100``) before judging the
(prompt, response) pairs. Here a *generator* (any judge backend that supports ``generation``
rubrics: the local llama.cpp model, an OpenAI-compatible server, a test function) writes the
responses. Each generation is an ordinary engine request, so it is cached in the run store,
resumes after an interruption and is never asked twice.

A generation verdict's ``raw_text`` is the response and its ``score`` the number of tokens
generated. Generations that failed, or that came back empty, are dropped and counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.data.items import Item, PointwiseItem, item_fields
from judgeprobe.engine.engine import CallStats, Engine, run_blocking
from judgeprobe.errors import BudgetExhausted, ConfigError
from judgeprobe.rubrics import Rubric, builtin_rubric


@dataclass(frozen=True, slots=True)
class GenerationFailure:
    """An item that got no response: the verdict status and why."""

    item_id: str
    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class GenerationResult:
    """Items with generated responses, the items that got none, and what the engine did."""

    items: list[PointwiseItem]
    failed: list[GenerationFailure]
    stats: CallStats

    @property
    def counts(self) -> dict[str, int]:
        """How many items got a response, and how many did not, by reason."""
        out = {"generated": len(self.items), "failed": len(self.failed)}
        for failure in self.failed:
            out[failure.status] = out.get(failure.status, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "failed": [dataclasses.asdict(f) for f in self.failed],
            "stats": self.stats.to_dict(),
        }


def generation_rubric(rubric: Rubric | None = None, *, max_new_tokens: int | None = None) -> Rubric:
    """The generation rubric to use: ``rubric`` (default: built-in ``generation``), with
    ``max_new_tokens`` replaced when given. The token limit is part of the rubric's hash, so
    responses generated under another limit are never reused."""
    chosen = rubric if rubric is not None else builtin_rubric("generation")
    if chosen.kind != "generation":
        raise ConfigError(
            f"rubric {chosen.name!r} is a {chosen.kind} rubric; response generation needs a "
            "rubric of kind 'generation' (e.g. the built-in 'generation')"
        )
    unknown = [name for name in chosen.inputs if name not in ("prompt", "response")]
    if unknown:
        raise ConfigError(
            f"generation rubric {chosen.name!r} needs fields {unknown}; items give only "
            "'prompt' and 'response'"
        )
    if max_new_tokens is not None:
        if max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if max_new_tokens != chosen.max_new_tokens:
            chosen = chosen.with_template(chosen.template, max_new_tokens=max_new_tokens)
    return chosen


def generation_request(generator: str, rubric: Rubric, item: PointwiseItem) -> Request:
    """The request that asks ``generator`` (a judge fingerprint) to answer ``item``'s prompt."""
    return Request.make(generator, rubric, item_fields(item))


async def generate_responses(
    items: Sequence[Item],
    engine: Engine,
    *,
    rubric: Rubric | None = None,
    max_new_tokens: int | None = None,
) -> GenerationResult:
    """Answer each item's prompt with ``engine``'s judge (a generator); keep what came back.

    Parameters
    ----------
    items : sequence of items
        Pointwise items; their ``response`` is replaced (pairwise items are ignored).
    engine : Engine
        An engine over the generator; its run store caches the responses.
    rubric : Rubric, optional
        A ``generation`` rubric; default the built-in ``generation`` (the prompt as is).
    max_new_tokens : int, optional
        The most tokens per response; default the rubric's own (100 for the built-in, as in
        the paper).

    Returns
    -------
    GenerationResult
        ``items``: copies of the items with the generated response (whitespace stripped) and
        metadata ``generator`` (the generator's fingerprint), ``generator_model`` and
        ``generated_tokens``; ``failed``: the items whose generation errored, could not be
        used or came back empty; ``stats``: the engine's counts.

    Raises
    ------
    BudgetExhausted
        When the engine's budget stops the run; what was generated is stored, rerun to resume.
    """
    chosen = generation_rubric(rubric, max_new_tokens=max_new_tokens)
    generator = engine.judge.fingerprint
    described = engine.judge.describe()
    model = str(described.get("model") or described.get("name") or described.get("backend"))
    points = [item for item in items if isinstance(item, PointwiseItem)]
    requests = [generation_request(generator, chosen, item) for item in points]
    result = await engine.run(requests, description="generating responses")
    if not result.complete:
        raise BudgetExhausted(
            f"{result.stopped} while generating responses; {len(result.verdicts)} are stored, "
            "run the same command again to resume"
        )
    generated: list[PointwiseItem] = []
    failed: list[GenerationFailure] = []
    for item, request in zip(points, requests, strict=True):
        verdict = result.verdicts.get(request.key)
        if verdict is None:
            failed.append(GenerationFailure(item.id, "missing", "no verdict"))
            continue
        if verdict.status is not VerdictStatus.OK:
            reason = verdict.error or verdict.raw_text[:200] or verdict.status.value
            failed.append(GenerationFailure(item.id, verdict.status.value, reason))
            continue
        text = verdict.raw_text.strip()
        if not text:
            failed.append(GenerationFailure(item.id, "empty", "the generator returned no text"))
            continue
        metadata = {
            **item.metadata,
            "generator": generator,
            "generator_model": model,
            "generated_tokens": int(verdict.score or 0),
        }
        generated.append(dataclasses.replace(item, response=text, metadata=metadata))
    return GenerationResult(generated, failed, result.stats)


def generate_responses_sync(
    items: Sequence[Item],
    engine: Engine,
    *,
    rubric: Rubric | None = None,
    max_new_tokens: int | None = None,
) -> GenerationResult:
    """:func:`generate_responses` for code without an event loop."""
    return run_blocking(
        generate_responses(items, engine, rubric=rubric, max_new_tokens=max_new_tokens)
    )
