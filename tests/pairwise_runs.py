"""Run stores of pairwise audits of a deterministic judge, for the comparison's tests.

Each question ``i`` has a good and a weak answer (``good answer ...``, ``weak answer ...``) and a
human winner; :func:`pairwise_store` writes the pairs beside the store, audits them with the
given probes and a :class:`~judgeprobe.judges.CallableJudge` choosing ``A``, ``B`` or ``tie``,
and returns the run store's path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.judges import CallableJudge


def good_choice(request: Request) -> str:
    """The response that starts with "good", wherever it is shown."""
    return "A" if request.field_map["response_a"].startswith("good") else "B"


def pairwise_store(
    folder: Path,
    rows: Sequence[Mapping[str, str]],
    probes: Mapping[str, Any],
    choose: Callable[[Request], Any],
    *,
    name: str,
) -> Path:
    """Audit ``rows`` (id, prompt, response_a, response_b, winner) with ``probes`` (seed 3)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "pairs.jsonl"
    data.write_text("".join(json.dumps(dict(row)) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "rubric": "preference",
            "data": str(data),
            "data_options": {"kind": "pairwise"},
            "out": str(folder / "out"),
            "probes": dict(probes),
            "seed": 3,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(choose, name=name, version="1")
    return run_audit(config, judge=judge, write_card=False).store_path
