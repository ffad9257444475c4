"""The judge of the spec ``inspect:SCORER``: an Inspect scorer built from a name or a file.

``SCORER`` is a name in Inspect's registry (``model_graded_qa``, ``model_graded_fact``,
``inspect_ai/match``, or ``package/name`` of an installed Inspect extension), or ``FILE.py@NAME``
(an ``@scorer`` function of one's own; ``FILE.py`` alone when the file defines one). Judge options
that are not the judge's own (see :func:`inspect_judge`) are the scorer's arguments
(``-J partial_credit=true``, ``-J instructions=...``). The grader model is named with ``-J
model=PROVIDER/MODEL`` (``mockllm/model``, ``openai/gpt-4.1-mini``, ``openai-api/NAME/MODEL``...),
made with Inspect's own providers (keys from the environment as Inspect reads them), with
``model_base_url``, ``model_args`` and ``model_config`` (a ``GenerateConfig``: ``temperature``,
``max_tokens``...) when given.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgeprobe._util.redaction import mapping_secrets, url_secrets
from judgeprobe.errors import ConfigError, MissingDependencyError
from judgeprobe.judges.inspect_scorer import InspectScorerJudge

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer


def inspect_judge(
    scorer: str,
    *,
    input_field: str = "prompt",
    output_field: str = "response",
    target_field: str | None = "reference",
    target: str = "",
    value_key: str | None = None,
    max_concurrency: int = 4,
    model: str | None = None,
    model_base_url: str | None = None,
    model_args: Mapping[str, Any] | None = None,
    model_config: Mapping[str, Any] | None = None,
    **scorer_args: Any,
) -> InspectScorerJudge:
    """The judge of ``inspect:SCORER`` (see the module docstring).

    ``input_field``, ``output_field``, ``target_field``, ``target``, ``value_key`` and
    ``max_concurrency`` go to :class:`InspectScorerJudge`; ``model`` (with ``model_base_url``,
    ``model_args``, ``model_config``) is the grader, passed to the scorer as its ``model``
    argument; every other option is an argument of the scorer.
    """
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("inspect_ai", extra="inspect") from exc
    if not scorer.strip():
        raise ConfigError(
            "judge spec 'inspect:' needs a scorer: a registry name (inspect:model_graded_qa) or "
            "FILE.py@NAME"
        )
    factory, described = _factory(scorer.strip())
    grader = None
    if model is not None:
        grader = {"model": model, "base_url": model_base_url, "args": dict(model_args or {})}
        grader["config"] = dict(model_config or {})
        described["model"] = grader
    elif model_base_url or model_args or model_config:
        raise ConfigError(
            "judge options model_base_url, model_args and model_config go with -J model=..."
        )
    described["args"] = dict(scorer_args)

    def build() -> Scorer:
        arguments = dict(scorer_args)
        if grader is not None:
            arguments["model"] = _grader(grader)
        try:
            return factory(**arguments)
        except TypeError as exc:
            raise ConfigError(f"Inspect scorer {scorer!r}: {exc}") from exc

    secrets = [*mapping_secrets(scorer_args), *mapping_secrets(dict(model_args or {}))]
    if model_base_url:
        secrets += url_secrets(model_base_url)
    return InspectScorerJudge(
        build,
        described=described,
        input_field=input_field,
        output_field=output_field,
        target_field=target_field,
        target=target,
        value_key=value_key,
        max_concurrency=max_concurrency,
        secrets=secrets,
    )


def _factory(spec: str) -> tuple[Callable[..., Scorer], dict[str, Any]]:
    """The scorer factory ``spec`` names, and what identifies it."""
    path, at, name = spec.partition("@")
    if path.endswith(".py") or at:
        return _file_factory(Path(path), name or None)
    from inspect_ai.util import registry_create

    def create(**arguments: Any) -> Scorer:
        try:
            return registry_create("scorer", spec, **arguments)
        except LookupError as exc:
            raise ConfigError(
                f"no Inspect scorer {spec!r} in Inspect's registry; give a registry name "
                "(model_graded_qa, model_graded_fact, match, includes, package/name) or "
                "FILE.py@NAME"
            ) from exc
        except ValueError as exc:
            raise ConfigError(f"Inspect scorer {spec!r}: {exc}") from exc

    return create, {}


def _file_factory(path: Path, name: str | None) -> tuple[Callable[..., Scorer], dict[str, Any]]:
    """The ``@scorer`` factory ``name`` defined in the Python file ``path``."""
    from inspect_ai.util import registry_info

    if not path.is_file():
        raise ConfigError(f"Inspect scorer file {str(path)!r}: no such file")
    content = path.read_bytes()
    digest = hashlib.sha256(content).hexdigest()
    module_name = f"judgeprobe_inspect_scorer_{digest[:16]}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"Inspect scorer file {str(path)!r} cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ConfigError(f"Inspect scorer file {str(path)!r}: {exc}") from exc
    found: dict[str, Callable[..., Scorer]] = {}
    for attribute, value in vars(module).items():
        if getattr(value, "__module__", None) != module_name:  # imported, not defined here
            continue
        try:
            if callable(value) and registry_info(value).type == "scorer":
                found[attribute] = value
        except (ValueError, AttributeError, KeyError):
            continue
    if name is None and len(found) == 1:
        name = next(iter(found))
    if name is None or name not in found:
        listing = ", ".join(sorted(found)) or "none"
        raise ConfigError(
            f"Inspect scorer file {str(path)!r}: "
            + (f"no @scorer {name!r}" if name else f"{len(found)} @scorer functions")
            + f" (its scorers: {listing}); write inspect:FILE.py@NAME"
        )
    return found[name], {"file": path.name, "file_sha256": digest[:16], "function": name}


def _grader(grader: Mapping[str, Any]) -> Any:
    """The grader model, made with Inspect's own providers (not memoized: one per scorer)."""
    from inspect_ai.model import GenerateConfig, get_model

    try:
        config = GenerateConfig(**grader["config"])
    except Exception as exc:
        raise ConfigError(f"judge option model_config: {exc}") from exc
    try:
        return get_model(
            grader["model"],
            base_url=grader["base_url"],
            config=config,
            memoize=False,
            **grader["args"],
        )
    except Exception as exc:
        raise ConfigError(f"judge option model={grader['model']!r}: {exc}") from exc
