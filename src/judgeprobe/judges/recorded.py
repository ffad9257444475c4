"""Recorded verdicts as a judge: scores a judge gave elsewhere, read from a file.

``--judge recorded:PATH`` audits a judge the user already ran (a production classifier's log, a
scorer's CSV): the file holds one row per item, with the item's id (``id`` or ``item_id``) and a
``score`` or a ``label`` (a label of the rubric's scale; ``winner`` for a pairwise file), and
optionally ``probability`` and ``p_<label>`` columns (the judge's label distribution). CSV,
JSONL and Parquet are read; the output of ``judgeprobe score -o`` is one such file (its rows of a
``status`` other than ``ok`` are verdicts that failed, its trials after the first are ignored).
An Inspect eval log, a promptfoo results file and exported PyRIT scores are read too
(:mod:`judgeprobe.judges.recorded_formats`; the format is detected from the content, or forced
with ``recorded:FORMAT:PATH`` or the option ``format=``). ``recorded:dataset:NAME`` is the votes
of the judge ``NAME`` that the pairwise dataset itself ships (PandaLM's ``gpt-3.5-turbo``,
MT-Bench's ``gpt-4``). A bad row is a :class:`~judgeprobe.errors.DataError` naming the file and
the line (or record).

A recorded judge can answer only a request for an item as it is in the dataset: the judge is
bound to the audit's items (:meth:`RecordedJudge.bind`) and looks each request up by the item
fields it carries. An audit asks every probe, before any verdict is looked up, whether it needs
other inputs (a repeated response, a rewritten rubric), and refuses such a probe by name
(:func:`judgeprobe.runs.probe.check_recorded`). Ids in the file that are not in the dataset,
and items with no recorded verdict, are counted and listed in the judge's description (so in
the card); an item without a verdict gets an error verdict, which the probes count and leave out.
Items identical in the rubric's inputs make one request, so they share one verdict: that of the
first of them in the dataset.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from judgeprobe._util.csv_cells import ESCAPED_COLUMN, unescape_record
from judgeprobe._util.hashing import content_hash
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data._records import RowError, Table, as_score, is_missing
from judgeprobe.data.items import (
    Item,
    PairwiseChoice,
    PairwiseItem,
    PointwiseItem,
    Vote,
    item_fields,
)
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.judges.base import BaseJudge
from judgeprobe.judges.recorded_formats import FILE_FORMATS, read_verdicts
from judgeprobe.rubrics import Rubric

ID_COLUMNS = ("id", "item_id")
LABEL_COLUMNS = ("label", "winner")
RAW_COLUMNS = ("raw", "raw_text")
"""The judge's answer as given (the formats' readers write ``raw``; ``judgeprobe score -o``
writes ``raw_text``)."""
LISTED = 20
"""How many unknown ids and unjudged items the description lists (all are counted)."""
DATASET = "dataset"
"""The source of ``recorded:dataset:NAME``: votes the dataset's items carry, no file."""
PROBABILITY_PREFIX = "p_"


def split_target(target: str, fmt: str | None = None) -> tuple[str | None, str]:
    """``(format, path)`` of ``recorded:`` spec's target: ``FORMAT:PATH`` names the format when
    ``FORMAT`` is one of the known ones (so a path with a colon still reads as a path)."""
    head, colon, rest = target.partition(":")
    if colon and head.lower() in (*FILE_FORMATS, DATASET):
        if fmt is not None and fmt != head.lower():
            raise ConfigError(f"recorded:{target}: format {head!r} and format={fmt!r} disagree")
        return head.lower(), rest
    return fmt, target


class VerdictStore(Protocol):
    """Where :meth:`RecordedJudge.store_looked_up` puts verdicts (the run store)."""

    def put(self, request: Request, verdict: Verdict) -> Verdict: ...


