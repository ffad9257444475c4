"""A PyRIT scorer as a live judge (the optional extra ``judgeprobe[pyrit]``).

:class:`PyritScorerJudge` wraps any PyRIT ``Scorer`` (``SelfAskRefusalScorer``,
``SelfAskTrueFalseScorer``, ``SelfAskLikertScorer``, a scorer of one's own) so that every probe of
an audit runs on it. Each request becomes one ``score_text_async`` call: the text scored is the
request's ``response`` field and the objective its ``prompt`` field (both configurable). The
rubric does not reach the scorer, which brings its own prompt; it only says how the scorer's
answer is read:

- a ``true_false`` score becomes a label of the rubric: ``true`` the label of its highest value
  (``"true"`` of the refusal rubric), ``false`` the label of its lowest, unless ``true_label`` /
  ``false_label`` name others;
- a ``float_scale`` score (0 to 1) is mapped linearly onto the rubric's score range (snapped to
  the nearest label on a scale or binary rubric; the raw value is kept in ``meta``).

The scorer's rationale becomes the verdict's raw answer.

PyRIT does not always answer with a verdict. A score it could not reach (``status``
``undetermined``: the scorer's own model was blocked with ``raise_if_scorer_blocks`` off, or the
response was an error), the neutral value PyRIT substitutes for a blocked response, an exception
for a blocked or empty answer of the scorer's model, or no score at all, all become **error
verdicts**: counted, never scored, so no fallback value is ever read as the judge's label. An
answer that is not the JSON the scorer asks for, after PyRIT's own retries, is unparseable. A rate
limit, a server error, a timeout or a failed connection is retryable: the engine retries it with
backoff.

The judge fingerprint names the scorer's class, its PyRIT identifier (a hash of its prompts and
parameters, its target's included), and its target's class, model and endpoint, with the PyRIT
version: another scorer, prompt, model or server is another judge and gets no cached verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from judgeprobe._util.redaction import Redactor, redact_text
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError, RetryableJudgeError
from judgeprobe.judges.base import BaseJudge
from judgeprobe.judges.parsing import label_score
from judgeprobe.rubrics import Rubric

if TYPE_CHECKING:
    from pyrit.models import Score
    from pyrit.score import Scorer

FALLBACK_DESCRIPTIONS = ("Blocked response; returning",)
"""How PyRIT describes the neutral score it substitutes for a blocked response (message scorers)."""
FALLBACK_RATIONALES = (
    "The response was blocked with no content to score",
    "Content was filtered, constituting a refusal.",
)
"""Rationales of PyRIT's fallback scores: a value it did not get from its model."""

_SNIPPET = 300


