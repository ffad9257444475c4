"""Score a dataset with a judge and a rubric: the simplest use of the engine."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe._util.csv_cells import ESCAPED_COLUMN, escape_record
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import Item, PairwiseItem, item_fields
from judgeprobe.engine.engine import CallStats, Engine, run_blocking
from judgeprobe.errors import ConfigError
from judgeprobe.rubrics import Rubric


@dataclass(frozen=True, slots=True)
class ScoredRow:
    """One item's verdict for one trial."""

    item: Item
    trial: int
    request: Request
    verdict: Verdict

    def to_dict(self, probability_labels: Sequence[str] | None = None) -> dict[str, Any]:
        """The row as a flat record; ``p_<label>`` is the judge's probability of each of
        ``probability_labels`` (default: the rubric's labels, then any other label of this
        verdict's distribution), None where the verdict gives none."""
        verdict = self.verdict
        labels = (
            probability_labels
            if probability_labels is not None
            else _probability_labels(self.request.rubric, [verdict])
        )
        distribution = verdict.distribution or {}
        return {
            "item_id": self.item.id,
            "trial": self.trial,
            "status": verdict.status.value,
            "score": verdict.score,
            "label": verdict.label,
            "decision": _decision(self.request.rubric, verdict),
            "human": _human(self.item),
            "raw_text": verdict.raw_text,
            "error": verdict.error,
            "latency_s": round(verdict.latency_s, 6),
            "prompt_tokens": verdict.prompt_tokens,
            "completion_tokens": verdict.completion_tokens,
            "request_key": self.request.key,
            **{f"p_{label}": distribution.get(label) for label in labels},
        }


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """Verdicts of every item (and trial), with what the engine did to get them."""

    rows: tuple[ScoredRow, ...]
    stats: CallStats
    stopped: str | None

    def to_records(self) -> list[dict[str, Any]]:
        """One record per row, all with the same ``p_<label>`` columns (see
        :meth:`ScoredRow.to_dict`)."""
        if not self.rows:
            return []
        labels = _probability_labels(
            self.rows[0].request.rubric, [row.verdict for row in self.rows]
        )
        return [row.to_dict(labels) for row in self.rows]

    def write(self, path: str | Path) -> Path:
        """Write the rows as CSV (``.csv``) or JSON lines (``.jsonl``).

        CSV text cells are escaped against formula injection (:mod:`judgeprobe._util.csv_cells`);
        ``--judge recorded:`` reads them back as they were.
        """
        path = Path(path)
        records = self.to_records()
        if path.suffix == ".jsonl":
            with path.open("w", encoding="utf-8") as handle:
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        elif path.suffix == ".csv":  # cells a spreadsheet would run as formulas are escaped
            rows = [escape_record(record) for record in records]
            with path.open("w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(
                    handle, fieldnames=list(rows[0]) if rows else ["item_id", ESCAPED_COLUMN]
                )
                writer.writeheader()
                writer.writerows(rows)
        else:
            check_verdicts_path(path)
        return path


async def score_items(
    items: Sequence[Item], engine: Engine, rubric: Rubric, *, trials: int = 1
) -> ScoreResult:
    """Judge every item with ``rubric`` for trials ``0..trials-1`` through ``engine``."""
    if trials < 1:
        raise ConfigError("trials must be >= 1")
    planned: list[tuple[Item, int, Request]] = []
    for item in items:
        fields = item_fields(item)
        missing = [name for name in rubric.inputs if name not in fields]
        if missing:
            raise ConfigError(
                f"rubric {rubric.name!r} needs {missing}, which item {item.id!r} does not have"
            )
        for trial in range(trials):
            planned.append(
                (item, trial, Request.make(engine.judge.fingerprint, rubric, fields, trial=trial))
            )
    result = await engine.run([r for _, _, r in planned], description="scoring")
    rows = tuple(
        ScoredRow(item, trial, request, result.verdicts[request.key])
        for item, trial, request in planned
        if request.key in result.verdicts
    )
    return ScoreResult(rows, result.stats, result.stopped)


def score_items_sync(
    items: Sequence[Item], engine: Engine, rubric: Rubric, *, trials: int = 1
) -> ScoreResult:
    """:func:`score_items` for code without an event loop."""
    return run_blocking(score_items(items, engine, rubric, trials=trials))


def _decision(rubric: Rubric, verdict: Verdict) -> str | None:
    """The decision of an ok verdict under the rubric's one rule (:meth:`Rubric.decision_of`),
    as every probe reads it; None for a failed verdict or a rubric without a decision."""
    if not verdict.ok or verdict.score is None:
        return None
    if rubric.kind != "pairwise" and rubric.decision is None:
        return None
    return rubric.decision_of(verdict.score, verdict.label)


def _human(item: Item) -> str | None:
    if isinstance(item, PairwiseItem):
        return item.human_majority()
    mean = item.human_mean
    return None if mean is None else f"{mean:g}"


def _probability_labels(rubric: Rubric, verdicts: Sequence[Verdict]) -> list[str]:
    """The rubric's labels, then the other labels of the verdicts' distributions, first seen
    first: the ``p_<label>`` columns of the score output."""
    labels = list(rubric.labels)
    for verdict in verdicts:
        for label in verdict.distribution or {}:
            if label not in labels:
                labels.append(label)
    return labels


VERDICT_FILES = (".csv", ".jsonl")
"""The file kinds the verdicts of a scoring run are written as."""


def check_verdicts_path(path: str | Path) -> None:
    """A :class:`ConfigError` unless ``path`` names a kind of file the verdicts can be written
    as: checked before any judging, so a wrong name costs no call."""
    if Path(path).suffix not in VERDICT_FILES:
        raise ConfigError(f"cannot write {path}: use a .csv or .jsonl file name")
