"""Specifications of ``compare --fail-on worse`` on runs that measured nothing, or not all.

"No finding got worse" means something only when every run finished and holds findings: a
candidate still running, stopped by its budget or empty cannot pass the gate. The command then
exits 2 and names every run's state; without the gate the comparison is still written.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgeprobe._cli.main import main
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from judgeprobe.report.card import open_existing_store


def _score(request: Request) -> float:
    return float(1 + len(request.field_map["response"]) % 5)


def _audit(folder: Path, **engine: Any) -> Path:
    folder.mkdir(parents=True)
    data = folder / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {"id": f"x{i}", "prompt": f"Q{i}?", "response": f"A{i}.", "label": 1 + i % 5}
            )
            + "\n"
            for i in range(20)
        ),
        encoding="utf-8",
    )
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(folder / "out"),
            "probes": {"agreement": {"human_scale": [1, 5], "n_resamples": 50}},
            "engine": engine,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(_score, name="steady", version="1")
    return run_audit(config, judge=judge, write_card=False).store_path


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _audit(tmp_path_factory.mktemp("states") / "complete")


def _cli(*args: str | Path, cwd: Path) -> tuple[int, str]:
    """``judgeprobe compare ARGS`` through the console entry point: its exit code and output."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        patch.setattr(sys, "argv", ["judgeprobe", "compare", *map(str, args)])
        stdout, stderr = io.StringIO(), io.StringIO()
        patch.setattr(sys, "stdout", stdout)
        patch.setattr(sys, "stderr", stderr)
        with pytest.raises(SystemExit) as exited:
            main()
    code = exited.value.code
    return code if isinstance(code, int) else 0, _squeezed(stdout.getvalue() + stderr.getvalue())


def _squeezed(text: str) -> str:
    """``text`` without white space: the console wraps long lines wherever it likes."""
    return "".join(text.split())


def _still_running(complete: Path, tmp_path: Path) -> Path:
    """A copy of ``complete`` as a run store holds a run killed or still under way."""
    copy = tmp_path / "running.sqlite"
    shutil.copy(complete, copy)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE runs SET status = 'running', finished = NULL")
        db.execute("DELETE FROM run_meta WHERE name IN ('status', 'engine')")
    db.close()
    return copy


def _budget_cut(complete: Path, tmp_path: Path) -> Path:
    return _audit(tmp_path / "cut", max_calls=3)


def _empty(complete: Path, tmp_path: Path) -> Path:
    """The card of ``complete`` with no findings in its probe sections."""
    with open_existing_store(complete) as store:
        card = build_card(store)
    for section in card["probes"]:
        section["findings"] = []
    path = tmp_path / "empty" / "card.json"
    path.parent.mkdir()
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("candidate", "state"),
    [
        (_still_running, "incomplete (the run store records the run as 'running')"),
        (_budget_cut, "incomplete ("),
        (_empty, "complete, 0 findings"),
    ],
    ids=["running", "budget", "empty"],
)
def test_fail_on_worse_refuses_a_run_that_is_not_complete_or_empty_naming_each_state(
    complete: Path, tmp_path: Path, candidate: Callable[[Path, Path], Path], state: str
) -> None:
    other = candidate(complete, tmp_path)

    code, message = _cli(
        complete, other, "--fail-on", "worse", "--allow-different-data", cwd=tmp_path
    )
    ungated, output = _cli(complete, other, "--allow-different-data", "--out", "x", cwd=tmp_path)

    assert code == 2, message
    assert _squeezed("--fail-on worse needs complete runs with findings") in message
    assert _squeezed(f"run 0 {complete}: complete") in message
    assert _squeezed(f"run 1 {other}: {state}") in message
    assert ungated == 0, output
    assert (tmp_path / "x" / "compare.json").is_file()


def test_fail_on_worse_passes_two_complete_runs_with_findings(
    complete: Path, tmp_path: Path
) -> None:
    code, output = _cli(complete, complete, "--fail-on", "worse", cwd=tmp_path)

    assert code == 0, output
