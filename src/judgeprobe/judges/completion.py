"""Reading a chat completion: the one parser of an answer, live or from a batch output file.

:func:`completion_verdict` turns a chat completion into a verdict: the labels' probabilities from
the next-token logprobs where they were asked for and returned (:func:`label_distribution`), else
the text. A logprob that is no log-probability (``nan``, ``+inf``, a positive number) makes the
answer unparseable with the reason: read as it stood it became a plausible distribution (a
``nan`` took the probability 1). Impossible usage figures are counted as 0 and noted
(:func:`token_count`). The model the server names in its answer is kept in the verdict's
``meta["served_model"]``: a provider that moves a name to another model shows it there
(``judgeprobe watch`` reports it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe._util.redaction import redact_text
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import JudgeError, RetryableJudgeError
from judgeprobe.judges.parsing import verdict_from_distribution, verdict_from_text
from judgeprobe.rubrics import Rubric

SNIPPET = 200
"""The most characters of a server's body quoted in an error message."""
_STRIP = " \t\r\n*\"'`.,:;!()[]"
_SYNONYMS = {"true": ("yes",), "false": ("no",)}
_POSITIVE_LOGPROB = 1e-4
"""A logprob above 0 by at most this is rounding (a probability of 1); beyond it, no logprob."""


class BadLogprob(JudgeError, ValueError):
    """A logprob that is not the logarithm of a probability."""


def completion_verdict(
    request: Request,
    data: Any,
    raw: bytes,
    *,
    logprobs: bool,
    source: str,
    secrets: Sequence[str] = (),
) -> Verdict:
    """The verdict in the chat completion ``data`` (``raw``: its bytes) answering ``request``.

    The one parser of an answer, live or read from a batch output file: the labels'
    probabilities from the logprobs where ``logprobs`` was asked and the server returned them,
    else the text. ``source`` (the URL called, or the file read) names where a body that is not
    a chat completion came from, in the :class:`~judgeprobe.errors.RetryableJudgeError` raised.
    """
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        if not isinstance(data, dict) or not isinstance(choice, dict):
            raise TypeError("not a chat completion")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise RetryableJudgeError(
            redact_text(f"{source} answered without a chat completion: ", secrets)
            + repr(snippet(raw, secrets))
        ) from exc
    if not isinstance(text, str):
        raise RetryableJudgeError(redact_text(f"{source} answered with non-text content", secrets))
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    (prompt_tokens, bad_prompt), (completion_tokens, bad_completion) = (
        token_count(usage, name) for name in ("prompt_tokens", "completion_tokens")
    )
    dropped = [note for note in (bad_prompt, bad_completion) if note]
    rubric = request.rubric
    verdict: Verdict | None = None
    if rubric.kind == "generation":
        verdict = Verdict.scored(completion_tokens, raw_text=text)
    elif rubric.kind != "continuous" and logprobs:
        try:
            distribution = label_distribution(_content_logprobs(choice), rubric)
        except BadLogprob as exc:
            return Verdict.unparseable(
                text,
                error=f"the answer's logprobs are broken: {exc}",
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        if distribution:
            verdict = verdict_from_distribution(
                distribution, rubric, key=request.key, trial=request.trial, raw_text=text
            )
    if verdict is None:
        verdict = verdict_from_text(text, rubric)
    finish = choice.get("finish_reason")
    changes: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }
    meta = dict(verdict.meta)
    if finish not in (None, "stop"):
        meta["finish_reason"] = str(finish)
    if dropped:  # the verdict stands; the figure could never be stored or summed
        meta["usage_dropped"] = "; ".join(dropped)
    served = data.get("model")
    if isinstance(served, str) and served:  # the model the server says answered (drift watch)
        meta["served_model"] = served[:200]
    if meta != verdict.meta:
        changes["meta"] = meta
    return verdict.but(**changes)