class RecordedJudge(BaseJudge):
    """Verdicts read from ``path`` (a verdict file, or ``dataset:NAME``), keyed by item id.

    ``format`` forces a file format (see :mod:`judgeprobe.judges.recorded_formats`); ``scorer``
    picks an Inspect log's scorer, ``id_var`` the promptfoo var and ``id_field`` the PyRIT field
    that hold the item id.
    """

    backend = "recorded"

    def __init__(
        self,
        path: str | Path,
        format: str | None = None,
        scorer: str | None = None,
        id_var: str | None = None,
        id_field: str | None = None,
    ) -> None:
        fmt, target = split_target(str(path), format)
        if not target:
            raise ConfigError("judge spec 'recorded:' needs the path of a verdict file")
        self.rows: dict[str, dict[str, Any]] = {}
        self._items: dict[str, PointwiseItem] = {}
        self._pairs: dict[str, PairwiseItem] = {}
        self._by_fields: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
        self.vote_source: str | None = None
        self.looked_up: dict[str, tuple[Request, Verdict]] = {}
        if fmt == DATASET:
            self.format, self.vote_source, self.path = DATASET, target, Path(target)
            self.source_name = f"{DATASET}:{target}"
            return
        self.path = Path(target)
        self.source_name = self.path.name
        options = {"scorer": scorer, "id_var": id_var, "id_field": id_field}
        self.format, table = read_verdicts(self.path, fmt, options)
        self._read(table)

    def _read(self, table: Table) -> None:
        id_column = next((c for c in ID_COLUMNS if c in table.columns), None)
        label_column = next((c for c in LABEL_COLUMNS if c in table.columns), None)
        listing = ", ".join(repr(c) for c in table.columns)
        if id_column is None:
            raise DataError(
                f"recorded verdicts need an item id column ('id' or 'item_id'); columns: {listing}",
                path=str(self.path),
            )
        if not {"score", "truth", "status"} & set(table.columns) and label_column is None:
            raise DataError(
                f"recorded verdicts need a 'score' or a 'label' column; columns: {listing}",
                path=str(self.path),
            )
        escaped = ESCAPED_COLUMN in table.columns  # `judgeprobe score -o x.csv` output
        for record in table.records:
            path, line = str(self.path), record.line or record.row
            values = unescape_record(record.values) if escaped else record.values
            if is_missing(values.get(id_column)):
                raise DataError("missing item id", column=id_column, path=path, row=line)
            item_id = str(values[id_column]).strip()
            if "trial" in table.columns and str(values.get("trial")).strip() not in ("0", "0.0"):
                continue  # `judgeprobe score --trials N` output: the first trial is the verdict
            if item_id in self.rows:
                raise DataError(
                    f"item id {item_id!r} occurs twice", column=id_column, path=path, row=line
                )
            try:
                row = _row(values, label_column)
            except RowError as error:
                raise DataError(error.reason, column=error.column, path=path, row=line) from None
            if "failed" not in row and not {"score", "label", "truth"} & set(row):
                raise DataError("neither a score nor a label", path=path, row=line)
            self.rows[item_id] = row

    # -- binding to the dataset ---------------------------------------------------------------
    def bind(self, items: Sequence[Item]) -> None:
        """Make the dataset's ``items`` answerable: pointwise requests are matched by their
        fields; pairwise items get their votes from the file (or the dataset's own source)."""
        for item in items:
            if isinstance(item, PointwiseItem):
                self._items[item.id] = item
            else:
                self._pairs[item.id] = item
        self._by_fields.clear()
        if self.vote_source is not None:
            self._bind_dataset_votes(self.vote_source)

    def _bind_dataset_votes(self, source: str) -> None:
        if self._items:
            raise ConfigError(
                f"judge recorded:dataset:{source}: the votes a pairwise dataset ships; this "
                "audit's data holds pointwise items (use recorded:PATH for a file of verdicts)"
            )
        known = sorted({name for item in self._pairs.values() for name in item.judge_votes})
        if self._pairs and source not in known:
            raise ConfigError(
                f"judge recorded:dataset:{source}: no item of the data has votes of that judge; "
                f"its recorded judges: {', '.join(map(repr, known)) or 'none'}"
            )
        self.rows = {
            item.id: {"votes": item.judge_votes[source]}
            for item in self._pairs.values()
            if item.judge_votes.get(source)  # an empty tuple: unparsed in the source
        }

    def _item_id(self, request: Request) -> str | None:
        rubric_hash = request.rubric.hash
        if not any(key[0] == rubric_hash for key in self._by_fields):
            for item in self._items.values():
                fields = Request.make("", request.rubric, item_fields(item)).fields
                self._by_fields.setdefault((rubric_hash, fields), item.id)
        return self._by_fields.get((rubric_hash, request.fields))

    def answers(self, request: Request) -> bool:
        """True when ``request`` asks about a bound item as it is (so no new call is needed)."""
        return self._item_id(request) is not None

    @property
    def coverage(self) -> dict[str, Any]:
        """Ids in the file but not in the dataset, and items with no recorded verdict."""
        bound = set(self._items) | set(self._pairs)
        unknown = sorted(set(self.rows) - bound)
        unjudged = sorted(bound - set(self.rows))
        return {
            "rows": len(self.rows),
            "unknown_ids": len(unknown),
            "unknown_ids_listed": unknown[:LISTED],
            "items_without_verdict": len(unjudged),
            "items_without_verdict_listed": unjudged[:LISTED],
        }

    def pairwise_votes(self, rubric: Rubric) -> dict[str, tuple[Vote, ...]]:
        """The recorded vote on each pairwise item (a label A/B/tie, or a score that is the
        value of one of ``rubric``'s labels); rows of failed verdicts have none."""
        name = self.name
        votes: dict[str, tuple[Vote, ...]] = {}
        for item_id, row in self.rows.items():
            if "votes" in row:
                votes[item_id] = tuple(row["votes"])
                continue
            label = row.get("label")
            if label is None and "score" in row:
                label = next((k for k, v in rubric.values.items() if v == row["score"]), None)
            choice = _choice(label)
            votes[item_id] = (
                ()
                if choice is None
                else (Vote(choice, rater=name, inconsistent="inconsistent" in str(label).lower()),)
            )
        return votes

    # -- the judge ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """``recorded:`` and the file's base name (or ``dataset:NAME``): the card's judge name."""
        return f"recorded:{self.source_name}"

    @property
    def sha256(self) -> str:
        """The hash of the verdicts (for a dataset source, of the votes bound so far)."""
        return content_hash(sorted((k, repr(v)) for k, v in self.rows.items()))

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "name": self.name,
            "format": self.format,
            "path": str(self.path) if self.vote_source is None else None,
            "file": self.path.name if self.vote_source is None else None,
            "vote_source": self.vote_source,
            "verdicts_sha256": self.sha256,
            "coverage": self.coverage,
        }

    @property
    def fingerprint(self) -> str:
        # the verdicts, not the dataset it is bound to, identify this judge
        return content_hash(
            {"backend": self.backend, "source": self.source_name, "verdicts": self.sha256}
        )

    async def judge(self, request: Request) -> Verdict:
        return self.lookup(request)

    def store_looked_up(self, store: VerdictStore) -> int:
        """Put every verdict looked up so far (an audit's check plans each probe in full) in
        ``store``, so the engine reads them from it and makes no judge call; how many."""
        for request, verdict in self.looked_up.values():
            store.put(request, verdict.but(key=request.key, trial=request.trial, attempts=0))
        return len(self.looked_up)

    def lookup(self, request: Request) -> Verdict:
        """The recorded verdict of ``request`` (an error verdict when there is none)."""
        verdict = self._lookup(request)
        self.looked_up[request.key] = (request, verdict)
        return verdict

    def _lookup(self, request: Request) -> Verdict:
        item_id = self._item_id(request)
        if item_id is None:
            return Verdict.failed("no recorded verdict: the request is not an item of the dataset")
        row = self.rows.get(item_id)
        if row is None:
            return Verdict.failed(f"no recorded verdict for item {item_id!r}")
        if "failed" in row:
            return Verdict.failed(str(row["failed"]))
        rubric = request.rubric
        label = _truth_label(rubric, row["truth"]) if "truth" in row else row.get("label")
        raw = str(row.get("raw") or row.get("label", row.get("score", "")))
        if "score" in row:
            score = float(row["score"])
        elif label is None or label not in rubric.values:
            return Verdict.unparseable(raw or str(label))
        else:
            score = rubric.value_of(label)
        if not math.isfinite(score):
            return Verdict.unparseable(str(score))
        recorded = (
            rubric.value_of(label) if isinstance(label, str) and label in rubric.values else None
        )
        if recorded is not None and "score" in row and recorded != score:
            # a recorded label 1 with a score 5: which one the judge meant cannot be told
            return Verdict.unparseable(
                raw,
                error=f"the recorded label {label!r} (value {recorded:g}) and score {score:g} "
                "disagree",
            )
        meta: Mapping[str, Any] = (
            {"probability": row["probability"]} if "probability" in row else {}
        )
        return Verdict.scored(
            score,
            label=label if label in rubric.values else None,
            distribution=row.get("distribution"),
            raw_text=raw,
            meta=meta,
        )


