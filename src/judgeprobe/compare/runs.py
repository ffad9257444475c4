"""The runs a comparison reads: a run store (card and per-unit outcomes) or a card file.

A run store gives the run's Judge Card (built as ``judgeprobe card`` builds it, no judge call)
and each finding's per-unit outcomes, as its probe gives them (:meth:`~judgeprobe.probes.base.
Probe.units`), so differences can be paired. A ``card.json`` gives the card alone: its findings can
only be compared unpaired, from their intervals. A folder stands for the ``run.sqlite`` in it,
else its ``card.json``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from judgeprobe.compare.item_units import stored_units
from judgeprobe.errors import ConfigError
from judgeprobe.probes.units import FindingKey, UnitValues
from judgeprobe.report import build_card, validate_card
from judgeprobe.report.card import open_existing_store

SourceKind = Literal["store", "card"]


@dataclass(frozen=True, slots=True)
class LoadedRun:
    """One run to compare: where it came from, its card, and per-unit outcomes when known.

    ``units`` maps a probe result's name to its findings' per-unit outcomes (empty for a card
    file; a probe's findings without per-unit values are absent).
    """

    source: str
    kind: SourceKind
    card: Mapping[str, Any]
    units: Mapping[str, Mapping[FindingKey, UnitValues]] = field(default_factory=dict)

    @property
    def tested(self) -> Mapping[str, Any]:
        tested: Mapping[str, Any] = self.card.get("tested", {})
        return tested

    def describe(self, index: int) -> dict[str, Any]:
        """What the comparison shows of this run: judge, fingerprint, rubric, data hash, and the
        run's state (``complete`` or ``incomplete`` and why) and number of findings."""
        judge = self.tested.get("judge", {})
        rubric = self.tested.get("rubric", {})
        data = self.tested.get("data", {})
        run = self.card.get("run", {})
        return {
            "index": index,
            "source": self.source,
            "kind": self.kind,
            "title": str(self.card.get("title", "")),
            "run_id": self.card.get("run", {}).get("id"),
            "judge": {
                "fingerprint": str(judge.get("fingerprint", "")),
                "model": str(judge.get("model", "")),
                "backend": str(judge.get("backend", "")),
            },
            "rubric": {
                "name": str(rubric.get("name", "")),
                "kind": str(rubric.get("kind", "")),
                "hash": str(rubric.get("hash", "")),
            },
            "data": {
                "name": str(data.get("name", "")),
                "sha256": str(data.get("sha256", "")),
                "n": data.get("n"),
            },
            "state": str(run.get("state", "")),
            "reason": None if run.get("reason") is None else str(run["reason"]),
            "findings": sum(len(p.get("findings", [])) for p in self.card.get("probes", [])),
        }


def load_run(path: str | os.PathLike[str]) -> LoadedRun:
    """The run at ``path``: a run store, a ``card.json``, or a folder holding either.

    ConfigError names the path when it is none of these.
    """
    where = Path(path)
    if where.is_dir():
        for name in ("run.sqlite", "card.json"):
            if (where / name).is_file():
                where = where / name
                break
        else:
            raise ConfigError(f"{where}: holds neither a run store (run.sqlite) nor a card.json")
    if not where.is_file():
        raise ConfigError(f"{where}: no such run store or card.json")
    if where.suffix == ".json":
        return _card_file(where)
    return _store(where)


def _card_file(path: Path) -> LoadedRun:
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable card.json ({exc})") from exc
    if not isinstance(card, dict):
        raise ConfigError(f"{path}: not a Judge Card (a JSON object is expected)")
    validate_card(card)
    return LoadedRun(str(path), "card", card)


def _store(path: Path) -> LoadedRun:
    with open_existing_store(path) as store:
        card = build_card(store)
        run_id = int(card["run"]["id"])
        results = store.results(run_id)
        units = {}
        for section in card["probes"]:
            name = str(section["name"])
            probe = str(results.get(name, {}).get("probe") or name)
            units[name] = stored_units(store, run_id, name, probe)
    return LoadedRun(str(path), "store", card, units)
