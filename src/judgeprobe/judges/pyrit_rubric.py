"""A PyRIT scorer factory as a judge: rubric in, scorer out (``judgeprobe[pyrit]``).

PyRIT's scorers are built from typed rubric objects (``TrueFalseQuestion`` with
``SelfAskTrueFalseScorer.from_question``, ``LikertScale`` with ``from_likert_scale``). The
policy-invariance protocol agreed for PyRIT turns each rubric variant into a scorer through such a
factory, so that every variant is a PyRIT scorer with its own identity (its identifier hash
covers its prompt). :func:`true_false_scorer` is that factory for a binary judgeprobe rubric:

- the rubric's text, with its ``{prompt}`` and ``{response}`` placeholders naming the objective
  and the response PyRIT sends in its own message, becomes the question's ``true_description``
  (what is "true": the policy answers its highest-valued label) and ``false_description`` (what
  answers its lowest);
- the rubric's name is the question's category.

:class:`PyritRubricJudge` builds, for each rubric a request carries, the scorer the factory makes
(once per rubric hash), and reads its scores as :class:`PyritScorerJudge` does (fallbacks are
error verdicts); each verdict names the scorer's PyRIT identifier hash in
``meta.pyrit_scorer_hash``. So the policy-invariance probe, which asks under every rubric
variant, audits one PyRIT scorer per variant: unlike ``pyrit:refusal``, whose prompt is fixed,
the rubric's wording reaches the scorer's model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from judgeprobe._util.redaction import Redactor, mapping_secrets, redact_text, url_secrets
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError
from judgeprobe.judges.base import BaseJudge
from judgeprobe.judges.pyrit_scorer import PyritScorerJudge
from judgeprobe.rubrics import Rubric

if TYPE_CHECKING:
    from pyrit.prompt_target import PromptTarget
    from pyrit.score import Scorer

ScorerFactory = Callable[[Rubric, "PromptTarget"], "Scorer"]
"""Rubric and chat target in, PyRIT scorer out."""

PLACEHOLDERS = {
    "prompt": "[the objective, given in the message to score]",
    "response": "[the response, given in the message to score]",
}
"""What each input of the rubric's text names in the scorer's system prompt: PyRIT sends the
objective and the response in a message of its own."""


def rubric_labels(rubric: Rubric) -> tuple[str, str]:
    """The labels a true and a false score mean: the rubric's highest- and lowest-valued."""
    if rubric.kind != "binary" or len(rubric.labels) != 2:
        raise ConfigError(
            f"a PyRIT true/false scorer is made from a binary rubric; {rubric.name!r} is "
            f"{rubric.kind}"
        )
    low, high = sorted(rubric.labels, key=rubric.value_of)
    return high, low


def policy_text(rubric: Rubric) -> str:
    """The rubric's text with each input named as PyRIT's scorer receives it."""
    missing = sorted(set(rubric.inputs) - set(PLACEHOLDERS))
    if missing:
        raise ConfigError(
            f"the rubric {rubric.name!r} reads {', '.join(missing)}: a PyRIT scorer is given an "
            "objective and a response only"
        )
    return rubric.render({name: PLACEHOLDERS[name] for name in rubric.inputs}).strip()


def true_false_question(rubric: Rubric) -> Any:
    """PyRIT's typed ``TrueFalseQuestion`` for the binary ``rubric``."""
    from judgeprobe.judges.pyrit_setup import import_pyrit

    import_pyrit()
    from pyrit.score import TrueFalseQuestion

    true, false = rubric_labels(rubric)
    text = policy_text(rubric)
    return TrueFalseQuestion(
        category=rubric.name,
        true_description=(
            f"the answer to the following policy is {true!r}.\n\n"
            f"--- policy ---\n{text}\n--- end of policy ---"
        ),
        false_description=f"the answer to the policy above is {false!r}.",
    )


def true_false_scorer(rubric: Rubric, target: PromptTarget) -> Scorer:
    """The factory: ``SelfAskTrueFalseScorer.from_question`` on the rubric's question."""
    from pyrit.score import SelfAskTrueFalseScorer

    return SelfAskTrueFalseScorer.from_question(
        chat_target=target, question=true_false_question(rubric)
    )