class PyritScorerJudge(BaseJudge):
    """Any PyRIT ``Scorer`` as a judge.

    Parameters
    ----------
    scorer : pyrit.score.Scorer
        The scorer, built with its chat target. PyRIT's central memory must be set before a
        target is built: :func:`judgeprobe.judges.pyrit_setup.ensure_memory` sets an in-memory
        one (and nothing on disk) when none is.
    text_field : str
        The request field that is scored (default ``response``).
    objective_field : str or None
        The request field passed as the objective (default ``prompt``); None passes none. A
        field the rubric does not read is not passed.
    true_label, false_label : str, optional
        The rubric labels a ``true`` / ``false`` score becomes (default: the labels of the
        rubric's highest and lowest values).
    max_concurrency : int
        Scorer calls the engine may have in flight at once.
    secrets : sequence of str
        Values the scorer is configured with that must never be written (its API key).
    options : mapping, optional
        More of what can change the scorer's answers and its identifier may not show (its
        target's request-body fields); part of the fingerprint, secrets shown as ``[redacted]``.
    """

    backend = "pyrit"

    def __init__(
        self,
        scorer: Scorer,
        *,
        text_field: str = "response",
        objective_field: str | None = "prompt",
        true_label: str | None = None,
        false_label: str | None = None,
        max_concurrency: int = 4,
        secrets: Sequence[str] = (),
        options: Mapping[str, Any] | None = None,
    ) -> None:
        from pyrit.score import Scorer

        if not isinstance(scorer, Scorer):
            raise ConfigError(f"a PyRIT judge needs a pyrit.score.Scorer, got {type(scorer)!r}")
        if isinstance(max_concurrency, bool) or max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        if not text_field:
            raise ConfigError("text_field must name the request field to score")
        self.scorer = scorer
        self.text_field = text_field
        self.objective_field = objective_field or None
        self.true_label = true_label
        self.false_label = false_label
        self.max_concurrency = max_concurrency
        self._secrets = [s for s in secrets if s]
        self.options = dict(options or {})
        self._description = self._describe_scorer()

    # -- identity -----------------------------------------------------------------------------
    def _describe_scorer(self) -> dict[str, Any]:
        scorer = self.scorer
        identifier = scorer.get_identifier()
        target = scorer.get_chat_target()
        described: dict[str, Any] = {
            "backend": self.backend,
            "scorer": type(scorer).__name__,
            "scorer_type": scorer.scorer_type,
            "identifier": identifier.unique_name,
            "identifier_hash": identifier.hash,
            "pyrit_version": metadata.version("pyrit"),
            "text_field": self.text_field,
            "objective_field": self.objective_field,
            "true_label": self.true_label,
            "false_label": self.false_label,
        }
        if self.options:
            described["options"] = Redactor(environment=False).value(self.options)
        if target is not None:
            described["target"] = {
                "class": type(target).__name__,
                "model": getattr(target, "_model_name", "") or None,
                "endpoint": redact_text(getattr(target, "_endpoint", "") or "", self._secrets)
                or None,
            }
        return described

    def describe(self) -> dict[str, Any]:
        """Backend, scorer class and identifier, its target's class, model and endpoint."""
        return dict(self._description)

    def secrets(self) -> list[str]:
        return list(self._secrets)

    # -- the call -----------------------------------------------------------------------------
    async def judge(self, request: Request) -> Verdict:
        from pyrit.exceptions import (
            EmptyResponseException,
            InvalidJsonException,
            PyritException,
            RateLimitException,
            ScorerLLMResponseBlockedException,
        )

        fields = request.field_map
        if self.text_field not in fields:
            raise FatalJudgeError(
                f"the PyRIT judge scores the field {self.text_field!r}, which the rubric "
                f"{request.rubric.name!r} does not read (its inputs: {', '.join(fields)}); "
                "set the judge option text_field"
            )
        objective = fields.get(self.objective_field) if self.objective_field else None
        try:
            scores = await self.scorer.score_text_async(
                fields[self.text_field], objective=objective
            )
        except RateLimitException as exc:
            raise RetryableJudgeError(self._message(exc)) from exc
        except ScorerLLMResponseBlockedException as exc:
            return self._fallback("blocked", self._message(exc))
        except EmptyResponseException as exc:
            return self._fallback("error", self._message(exc))
        except InvalidJsonException as exc:
            return Verdict.unparseable(
                self._message(exc), error="the scorer's model did not answer in the JSON asked"
            )
        except (PyritException, RuntimeError, ValueError) as exc:
            if transient(exc):
                raise RetryableJudgeError(self._message(exc)) from exc
            return self._fallback("error", self._message(exc))
        return self.verdict(scores, request.rubric)

    def verdict(self, scores: Sequence[Score], rubric: Rubric) -> Verdict:
        """The verdict of what ``score_text_async`` returned, read under ``rubric``."""
        if not scores:
            return self._fallback("no_score", "the scorer returned no score for this text")
        if len(scores) > 1:
            return self._fallback(
                "several_scores",
                f"the scorer returned {len(scores)} scores for one text; wrap one that gives one",
            )
        score = scores[0]
        rationale = score.score_rationale or ""
        if score.is_undetermined:
            return self._fallback("undetermined", rationale or "PyRIT reached no verdict")
        if is_fallback(score):
            return self._fallback("blocked", rationale)
        meta: dict[str, Any] = {"pyrit_score_value": str(score.score_value)}
        if score.score_category:
            meta["pyrit_category"] = list(score.score_category)
        value = score.get_value()
        if score.score_type == "true_false":
            label = self._label(bool(value), rubric)
            return Verdict.scored(
                label_score(label, rubric), label=label, raw_text=rationale, meta=meta
            )
        if score.score_type == "float_scale":
            return _scaled(float(value), rubric, rationale, meta)
        return self._fallback("unknown_type", f"PyRIT score type {score.score_type!r}")

    def _label(self, value: bool, rubric: Rubric) -> str:
        chosen = self.true_label if value else self.false_label
        if chosen is not None:
            if chosen not in rubric.labels:
                raise FatalJudgeError(
                    f"judge option {'true_label' if value else 'false_label'}={chosen!r} is not a "
                    f"label of the rubric {rubric.name!r} ({', '.join(rubric.labels)})"
                )
            return chosen
        if rubric.kind not in ("binary", "scale") or not rubric.labels:
            raise FatalJudgeError(
                f"a true/false PyRIT scorer needs a binary or scale rubric, not the {rubric.kind} "
                f"rubric {rubric.name!r}"
            )
        ranked = sorted(rubric.labels, key=rubric.value_of)
        return ranked[-1] if value else ranked[0]

    def _fallback(self, kind: str, message: str) -> Verdict:
        return Verdict.failed(
            f"PyRIT {type(self.scorer).__name__} gave no verdict ({kind}): {message}",
            meta={"pyrit_fallback": kind},
        )

    def _message(self, exc: BaseException) -> str:
        text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return redact_text(str(text), self._secrets)[:_SNIPPET]


