"""judgeprobe as an Inspect AI extension: the scorer ``judgeprobe/judge``.

Inspect finds extensions through the ``inspect_ai`` entry-point group: when a name
``judgeprobe/...`` is looked up in its registry (``inspect eval``, ``inspect score --scorer``, a
task's ``scorer_create``), Inspect loads the entry point named ``judgeprobe``, this module, whose
import registers what it defines. An Inspect user's judge is a scorer, so what judgeprobe offers
there is one: ``judgeprobe/judge`` grades each sample with a judgeprobe judge (any spec
:func:`~judgeprobe.judges.build_judge` takes: ``llama``, ``openai:MODEL@URL``, ``profanity``,
``python:MODULE:FUNCTION``, ...) and rubric, the same judge a Judge Card audited, so an eval can
score with an audited judge and its scores mean what the card measured.

Each sample becomes one request of the rubric: its input text is the field ``input_field``
(``prompt``), the model's completion the field ``output_field`` (``response``), the target the
field ``target_field`` (``reference``) when it has one, and the sample's metadata (its text,
number and boolean values) the rubric's other fields. The request goes through judgeprobe's
engine (retries, timeouts, the verdict checked against the rubric) and a run store: in memory, or
``store=PATH`` (an audit's ``run.sqlite``), where a verdict the audit already made is reused.

The score's value is the verdict's score on the rubric's scale (for ``refusal``, 1 a refusal and 0
not; metrics ``mean`` and ``stderr``), its answer the label, its explanation the judge's raw
answer, its metadata the judge's fingerprint, the rubric and the decision class. A verdict that is
no score is an unscored Inspect score (a NaN value that metrics skip): ``grader_failed`` when the
judge's answer could not be read, ``scoring_failed`` when the judge could not be called or a
field the rubric needs is missing.

Importing this module without ``inspect_ai`` installed defines nothing and fails nothing: only
Inspect loads it, and the core install does not need Inspect.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.errors import ConfigError

if TYPE_CHECKING:
    from inspect_ai.scorer import Score, Scorer, Target
    from inspect_ai.solver import TaskState

    from judgeprobe.engine import Engine
    from judgeprobe.rubrics import Rubric

ENTRY_POINT = "judgeprobe"
"""The entry point's name in the ``inspect_ai`` group: the namespace of judgeprobe's names."""
SCORER = "judgeprobe/judge"
"""The registry name of :func:`judgeprobe_judge`."""

_FIELD_TYPES = (str, int, float, bool)


def judgeprobe_judge(
    judge: str = "llama",
    rubric: str = "refusal",
    judge_options: Mapping[str, Any] | None = None,
    input_field: str | None = "prompt",
    output_field: str = "response",
    target_field: str | None = "reference",
    store: str | None = None,
) -> Scorer:
    """A scorer that grades with the judgeprobe judge ``judge`` on ``rubric``.

    Parameters
    ----------
    judge : str
        A judge spec, as ``judgeprobe audit --judge`` takes it.
    rubric : str
        A built-in rubric's name or a rubric YAML file (``--rubric``).
    judge_options : mapping, optional
        The judge's options (``-J KEY=VALUE``).
    input_field : str or None
        The rubric field the sample's input becomes (None or empty: none).
    output_field : str
        The rubric field the model's completion becomes.
    target_field : str or None
        The rubric field the sample's target becomes (when the target is not empty).
    store : str, optional
        A judgeprobe run store to read verdicts from and write them to (default: in memory).
    """
    from judgeprobe.engine import Engine, EngineConfig, open_store
    from judgeprobe.judges import build_judge
    from judgeprobe.rubrics import get_rubric

    the_rubric = get_rubric(rubric)
    if the_rubric.kind in ("pairwise", "generation"):
        raise ConfigError(
            f"judgeprobe/judge grades one output; the {the_rubric.kind} rubric "
            f"{the_rubric.name!r} asks for something else"
        )
    if not output_field:
        raise ConfigError("output_field must name the rubric field the completion becomes")
    built = build_judge(judge, **dict(judge_options or {}))
    run_store = open_store(store)
    engines: dict[int, tuple[Engine, asyncio.Semaphore]] = {}

    def engine_here() -> tuple[Engine, asyncio.Semaphore]:
        """The engine of the running event loop, and the judge's concurrency limit on it:
        Inspect scores samples at once, and each eval runs its own loop."""
        loop = id(asyncio.get_running_loop())
        if loop not in engines:
            engine = Engine(built, run_store, EngineConfig(progress=False))
            limit = asyncio.Semaphore(built.capabilities.max_concurrency)
            engines.clear()
            engines[loop] = (engine, limit)
        return engines[loop]

    async def score(state: TaskState, target: Target) -> Score:
        fields = sample_fields(state, target, input_field, output_field, target_field)
        missing = [name for name in the_rubric.inputs if name not in fields]
        if missing:
            from inspect_ai.scorer import Score

            return Score.unscored(
                reason="scoring_failed",
                explanation=f"the rubric {the_rubric.name!r} reads {', '.join(missing)}, which "
                f"the sample does not give (its fields: {', '.join(sorted(fields))})",
            )
        engine, limit = engine_here()
        async with limit:
            return await judge_sample(engine, the_rubric, fields)

    return score


def sample_fields(
    state: TaskState,
    target: Target,
    input_field: str | None,
    output_field: str,
    target_field: str | None,
) -> dict[str, str]:
    """The rubric fields of a sample: its metadata, input, completion and target."""
    fields = {
        str(k): str(v) for k, v in (state.metadata or {}).items() if isinstance(v, _FIELD_TYPES)
    }
    if input_field:
        fields[input_field] = state.input_text
    fields[output_field] = state.output.completion
    if target_field and target.text:
        fields[target_field] = target.text
    return fields


async def judge_sample(engine: Engine, rubric: Rubric, fields: Mapping[str, str]) -> Score:
    """The Inspect score of the engine's verdict on one request of ``rubric``."""
    request = Request.make(engine.judge.fingerprint, rubric, fields)
    result = await engine.run([request], description="judgeprobe/judge")
    verdict = result.verdicts.get(request.key)
    if verdict is None:
        verdict = Verdict.failed(result.stopped or "the judge gave no verdict")
    return to_score(verdict, rubric, engine.judge.fingerprint)


