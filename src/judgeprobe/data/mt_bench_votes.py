"""MT-Bench's released pairwise votes without the texts: human votes, GPT-4 verdicts, word counts.

The folder (``mt_bench_human_judgments/`` of the shared data) holds three files:

- ``human.csv``: the ``human`` split of ``lmsys/mt_bench_human_judgments``, one vote a row
  (``question_id, model_a, model_b, winner, judge, turn``; ``winner`` is ``model_a``, ``model_b``
  or ``tie``; ``judge`` is the rater, ``author_*`` or ``expert_*``);
- ``gpt4_pair.csv``: the ``gpt4_pair`` split in the same columns, one GPT-4 verdict per
  (question, pair of models, turn), each pair listed in one fixed order only; ``tie
  (inconsistent)`` marks a verdict that changed when the answers were swapped;
- ``mtbench_votes.json``: a re-encoding of both splits whose ``keys`` carry the number of
  words (``\\S+`` runs) of every model's answer to every turn of every question.

A unit is one (question, turn, unordered pair of models): the loader turns each into a
:class:`PairwiseItem` in the sorted model order, with every human vote on it (rater id kept,
ties kept), GPT-4's verdict as the recorded judge ``"gpt-4"`` and the two answers' lengths in
words as data (``item.lengths["words"]``). There are no texts (``has_texts=False``): probes that
need them refuse these items. A vote given with the models in the other order is mapped to the
unit's order through the winning model's name.

``match="ordered"`` instead keys units by the ordered pair as written in each file, the join the
length-null post used: a human vote given in the order opposite to GPT-4's row then sits in a
unit without GPT-4's verdict and drops out of every judge-human comparison.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from judgeprobe.data._records import (
    Record,
    RowError,
    RowProblems,
    Table,
    as_text,
    read_json,
    read_table,
)
from judgeprobe.data._votes import flip, parse_vote
from judgeprobe.data.dataset import Dataset, SkippedRow, check_on_error, files_sha256
from judgeprobe.data.items import PairwiseItem, Vote
from judgeprobe.data.tables import as_int
from judgeprobe.errors import ConfigError, DataError

GPT4 = "gpt-4"
"""The ``judge_votes`` key of GPT-4's recorded verdicts."""

HUMAN_FILE = "human.csv"
GPT4_FILE = "gpt4_pair.csv"
LENGTHS_FILE = "mtbench_votes.json"
FILES = (HUMAN_FILE, GPT4_FILE, LENGTHS_FILE)

Match = Literal["unordered", "ordered"]
MATCHES: tuple[Match, ...] = ("unordered", "ordered")

LengthScope = Literal["turn", "dialogue"]
"""Whose words a vote's lengths count. ``turn``: the answer of the judged turn only (what a
turn-1 rater read). ``dialogue``: both answers of the two-turn dialogue, whatever the judged turn
(the whole conversation of the published rows, the length-null post's measure)."""
LENGTH_SCOPES: tuple[LengthScope, ...] = ("turn", "dialogue")

_COLUMNS = ("question_id", "model_a", "model_b", "winner", "judge", "turn")
_KEY_FIELDS = 12  # [question, turn, i, j, P, Pinc, sa, sb, f, s, la, lb]

UnitKey = tuple[int, int, str, str]
"""(question, turn, model_a, model_b) of a unit."""


