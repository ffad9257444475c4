"""The probe registry: probes by name, so configs and the CLI can select them."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import TypeVar

from judgeprobe.errors import ConfigError
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


_loaded = False


def _load_plugins() -> None:
    """Import built-in probes and third-party ones from the ``judgeprobe.probes`` entry points."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import judgeprobe.probes as builtin  # noqa: F401  (registers built-ins on import)

    for entry in metadata.entry_points(group="judgeprobe.probes"):
        loaded: Callable[..., object] = entry.load()
        del loaded
