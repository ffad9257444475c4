"""An Inspect AI scorer as a live judge (the optional extra ``judgeprobe[inspect]``).

An Inspect user's judge is a scorer: ``model_graded_qa``, ``model_graded_fact``, or an ``@scorer``
of their own. :class:`InspectScorerJudge` puts each request of a probe to the scorer itself, so
every probe (concatenation, bias, adversarial: those that need new inputs) can audit it, with
Inspect's own model providers making the grader's calls. Each request becomes one synthetic
sample, scored once:

- the sample's input is the request's ``prompt`` field, the model's output its ``response``
  field (both configurable), the target its ``reference`` field when the rubric reads one, else
  the judge option ``target`` (for ``model_graded_qa``, the criterion the output is graded on);
  the rubric's other fields are the sample's metadata;
- the score's value is read as an Inspect log's value is (as ``recorded:`` reads one): a number
  or a boolean is the score, Inspect's ``C``/``I``/``P``/``N`` are 1, 0, 0.5 and 0
  (``value_to_float``), any other text is a label of the rubric; a dict value is read at the key
  ``value_key``;
- the verdict keeps the value (``meta.inspect_value``), the answer (``meta.inspect_answer``) and
  the explanation (its raw answer).

A score the scorer could not give is never read as the judge's answer. Inspect marks it unscored
(a NaN value, with a ``reason``): the grader's answer held no grade (``grader_failed``) or the
output was not in the asked format, and the verdict is **unparseable** (final, like any answer the
judge gave that cannot be read); a scorer that could not run (``scoring_failed``), returned no
score, or raised, is an **error** verdict (retried on the next run). A connection failure, a
timeout or a rate limit is retryable: the engine retries it with backoff (Inspect's model layer
also retries rate limits itself, so one engine call can be several grader calls).

The rubric's template does not reach the scorer, which brings its own prompt: a rubric says which
fields a request carries and how the score is read, so rewording it (the policy-invariance probe)
changes nothing the scorer sees.

The judge fingerprint names the scorer's registry name, its arguments (the grader model's name,
base URL and generation settings included; secrets redacted), a hash of the file that defines a
scorer of one's own, the fields, the target and Inspect's version.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from judgeprobe._util.redaction import Redactor, redact_text
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError, RetryableJudgeError
from judgeprobe.judges.base import BaseJudge

if TYPE_CHECKING:
    from inspect_ai.scorer import Score, Scorer

LETTERS = ("C", "I", "P", "N")
"""Inspect's CORRECT, INCORRECT, PARTIAL and NOANSWER values."""
UNPARSEABLE_REASONS = ("grader_failed", "invalid_response_format", "no_response", "refusal")
"""Reasons of an unscored Inspect score that are a final answer nobody can read as a grade; any
other reason (``scoring_failed``: the scorer could not run) is an error, tried again."""
OUTPUT_MODEL = "judgeprobe/response"
"""The model the synthetic sample says wrote its output (the response under judgement)."""

_SNIPPET = 300


