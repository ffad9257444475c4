"""IBM AttaQ: adversarial questions labelled with one of seven harm categories.

The labels describe the *question*, not any response, and there are no human harm scores, so
each row becomes a prompt-only :class:`PointwiseItem` (``response=""``, no labels) whose
``category`` is the harm category. Such items feed probes that build their own responses or
compose prompts (concatenation, repetition, permutation of attack prompts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from judgeprobe.data._records import RowError, RowProblems, as_text, read_table
from judgeprobe.data.dataset import Dataset, check_on_error, files_sha256
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import DataError


def load_attaq(
    path: str | Path, *, on_error: Literal["raise", "skip"] = "raise", name: str | None = None
) -> Dataset:
    """Load ``attaq_dataset.csv`` (columns ``label``, ``input``, ``additional_info``).

    ``prompt`` = ``input``, ``category`` = ``label``, ``id`` = ``attaq-<row>``. The raw
    ``additional_info`` is kept in metadata, with ``origin`` = its ``dataset`` field when it is a
    JSON object (the rows taken from hh-rlhf red-team attempts) and ``"generated"`` otherwise
    (those rows hold a Python-repr dict, which is never evaluated).
    """
    policy = check_on_error(on_error)
    table = read_table(path, on_error=policy, fmt="csv")
    listing = ", ".join(repr(c) for c in table.columns)
    for column in ("label", "input"):
        if column not in table.columns:
            raise DataError(
                f"missing required column; available columns: {listing}",
                path=table.path,
                column=column,
            )
    problems = RowProblems(table.path, policy)
    items: list[Item] = []
    for record in table.records:
        values = record.values
        try:
            info = values.get("additional_info")
            items.append(
                PointwiseItem(
                    id=f"attaq-{record.row}",
                    prompt=as_text(values.get("input"), "input", allow_empty=False),
                    response="",
                    category=as_text(values.get("label"), "label", allow_empty=False).strip(),
                    metadata={"additional_info": info, "origin": _origin(info)},
                )
            )
        except RowError as error:
            problems.report_error(error, record)
    return Dataset(
        name=name or "attaq",
        items=tuple(items),
        source=table.path,
        sha256=files_sha256([path]),
        skipped=table.skipped + tuple(problems.skipped),
        metadata={"prompt_only": True},
    )


def _origin(info: Any) -> str:
    if isinstance(info, str):
        try:
            parsed = json.loads(info)
        except json.JSONDecodeError:
            return "generated"
        if isinstance(parsed, dict) and isinstance(parsed.get("dataset"), str):
            return str(parsed["dataset"])
    return "generated"
