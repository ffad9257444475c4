"""Setting PyRIT up for a judge: importing it, its memory, and scorers built from a judge spec.

PyRIT creates folders in the user's home when its path module is first imported
(``~/.local/share/dbdata`` with a ``logs.txt``, and ``~/.local/share/.pyrit_cache``), and a
scorer or target cannot be built before its central memory is set. :func:`import_pyrit` imports
it with that data folder pointed at a temporary one of this process (removed at exit), unless the
caller imported PyRIT first and so chose for themselves; :func:`ensure_memory` sets an in-memory
SQLite database as its central memory, once, unless one is set already. Neither reads a ``.env``
file or runs PyRIT's default initializers.

The spec ``pyrit:SCORER`` (see :func:`pyrit_judge`) builds one of PyRIT's self-ask scorers on an
``OpenAIChatTarget`` from judge options, for the command line and configs; in Python,
:class:`~judgeprobe.judges.pyrit_scorer.PyritScorerJudge` takes any scorer instance.
"""

from __future__ import annotations

import atexit
import enum
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgeprobe._util.redaction import mapping_secrets, url_secrets
from judgeprobe.errors import ConfigError, MissingDependencyError
from judgeprobe.judges.pyrit_scorer import PyritScorerJudge

if TYPE_CHECKING:
    from pyrit.prompt_target import PromptTarget
    from pyrit.score import Scorer

SCORERS = {
    "refusal": "SelfAskRefusalScorer",
    "true_false": "SelfAskTrueFalseScorer",
    "likert": "SelfAskLikertScorer",
}
"""Short name -> the PyRIT scorer class the spec ``pyrit:NAME`` builds."""

_LOCK = threading.Lock()
_DATA_DIR: list[str] = []


def import_pyrit() -> None:
    """Import PyRIT's path module with its data folder in a temporary folder of this process.

    Does nothing when PyRIT's paths are imported already (by the caller, who then chose where
    PyRIT writes). Raises :class:`MissingDependencyError` when PyRIT is not installed.
    """
    with _LOCK:
        if "pyrit.common.path" in sys.modules:
            return
        try:
            import pyrit
        except ImportError as exc:
            raise MissingDependencyError("pyrit", extra="pyrit") from exc
        folder = tempfile.mkdtemp(prefix="judgeprobe-pyrit-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _DATA_DIR.append(folder)
        saved = os.environ.get("XDG_DATA_HOME")
        os.environ["XDG_DATA_HOME"] = folder
        try:
            import pyrit.common.path  # noqa: F401
        finally:
            if saved is None:
                del os.environ["XDG_DATA_HOME"]
            else:
                os.environ["XDG_DATA_HOME"] = saved


def data_dir() -> Path | None:
    """The temporary folder PyRIT writes its data and log to; None where PyRIT chose its own."""
    return Path(_DATA_DIR[0]) if _DATA_DIR else None


def ensure_memory() -> None:
    """Give PyRIT an in-memory central memory, once; keep one that is set already."""
    import_pyrit()
    from pyrit.memory import CentralMemory, SQLiteMemory

    with _LOCK:
        try:
            CentralMemory.get_memory_instance()
        except ValueError:
            CentralMemory.set_memory_instance(SQLiteMemory(db_path=":memory:", silent=True))


def pyrit_judge(
    scorer: str,
    *,
    endpoint: str | None = None,
    model: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    temperature: float = 0.0,
    max_tokens: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
    max_concurrency: int = 4,
    mode: str | None = None,
    question: str | None = None,
    scale: str | None = None,
    text_field: str = "response",
    objective_field: str | None = "prompt",
    true_label: str | None = None,
    false_label: str | None = None,
) -> PyritScorerJudge:
    """The judge of the spec ``pyrit:SCORER``: a PyRIT self-ask scorer on an OpenAI-compatible
    chat endpoint.

    ``SCORER`` is ``refusal``, ``true_false`` or ``likert`` (or the class name,
    ``SelfAskRefusalScorer``...). ``endpoint`` is the API root (``http://127.0.0.1:8000/v1``),
    ``model`` the served model's name; the key is read from ``api_key_env`` (none sent when it
    is unset). ``max_tokens`` caps each answer (sent as the body's ``max_tokens``, which
    llama.cpp and vLLM servers read) and ``extra_body`` adds fields to each request body (e.g.
    ``response_format`` with a JSON schema, which llama.cpp's server turns into a grammar).
    ``mode`` picks the refusal prompt (a ``RefusalScorerPaths`` name such as
    ``OBJECTIVE_STRICT``), ``question`` the true/false question (a ``TrueFalseQuestionPaths``
    name such as ``TASK_ACHIEVED``, or a YAML path) and ``scale`` the Likert scale (a
    ``LikertScalePaths`` name such as ``HATE_SPEECH_SCALE``, or a YAML path; required for
    ``likert``). The other options go to :class:`PyritScorerJudge`.
    """
    kind = _scorer_kind(scorer)
    given = {"mode": mode, "question": question, "scale": scale}
    allowed = {"refusal": "mode", "true_false": "question", "likert": "scale"}[kind]
    stray = sorted(name for name, value in given.items() if value is not None and name != allowed)
    if stray:
        raise ConfigError(
            f"judge 'pyrit:{scorer}' takes no option {', '.join(map(repr, stray))}; "
            f"its scorer option is {allowed!r}"
        )
    if endpoint is None or model is None:
        raise ConfigError(
            f"judge 'pyrit:{scorer}' needs the options endpoint and model, e.g. "
            "-J endpoint=http://127.0.0.1:8000/v1 -J model=gemma-3-270m"
        )
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(
            f"judge option endpoint must start with http:// or https://: {endpoint!r}"
        )
    if not model:
        raise ConfigError("judge option model must name the model the endpoint serves")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"judge option max_tokens must be >= 1, got {max_tokens}")
    body = dict(extra_body or {})
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    ensure_memory()
    key = os.environ.get(api_key_env) or None
    target = chat_target(endpoint, model, key, temperature, body)
    built = _scorer(kind, target, mode=mode, question=question, scale=scale)
    return PyritScorerJudge(
        built,
        text_field=text_field,
        objective_field=objective_field,
        true_label=true_label,
        false_label=false_label,
        max_concurrency=max_concurrency,
        secrets=[*([key] if key else []), *url_secrets(endpoint), *mapping_secrets(body)],
        options={"temperature": float(temperature), "extra_body": body} if body else None,
    )