def load_mt_bench_votes(
    path: str | Path,
    *,
    match: Match = "unordered",
    lengths: LengthScope = "turn",
    on_error: Literal["raise", "skip"] = "raise",
    name: str | None = None,
) -> Dataset:
    """Load MT-Bench's released votes as one :class:`PairwiseItem` per unit, without texts.

    Parameters
    ----------
    path : str or Path
        The folder holding ``human.csv``, ``gpt4_pair.csv`` and ``mtbench_votes.json``, or one
        of those files (its folder is read).
    match : {"unordered", "ordered"}
        ``unordered`` (default): a unit is (question, turn, unordered model pair); every vote is
        mapped to the sorted model order by its winner's model name, so both orders of a pair
        meet GPT-4's verdict. ``ordered``: a unit is the ordered (question, model_a, model_b,
        turn) of each row, the length-null post's join; human votes in the order opposite to
        GPT-4's row form units without a GPT-4 verdict.
    lengths : {"turn", "dialogue"}
        What ``item.lengths["words"]`` counts (see :data:`LengthScope`).
    on_error : {"raise", "skip"}
        Policy for bad rows (an unknown winner or turn, a model pair without a word count).

    Returns
    -------
    Dataset
        Items keyed ``mtbench-<question>-<model_a>-vs-<model_b>-t<turn>`` with ``human_votes``
        (rater = ``judge``), ``judge_votes["gpt-4"]`` (``inconsistent=True`` for
        ``tie (inconsistent)``), ``lengths={"words": (len_a, len_b)}``, ``has_texts=False`` and
        ``metadata["rows"]`` (the unit's rows in each file). ``metadata`` of the set counts the
        rows, the units, the units with votes of both kinds and the human votes left without a
        GPT-4 verdict.
    """
    policy = check_on_error(on_error)
    if match not in MATCHES:
        raise ConfigError(f"match must be one of {MATCHES}, got {match!r}")
    if lengths not in LENGTH_SCOPES:
        raise ConfigError(f"lengths must be one of {LENGTH_SCOPES}, got {lengths!r}")
    folder = _folder(Path(path))
    words = read_word_counts(folder / LENGTHS_FILE)
    units: dict[UnitKey, _Unit] = {}
    skipped: list[SkippedRow] = []
    counts: Counter[str] = Counter()
    for file, human in ((HUMAN_FILE, True), (GPT4_FILE, False)):
        table = read_table(folder / file, on_error=policy)
        _require(table)
        problems = RowProblems(table.path, policy)
        for record in table.records:
            counts[f"{'human' if human else 'gpt4'}_rows"] += 1
            try:
                _add_row(units, record, human=human, match=match, words=words, scope=lengths)
            except RowError as error:
                problems.report_error(error, record)
        skipped.extend(table.skipped)
        skipped.extend(problems.skipped)
    items = tuple(unit.item() for unit in units.values())
    repeats = sorted(
        f"{unit.item_id}: {rater}"
        for unit in units.values()
        for rater, n in Counter(v.rater for v in unit.human).items()
        if n > 1
    )
    return Dataset(
        name=name or ("mt-bench-votes" if match == "unordered" else f"mt-bench-votes:{match}"),
        items=items,
        source=" + ".join(str(folder / f) for f in FILES),
        sha256=files_sha256([folder / f for f in FILES]),
        skipped=tuple(skipped),
        metadata={
            "match": match,
            "lengths": lengths,
            **counts,
            "units": len(items),
            "units_with_human_votes": sum(bool(u.human) for u in units.values()),
            "units_with_gpt4_vote": sum(bool(u.gpt4) for u in units.values()),
            "units_with_both": sum(bool(u.human and u.gpt4) for u in units.values()),
            "human_votes_without_gpt4_vote": sum(
                len(u.human) for u in units.values() if not u.gpt4
            ),
            "raters_voting_twice_on_a_unit": repeats,
        },
    )


def read_word_counts(path: str | Path) -> dict[tuple[int, int, str], int]:
    """The word count of each (question, turn, model) answer in ``mtbench_votes.json``.

    Raises :class:`DataError` when the file is not in the published schema or gives one answer
    two different counts.
    """
    where = str(path)
    data = read_json(path)
    models = data.get("models") if isinstance(data, dict) else None
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise DataError("expected a 'models' list of model names", path=where, column="models")
    if not isinstance(keys, list):
        raise DataError("expected a 'keys' list", path=where, column="keys")
    counts: dict[tuple[int, int, str], int] = {}
    for index, key in enumerate(keys):
        where_key = f"keys[{index}]"
        if (
            not isinstance(key, list)
            or len(key) != _KEY_FIELDS
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in key)
        ):
            raise DataError(f"{where_key}: expected a list of {_KEY_FIELDS} numbers", path=where)
        question, turn, i, j = (int(v) for v in key[:4])
        if not (0 <= i < len(models) and 0 <= j < len(models)):
            raise DataError(f"{where_key}: model index out of range", path=where)
        for model, value, column in ((models[i], key[10], "la"), (models[j], key[11], "lb")):
            if value < 0 or not float(value).is_integer():
                raise DataError(f"{where_key}: bad word count {value!r}", path=where, column=column)
            known = counts.setdefault((question, turn, model), int(value))
            if known != value:
                raise DataError(
                    f"{where_key}: {model}'s turn-{turn} answer to question {question} has "
                    f"{int(value)} words here and {known} in an earlier key",
                    path=where,
                    column=column,
                )
    return counts