def label_distribution(
    content: Sequence[Mapping[str, Any]] | None, rubric: Rubric
) -> dict[str, float] | None:
    """Probabilities of the rubric's labels at the first generated token that is a label.

    Tokens before it (an answer prefix, markup, whitespace) are passed over. At that position the
    probabilities of all ``top_logprobs`` alternatives that equal a label (after stripping
    whitespace and punctuation, case-insensitive; ``yes``/``no`` for binary ``true``/``false``)
    are summed per label. Returns None when no generated token is a label, so the caller falls
    back to parsing the text. Raises :class:`BadLogprob` when a logprob at that position is
    not one (``nan``, ``+inf``, above 0): no probability can be read from it.
    """
    if not content:
        return None
    lookup = _label_lookup(rubric.labels, rubric.kind == "binary")
    for entry in content:
        if not isinstance(entry, dict):
            return None
        chosen = lookup.get(_norm(entry.get("token")))
        if chosen is None:
            continue
        weights: dict[str, float] = {}
        for alternative in entry.get("top_logprobs") or ():
            if not isinstance(alternative, dict):
                continue
            label = lookup.get(_norm(alternative.get("token")))
            probability = _probability(alternative.get("logprob"), alternative.get("token"))
            if label is not None and probability is not None:
                weights[label] = weights.get(label, 0.0) + probability
        if chosen not in weights:
            probability = _probability(entry.get("logprob"), entry.get("token"))
            weights[chosen] = probability if probability is not None else 1.0
        return weights if sum(weights.values()) > 0 else None
    return None


@functools.lru_cache(maxsize=256)
def _label_lookup(labels: tuple[str, ...], binary: bool) -> dict[str, str]:
    """Normalised token -> label (read-only; cached per scale)."""
    lookup = {label.lower(): label for label in labels}
    if binary:
        for label, synonyms in _SYNONYMS.items():
            if label in lookup:
                for synonym in synonyms:
                    lookup.setdefault(synonym, lookup[label])
    return lookup


def _norm(token: Any) -> str:
    return token.strip(_STRIP).lower() if type(token) is str else ""


def _probability(logprob: Any, token: Any) -> float | None:
    """The probability of a logprob (None when the server sent no number); BadLogprob for a
    number that is no log-probability."""
    if type(logprob) is not float and type(logprob) is not int:
        return None
    if math.isnan(logprob) or logprob > _POSITIVE_LOGPROB:  # +inf included
        raise BadLogprob(f"logprob {logprob} of token {str(token)[:20]!r} is not a log-probability")
    return math.exp(min(float(logprob), 0.0))


def _content_logprobs(choice: Mapping[str, Any]) -> Sequence[Mapping[str, Any]] | None:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return None
    content = logprobs.get("content")
    return content if isinstance(content, list) else None


MAX_TOKEN_COUNT = 2**53
"""The largest token count believed: beyond it a float loses integers, and no call is that big."""


def token_count(usage: Mapping[str, Any], name: str) -> tuple[int, str | None]:
    """The ``usage[name]`` a server reported as a token count, and a note when it is impossible.

    A missing figure is 0. One that is no number, negative, not finite or above
    :data:`MAX_TOKEN_COUNT` (``"prompt_tokens": 1e30``) is counted as 0 and named in the note:
    stored as it is it would overflow the run store's integers and stop every rerun.

    Examples
    --------
    >>> token_count({"prompt_tokens": 12}, "prompt_tokens")
    (12, None)
    >>> token_count({"prompt_tokens": 1e30}, "prompt_tokens")
    (0, 'prompt_tokens 1e+30 is not a possible token count (counted as 0)')
    """
    value = usage.get(name)
    if value is None:
        return 0, None
    try:
        number = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if math.isfinite(number) and 0 <= number <= MAX_TOKEN_COUNT:
        return int(number), None
    return 0, f"{name} {str(value)[:40]} is not a possible token count (counted as 0)"


def snippet(raw: bytes, secrets: Sequence[str]) -> str:
    """The start of a server's body ``raw``, with the judge's secrets masked."""
    return redact_text(raw[: SNIPPET * 4].decode("utf-8", "replace"), secrets)[:SNIPPET]
