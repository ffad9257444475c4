"""Judges by spec string, so configs and the CLI can name one.

=================================  ==========================================================
spec                               judge
=================================  ==========================================================
``llama`` / ``default``            the embedded Gemma 3 270M (local, offline)
``llama:PATH.gguf``                another GGUF model through llama.cpp
``openai:MODEL@BASE_URL``          any OpenAI-compatible chat endpoint (key from the env)
``profanity``                      the alt-profanity-check classifier
``transformers:MODEL_OR_PATH``     a sequence-classification model (reward model, classifier)
``python:MODULE:FUNCTION``         a Python function ``fn(request) -> score | label``
``recorded:PATH``                  verdicts made elsewhere: CSV / JSONL / Parquet rows, an
                                   Inspect eval log, promptfoo results, PyRIT scores
``recorded:FORMAT:PATH``           the same with the format forced (``table``, ``inspect``, ...)
``recorded:dataset:NAME``          the votes of judge ``NAME`` a pairwise dataset ships
``pyrit:SCORER``                   a PyRIT self-ask scorer (``refusal``, ``true_false``,
                                   ``likert``) on an OpenAI-compatible endpoint
``pyrit:rubric``                   a PyRIT true/false scorer made from each request's rubric
                                   (one scorer per rubric variant)
``inspect:SCORER``                 an Inspect scorer, live: a registry name
                                   (``model_graded_qa``) or ``FILE.py@NAME``; grader ``-J model=``
=================================  ==========================================================

Third-party backends register a factory under the ``judgeprobe.judges`` entry-point group; the
spec ``NAME:REST`` then calls ``factory(REST, **options)``.
"""

from __future__ import annotations

import importlib
import inspect
import weakref
from collections.abc import Callable
from importlib import metadata
from typing import Any, TypeVar

from judgeprobe._util.annotations import Mismatch, parameter_types, validate_value
from judgeprobe.core.judge import Judge
from judgeprobe.errors import ConfigError

T = TypeVar("T")


def build_judge(spec: str, **options: Any) -> Judge:
    """A judge from its spec (see the module docstring); ``options`` go to its constructor.

    The judge remembers how it was built (:func:`built_from`), so an executor can build the same
    judge in another process instead of pickling a loaded model.
    """
    judge = _build(spec, **options)
    try:
        weakref.finalize(judge, _SPECS.pop, id(judge), None)
    except TypeError:  # not weak-referenceable: it cannot be told apart from a later object
        return judge
    _SPECS[id(judge)] = (spec, dict(options))
    return judge


_SPECS: dict[int, tuple[str, dict[str, Any]]] = {}
"""id of a live judge :func:`build_judge` made -> its spec and options."""


def built_from(judge: Judge) -> tuple[str, dict[str, Any]] | None:
    """The spec and options :func:`build_judge` made ``judge`` from (None: built otherwise)."""
    return _SPECS.get(id(judge))


def _build(spec: str, **options: Any) -> Judge:
    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    if name in ("llama", "default", "gemma"):
        from judgeprobe.judges.llama import LlamaJudge

        return _construct(LlamaJudge, spec, rest or None, **options)
    if name == "openai":
        from judgeprobe.judges.openai_compat import OpenAIJudge

        model, at, base_url = rest.partition("@")
        if not model or not at or not base_url:
            raise ConfigError(
                f"judge spec {spec!r}: write openai:MODEL@BASE_URL, "
                "e.g. openai:gpt-4.1-mini@https://api.openai.com/v1"
            )
        return _construct(OpenAIJudge, spec, base_url, model, **options)
    if name in ("profanity", "classifier"):
        from judgeprobe.judges.classifier import ProfanityJudge

        return _construct(ProfanityJudge, spec, **options)
    if name == "transformers":
        from judgeprobe.judges.transformers_judge import TransformersJudge

        if not rest:
            raise ConfigError("judge spec 'transformers:' needs a model id or a local path")
        return _construct(TransformersJudge, spec, rest, **options)
    if name == "python":
        from judgeprobe.judges.callable import CallableJudge

        return _construct(CallableJudge, spec, _import_function(rest), **options)
    if name == "recorded":
        from judgeprobe.judges.recorded import RecordedJudge

        if not rest:
            raise ConfigError("judge spec 'recorded:' needs the path of a verdict file")
        return _construct(RecordedJudge, spec, rest, **options)
    if name == "pyrit" and rest.strip().lower() == "rubric":
        from judgeprobe.judges.pyrit_rubric import pyrit_rubric_judge

        return _construct(pyrit_rubric_judge, spec, **options)
    if name == "pyrit":
        from judgeprobe.judges.pyrit_setup import pyrit_judge

        return _construct(pyrit_judge, spec, rest, **options)
    if name == "inspect":
        from judgeprobe.judges.inspect_setup import inspect_judge

        return _construct(inspect_judge, spec, rest, **options)
    factory = _plugin(name)
    if factory is not None:
        judge = _construct(factory, spec, rest, **options)
        if not isinstance(judge, Judge):
            raise ConfigError(f"plugin judge {name!r} did not return a Judge")
        return judge
    raise ConfigError(
        f"unknown judge {spec!r}; use llama, llama:PATH.gguf, openai:MODEL@BASE_URL, profanity, "
        "transformers:MODEL, python:MODULE:FUNCTION, recorded:PATH, pyrit:SCORER, "
        "inspect:SCORER, or an installed plugin"
    )


def _construct(factory: Callable[..., T], spec: str, *args: Any, **options: Any) -> T:
    """``factory(*args, **options)``; an option it does not take, or a value of a type its
    annotation does not admit (``-J context_window=abc``), is a :class:`ConfigError`."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or C factory: let it judge its own options
        return factory(*args, **options)
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        accepted = [
            p.name
            for p in parameters
            if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ][len(args) :]
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise ConfigError(
                f"judge {spec!r} takes no option {', '.join(map(repr, unknown))}; its options: "
                f"{', '.join(accepted) or 'none'}"
            )
    types = parameter_types(factory)
    checked = dict(options)
    for key, value in options.items():
        if key in types:
            try:
                checked[key] = validate_value(types[key], value)
            except Mismatch as exc:
                raise ConfigError(f"judge {spec!r}, option {key!r}: {exc}") from None
    return factory(*args, **checked)


def _import_function(target: str) -> Callable[..., Any]:
    module_name, _, attribute = target.rpartition(":")
    if not module_name or not attribute:
        raise ConfigError(f"python judge {target!r}: write python:MODULE:FUNCTION")
    try:
        module = importlib.import_module(module_name)
        function = getattr(module, attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"python judge {target!r}: {exc}") from exc
    if not callable(function):
        raise ConfigError(f"python judge {target!r} is not callable")
    return function  # type: ignore[no-any-return]


def _plugin(name: str) -> Callable[..., Any] | None:
    for entry in metadata.entry_points(group="judgeprobe.judges"):
        if entry.name == name:
            loaded: Callable[..., Any] = entry.load()
            return loaded
    return None
