"""Config values checked against the annotations of the parameters they are passed to.

Judge options (``judge_options``, ``-J KEY=VALUE``) and probe parameters come from YAML and go to a
constructor. pydantic validates each one against its parameter's annotation first, so a value of
the wrong type is a one-line error naming the option, the type it needs and the value given,
instead of a traceback from deep inside a backend or a probe. Validation also converts what YAML
cannot write: a list to the tuple a parameter declares, a number to the string it declares.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from judgeprobe.errors import ConfigError

_CONFIG = ConfigDict(arbitrary_types_allowed=True, coerce_numbers_to_str=True)
_MODULE_PATH = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Za-z_])")


class Mismatch(ConfigError, ValueError):
    """A value does not fit its parameter's annotation; ``expected`` and ``reason`` say how.

    The registries catch it and name the option in front of its message; it is a
    :class:`~judgeprobe.errors.ConfigError` so that one that escapes still reads as one.
    """

    def __init__(self, expected: str, reason: str) -> None:
        super().__init__(f"{reason}; it must be {expected}")
        self.expected = expected
        self.reason = reason


def parameter_types(factory: Callable[..., Any]) -> dict[str, Any]:
    """The annotation of each parameter of ``factory`` that has one, resolved to a type.

    An annotation that cannot be resolved (a name imported only for type checkers) is left out,
    and so is every parameter of a factory without a signature: their values go unchecked.
    """
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    namespace = dict(getattr(inspect.unwrap(target), "__globals__", {}))
    types: dict[str, Any] = {}
    for name, parameter in parameters.items():
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty:
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # the way inspect resolves them
            except Exception:
                continue
        types[name] = annotation
    return types


def validate_value(annotation: Any, value: Any) -> Any:
    """``value`` validated against ``annotation`` (and converted to it); :class:`Mismatch` if not.

    A type pydantic cannot validate leaves the value unchecked.
    """
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation, config=_CONFIG)
    except Exception:  # not a type pydantic knows how to check
        return value
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise Mismatch(type_text(annotation), _reason(exc, annotation, value)) from None


def type_text(annotation: Any) -> str:
    """An annotation as a reader writes it: ``tuple[int, ...]``, ``int | None``, ``Falsifier``."""
    if typing.get_origin(annotation) is typing.Annotated:
        return type_text(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return _MODULE_PATH.sub("", str(annotation))


def _reason(exc: ValidationError, annotation: Any, value: Any) -> str:
    """The first error: where in the value (``item 1``, ``key 'bin'``), what was there, and why.

    A value that fits no member of a union gets errors from each member, located at the
    member's name; those say only that it is none of them.
    """
    errors = exc.errors()
    members = [a for a in typing.get_args(annotation) if a is not type(None)]
    is_union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    if is_union and len(members) > 1 and len({e["loc"][:1] for e in errors}) > 1:
        return f"{value!r} ({type(value).__name__}) is none of these"
    error = errors[0]
    loc = error["loc"]
    if len(loc) == 1:
        where = f"item {loc[0]}" if isinstance(loc[0], int) else f"key {loc[0]!r}"
    else:
        where = "at " + "".join(f"[{part!r}]" for part in loc) if loc else ""
    found = error.get("input", value)
    shown = f"{found!r} ({type(found).__name__})"
    message = str(error["msg"])
    message = message[:1].lower() + message[1:]
    return f"{where} {shown}: {message}" if where else f"{shown}: {message}"
