"""The probe registry: probes by name, so configs and the CLI can select them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any, TypeVar

from judgeprobe._util.annotations import Mismatch, parameter_types, validate_value
from judgeprobe.errors import ConfigError, JudgeprobeError
from judgeprobe.probes.base import Probe

P = TypeVar("P", bound=type[Probe])

_PROBES: dict[str, type[Probe]] = {}


def register_probe(cls: P) -> P:
    """Class decorator: make a probe selectable by its ``name``."""
    if not getattr(cls, "name", None) or not getattr(cls, "kind", None):
        raise TypeError(f"{cls.__name__} must set the class attributes 'name' and 'kind'")
    _PROBES[cls.name] = cls
    return cls


def probe_names() -> tuple[str, ...]:
    _load_plugins()
    return tuple(sorted(_PROBES))


def get_probe_class(name: str) -> type[Probe]:
    _load_plugins()
    try:
        return _PROBES[name]
    except KeyError:
        raise ConfigError(
            f"unknown probe {name!r}; available: {', '.join(sorted(_PROBES))}"
        ) from None


def build_probe(cls: type[Probe], params: Mapping[str, Any], *, where: str) -> Probe:
    """``cls(**params)`` from config values, each checked against its parameter's annotation.

    A value of the wrong type (``counts: [1, "two"]``, ``ks: 4``) is a :class:`ConfigError` that
    starts with ``where`` (the config file and the probe) and names the parameter, the type it
    needs and the value given; so is any error of the probe's own checks.
    """
    types = parameter_types(cls)
    values: dict[str, Any] = {}
    for key, value in params.items():
        if key not in types:
            values[key] = tuple(value) if isinstance(value, list) else value
            continue
        try:
            values[key] = validate_value(types[key], value)
        except Mismatch as exc:
            raise ConfigError(f"{where}, parameter {key!r}: {exc}") from None
        except JudgeprobeError as exc:  # a parameter's own parser (a falsifier's YAML text)
            raise ConfigError(f"{where}, parameter {key!r}: {exc}") from exc
    try:
        return cls(**values)
    except (ConfigError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


_loaded = False


def _load_plugins() -> None:
    """Import third-party probes from the ``judgeprobe.probes`` entry points.

    The built-in probes need no import here: each registers itself when its module is imported,
    and Python runs the package ``judgeprobe.probes`` (which imports them all) before any module
    of it, this one included. Importing the package from here would tie the registry, which every
    probe imports, back to every probe.
    """
    global _loaded
    if _loaded:
        return
    _loaded = True
    for entry in metadata.entry_points(group="judgeprobe.probes"):
        loaded: Callable[..., object] = entry.load()
        del loaded
