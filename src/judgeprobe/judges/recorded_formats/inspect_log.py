"""Verdicts from an Inspect eval log (``.eval`` or ``.json``), read with ``inspect_ai.log``.

Each sample's score by the chosen scorer is one verdict: the sample id is the item id, a number
or a boolean is the score, Inspect's ``C``/``I``/``P``/``N`` letters are scored as Inspect scores
them (:func:`inspect_ai.scorer.value_to_float`: 1, 0, 0.5, 0), any other text is a label of the
rubric; the scorer's explanation is kept as the judge's raw answer. With several scorers in the
log, ``scorer=`` names one (an error lists them otherwise). Epochs after the first are ignored,
like the trials after the first of ``judgeprobe score``. Needs ``judgeprobe[inspect]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgeprobe.data._records import Table
from judgeprobe.errors import DataError, MissingDependencyError
from judgeprobe.judges.recorded_formats._rows import rows_table

LETTERS = ("C", "I", "P", "N")
"""Inspect's CORRECT, INCORRECT, PARTIAL and NOANSWER values."""


def read_inspect_log(path: Path, *, scorer: str | None = None) -> Table:
    """The verdict rows of the Inspect eval log ``path`` (see the module docstring)."""
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise MissingDependencyError("inspect_ai", "inspect") from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises plain exceptions on a bad log
        raise DataError(f"not a readable Inspect eval log ({exc})", path=str(path)) from None
    samples = log.samples or []
    scorers = sorted({name for sample in samples for name in (sample.scores or {})})
    if scorer is None:
        if len(scorers) != 1:
            listing = ", ".join(scorers) or "none"
            raise DataError(
                f"the log has {len(scorers)} scorers ({listing}); choose one with the judge "
                "option scorer=NAME (-J scorer=NAME)",
                path=str(path),
            )
        scorer = scorers[0]
    elif scorer not in scorers:
        raise DataError(
            f"no scorer {scorer!r} in the log; its scorers: {', '.join(scorers) or 'none'}",
            path=str(path),
        )
    to_float = value_to_float()
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, sample in enumerate(samples, start=1):
        if sample.epoch != 1:
            continue
        row: dict[str, Any] = {"id": str(sample.id)}
        score = (sample.scores or {}).get(scorer)
        if score is None:
            row["status"] = f"no {scorer!r} score"
        else:
            value = score.value
            if isinstance(value, bool | int | float):
                row["score"] = float(value)
            elif isinstance(value, str) and value in LETTERS:
                row["score"] = to_float(value)
            elif isinstance(value, str):
                row["label"] = value
            else:
                raise DataError(
                    f"sample {sample.id!r}: the {scorer!r} value {value!r} is neither a number "
                    "nor a label",
                    path=str(path),
                    row=number,
                )
            row["raw"] = score.explanation or score.answer or ""
        rows.append((number, row))
    return rows_table(path, rows)