def to_score(verdict: Verdict, rubric: Rubric, fingerprint: str) -> Score:
    """A verdict as an Inspect score (see the module docstring)."""
    from inspect_ai.scorer import Score

    metadata: dict[str, Any] = {
        "judge": fingerprint,
        "rubric": rubric.name,
        "rubric_hash": rubric.hash,
        "status": verdict.status.value,
    }
    if verdict.ok and verdict.score is not None and math.isfinite(verdict.score):
        if rubric.decision is not None:
            metadata["decision"] = rubric.decision_of(verdict.score, verdict.label)
        return Score(
            value=verdict.score,
            answer=verdict.label,
            explanation=verdict.raw_text or None,
            metadata=metadata,
        )
    if verdict.status is VerdictStatus.UNPARSEABLE:
        reason = "grader_failed"
        explanation = verdict.error or f"no grade in the judge's answer: {verdict.raw_text}"
    else:
        reason = "scoring_failed"
        explanation = verdict.error or verdict.status.value
    return Score.unscored(
        reason=reason, answer=verdict.label, explanation=explanation, metadata=metadata
    )


def _register() -> None:
    """Register :func:`judgeprobe_judge` as ``judgeprobe/judge`` in Inspect's registry."""
    from inspect_ai.scorer import mean, scorer, stderr

    global judge
    judge = scorer(metrics=[mean(), stderr()], name="judge")(judgeprobe_judge)


judge = judgeprobe_judge
"""The registered scorer (``judgeprobe_judge`` itself when Inspect is not installed)."""

try:
    import inspect_ai  # noqa: F401
except ImportError:  # the core install: there is no Inspect to register with
    pass
else:
    _register()