@dataclass
class _Unit:
    """The votes of one unit, in its model order."""

    key: UnitKey
    lengths: tuple[int, int]
    human: list[Vote] = field(default_factory=list)
    gpt4: list[Vote] = field(default_factory=list)
    rows: dict[str, list[int]] = field(default_factory=lambda: {"human": [], "gpt4_pair": []})

    @property
    def item_id(self) -> str:
        question, turn, model_a, model_b = self.key
        return f"mtbench-{question}-{model_a}-vs-{model_b}-t{turn}"

    def item(self) -> PairwiseItem:
        question, turn, model_a, model_b = self.key
        return PairwiseItem(
            id=self.item_id,
            prompt="",
            response_a="",
            response_b="",
            human_votes=tuple(self.human),
            judge_votes={GPT4: tuple(self.gpt4)} if self.gpt4 else {},
            turn=turn,
            question_id=str(question),
            model_a=model_a,
            model_b=model_b,
            metadata={"rows": {k: list(v) for k, v in self.rows.items()}},
            lengths={"words": self.lengths},
            has_texts=False,
        )


def _add_row(
    units: dict[UnitKey, _Unit],
    record: Record,
    *,
    human: bool,
    match: Match,
    words: dict[tuple[int, int, str], int],
    scope: LengthScope,
) -> None:
    values = record.values
    question = as_int(values.get("question_id"), "question_id")
    turn = as_int(values.get("turn"), "turn")
    model_a = as_text(values.get("model_a"), "model_a", allow_empty=False)
    model_b = as_text(values.get("model_b"), "model_b", allow_empty=False)
    if model_a == model_b:
        raise RowError(f"model_a and model_b are the same model {model_a!r}", column="model_b")
    rater = as_text(values.get("judge"), "judge", allow_empty=False)
    vote = parse_vote(values.get("winner"), "winner", rater=rater, model_a=model_a, model_b=model_b)
    column_a, column_b = "model_a", "model_b"  # where each model is named in the file
    if match == "unordered" and model_b < model_a:
        model_a, model_b, vote = model_b, model_a, flip(vote)
        column_a, column_b = column_b, column_a
    key = (question, turn, model_a, model_b)
    unit = units.get(key)
    if unit is None:
        length_a = _words(words, question, turn, model_a, scope, column_a)
        length_b = _words(words, question, turn, model_b, scope, column_b)
        unit = units[key] = _Unit(key, (length_a, length_b))
    (unit.human if human else unit.gpt4).append(vote)
    unit.rows["human" if human else "gpt4_pair"].append(record.row)


def _words(
    words: dict[tuple[int, int, str], int],
    question: int,
    turn: int,
    model: str,
    scope: LengthScope,
    column: str,
) -> int:
    turns = (1, 2) if scope == "dialogue" else (turn,)
    total = 0
    for one in turns:
        count = words.get((question, one, model))
        if count is None:
            raise RowError(
                f"{LENGTHS_FILE} has no word count of {model}'s turn-{one} answer to question "
                f"{question}",
                column=column,
            )
        total += count
    return total


def _folder(path: Path) -> Path:
    folder = path.parent if path.is_file() else path
    if not folder.is_dir():
        raise DataError("not found: expected the folder of the MT-Bench votes", path=str(path))
    for name in FILES:
        if not (folder / name).is_file():
            raise DataError(
                f"missing {name}: the folder must hold {', '.join(FILES)}", path=str(folder)
            )
    return folder


def _require(table: Table) -> None:
    listing = ", ".join(repr(c) for c in table.columns)
    for column in _COLUMNS:
        if column not in table.columns:
            raise DataError(
                f"missing required column; available columns: {listing}",
                path=table.path,
                column=column,
            )
