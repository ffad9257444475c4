"""``judgeprobe compare``: findings of two audit runs side by side, with paired differences.

Two deterministic judges score every item alike; the *drifting* one also raises its score when
the response is repeated (a planted effect on the repetition probe's response modes). Its
repetition findings on repeated responses get worse with evidence; every other difference
(repeated prompts, the agreement with the human labels) has none. An identical pair has no
evidence anywhere, runs on other data are refused, and ``--fail-on worse`` gates on the worse.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe.audit import parse_config, run_audit
from judgeprobe.cli import app
from judgeprobe.compare import compare_runs, validate_comparison, write_comparison
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.request import Request

N_ITEMS = 40


def steady_score(request: Request) -> float:
    """1 to 5 from the response's set of words: repeating the response leaves it as it is."""
    words = " ".join(sorted(set(request.field_map["response"].split())))
    return float(1 + hashlib.sha256(words.encode("utf-8")).digest()[0] % 5)


def drifting_score(request: Request) -> float:
    """:func:`steady_score`, raised by 3 (at most 5) when the response is repeated."""
    score = steady_score(request)
    return min(5.0, score + 3.0) if "\n\n" in request.field_map["response"] else score


def audit(folder: Path, score: Any, *, name: str, rows: int = N_ITEMS, offset: int = 0) -> Path:
    """A repetition and agreement audit of ``score`` on ``rows`` items; the run store's path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"x{i}",
                    "prompt": f"Question number {i}?",
                    "response": f"Answer {i} with words {i % 7} and {i % 11}.",
                    "label": 1 + i % 5,
                }
            )
            + "\n"
            for i in range(offset, offset + rows)
        ),
        encoding="utf-8",
    )
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(folder / "out"),
            "probes": {
                "repetition": {"counts": [1, 2], "n_resamples": 200},
                "agreement": {"human_scale": [1, 5], "n_resamples": 100},
            },
            "seed": 3,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(score, name=name, version="1")
    return run_audit(config, judge=judge, write_card=False).store_path