def _scorer_kind(name: str) -> str:
    lowered = name.strip().lower()
    for kind, cls in SCORERS.items():
        if lowered in (kind, cls.lower()):
            return kind
    raise ConfigError(
        f"unknown PyRIT scorer {name!r}; use pyrit:refusal, pyrit:true_false or pyrit:likert "
        "(or their class names), or wrap any Scorer in Python with PyritScorerJudge"
    )


def chat_target(
    endpoint: str, model: str, key: str | None, temperature: float, body: Mapping[str, Any]
) -> PromptTarget:
    """PyRIT's ``OpenAIChatTarget`` on ``endpoint`` serving ``model`` (memory set first)."""
    from pyrit.prompt_target import OpenAIChatTarget

    # A local server needs no key, but the target insists on one: any placeholder will do.
    return OpenAIChatTarget(
        endpoint=endpoint.rstrip("/"),
        model_name=model,
        api_key=key or "no-key",
        temperature=temperature,
        extra_body_parameters=dict(body) or None,
    )


def _scorer(
    kind: str, target: PromptTarget, *, mode: str | None, question: str | None, scale: str | None
) -> Scorer:
    from pyrit.models import SeedPrompt
    from pyrit.score import (
        LikertScalePaths,
        RefusalScorerPaths,
        SelfAskLikertScorer,
        SelfAskRefusalScorer,
        SelfAskTrueFalseScorer,
        TrueFalseQuestion,
        TrueFalseQuestionPaths,
    )
    from pyrit.score.float_scale.likert_scale import LikertScale

    if kind == "refusal":
        if mode is None:
            return SelfAskRefusalScorer(chat_target=target)
        path = _preset(RefusalScorerPaths, mode, "mode").value
        return SelfAskRefusalScorer(
            chat_target=target, system_prompt=SeedPrompt.from_yaml_file(path)
        )
    if kind == "true_false":
        if question is None:
            return SelfAskTrueFalseScorer(chat_target=target)
        source = _yaml_or_preset(TrueFalseQuestionPaths, question, "question")
        return SelfAskTrueFalseScorer.from_question(
            chat_target=target, question=TrueFalseQuestion.from_yaml(source)
        )
    if scale is None:
        raise ConfigError(
            "judge 'pyrit:likert' needs -J scale=NAME, a LikertScalePaths name such as "
            "HATE_SPEECH_SCALE, or a YAML path"
        )
    if Path(scale).suffix.lower() in (".yaml", ".yml"):
        likert = LikertScale.from_yaml(Path(_existing(scale, "scale")))
    else:
        likert = _preset(LikertScalePaths, scale, "scale").load()
    return SelfAskLikertScorer.from_likert_scale(chat_target=target, likert_scale=likert)


def _preset(options: type[enum.Enum], name: str, option: str) -> Any:
    wanted = name.strip().upper()
    for member in options:
        if member.name == wanted:
            return member
    raise ConfigError(
        f"judge option {option}={name!r} is not one of PyRIT's {', '.join(m.name for m in options)}"
    )


def _yaml_or_preset(options: type[enum.Enum], value: str, option: str) -> Path:
    if Path(value).suffix.lower() in (".yaml", ".yml"):
        return Path(_existing(value, option))
    return Path(_preset(options, value, option).value)


def _existing(path: str, option: str) -> str:
    if not Path(path).is_file():
        raise ConfigError(f"judge option {option}={path!r}: no such file")
    return path