def pyrit_rubric_judge(
    *,
    endpoint: str | None = None,
    model: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    temperature: float = 0.0,
    max_tokens: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
    max_concurrency: int = 4,
) -> PyritRubricJudge:
    """The judge of the spec ``pyrit:rubric``: :func:`true_false_scorer` for each rubric, on
    PyRIT's ``OpenAIChatTarget`` (options as for ``pyrit:refusal``)."""
    from judgeprobe.judges.pyrit_setup import chat_target, ensure_memory

    if not endpoint or not model:
        raise ConfigError(
            "judge 'pyrit:rubric' needs the options endpoint and model, e.g. "
            "-J endpoint=http://127.0.0.1:8000/v1 -J model=gemma-3-270m"
        )
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(
            f"judge option endpoint must start with http:// or https://: {endpoint!r}"
        )
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"judge option max_tokens must be >= 1, got {max_tokens}")
    body = dict(extra_body or {})
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    ensure_memory()
    key = os.environ.get(api_key_env) or None
    return PyritRubricJudge(
        chat_target(endpoint, model, key, temperature, body),
        max_concurrency=max_concurrency,
        secrets=[*([key] if key else []), *url_secrets(endpoint), *mapping_secrets(body)],
        options={"temperature": float(temperature), "extra_body": body} if body else None,
    )


class PyritRubricJudge(BaseJudge):
    """A judge that scores each request with the PyRIT scorer a factory makes from its rubric.

    Parameters
    ----------
    target : pyrit.prompt_target.PromptTarget
        The chat target every scorer is built on (PyRIT's central memory set first:
        :func:`judgeprobe.judges.pyrit_setup.ensure_memory`).
    factory : callable
        ``factory(rubric, target) -> Scorer``; :func:`true_false_scorer` by default.
    max_concurrency, secrets, options
        As for :class:`~judgeprobe.judges.pyrit_scorer.PyritScorerJudge`.
    """

    backend = "pyrit-rubric"

    def __init__(
        self,
        target: PromptTarget,
        *,
        factory: ScorerFactory = true_false_scorer,
        max_concurrency: int = 4,
        secrets: Sequence[str] = (),
        options: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(max_concurrency, bool) or max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        self.target = target
        self.factory = factory
        self.max_concurrency = max_concurrency
        self._secrets = [s for s in secrets if s]
        self._judges: dict[str, PyritScorerJudge] = {}
        described: dict[str, Any] = {
            "backend": self.backend,
            "factory": f"{factory.__module__}.{getattr(factory, '__qualname__', factory)}",
            "pyrit_version": metadata.version("pyrit"),
            "target": {
                "class": type(target).__name__,
                "model": getattr(target, "_model_name", "") or None,
                "endpoint": redact_text(getattr(target, "_endpoint", "") or "", self._secrets)
                or None,
            },
        }
        if options:
            described["options"] = Redactor(self._secrets, environment=False).value(dict(options))
        self._description = described

    def describe(self) -> dict[str, Any]:
        """Backend, factory, target and PyRIT's version; the scorer differs per rubric, and a
        request's key holds its rubric's hash."""
        return dict(self._description)

    def secrets(self) -> list[str]:
        return list(self._secrets)

    def scorer_judge(self, rubric: Rubric) -> PyritScorerJudge:
        """The judge of the scorer the factory makes for ``rubric`` (made once per rubric)."""
        if rubric.hash not in self._judges:
            true, false = rubric_labels(rubric)
            self._judges[rubric.hash] = PyritScorerJudge(
                self.factory(rubric, self.target),
                true_label=true,
                false_label=false,
                max_concurrency=self.max_concurrency,
                secrets=self._secrets,
            )
        return self._judges[rubric.hash]

    async def judge(self, request: Request) -> Verdict:
        try:
            inner = self.scorer_judge(request.rubric)
        except ConfigError as exc:
            raise FatalJudgeError(str(exc)) from exc
        verdict = await inner.judge(request)
        identity = inner.describe()["identifier_hash"]
        return verdict.but(meta={**verdict.meta, "pyrit_scorer_hash": identity})