def _row(values: Mapping[str, Any], label_column: str | None) -> dict[str, Any]:
    """One verdict row as the judge keeps it (RowError on a bad value)."""
    status = values.get("status")
    if not is_missing(status) and status != "ok":
        return {"failed": f"recorded with status {status!r}"}
    row: dict[str, Any] = {}
    for column in ("score", "probability"):
        if not is_missing(values.get(column)):
            row[column] = as_score(values[column], column)
    if label_column is not None and not is_missing(values.get(label_column)):
        row["label"] = str(values[label_column]).strip()
    if isinstance(values.get("truth"), bool):
        row["truth"] = values["truth"]
    raw = next((values[c] for c in RAW_COLUMNS if not is_missing(values.get(c))), None)
    if raw is not None:
        row["raw"] = str(raw)
    distribution = {
        column[len(PROBABILITY_PREFIX) :]: as_score(value, column)
        for column, value in values.items()
        if column.startswith(PROBABILITY_PREFIX) and not is_missing(value)
    }
    if distribution:
        row["distribution"] = distribution
    return row


def _choice(label: str | None) -> PairwiseChoice | None:
    """A pairwise label as a choice: ``A``/``B`` (also ``model_a``/``model_b``), or any text
    holding ``tie`` (MT-Bench's ``tie (inconsistent)`` included)."""
    text = str(label or "").strip().lower()
    if "tie" in text:
        return "tie"
    return {"a": "A", "model_a": "A", "b": "B", "model_b": "B"}.get(text)  # type: ignore[return-value]


def _truth_label(rubric: Rubric, truth: bool) -> str | None:
    """The label a true/false verdict (PyRIT's ``true_false``) means under ``rubric``: the label
    ``true``/``false`` where the scale has it, else the first label the rubric's decision rule
    calls positive (for true) or negative (for false)."""
    wanted = "true" if truth else "false"
    if wanted in rubric.values:
        return wanted
    if rubric.decision is None:
        return None
    decision = rubric.decision.positive if truth else rubric.decision.negative
    return next((k for k, v in rubric.values.items() if rubric.decision_of(v) == decision), None)
