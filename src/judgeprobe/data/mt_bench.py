"""MT-Bench human judgments (``lmsys/mt_bench_human_judgments``, Zheng et al. 2023).

Each published row is one vote: ``question_id``, ``model_a``, ``model_b``, ``winner``
(``model_a``/``model_b``/``tie``, and ``tie (inconsistent)`` when GPT-4 contradicted itself after
the answers were swapped), ``judge``, ``turn`` and the two conversations (lists of
``{role, content}``). The same comparison appears as (A, B) in one row and (B, A) in another, so
rows are grouped on (question, *sorted* model pair, turn) and votes are flipped to that order;
otherwise one item would split in two and the human-human agreement ceiling would collapse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from judgeprobe._util.hashing import content_hash
from judgeprobe.data._records import (
    Record,
    RowError,
    RowProblems,
    Table,
    as_text,
    read_table,
    records_from_rows,
)
from judgeprobe.data._votes import flip, parse_vote
from judgeprobe.data.dataset import Dataset, SkippedRow, check_on_error, files_sha256
from judgeprobe.data.items import PairwiseItem, Vote
from judgeprobe.data.tables import as_int
from judgeprobe.errors import ConfigError, DataError, MissingDependencyError

HUB_ID = "lmsys/mt_bench_human_judgments"
"""The Hugging Face dataset id; its splits are ``human`` (expert and author votes) and
``gpt4_pair`` (GPT-4 pairwise verdicts)."""

GPT4 = "gpt-4"
"""The ``judge_votes`` key of the recorded GPT-4 verdicts."""

Split = Literal["human", "gpt4_pair", "both"]
SPLITS: tuple[Split, ...] = ("human", "gpt4_pair", "both")

_COLUMNS = (
    "question_id",
    "model_a",
    "model_b",
    "winner",
    "judge",
    "conversation_a",
    "conversation_b",
    "turn",
)

Message = Mapping[str, str]


def load_mt_bench_human(
    path_or_split: str | Path,
    *,
    split: Split = "human",
    on_error: Literal["raise", "skip"] = "raise",
    name: str | None = None,
) -> Dataset:
    """Load MT-Bench pairwise judgments as one :class:`PairwiseItem` per comparison.

    Parameters
    ----------
    path_or_split : str or Path
        A local ``.parquet``, ``.jsonl`` or ``.json`` file in the published schema; or the hub id
        ``"lmsys/mt_bench_human_judgments"`` (or a bare split name ``"human"``/``"gpt4_pair"``/
        ``"both"``) to download it with the optional ``datasets`` package
        (``pip install 'judgeprobe[hf]'``).
    split : {"human", "gpt4_pair", "both"}
        Which rows these are. ``"gpt4_pair"``: every row is a GPT-4 verdict. ``"human"`` and
        ``"both"``: rows whose ``judge`` names GPT-4 (``gpt4...``/``gpt-4...``) are GPT-4 verdicts,
        the others human votes, so a file holding both published splits loads as one set. From
        the hub, ``"both"`` downloads both splits and merges them.
    on_error : {"raise", "skip"}
        Policy for bad rows (unknown winner, a conversation without the judged turn, answers that
        differ between rows of the same comparison).

    Returns
    -------
    Dataset
        Items keyed ``mtbench-<question>-<model x>-vs-<model y>-t<turn>`` with
        ``model_a < model_b`` (sorted), ``prompt`` = the user message of the judged turn,
        ``response_a``/``response_b`` = the two answers to it, the full conversations, human votes
        (rater = ``judge``) and ``judge_votes["gpt-4"]`` with ``inconsistent=True`` for
        ``tie (inconsistent)``. ``metadata["rows"]`` lists each item's source rows.
    """
    policy = check_on_error(on_error)
    if split not in SPLITS:
        raise ConfigError(f"split must be one of {SPLITS}, got {split!r}")
    spec = str(path_or_split)
    for bare in SPLITS:
        if spec == bare and not Path(spec).exists():
            split, spec = bare, HUB_ID
    if spec == HUB_ID:
        tables = _hub_tables(split, policy)
        source = f"hf:{HUB_ID}:{split}"
        sha = content_hash([[r.values for r in t.records] for _, t in tables])
    else:
        tables = [(split, read_table(path_or_split, on_error=policy))]
        source = str(path_or_split)
        sha = files_sha256([path_or_split])
    groups: dict[tuple[str, str, str, int], _Group] = {}
    skipped: list[SkippedRow] = []
    counts = {"rows": 0, "flipped_rows": 0, "inconsistent_ties": 0}
    for table_split, table in tables:
        _require(table)
        problems = RowProblems(table.path, policy)
        for record in table.records:
            counts["rows"] += 1
            try:
                flipped, inconsistent = _add_row(groups, record, table_split)
            except RowError as error:
                problems.report_error(error, record)
                continue
            counts["flipped_rows"] += flipped
            counts["inconsistent_ties"] += inconsistent
        skipped.extend(table.skipped)
        skipped.extend(problems.skipped)
    items = tuple(group.item() for group in groups.values())
    return Dataset(
        name=name or f"mt-bench-human:{split}",
        items=items,
        source=source,
        sha256=sha,
        skipped=tuple(skipped),
        metadata={"split": split, **counts},
    )


@dataclass
class _Group:
    """The rows of one comparison, in the sorted model order."""

    key: tuple[str, str, str, int]
    prompt: str
    response_a: str
    response_b: str
    conversation_a: tuple[Message, ...]
    conversation_b: tuple[Message, ...]
    first_row: int
    rows: list[int] = field(default_factory=list)
    human: list[Vote] = field(default_factory=list)
    gpt4: list[Vote] = field(default_factory=list)

    def item(self) -> PairwiseItem:
        question_id, model_a, model_b, turn = self.key
        return PairwiseItem(
            id=f"mtbench-{question_id}-{model_a}-vs-{model_b}-t{turn}",
            prompt=self.prompt,
            response_a=self.response_a,
            response_b=self.response_b,
            human_votes=tuple(self.human),
            judge_votes={GPT4: tuple(self.gpt4)} if self.gpt4 else {},
            turn=turn,
            question_id=question_id,
            model_a=model_a,
            model_b=model_b,
            conversation_a=self.conversation_a,
            conversation_b=self.conversation_b,
            metadata={"rows": list(self.rows)},
        )


def _add_row(
    groups: dict[tuple[str, str, str, int], _Group], record: Record, split: Split
) -> tuple[bool, bool]:
    values = record.values
    question_id = as_text(values.get("question_id"), "question_id", allow_empty=False).strip()
    model_a = as_text(values.get("model_a"), "model_a", allow_empty=False)
    model_b = as_text(values.get("model_b"), "model_b", allow_empty=False)
    if model_a == model_b:
        raise RowError(f"model_a and model_b are the same model {model_a!r}", column="model_b")
    judge = as_text(values.get("judge"), "judge", allow_empty=False)
    turn = as_int(values.get("turn"), "turn")
    vote = parse_vote(values.get("winner"), "winner", rater=judge, model_a=model_a, model_b=model_b)
    conversation_a = _conversation(values.get("conversation_a"), "conversation_a")
    conversation_b = _conversation(values.get("conversation_b"), "conversation_b")
    prompt, answer_a = _turn(conversation_a, turn, "conversation_a")
    prompt_b, answer_b = _turn(conversation_b, turn, "conversation_b")
    if prompt != prompt_b:
        raise RowError(
            f"the user messages of turn {turn} differ between the two conversations",
            column="conversation_b",
        )
    flipped = model_b < model_a
    if flipped:
        model_a, model_b = model_b, model_a
        conversation_a, conversation_b = conversation_b, conversation_a
        answer_a, answer_b = answer_b, answer_a
        vote = flip(vote)
    key = (question_id, model_a, model_b, turn)
    group = groups.get(key)
    if group is None:
        group = _Group(key, prompt, answer_a, answer_b, conversation_a, conversation_b, record.row)
        groups[key] = group
    elif (prompt, answer_a, answer_b) != (group.prompt, group.response_a, group.response_b):
        raise RowError(
            f"the turn-{turn} texts differ from row {group.first_row} of the same comparison",
            column="conversation_a",
        )
    group.rows.append(record.row)
    if split == "gpt4_pair" or judge.lower().startswith(("gpt4", "gpt-4")):
        group.gpt4.append(vote)
    else:
        group.human.append(vote)
    return flipped, vote.inconsistent


def _conversation(value: Any, column: str) -> tuple[Message, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise RowError("conversation is a string but not JSON", column=column) from None
    if hasattr(value, "tolist"):  # a numpy array from pandas
        value = value.tolist()
    if not isinstance(value, list) or not value:
        raise RowError("expected a non-empty list of {role, content} messages", column=column)
    messages: list[Message] = []
    for position, message in enumerate(value, start=1):
        if not isinstance(message, Mapping):
            raise RowError(f"message {position} is not a {{role, content}} object", column=column)
        role, content = message.get("role"), message.get("content")
        if not isinstance(role, str) or not isinstance(content, str):
            raise RowError(f"message {position} lacks a text role or content", column=column)
        messages.append({"role": role, "content": content})
    return tuple(messages)


def _turn(conversation: tuple[Message, ...], turn: int, column: str) -> tuple[str, str]:
    """The user message of ``turn`` (1-based) and the assistant answer that follows it."""
    users = [i for i, m in enumerate(conversation) if m["role"] == "user"]
    if len(users) < turn:
        raise RowError(
            f"conversation has {len(users)} user turn(s), not turn {turn}", column=column
        )
    at = users[turn - 1]
    if at + 1 >= len(conversation) or conversation[at + 1]["role"] != "assistant":
        raise RowError(f"turn {turn} has no assistant answer", column=column)
    return conversation[at]["content"], conversation[at + 1]["content"]


def _require(table: Table) -> None:
    listing = ", ".join(repr(c) for c in table.columns)
    for column in _COLUMNS:
        if column not in table.columns:
            raise DataError(
                f"missing required column; available columns: {listing}",
                path=table.path,
                column=column,
            )


def _hub_tables(split: Split, policy: Literal["raise", "skip"]) -> list[tuple[Split, Table]]:
    try:
        import datasets
    except ImportError:
        raise MissingDependencyError("datasets", extra="hf") from None
    names: tuple[Split, ...] = ("human", "gpt4_pair") if split == "both" else (split,)
    tables: list[tuple[Split, Table]] = []
    for one in names:
        where = f"hf:{HUB_ID}:{one}"
        try:
            rows = datasets.load_dataset(HUB_ID, split=one).to_list()
        except Exception as exc:  # network, auth and cache errors have no common base
            raise DataError(
                f"cannot load the dataset from the Hugging Face hub ({exc})", path=where
            ) from None
        tables.append((one, records_from_rows(where, rows, on_error=policy)))
    return tables
