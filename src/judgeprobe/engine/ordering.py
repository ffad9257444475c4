"""The order the engine sends pending requests in: neighbours share their longest prefix.

A server that caches prompts (llama.cpp's, vLLM's prefix cache) and the embedded llama judge
(which keeps the last prompt's evaluated tokens) only evaluate what a request does not share with
the one before it. Probes plan in item order, so the requests of one rubric wording, one
repetition count or one concatenation size come interleaved with the others; sorting them by the
text the judge reads (the rubric's system text, then the rendered template), rubric and trial
after, puts requests that share a rubric, a variant and an input next to each other, and keeps
those caches warm. The order changes which requests are sent first, never what a verdict is.
"""

from __future__ import annotations

from collections.abc import Iterable

from judgeprobe.core.request import Request


def warm_order(requests: Iterable[Request]) -> list[Request]:
    """``requests`` sorted so that each one shares the longest prefix with the one before it.

    Lexicographic order of the prompt text is the order in which common prefixes are adjacent;
    the rubric's hash and the trial break ties, so the order is deterministic.

    Examples
    --------
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> rubric = builtin_rubric("harmfulness")
    >>> make = lambda p, r: Request.make("j", rubric, {"prompt": p, "response": r})
    >>> [r.field_map["response"] for r in warm_order([make("b", "1"), make("a", "2"),
    ...                                                  make("b", "3")])]
    ['2', '1', '3']
    """
    return sorted(requests, key=_prefix_key)


def _prefix_key(request: Request) -> tuple[str, str, str, int]:
    return (request.rubric.system or "", request.render(), request.rubric.hash, request.trial)
