"""Audit runs and the run store under misuse: one audit per store at a time, the card of the run
an audit made, a CI gate that never passes on nothing, preconditions checked before the first
call, Ctrl-C, and clear errors for a bad ``--out`` or an altered store.

Real processes where the behaviour is about processes (a lock held by a live audit, an audit
killed with SIGKILL, an audit interrupted with SIGINT); in-process audits with Python judges
elsewhere.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgeprobe.audit import parse_config, run_audit
from judgeprobe.errors import StoreError
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from judgeprobe.request import Request

SRC = Path(__file__).resolve().parents[1] / "src"

JUDGES = '''\
import os
import time


def constant(request):
    """1.0 for everything; appends a dot to calls.log per call, after JUDGE_SLEEP seconds."""
    with open("calls.log", "a") as log:
        log.write(".")
    time.sleep(float(os.environ.get("JUDGE_SLEEP", "0")))
    return 1.0


def broken(request):
    raise RuntimeError("the backend is down")
'''

AUDIT_ARGS = (
    "audit", "--judge", "python:judges:constant", "--rubric", "harmfulness", "--data", "demo",
    "--probes", "repetition", "--limit", "5", "--out", "out", "--fail-on", "never",
)  # fmt: skip


def _env(sleep: float = 0.0) -> dict[str, str]:
    """The environment of a CLI process: this checkout's sources, a wide terminal, a judge delay."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "500"  # one message, one line
    env["JUDGE_SLEEP"] = str(sleep)
    return env


def _cli(*args: str, cwd: Path, sleep: float = 0.0) -> subprocess.CompletedProcess[str]:
    (cwd / "judges.py").write_text(JUDGES)
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.cli", *args],
        cwd=cwd,
        env=_env(sleep),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _start(*args: str, cwd: Path, sleep: float) -> subprocess.Popen[str]:
    (cwd / "judges.py").write_text(JUDGES)
    return subprocess.Popen(
        [sys.executable, "-m", "judgeprobe.cli", *args],
        cwd=cwd,
        env=_env(sleep),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_calls(cwd: Path, n: int, process: subprocess.Popen[str]) -> None:
    """Wait until the judge of ``process`` has been called ``n`` times."""
    log = cwd / "calls.log"
    deadline = time.monotonic() + 120
    while not (log.is_file() and log.stat().st_size >= n):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the audit never called its judge"
        time.sleep(0.05)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _from_store(stdout: str) -> int:
    found = re.search(r"from the store: (\d+)", stdout)
    assert found, stdout
    return int(found.group(1))


def _config(out: Path, **changes: Any) -> Any:
    base: dict[str, Any] = {
        "rubric": "harmfulness",
        "data": "demo",
        "limit": 5,
        "out": str(out),
        "probes": {"repetition": {"counts": [2]}},
    }
    return parse_config({**base, **changes})


def _counting_judge(calls: list[Request], name: str = "counting") -> CallableJudge:
    def judge(request: Request) -> float:
        calls.append(request)
        return 1.0

    return CallableJudge(judge, name=name)


# -- 15. an altered store ----------------------------------------------------------------------
def _sql(*statements: str) -> Callable[[Path], None]:
    def alter(path: Path) -> None:
        with sqlite3.connect(path) as db:
            for statement in statements:
                db.execute(statement)
        db.close()

    return alter


def _remove(path: Path) -> None:
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        path.with_name(name).unlink(missing_ok=True)


def _garbage(path: Path) -> None:
    _remove(path)
    path.write_bytes(b"\x00not sqlite\xff" * 400)


def _foreign(path: Path) -> None:
    _remove(path)
    _sql("CREATE TABLE notes (body TEXT)")(path)


STORE_TAMPERING = {
    "garbage bytes": (_garbage, "not a usable judgeprobe run store (file is not a database)"),
    "another program's SQLite file": (
        _foreign,
        "an SQLite file that is not a judgeprobe run store (its tables: notes)",
    ),
    "a dropped table": (_sql("DROP TABLE results"), "the run store lacks the table(s) results"),
    "a changed table": (
        _sql("ALTER TABLE verdicts RENAME COLUMN score TO points"),
        "the run store's table 'verdicts' has the columns key, judge, rubric, trial, fields, "
        "status, points,",
    ),
    "an altered schema version": (
        _sql("UPDATE meta SET value = 'one' WHERE key = 'schema_version'"),
        "the run store's schema version 'one' is not a number",
    ),
}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The run store of a small finished audit, in ``tmp_path / "out"``."""
    config = _config(tmp_path / "out")
    return run_audit(config, judge=_counting_judge([]), progress=False, write_card=False).store_path


@pytest.mark.parametrize("tampering", list(STORE_TAMPERING))
def test_an_altered_store_is_a_store_error_for_audit_and_card(store: Path, tampering: str) -> None:
    alter, message = STORE_TAMPERING[tampering]
    alter(store)
    with pytest.raises(StoreError, match=re.escape(message)):
        build_card(store)
    with pytest.raises(StoreError, match=re.escape(message)):
        run_audit(_config(store.parent), judge=_counting_judge([]), progress=False)


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE verdicts SET status = 'maybe'", "cannot be read ('maybe' is not a valid"),
        ("UPDATE verdicts SET score = 'high'", "cannot be read (score 'high' is not a number)"),
    ],
)
def test_a_damaged_verdict_row_is_a_store_error_naming_the_verdict(
    store: Path, statement: str, message: str
) -> None:
    _sql(statement)(store)
    with pytest.raises(StoreError, match=r"damaged: verdict '[0-9a-f]+' " + re.escape(message)):
        run_audit(_config(store.parent), judge=_counting_judge([]), progress=False)


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            "UPDATE results SET body = '{not json' WHERE name = 'repetition'",
            "the run store is damaged: the result 'repetition' of run 1 cannot be read",
        ),
        (
            "UPDATE results SET body = '{\"findings\": \"none\"}' WHERE name = 'repetition'",
            "the results of the latest run are damaged",
        ),
        (
            "UPDATE runs SET config = '[1]'",
            "the run store is damaged: the config of run 1 cannot be read",
        ),
    ],
)
def test_a_damaged_result_or_run_row_is_a_store_error_for_the_card(
    store: Path, statement: str, message: str
) -> None:
    _sql(statement)(store)
    with pytest.raises(StoreError, match=re.escape(message)):
        build_card(store)


@pytest.mark.parametrize("command", ["audit", "card"])
def test_the_cli_reports_an_altered_store_in_one_line_without_a_traceback(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "out").mkdir()
    _foreign(tmp_path / "out" / "run.sqlite")
    args = AUDIT_ARGS if command == "audit" else ("card", "out/run.sqlite")
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert "is not a judgeprobe run store" in done.stderr
    assert "Traceback" not in done.stderr