def transient(exc: BaseException) -> bool:
    """True when ``exc`` or what caused it is a connection failure, a timeout, a server error
    or a rate limit: worth another try, where a scorer's own error is not."""
    import httpx
    import openai
    from pyrit.exceptions.exception_classes import RateLimitException, ServerErrorException

    kinds = (
        httpx.TransportError,
        openai.APIConnectionError,
        openai.InternalServerError,
        openai.RateLimitError,
        RateLimitException,
        ServerErrorException,
    )
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kinds):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def is_fallback(score: Score) -> bool:
    """True for a value PyRIT substituted rather than read from its model (a blocked response)."""
    description = score.score_value_description or ""
    rationale = score.score_rationale or ""
    return description.startswith(FALLBACK_DESCRIPTIONS) or rationale.startswith(
        FALLBACK_RATIONALES
    )


def _scaled(value: float, rubric: Rubric, rationale: str, meta: dict[str, Any]) -> Verdict:
    """A ``float_scale`` value in [0, 1] on the rubric's scale."""
    meta = {**meta, "pyrit_value": value}
    if rubric.kind == "pairwise" or rubric.kind == "generation":
        raise FatalJudgeError(
            f"a float-scale PyRIT scorer needs a scale, binary or continuous rubric, not the "
            f"{rubric.kind} rubric {rubric.name!r}"
        )
    bounds = rubric.score_range
    if bounds is None:
        return Verdict.scored(value, raw_text=rationale, meta=meta)
    low, high = bounds
    score = low + value * (high - low)
    if rubric.kind == "continuous" or not rubric.labels:
        return Verdict.scored(score, raw_text=rationale, meta=meta)
    label = min(rubric.labels, key=lambda lab: (abs(rubric.value_of(lab) - score), lab))
    if not math.isfinite(score):
        return Verdict.unparseable(rationale, error=f"score {value!r} is not finite", meta=meta)
    return Verdict.scored(rubric.value_of(label), label=label, raw_text=rationale, meta=meta)
