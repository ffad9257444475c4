"""Published pairwise preference sets: LLMBar, PandaLM, HH-RLHF, JudgeBench, EvalBiasBench.

Each loader maps one file layout onto :class:`PairwiseItem`. The reference label goes into
``human_votes`` with a rater id that says what it is (``"gold"``, ``"annotator1"``,
``"crowdworker"``, ``"ground_truth"``); verdicts of judges published with a set go into
``judge_votes``. Where a source always puts the better response first (EvalBiasBench) or keeps
it in a fixed column (HH-RLHF's ``chosen``), the loader randomises the order with a seeded RNG
so that position is not confounded with quality.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from judgeprobe._util.hashing import content_hash
from judgeprobe.data._records import (
    Record,
    RowError,
    RowProblems,
    Table,
    as_text,
    is_missing,
    optional_text,
    read_json,
    read_table,
)
from judgeprobe.data._votes import flip, parse_vote
from judgeprobe.data.dataset import Dataset, SkippedRow, check_on_error, files_sha256
from judgeprobe.data.items import Item, PairwiseItem, Vote
from judgeprobe.errors import DataError

PathLike = str | Path
OnErrorArg = Literal["raise", "skip"]

GPT35 = "gpt-3.5-turbo"
PANDALM = "pandalm-7b"


def load_llmbar(
    path: PathLike, *, on_error: OnErrorArg = "raise", name: str | None = None
) -> Dataset:
    """Load one LLMBar ``dataset.json`` (``input``, ``output_1``, ``output_2``, ``label`` 1/2).

    ``path`` is the file or the folder holding it. The label is the authors' gold preference
    (for ``Processed/*`` the human majority, ties removed): one vote with rater ``"gold"``.
    ``category`` is the subset path under ``Dataset/`` (e.g. ``"LLMBar/Adversarial/Neighbor"``).
    """
    policy = check_on_error(on_error)
    file = Path(path) / "dataset.json" if Path(path).is_dir() else Path(path)
    subset = _llmbar_subset(file)
    table = read_table(file, on_error=policy, fmt="json")
    _require(table, ("input", "output_1", "output_2", "label"))
    slug = re.sub(r"[^a-z0-9]+", "-", subset.lower()).strip("-")
    problems = RowProblems(table.path, policy)
    items: list[Item] = []
    for record in table.records:
        values = record.values
        try:
            vote = parse_vote(values.get("label"), "label", rater="gold")
            items.append(
                PairwiseItem(
                    id=f"llmbar-{slug}-{record.row}",
                    prompt=as_text(values.get("input"), "input"),
                    response_a=as_text(values.get("output_1"), "output_1"),
                    response_b=as_text(values.get("output_2"), "output_2"),
                    human_votes=(vote,),
                    category=subset,
                    metadata=_extra(values, {"input", "output_1", "output_2", "label"}),
                )
            )
        except RowError as error:
            problems.report_error(error, record)
    return _dataset(name or f"llmbar:{subset}", items, [file], table, problems)


def load_pandalm(
    testset_path: PathLike,
    *,
    gpt_path: PathLike | None = None,
    pandalm_path: PathLike | None = None,
    on_error: OnErrorArg = "raise",
    name: str | None = None,
) -> Dataset:
    """Load the PandaLM test set: three human annotators per pair, ties allowed.

    Parameters
    ----------
    testset_path : path
        ``testset-v1.json``, or the folder holding it.
    gpt_path, pandalm_path : path, optional
        The recorded judge verdicts (``gpt-3.5-turbo-testset-v1.json``,
        ``pandalm-7b-testset-v1.json``), joined on ``idx``. When omitted, the file of that
        standard name next to the test set is used if it exists.
    on_error : {"raise", "skip"}
        Policy for bad rows (an annotator label outside 0/1/2, a missing response).

    Returns
    -------
    Dataset
        ``prompt`` = ``instruction`` plus ``input`` (blank line between, when there is one);
        ``human_votes`` = annotator1..3 (1 -> A, 2 -> B, 0 -> tie); ``judge_votes`` =
        ``{"gpt-3.5-turbo": ..., "pandalm-7b": ...}``. GPT-3.5's ``garbage`` answers give an empty
        vote tuple and are counted in ``metadata["judge_unparsed"]``; items a judge file lacks are
        counted in ``metadata["judge_missing"]``. ``question_id`` groups the pairs that share a
        prompt (170 distinct prompts), ``category`` is ``motivation_app``; the model pair is kept
        as ``metadata["cmp_key"]`` (its order is not known to follow the response order).
        JSON booleans among the responses are cast with ``str()``.
    """
    policy = check_on_error(on_error)
    base = Path(testset_path)
    testset = base / "testset-v1.json" if base.is_dir() else base
    folder = testset.parent
    judge_files: dict[str, Path] = {}
    for judge, given, default in (
        (GPT35, gpt_path, "gpt-3.5-turbo-testset-v1.json"),
        (PANDALM, pandalm_path, "pandalm-7b-testset-v1.json"),
    ):
        if given is not None:
            judge_files[judge] = Path(given)
        elif (folder / default).is_file():
            judge_files[judge] = folder / default
    table = read_table(testset, on_error=policy, fmt="json")
    required = ("idx", "instruction", "input", "response1", "response2")
    _require(table, (*required, "annotator1", "annotator2", "annotator3"))
    verdicts = {
        judge: _pandalm_verdicts(judge, file, policy) for judge, file in judge_files.items()
    }
    problems = RowProblems(table.path, policy)
    for judge_verdicts in verdicts.values():
        problems.skipped.extend(judge_verdicts.skipped)
    unparsed: Counter[str] = Counter({judge: 0 for judge in verdicts})
    missing: Counter[str] = Counter({judge: 0 for judge in verdicts})
    items: list[Item] = []
    seen: set[str] = set()
    for record in table.records:
        values = record.values
        try:
            idx = _index(values.get("idx"))
            if idx in seen:
                raise RowError(f"duplicate idx {idx}", column="idx")
            instruction = as_text(values.get("instruction"), "instruction")
            extra_input = "" if is_missing(values.get("input")) else str(values.get("input"))
            prompt = f"{instruction}\n\n{extra_input}" if extra_input.strip() else instruction
            human = tuple(
                parse_vote(values.get(column), column, rater=column)
                for column in ("annotator1", "annotator2", "annotator3")
            )
            judge_votes: dict[str, tuple[Vote, ...]] = {}
            raw: dict[str, Any] = {}
            for judge, judge_verdicts in verdicts.items():
                if idx not in judge_verdicts.raw:
                    missing[judge] += 1
                    continue
                raw[judge] = judge_verdicts.raw[idx]
                vote = judge_verdicts.votes.get(idx)
                judge_votes[judge] = (vote,) if vote is not None else ()
                if vote is None:
                    unparsed[judge] += 1
            item = PairwiseItem(
                id=f"pandalm-{idx}",
                prompt=prompt,
                response_a=as_text(values.get("response1"), "response1"),
                response_b=as_text(values.get("response2"), "response2"),
                human_votes=human,
                judge_votes=judge_votes,
                question_id="q" + content_hash(prompt, length=12),
                category=optional_text(values.get("motivation_app")),
                metadata={
                    "idx": values.get("idx"),
                    "instruction": instruction,
                    "input": extra_input,
                    "cmp_key": values.get("cmp_key"),
                    "judge_raw": raw,
                },
            )
        except RowError as error:
            problems.report_error(error, record)
            continue
        seen.add(idx)
        items.append(item)
    files = [testset, *judge_files.values()]
    dataset = _dataset(name or "pandalm", items, files, table, problems)
    return _with_metadata(
        dataset,
        judges=list(verdicts),
        judge_unparsed=dict(unparsed),
        judge_missing=dict(missing),
    )


class _Verdicts:
    """One judge file of PandaLM: raw result and parsed vote (None = unparsed) per idx."""

    def __init__(self) -> None:
        self.raw: dict[str, Any] = {}
        self.votes: dict[str, Vote | None] = {}
        self.skipped: list[SkippedRow] = []


def _pandalm_verdicts(judge: str, file: Path, policy: OnErrorArg) -> _Verdicts:
    column = "gpt_result" if judge == GPT35 else "pandalm_result"
    table = read_table(file, on_error=policy, fmt="json")
    _require(table, ("idx", column))
    problems = RowProblems(table.path, policy)
    out = _Verdicts()
    for record in table.records:
        try:
            idx = _index(record.values.get("idx"))
            value = record.values.get(column)
            if idx in out.raw:
                raise RowError(f"duplicate idx {idx}", column="idx")
            if isinstance(value, str) and value.strip().lower() == "garbage":
                vote = None
            else:
                vote = parse_vote(value, column, rater=judge)
        except RowError as error:
            problems.report_error(error, record)
            continue
        out.raw[idx] = value
        out.votes[idx] = vote
    out.skipped = list(table.skipped) + problems.skipped
    return out


def load_hh_rlhf(
    path: PathLike,
    *,
    seed: int = 0,
    on_error: OnErrorArg = "raise",
    name: str | None = None,
) -> Dataset:
    """Load Anthropic HH-RLHF ``chosen``/``rejected`` dialogues (JSON lines, may be gzipped).

    The context shared by both dialogues up to their last ``Assistant:`` turn is the prompt
    (the transcript text, ``Human: ...\\n\\nAssistant: ...``); the two last Assistant turns are the
    responses. Which of them is A is drawn per row with ``random.Random(seed)``, and the
    crowdworker's preference (rater ``"crowdworker"``) follows it, so a judge's position bias
    cannot pass for agreement; ``metadata["chosen_position"]`` records the draw. ``turn`` is the
    number of Human turns; ``conversation_a``/``_b`` hold the whole dialogues as role/content
    messages. Pairs whose dialogues differ before the last Assistant turn (5 in harmless-base
    test) have no single prompt: they are always left out and listed in ``skipped``.
    """
    policy = check_on_error(on_error)
    table = read_table(path, on_error=policy, fmt="jsonl")
    _require(table, ("chosen", "rejected"))
    rng = random.Random(seed)
    problems = RowProblems(table.path, policy)
    category = Path(path).parent.name or None
    items: list[Item] = []
    chosen_first = 0
    for record in table.records:
        first = rng.random() < 0.5
        try:
            chosen_context, chosen = _split_last_reply(record, "chosen")
            rejected_context, rejected = _split_last_reply(record, "rejected")
        except RowError as error:
            problems.report_error(error, record)
            continue
        if chosen_context != rejected_context:
            problems.skipped.append(
                SkippedRow(
                    table.path,
                    record.row,
                    None,
                    "chosen and rejected differ before the last Assistant turn "
                    f"(no shared prompt) (line {record.line})",
                )
            )
            continue
        messages = _transcript_messages(chosen_context)
        response_a, response_b = (chosen, rejected) if first else (rejected, chosen)
        chosen_first += first
        items.append(
            PairwiseItem(
                id=f"hh-{record.row}",
                prompt=chosen_context.strip(),
                response_a=response_a,
                response_b=response_b,
                human_votes=(Vote("A" if first else "B", rater="crowdworker"),),
                turn=max(1, sum(m["role"] == "user" for m in messages)),
                category=category,
                conversation_a=(*messages, {"role": "assistant", "content": response_a}),
                conversation_b=(*messages, {"role": "assistant", "content": response_b}),
                metadata={"chosen_position": "A" if first else "B"},
            )
        )
    dataset = _dataset(name or "hh-rlhf", items, [Path(path)], table, problems)
    return _with_metadata(dataset, seed=seed, chosen_is_a=chosen_first)


_ASSISTANT = "\n\nAssistant:"
_TURN = re.compile(r"\n\n(Human|Assistant):[ ]?")


def _split_last_reply(record: Record, column: str) -> tuple[str, str]:
    text = as_text(record.values.get(column), column)
    cut = text.rfind(_ASSISTANT)
    if cut < 0:
        raise RowError("dialogue has no 'Assistant:' turn", column=column)
    return text[:cut], text[cut + len(_ASSISTANT) :].strip()


def _transcript_messages(context: str) -> tuple[Mapping[str, str], ...]:
    parts = _TURN.split("\n\n" + context.lstrip("\n") if context.strip() else "")
    messages: list[Mapping[str, str]] = []
    for speaker, content in zip(parts[1::2], parts[2::2], strict=True):
        role = "user" if speaker == "Human" else "assistant"
        messages.append({"role": role, "content": content.strip()})
    return tuple(messages)


def load_judgebench(
    path: PathLike, *, on_error: OnErrorArg = "raise", name: str | None = None
) -> Dataset:
    """Load JudgeBench pairs (JSON lines; a folder loads all its ``*.jsonl`` files).

    The label (``A>B``/``B>A``) says which response is *correct* against ground truth, not which
    a human preferred: one vote with rater ``"ground_truth"``. ``id`` = ``pair_id``,
    ``category`` = ``source`` (e.g. ``mmlu-pro-law``), ``question_id`` = ``source:original_id``
    when there is an ``original_id``; both models are ``response_model``.
    """
    policy = check_on_error(on_error)
    base = Path(path)
    files = sorted(base.glob("*.jsonl")) if base.is_dir() else [base]
    if not files:
        raise DataError("directory holds no .jsonl files", path=str(base))
    items: list[Item] = []
    skipped: list[SkippedRow] = []
    seen: set[str] = set()
    known = {
        "pair_id",
        "question",
        "response_A",
        "response_B",
        "label",
        "source",
        "original_id",
        "response_model",
    }
    for file in files:
        table = read_table(file, on_error=policy, fmt="jsonl")
        _require(table, ("pair_id", "question", "response_A", "response_B", "label"))
        problems = RowProblems(table.path, policy)
        for record in table.records:
            values = record.values
            try:
                pair_id = as_text(values.get("pair_id"), "pair_id", allow_empty=False)
                if pair_id in seen:
                    raise RowError(f"duplicate pair_id {pair_id!r}", column="pair_id")
                source = optional_text(values.get("source"))
                original = values.get("original_id")
                model = optional_text(values.get("response_model"))
                items.append(
                    PairwiseItem(
                        id=pair_id,
                        prompt=as_text(values.get("question"), "question"),
                        response_a=as_text(values.get("response_A"), "response_A"),
                        response_b=as_text(values.get("response_B"), "response_B"),
                        human_votes=(
                            parse_vote(values.get("label"), "label", rater="ground_truth"),
                        ),
                        question_id=None if is_missing(original) else f"{source}:{original}",
                        category=source,
                        model_a=model,
                        model_b=model,
                        metadata={
                            "response_model": model,
                            "original_id": original,
                            **_extra(values, known),
                        },
                    )
                )
            except RowError as error:
                problems.report_error(error, record)
                continue
            seen.add(pair_id)
        skipped.extend(table.skipped)
        skipped.extend(problems.skipped)
    return Dataset(
        name=name or "judgebench",
        items=tuple(items),
        source=" + ".join(str(f) for f in files),
        sha256=files_sha256(files),
        skipped=tuple(skipped),
        metadata={"label_source": "ground_truth"},
    )


def load_evalbiasbench(
    path: PathLike,
    *,
    seed: int = 0,
    on_error: OnErrorArg = "raise",
    name: str | None = None,
) -> Dataset:
    """Load EvalBiasBench (``biasbench.json``: an object of bias type -> list of pairs).

    Every published label is 1 (the better response always comes first), so each pair's order is
    drawn with ``random.Random(seed)``; the gold vote (rater ``"gold"``) follows the better
    response and ``metadata["swapped"]`` records the draw. ``category`` is the bias type.
    """
    policy = check_on_error(on_error)
    where = str(path)
    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise DataError(
            "expected a JSON object mapping each bias type to a list of pairs", path=where
        )
    rng = random.Random(seed)
    problems = RowProblems(where, policy)
    items: list[Item] = []
    row = 0
    swapped_count = 0
    for bias, rows in data.items():
        for values in rows:
            row += 1
            swap = rng.random() < 0.5
            record = Record(row, None, values if isinstance(values, dict) else {})
            try:
                if not isinstance(values, dict):
                    raise RowError(f"expected a JSON object, got {type(values).__name__}")
                gold = parse_vote(values.get("label"), "label", rater="gold")
                first = as_text(values.get("response1"), "response1")
                second = as_text(values.get("response2"), "response2")
                item = PairwiseItem(
                    id=f"evalbiasbench-{row}",
                    prompt=as_text(values.get("instruction"), "instruction"),
                    response_a=second if swap else first,
                    response_b=first if swap else second,
                    human_votes=(flip(gold) if swap else gold,),
                    category=str(bias),
                    metadata={"swapped": swap, "original_label": values.get("label")},
                )
            except RowError as error:
                problems.report_error(error, record)
                continue
            swapped_count += swap
            items.append(item)
    if not items and not problems.skipped:
        raise DataError("file has no data rows", path=where)
    return Dataset(
        name=name or "evalbiasbench",
        items=tuple(items),
        source=where,
        sha256=files_sha256([path]),
        skipped=tuple(problems.skipped),
        metadata={"seed": seed, "swapped": swapped_count},
    )


def _llmbar_subset(file: Path) -> str:
    parts = file.parent.parts
    if "Dataset" in parts:
        return "/".join(parts[len(parts) - parts[::-1].index("Dataset") :]) or file.parent.name
    return file.parent.name


def _require(table: Table, columns: tuple[str, ...]) -> None:
    listing = ", ".join(repr(c) for c in table.columns)
    for column in columns:
        if column not in table.columns:
            raise DataError(
                f"missing required column; available columns: {listing}",
                path=table.path,
                column=column,
            )


def _index(value: Any) -> str:
    if is_missing(value) or isinstance(value, bool):
        raise RowError("missing idx", column="idx")
    return str(value).strip()


def _extra(values: Mapping[str, Any], used: set[str]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k not in used}


def _dataset(
    name: str, items: list[Item], files: list[Path], table: Table, problems: RowProblems
) -> Dataset:
    return Dataset(
        name=name,
        items=tuple(items),
        source=" + ".join(str(f) for f in files),
        sha256=files_sha256(files),
        skipped=table.skipped + tuple(problems.skipped),
    )


def _with_metadata(dataset: Dataset, **metadata: Any) -> Dataset:
    return dataclasses.replace(dataset, metadata={**dataset.metadata, **metadata})
