"""Per-unit values of a stored probe result, read back for paired differences between runs.

Each probe gives its findings' values per unit itself (:meth:`~judgeprobe.probes.base.Probe.
units`, :mod:`judgeprobe.probes.units`) and declares, per finding, the unit it is paired on or
why it cannot be paired (``finding_units``, ``unpaired_findings``). Here a stored run's values
are read: the probe is rebuilt from the parameters stored with its result (the registry), and
its stored plan (design and roles) and verdicts are handed to it; no judge is called. A
finding a probe gives no values for is compared unpaired, and :func:`unpaired_reason` says why.
"""

from __future__ import annotations

from collections.abc import Mapping

from judgeprobe.core.plan import Verdicts
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import Probe
from judgeprobe.probes.registry import build_probe, get_probe_class
from judgeprobe.probes.units import FindingKey, UnitValues


def probe_class(probe: str) -> type[Probe] | None:
    """The registered class of ``probe``, None when none is registered by that name."""
    try:
        return get_probe_class(probe)
    except ConfigError:
        return None


def stored_units(
    store: RunStore, run_id: int, name: str, probe: str
) -> dict[FindingKey, UnitValues]:
    """The per-unit values of result ``name`` (probe ``probe``) of run ``run_id``; empty when
    the probe is not registered or the run stored no plan for it."""
    cls = probe_class(probe)
    if cls is None:
        return {}
    plan = store.plan(run_id, name)
    if plan is None:
        return {}
    verdicts = Verdicts(plan, store.get_many(sorted(plan.keys)))
    stored = store.results(run_id).get(name, {})
    made = build_probe(cls, stored.get("params", {}), where=f"probe {name!r}")
    return made.units(plan, verdicts)


def units_of(found: Mapping[FindingKey, UnitValues], key: FindingKey) -> UnitValues | None:
    """The per-unit values of finding ``key``, None where they are not known."""
    return found.get(key)


def unpaired_reason(
    probe: str, name: str, units_a: UnitValues | None, units_b: UnitValues | None, shared: int
) -> str:
    """Why finding ``name`` of ``probe`` is compared unpaired: the probe's own declaration
    first, else what the two runs lack."""
    cls = probe_class(probe)
    known = None if cls is None else cls.unpaired_findings.get(name)
    if known is not None:
        return known
    if units_a is None or units_b is None:
        return "no per-item outcomes of both runs (a card file, different data, or none kept)"
    return f"{shared} unit{'' if shared == 1 else 's'} shared by the two runs (2 needed)"


def excess_of(probe: str, name: str) -> str | None:
    """The gated excess of raw rate ``name`` of ``probe`` over the judge's rerun null, None when
    ``name`` is no such rate (:attr:`~judgeprobe.probes.base.Probe.excess_findings`)."""
    cls = probe_class(probe)
    return None if cls is None else cls.excess_findings.get(name)


def score_unit_findings(probe: str) -> frozenset[str]:
    """The findings of ``probe`` measured in the rubric's score units (none when unknown)."""
    cls = probe_class(probe)
    return frozenset() if cls is None else cls.score_unit_findings


__all__ = [
    "excess_of",
    "score_unit_findings",
    "stored_units",
    "units_of",
    "unpaired_reason",
]
