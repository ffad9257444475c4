"""The rounds of an audit sampled until decided, as the card shows them.

An audit run with ``engine.until_decided`` stores its rounds (:mod:`judgeprobe.audit.sequential`)
with the run's metadata (:data:`~judgeprobe.engine.store_meta.ROUNDS`); the card copies them:
per round the items audited, the new judge calls, the confidence level the round was decided
at, and how many gated findings it decided (and, for a probe whose rounds add reproduction
trials, its trials). The statuses the card reports are the last round's, as stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.engine.store_meta import ROUNDS

ROUND_COLUMNS: tuple[tuple[str, str], ...] = (
    ("round", "round"),
    ("items", "items"),
    ("calls", "new calls"),
    ("level", "level"),
    ("gated", "gated"),
    ("decided", "decided"),
    ("inconclusive", "inconclusive"),
    ("not_assessable", "not assessable"),
)
"""The columns of the rounds table: a round's key and its heading."""

_FIELDS = ("round", "items", "calls", "gated", "decided", "inconclusive", "not_assessable")


def card_rounds(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The card's ``rounds`` from the run's metadata (``RunStore.run_meta``): None for a
    fixed-size audit; ``stopped`` None while unfinished."""
    stored = meta.get(ROUNDS)
    if not isinstance(stored, Mapping):
        return None
    rounds = []
    for entry in stored.get("rounds") or []:
        row: dict[str, Any] = {key: int(entry[key]) for key in _FIELDS}
        row["level"] = float(entry["level"])
        row["alpha"] = float(entry["alpha"])
        if entry.get("audited"):
            row["audited"] = [str(name) for name in entry["audited"]]
        if entry.get("trials"):
            row["trials"] = {str(k): int(v) for k, v in entry["trials"].items()}
        rounds.append(row)
    stopped = stored.get("stopped")
    return {
        "method": str(stored.get("method", "")),
        "alpha": _number(stored.get("alpha")),
        "max_calls": _count(stored.get("max_calls")),
        "calls": _count(stored.get("calls")),
        "stopped": None if stopped is None else str(stopped),
        "stopped_because": str(stored.get("stopped_because") or "the run did not finish"),
        "cut_round": _count(stored.get("cut_round")),
        "rounds": rounds,
    }


def round_rows(rounds: Mapping[str, Any]) -> list[list[str]]:
    """The rows of the rounds table, as text (levels to 4 decimals)."""
    rows: Sequence[Mapping[str, Any]] = rounds["rounds"]
    return [
        [f"{row[key]:.4f}" if key == "level" else str(row[key]) for key, _ in ROUND_COLUMNS]
        for row in rows
    ]


def rounds_sentence(rounds: Mapping[str, Any]) -> str:
    """One sentence: how many rounds, calls against the budget, and why the rounds stopped."""
    n = len(rounds["rounds"])
    calls = rounds["calls"] if rounds["calls"] is not None else "?"
    budget = f" of a budget of {rounds['max_calls']}" if rounds["max_calls"] is not None else ""
    text = (
        f"Sampled until decided: {n} round{'s' if n != 1 else ''}, {calls} judge calls"
        f"{budget}; stopped because {rounds['stopped_because']}. Each round is "
        f"decided at its own level ({rounds['method']}), so the error rate over every round "
        f"stays at {rounds['alpha']}; the statuses shown are the last round's (a probe whose "
        f"gated findings were all decided is not run again, and keeps the round that decided "
        f"it). An estimate from an audit that stopped once decided leans away from the line it "
        f"crossed: an effect decided early is, on average, overstated; its interval still holds "
        f"at its level."
    )
    grown = sorted({name for row in rounds["rounds"] for name in row.get("trials", {})})
    for name in grown:
        counts = ", ".join(str(row.get("trials", {}).get(name, "-")) for row in rounds["rounds"])
        text += f" Reproduction trials of {name}, round by round: {counts}."
    if rounds.get("cut_round") is not None:
        text += f" Round {rounds['cut_round']} was cut short by the budget and is not shown."
    return text


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _count(value: Any) -> int | None:
    return None if value is None else int(value)
