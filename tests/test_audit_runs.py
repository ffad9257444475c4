"""Audit runs and the run store under misuse: one audit per store at a time, the card of the run
an audit made, a CI gate that never passes on nothing, preconditions checked before the first
call, Ctrl-C, and clear errors for a bad ``--out`` or an altered store.

Real processes where the behaviour is about processes (a lock held by a live audit, an audit
killed with SIGKILL, an audit interrupted with SIGINT); in-process audits with Python judges
elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.engine import RunStore
from judgeprobe.errors import ConfigError, StoreError
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card, exit_code, nothing_assessed, write_card

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
        [sys.executable, "-m", "judgeprobe", *args],
        cwd=cwd,
        env=_env(sleep),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _start(*args: str, cwd: Path, sleep: float) -> subprocess.Popen[str]:
    (cwd / "judges.py").write_text(JUDGES)
    return subprocess.Popen(
        [sys.executable, "-m", "judgeprobe", *args],
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


# -- 1. one audit per run store; the card of this run; atomic card files -------------------------
def test_a_second_audit_on_the_same_out_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    first = _start(*AUDIT_ARGS, cwd=tmp_path, sleep=0.5)
    try:
        _wait_for_calls(tmp_path, 1, first)
        second = _cli(*AUDIT_ARGS, cwd=tmp_path)
    finally:
        first.kill()
        first.communicate()
    assert second.returncode == 2, second.stdout
    assert (
        f"another audit is running on {Path('out', 'run.sqlite')} (pid {first.pid}); "
        "wait for it to finish or use another --out"
    ) in _one_line(second.stderr)
    assert "Traceback" not in second.stderr
    assert "judge calls" not in second.stdout


def test_an_audit_killed_mid_run_leaves_no_lock_that_blocks_the_next_run(tmp_path: Path) -> None:
    first = _start(*AUDIT_ARGS, cwd=tmp_path, sleep=0.05)
    _wait_for_calls(tmp_path, 5, first)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    assert (tmp_path / "out" / "run.sqlite.lock").is_file()  # the file stays, the lock does not
    again = _cli(*AUDIT_ARGS, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _from_store(again.stdout) >= 1  # it resumed the killed run's verdicts


def test_the_audit_renders_the_run_it_made_even_when_a_newer_run_is_in_the_store(
    tmp_path: Path,
) -> None:
    other_runs: list[int] = []

    def judge(request: Request) -> float:
        if not other_runs:  # another writer adds a finished run while this audit judges
            with RunStore(tmp_path / "run.sqlite") as other:
                run_id = other.start_run({"judge": {"backend": "callable", "name": "other"}})
                other.put_run_meta(run_id, "status", {"state": "complete", "reason": None})
                other.finish_run(run_id, "complete")
            other_runs.append(run_id)
        return 1.0

    outcome = run_audit(_config(tmp_path), judge=CallableJudge(judge, name="mine"), progress=False)
    card = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert other_runs == [outcome.run_id + 1]
    assert card["run"]["id"] == outcome.run_id
    assert card["title"] == "Judge Card: mine"
    assert [p["name"] for p in card["probes"]] == ["repetition"]


def test_card_renders_the_run_given_by_run_and_the_latest_without_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_audit(_config(out), judge=_counting_judge([]), progress=False, write_card=False)
    permutation = {"permutation": {"ks": [2], "n_tuples": 3}}
    second = _config(out, probes=permutation)
    run_audit(second, judge=_counting_judge([]), progress=False, write_card=False)

    first = _cli("card", "out/run.sqlite", "--run", "1", "--out", "first", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    card = json.loads((tmp_path / "first" / "card.json").read_text(encoding="utf-8"))
    assert (card["run"]["id"], [p["name"] for p in card["probes"]]) == (1, ["repetition"])

    latest = _cli("card", "out/run.sqlite", "--out", "latest", cwd=tmp_path)
    assert latest.returncode == 0, latest.stderr
    card = json.loads((tmp_path / "latest" / "card.json").read_text(encoding="utf-8"))
    assert (card["run"]["id"], [p["name"] for p in card["probes"]]) == (2, ["permutation"])

    missing = _cli("card", "out/run.sqlite", "--run", "7", cwd=tmp_path)
    assert missing.returncode == 2
    assert "no run 7 in this run store (its runs: 1, 2)" in _one_line(missing.stderr)


def test_a_card_rewritten_under_a_reader_is_replaced_whole_not_overwritten(
    tmp_path: Path,
) -> None:
    first = run_audit(
        _config(tmp_path / "out"), judge=_counting_judge([]), progress=False, write_card=False
    )
    outcome = run_audit(_config(tmp_path / "out"), judge=_counting_judge([]), progress=False)
    card_file = outcome.card_paths["json"]
    old_content = card_file.read_bytes()
    with card_file.open("rb") as reader:  # a reader that opened the card before the rewrite
        write_card(outcome.store_path, card_file.parent, run_id=first.run_id)
        assert reader.read() == old_content
    assert card_file.read_bytes() != old_content
    assert not [p.name for p in card_file.parent.iterdir() if p.name.endswith(".tmp")]


# -- 6. the CI gate never passes on nothing ------------------------------------------------------
@pytest.mark.parametrize(
    ("judge_args", "reason"),
    [
        (
            ("--judge", "python:judges:broken"),
            "nothing assessed: no judge request got a usable verdict (error: 45)",
        ),
        (
            ("--judge", "python:judges:constant", "-J", "context_window=1"),
            "nothing assessed: every input was skipped (45): each exceeds the judge's context "
            "window, and inputs are never truncated",
        ),
    ],
    ids=["every call failed", "every input skipped"],
)
def test_an_audit_that_judged_nothing_fails_the_gate_with_its_reason(
    judge_args: tuple[str, ...], reason: str, tmp_path: Path
) -> None:
    args = ("--rubric", "harmfulness", "--data", "demo", "--probes", "repetition", "--limit", "5")
    done = _cli("audit", *judge_args, *args, "--out", "out", "--fail-on", "warn", cwd=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert reason in _one_line(done.stderr)
    assert "Traceback" not in done.stderr


def test_an_audit_without_probes_to_which_no_probe_applies_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    calls: list[Request] = []
    config = _config(tmp_path / "out", probes={}, rubric="generation")
    with pytest.raises(ConfigError, match=r"no probe applies to judge .* rubric 'generation'") as e:
        run_audit(config, judge=_counting_judge(calls))
    assert "probe 'repetition' needs a scale or binary or continuous rubric" in str(e.value)
    assert calls == []


def test_the_card_of_a_run_in_which_no_probe_finished_fails_the_gate(tmp_path: Path) -> None:
    stopped = run_audit(
        _config(tmp_path / "out", engine={"max_calls": 2}), judge=_counting_judge([])
    )
    assert not stopped.complete
    done = _cli("card", "out/run.sqlite", "--fail-on", "warn", cwd=tmp_path)
    assert done.returncode == 4
    assert "nothing assessed: no probe ran" in _one_line(done.stderr)


def test_a_gate_with_no_assessable_headline_finding_has_nothing_to_judge() -> None:
    info = {"name": "accuracy", "status": "info", "headline": False}
    card = {"probes": [{"findings": [info], "usage": {"requests": 4, "ok": 4}}]}
    assert nothing_assessed(card) is None  # an informative card, for the reader
    assert nothing_assessed(card, fail_on="warn") == (
        "no headline finding could be assessed, so fail_on=warn has nothing to judge"
    )
    assert exit_code(card, fail_on="warn") == 4
    undefined = {"name": "flip_rate", "status": "n/a", "headline": True}
    card = {"probes": [{"findings": [undefined], "usage": {"requests": 4, "ok": 4}}]}
    assert nothing_assessed(card) == "no finding could be computed (all 1 are n/a)"


# -- 9. preconditions before the first call ------------------------------------------------------
def test_a_probe_that_cannot_run_stops_the_audit_before_the_first_judge_call(
    tmp_path: Path,
) -> None:
    calls: list[Request] = []
    config = _config(
        tmp_path / "out",
        rubric="toxicity",
        probes={"repetition": {"counts": [2]}, "policy_invariance": {}},
    )
    with pytest.raises(
        ConfigError,
        match=r"^probes\.policy_invariance: probe 'policy_invariance' rewords the rubric's "
        r"instructions, but rubric 'toxicity' gives none",
    ):
        run_audit(config, judge=_counting_judge(calls), progress=False)
    assert calls == []
    assert not (tmp_path / "out").exists()


# -- 14. Ctrl-C ----------------------------------------------------------------------------------
def test_ctrl_c_says_what_was_saved_and_how_to_resume(tmp_path: Path) -> None:
    audit = _start(*AUDIT_ARGS, cwd=tmp_path, sleep=0.05)
    _wait_for_calls(tmp_path, 5, audit)
    audit.send_signal(signal.SIGINT)
    _, stderr = audit.communicate(timeout=120)
    assert audit.returncode == 130, stderr
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        saved = store.count()
        run = store.run(1)
    assert run is not None and run["status"] == "interrupted"
    assert saved == (tmp_path / "calls.log").stat().st_size < 65  # it stopped; no call was lost
    assert (
        f"interrupted: {saved} verdicts saved in {Path('out', 'run.sqlite')}; "
        "run the same command again to resume"
    ) in _one_line(stderr)
    assert "Traceback" not in stderr
    again = _cli(*AUDIT_ARGS, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _from_store(again.stdout) == saved


# -- 15. a bad --out, an altered store -----------------------------------------------------------
def test_an_existing_file_as_out_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("not a folder")
    with pytest.raises(ConfigError, match=r"^out '.*taken': is an existing file, not a folder"):
        run_audit(_config(tmp_path / "taken"), judge=_counting_judge([]))
    done = _cli("audit", *AUDIT_ARGS[1:-4], "--out", "taken", cwd=tmp_path)
    assert done.returncode == 2
    assert "out 'taken': is an existing file, not a folder" in _one_line(done.stderr)
    assert "Traceback" not in done.stderr


def test_an_existing_file_as_the_card_folder_is_a_config_error(tmp_path: Path) -> None:
    config = _config(tmp_path / "out")
    outcome = run_audit(config, judge=_counting_judge([]), progress=False, write_card=False)
    (tmp_path / "taken").write_text("not a folder")
    with pytest.raises(ConfigError, match="taken: is a file, not a folder"):
        write_card(outcome.store_path, tmp_path / "taken")


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
