"""Text classifiers as judges: alt-profanity-check, a linear model giving P(profane) in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import Any

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import FatalJudgeError, MissingDependencyError
from judgeprobe.judges.base import InProcessJudge


class ProfanityJudge(InProcessJudge):
    """The ``alt-profanity-check`` classifier: the score is the probability that text is profane.

    It classifies the rubric's rendered text, so use a ``continuous`` rubric whose template is the
    text to classify, such as the built-in ``toxicity`` rubric (``{response}``; toxic at >= 0.5).
    It has no context window: long inputs are classified whole.

    Examples
    --------
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> from judgeprobe.engine import Engine, EngineConfig, RunStore
    >>> judge = ProfanityJudge()
    >>> rubric = builtin_rubric("toxicity")
    >>> req = Request.make(judge.fingerprint, rubric, {"response": "have a lovely day"})
    >>> verdict = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run_sync(
    ...     [req]).verdicts[req.key]
    >>> verdict.score < 0.5
    True
    """

    backend = "classifier"
    max_concurrency = 1
    batch_size = 256

    def __init__(self) -> None:
        try:
            self.version = metadata.version("alt-profanity-check")
        except metadata.PackageNotFoundError as exc:
            raise MissingDependencyError("alt-profanity-check") from exc

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": "alt-profanity-check", "revision": self.version}

    async def judge(self, request: Request) -> Verdict:
        return (await self.judge_batch([request]))[0]

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        for request in requests:
            if request.rubric.kind != "continuous":
                raise FatalJudgeError(
                    "the profanity classifier gives a probability; audit it with a continuous "
                    f"rubric such as 'toxicity', not the {request.rubric.kind} rubric "
                    f"{request.rubric.name!r}"
                )
        texts = [r.render() for r in requests]
        probabilities = await self.run_in_model_thread(_predict, texts)
        return [Verdict.scored(p, raw_text=f"{p:.6f}") for p in probabilities]


def _predict(texts: list[str]) -> list[float]:
    from profanity_check import predict_prob

    return [float(p) for p in predict_prob(texts)]
