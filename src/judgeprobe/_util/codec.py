"""JSON for plan designs: frozen dataclasses, pydantic models, tuples and maps, and back.

A probe's design is a frozen value made of judgeprobe's own dataclasses (items, clusters,
validated variants), pydantic models (rubrics), tuples, maps with tuple keys and plain numbers
and strings. The run store keeps it as JSON so a run can be analysed again without planning it
again; :func:`decode` rebuilds the same value. Only classes of judgeprobe itself are rebuilt, so
a store cannot make the reader import or construct anything else.

Examples
--------
>>> from judgeprobe.data.items import PointwiseItem
>>> item = PointwiseItem("a", "P", "R")
>>> decode(loads(dumps({("x", 1): (item,)}))) == {("x", 1): (item,)}
True
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from judgeprobe._util.moved import current_module
from judgeprobe.errors import StoreError

_PACKAGE = "judgeprobe"


class CodecError(StoreError):
    """A value cannot be written as, or read back from, design JSON."""


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data that :func:`decode` turns back into an equal value."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return {"$enum": _path(type(value)), "value": encode(value.value)}
    if isinstance(value, BaseModel):
        return {"$model": _path(type(value)), "data": encode(value.model_dump())}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {
            f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return {"$dataclass": _path(type(value)), "fields": fields}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, frozenset):
        return {"$frozenset": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {"$map": [[encode(k), encode(v)] for k, v in value.items()]}
    raise CodecError(f"cannot encode a {type(value).__name__} in a plan design: {value!r:.80}")


def decode(data: Any) -> Any:
    """The value :func:`encode` made ``data`` from."""
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise CodecError(f"not design JSON: {data!r:.80}")
    if "$tuple" in data:
        return tuple(decode(v) for v in data["$tuple"])
    if "$frozenset" in data:
        return frozenset(decode(v) for v in data["$frozenset"])
    if "$map" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["$map"]}
    if "$enum" in data:
        return _class(data["$enum"], enum.Enum)(decode(data["value"]))
    if "$model" in data:
        return _class(data["$model"], BaseModel).model_validate(decode(data["data"]))
    if "$dataclass" in data:
        cls = _class(data["$dataclass"], object)
        if not dataclasses.is_dataclass(cls):
            raise CodecError(f"{data['$dataclass']} is not a dataclass")
        build: Any = cls
        return build(**{name: decode(v) for name, v in data["fields"].items()})
    raise CodecError(f"not design JSON: {data!r:.80}")


def dumps(value: Any) -> str:
    """``value`` as design JSON text."""
    return json.dumps(encode(value), ensure_ascii=False, separators=(",", ":"))


def loads(text: str) -> Any:
    """Design JSON text as the data :func:`decode` reads (call :func:`decode` on it)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not JSON: {exc}") from exc


def _path(cls: type) -> str:
    module = cls.__module__
    if module != _PACKAGE and not module.startswith(_PACKAGE + "."):
        raise CodecError(f"only judgeprobe's own classes go in a plan design, not {cls!r}")
    return f"{module}:{cls.__qualname__}"


def _class(path: Any, base: type) -> Any:
    if not isinstance(path, str) or ":" not in path:
        raise CodecError(f"not a class path: {path!r:.80}")
    module, _, name = path.partition(":")
    if module != _PACKAGE and not module.startswith(_PACKAGE + "."):
        raise CodecError(f"a plan design names a class outside judgeprobe: {path!r}")
    module = current_module(module)  # a store written before a module moved
    try:
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise CodecError(f"no class {path!r} in this judgeprobe") from exc
    if not isinstance(found, type) or not issubclass(found, base):
        raise CodecError(f"{path!r} is not a {base.__name__}")
    return found


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        raise CodecError("a map key cannot be a list")
    return key