class InspectScorerJudge(BaseJudge):
    """An Inspect scorer as a judge.

    Parameters
    ----------
    build : callable
        Makes the scorer (``registry_create("scorer", name, **args)``, or a factory of one's own).
        It is called again for each event loop the engine runs on, so a grader model's client
        never outlives the loop it was made in.
    name : str, optional
        The scorer's name for the fingerprint; by default its registry name
        (``inspect_ai/model_graded_qa``).
    described : mapping
        Everything else that changes the scorer's answers: its arguments, the grader model, the
        hash of the file that defines it; part of the fingerprint, secrets redacted.
    input_field, output_field : str
        The request fields that become the sample's input and the model's output.
    target_field : str or None
        The request field that becomes the sample's target when the rubric reads it.
    target : str
        The target when the rubric has no ``target_field``.
    value_key : str, optional
        The key of a dict-valued score to read.
    max_concurrency : int
        Scorer calls the engine may have in flight at once.
    secrets : sequence of str
        Values the scorer is configured with that must never be written.
    """

    backend = "inspect"

    def __init__(
        self,
        build: Callable[[], Scorer],
        *,
        name: str | None = None,
        described: Mapping[str, Any] | None = None,
        input_field: str = "prompt",
        output_field: str = "response",
        target_field: str | None = "reference",
        target: str = "",
        value_key: str | None = None,
        max_concurrency: int = 4,
        secrets: Sequence[str] = (),
    ) -> None:
        if isinstance(max_concurrency, bool) or max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        if not output_field:
            raise ConfigError("output_field must name the request field the scorer grades")
        self._build = build
        first = build()  # a scorer that cannot be built fails before any call
        self.name = name or registry_name(first)
        self.input_field = input_field
        self.output_field = output_field
        self.target_field = target_field or None
        self.target = target
        self.value_key = value_key
        self.max_concurrency = max_concurrency
        self._secrets = [s for s in secrets if s]
        self._scorers: dict[int, Scorer] = {id(None): first}
        self._description: dict[str, Any] = {
            "backend": self.backend,
            "scorer": self.name,
            **Redactor(self._secrets, environment=False).value(dict(described or {})),
            "inspect_version": metadata.version("inspect_ai"),
            "input_field": input_field,
            "output_field": output_field,
            "target_field": self.target_field,
            "target": target,
            "value_key": value_key,
        }

    def describe(self) -> dict[str, Any]:
        """Backend, scorer name and arguments, fields, target and Inspect's version."""
        return dict(self._description)

    def secrets(self) -> list[str]:
        return list(self._secrets)

    def _scorer(self) -> Scorer:
        """The scorer made for the running event loop (one made earlier is not reused)."""
        loop = id(asyncio.get_running_loop())
        if loop not in self._scorers:
            first = self._scorers.pop(id(None), None)
            self._scorers = {loop: first if first is not None else self._build()}
        return self._scorers[loop]

    # -- the call -----------------------------------------------------------------------------
    async def judge(self, request: Request) -> Verdict:
        from inspect_ai.scorer import Target

        if request.rubric.kind in ("pairwise", "generation"):
            raise FatalJudgeError(
                f"an Inspect scorer grades one output; the {request.rubric.kind} rubric "
                f"{request.rubric.name!r} asks for something else"
            )
        fields = request.field_map
        if self.output_field not in fields:
            raise FatalJudgeError(
                f"the Inspect judge grades the field {self.output_field!r}, which the rubric "
                f"{request.rubric.name!r} does not read (its inputs: {', '.join(fields)}); set "
                "the judge option output_field"
            )
        target = self.target
        if self.target_field is not None and self.target_field in fields:
            target = fields[self.target_field]
        state = self._sample(request, fields, target)
        try:
            score = await self._scorer()(state, Target(target))
        except Exception as exc:
            if transient(exc):
                raise RetryableJudgeError(self._message(exc)) from exc
            return Verdict.failed(
                f"the Inspect scorer {self.name} raised {type(exc).__name__}: {self._message(exc)}",
                meta={"inspect_error": type(exc).__name__},
            )
        return self.verdict(score, request)

    def _sample(self, request: Request, fields: Mapping[str, str], target: str) -> Any:
        from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelName, ModelOutput
        from inspect_ai.scorer import Target
        from inspect_ai.solver import TaskState

        question = fields.get(self.input_field, "") if self.input_field else ""
        answer = fields[self.output_field]
        used = {self.input_field, self.output_field, self.target_field}
        return TaskState(
            model=ModelName(OUTPUT_MODEL),
            sample_id=request.key,
            epoch=request.trial + 1,
            input=question,
            messages=[ChatMessageUser(content=question), ChatMessageAssistant(content=answer)],
            target=Target(target),
            output=ModelOutput.from_content(OUTPUT_MODEL, answer),
            metadata={k: v for k, v in fields.items() if k not in used},
        )

    def verdict(self, score: Score | None, request: Request) -> Verdict:
        """The verdict of what the scorer returned for ``request`` (see the module docstring)."""
        if score is None:
            return Verdict.failed(f"the Inspect scorer {self.name} returned no score")
        explanation = score.explanation or ""
        meta: dict[str, Any] = {"inspect_value": _json_value(score.value)}
        if score.answer is not None:
            meta["inspect_answer"] = score.answer
        if score.reason is not None:
            meta["inspect_reason"] = str(score.reason)
        value: Any = score.value
        if isinstance(value, Mapping):
            if self.value_key is None or self.value_key not in value:
                keys = ", ".join(map(str, value)) or "none"
                return Verdict.unparseable(
                    explanation,
                    error=f"the score is a dict (keys: {keys}); name one with -J value_key=KEY",
                    meta=meta,
                )
            value = value[self.value_key]
        if isinstance(value, float) and math.isnan(value):  # Inspect's unscored sentinel
            reason = str(score.reason or "unscored")
            said = f"the Inspect scorer {self.name} gave no score ({reason})"
            if reason in UNPARSEABLE_REASONS:
                return Verdict.unparseable(explanation, error=said, meta=meta)
            return Verdict.failed(f"{said}: {explanation}"[:_SNIPPET], meta=meta)
        return _read(value, request, explanation, meta)

    def _message(self, exc: BaseException) -> str:
        return redact_text(str(exc) or type(exc).__name__, self._secrets)[:_SNIPPET]


def registry_name(scorer: Scorer) -> str:
    """The name Inspect's registry knows ``scorer`` by (``scorer`` when it has none)."""
    from inspect_ai.util import registry_info

    try:
        return str(registry_info(scorer).name)
    except (ValueError, AttributeError, KeyError):
        return "scorer"


def _read(value: Any, request: Request, explanation: str, meta: dict[str, Any]) -> Verdict:
    """A scalar score value as a verdict, read as ``recorded:`` reads an Inspect log's."""
    from inspect_ai.scorer import value_to_float

    rubric = request.rubric
    if isinstance(value, bool | int | float):
        score = float(value)
    elif isinstance(value, str) and value in LETTERS:
        score = value_to_float()(value)
    elif isinstance(value, str) and value in rubric.values:
        return Verdict.scored(rubric.value_of(value), label=value, raw_text=explanation, meta=meta)
    else:
        return Verdict.unparseable(
            explanation or str(value),
            error=f"the score value {value!r} is neither a number nor a label of the rubric "
            f"{rubric.name!r}",
            meta=meta,
        )
    if not math.isfinite(score):
        return Verdict.unparseable(explanation, error=f"score {score!r} is not finite", meta=meta)
    label = next((k for k, v in rubric.values.items() if v == score), None)
    return Verdict.scored(score, label=label, raw_text=explanation, meta=meta)


def _json_value(value: Any) -> Any:
    """A score value as JSON holds it (an unscored NaN as None)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    return value


def transient(exc: BaseException) -> bool:
    """True when ``exc`` or what caused it is a connection failure, a timeout, a server error
    or a rate limit: worth another try, where a scorer's own error is not."""
    import httpx

    kinds: list[type[BaseException]] = [httpx.TransportError, ConnectionError, TimeoutError]
    try:
        import openai

        kinds += [openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError]
    except ImportError:  # a grader on another provider
        pass
    try:
        import requests

        kinds.append(requests.ConnectionError)
    except ImportError:
        pass
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, tuple(kinds)):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
