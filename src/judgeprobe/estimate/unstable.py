"""The items an audit found unstable: their verdict flipped where only the form changed.

An audit's invariance probes (repetition, rubric wording, position swap, a bias edit and its
placebo, a rerun) store their plans and verdicts, and each gives its findings' values per item
(:meth:`~judgeprobe.probes.base.Probe.units`). A flip-rate finding's value on an item is 1 where
the item's decision flipped: such an item is one whose verdict says least about its label, so
``--suggest`` labels it first. Read from the run store alone, no judge called.
"""

from __future__ import annotations

from pathlib import Path

from judgeprobe.compare.item_units import probe_class, stored_units
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError

FLIP = "flip_rate"
"""What the name of a finding whose unit value 1 is a flipped decision holds."""


def unstable_items(store_path: str | Path, run_id: int | None = None) -> dict[str, str]:
    """Each item (or pair) id whose decision flipped in run ``run_id`` (default: the latest) of
    the audit's run store, with the probes and findings it flipped in."""
    path = Path(store_path)
    if not path.is_file():
        raise ConfigError(f"--audit {path}: no run store there (an audit's run.sqlite)")
    found: dict[str, list[str]] = {}
    with RunStore(path) as store:
        if run_id is None:
            latest = store.latest_run()
            if latest is None:
                raise ConfigError(f"--audit {path}: the store holds no audit run")
            run_id = latest[0]
        for name, body in store.results(run_id).items():
            probe = str(body.get("probe") or name)
            cls = probe_class(probe)
            if cls is None or cls.kind != "invariance":
                continue
            for (finding, labels), units in stored_units(store, run_id, name, probe).items():
                if FLIP not in finding or not units.binary:
                    continue
                where = finding + "".join(f" {v}" for _, v in labels)
                for unit, row in units.values.items():
                    if row and row[0] == 1.0:
                        found.setdefault(unit, []).append(f"{name}: {where}")
    return {unit: "; ".join(sorted(set(reasons))) for unit, reasons in found.items()}
