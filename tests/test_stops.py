"""How a run stops: next to another writer, on Ctrl-C or SIGTERM, on a full disk.

A pilot writes the audit's run store, so it takes the audit's lock. Ctrl-C and SIGTERM (CI
cancellation, ``timeout``, ``docker stop``) stop ``audit``, ``score`` and ``bill --pilot`` alike:
one line saying what is saved and how to resume, exit status 130 or 143, and an audit's run marked
interrupted. A full disk, in the run store or in the card's files, is one line naming what could
not be written, never a traceback, and leaves what is stored resumable.

Real processes where the behaviour is about signals; in-process runs with a simulated full disk
(SQLite's page limit, or ``ENOSPC`` from the write of a card file) elsewhere.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from judgeprobe import CallableJudge, Request, plan_audit, run_audit
from judgeprobe._cli.main import main
from judgeprobe.audit.config import parse_config
from judgeprobe.engine import RunStore
from judgeprobe.engine.lock import StoreLock
from judgeprobe.engine.store_meta import STATUS
from judgeprobe.errors import ConfigError, StoreError
from judgeprobe.runs.scoring import ScoreResult

SRC = Path(__file__).resolve().parents[1] / "src"

JUDGES = '''\
import os
import time


def slow(request):
    """1.0 for everything, after JUDGE_SLEEP seconds; a dot in calls.log per call."""
    with open("calls.log", "a") as log:
        log.write(".")
    time.sleep(float(os.environ.get("JUDGE_SLEEP", "0")))
    return 1.0
'''

JUDGE = ("--judge", "python:judges:slow", "--rubric", "harmfulness", "--data", "demo")
AUDIT = (
    "audit",
    *JUDGE,
    "--probes",
    "repetition",
    "--limit",
    "5",
    "--out",
    "out",
    "--fail-on",
    "never",
)
PILOT_PROBES = {"bypass": {"ks": [2], "draws": 1, "false_alarm_items": 2, "n_resamples": 20}}


def _start(*args: str, cwd: Path, sleep: float) -> subprocess.Popen[str]:
    (cwd / "judges.py").write_text(JUDGES)
    env = {**os.environ, "COLUMNS": "500", "JUDGE_SLEEP": str(sleep)}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "judgeprobe", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop_after_calls(
    process: subprocess.Popen[str], cwd: Path, calls: int, sent: signal.Signals
) -> str:
    """Send ``sent`` once the judge of ``process`` has been called ``calls`` times; its stderr
    on one line."""
    log = cwd / "calls.log"
    deadline = time.monotonic() + 120
    while not (log.is_file() and log.stat().st_size >= calls):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the judge was never called"
        time.sleep(0.05)
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=120)
    assert "Traceback" not in stderr, stderr
    return " ".join(stderr.split())


def _run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """``judgeprobe ARGS`` in this process, through the console entry point; its exit status."""
    monkeypatch.setattr(sys, "argv", ["judgeprobe", *args])
    monkeypatch.setenv("COLUMNS", "500")
    with pytest.raises(SystemExit) as stopped:
        main()
    return int(stopped.value.code or 0)


def _config(out: Path, **more: Any) -> Any:
    base = {"rubric": "harmfulness", "data": "demo", "out": str(out), "seed": 3}
    return parse_config({**base, "probes": {"repetition": {"counts": [2]}}, **more})


def _counting(calls: list[Request]) -> CallableJudge:
    def judge(request: Request) -> float:
        calls.append(request)
        return 1.0

    return CallableJudge(judge, name="counting")


# -- a pilot takes the audit's lock ----------------------------------------------------------------
def test_a_pilot_next_to_a_running_audit_is_refused_before_any_call(tmp_path: Path) -> None:
    config = _config(tmp_path / "out", probes=PILOT_PROBES)
    calls: list[Request] = []
    (tmp_path / "out").mkdir()
    running = StoreLock(tmp_path / "out" / "run.sqlite")  # an audit is running on out/
    refused = pytest.raises(StoreError, match=r"^another audit is running on .*run\.sqlite")
    with running, refused:
        plan_audit(config, judge=_counting(calls), pilot=True, progress=False)
    assert calls == []
    bill = plan_audit(config, judge=_counting(calls), pilot=True, progress=False)
    assert bill.pilot is not None and bill.pilot.calls == len(calls) == 40  # once it is free


# -- Ctrl-C and SIGTERM ----------------------------------------------------------------------------
def test_sigterm_stops_an_audit_as_ctrl_c_does_and_the_same_command_resumes(tmp_path: Path) -> None:
    audit = _start(*AUDIT, cwd=tmp_path, sleep=0.05)
    said = _stop_after_calls(audit, tmp_path, 5, signal.SIGTERM)
    assert audit.returncode == 143
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        saved = store.count()
        run = store.run(1)
        meta = store.run_meta(1)
    assert run is not None and run["status"] == "interrupted"
    assert meta[STATUS] == {
        "state": "incomplete",
        "reason": "interrupted (SIGTERM) before it finished",
    }
    assert (
        f"terminated (SIGTERM): {saved} verdicts saved in {Path('out', 'run.sqlite')}; "
        "run the same command again to resume"
    ) in said
    again = _start(*AUDIT, cwd=tmp_path, sleep=0.0)
    stdout, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    assert f"from the store: {saved}," in stdout


@pytest.mark.parametrize(
    ("sent", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
)
def test_score_stopped_says_what_is_saved_and_exits_by_the_signal(
    tmp_path: Path, sent: signal.Signals, code: int, said: str
) -> None:
    score = _start("score", *JUDGE, "--store", "v.sqlite", cwd=tmp_path, sleep=0.5)
    line = _stop_after_calls(score, tmp_path, 1, sent)
    assert score.returncode == code
    with RunStore(tmp_path / "v.sqlite") as store:
        saved = store.count()
    assert f"{said}: {saved} verdict" in line and "run the same command again to resume" in line


def test_a_pilot_stopped_by_sigterm_says_what_is_saved(tmp_path: Path) -> None:
    config = tmp_path / "audit.yaml"
    config.write_text(json.dumps({"out": "out", "probes": PILOT_PROBES}))
    pilot = _start("bill", str(config), *JUDGE, "--limit", "8", "--pilot", cwd=tmp_path, sleep=0.5)
    line = _stop_after_calls(pilot, tmp_path, 1, signal.SIGTERM)
    assert pilot.returncode == 143
    assert "terminated (SIGTERM): " in line and "run the same command again to resume" in line


# -- a full disk -----------------------------------------------------------------------------------
def _fill_after(monkeypatch: pytest.MonkeyPatch, verdicts: int) -> None:
    """Make each run store full (SQLite's own "database or disk is full") once it holds
    ``verdicts`` verdicts; a store opened again has room (as after space is freed)."""
    put = RunStore.put

    def filling(self: RunStore, request: Any, verdict: Any) -> Any:
        if self.count() >= verdicts:
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._db.execute(f"PRAGMA max_page_count = {pages}")
        return put(self, request, verdict)

    monkeypatch.setattr(RunStore, "put", filling)


def test_a_full_disk_stops_an_audit_with_how_to_resume_and_keeps_its_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Request] = []
    _fill_after(monkeypatch, 10)
    with pytest.raises(StoreError) as caught:
        run_audit(_config(tmp_path / "out"), judge=_counting(calls), progress=False)
    message = str(caught.value)
    assert "database or disk is full" in message
    assert message.endswith(
        "the disk is full; every verdict made is stored and the run is marked stopped: free some "
        "space and run the same command again to resume"
    )
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        saved = store.count()
        run = store.run(1)
    assert saved >= 10 and run is not None and run["status"] == "stopped"
    monkeypatch.undo()  # space is freed
    again = run_audit(_config(tmp_path / "out"), judge=_counting(calls), progress=False)
    assert again.complete and again.engine_totals["cached"] >= saved


def test_a_full_disk_in_an_audit_is_one_line_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "judges.py").write_text(JUDGES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    _fill_after(monkeypatch, 10)
    assert _run_main(monkeypatch, *AUDIT) == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith("error: ") and "Traceback" not in stderr
    assert "the disk is full" in stderr and "run the same command again to resume" in stderr


def _no_space(fd: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_while_writing_the_card_names_the_file_and_keeps_the_old_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    run_audit(_config(out), judge=_counting([]), progress=False)
    before = {path.name: path.read_bytes() for path in out.glob("card*")}
    monkeypatch.setattr(os, "fsync", _no_space)  # every write of a card file fails
    code = _run_main(monkeypatch, "card", str(out / "run.sqlite"))
    stderr = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in stderr
    assert stderr.startswith(f"error: {out}")
    assert (
        f": cannot write the card ({os.strerror(errno.ENOSPC)}); the run is stored, so free some "
        f"space or choose another folder; `judgeprobe card {out / 'run.sqlite'}` writes it again"
    ) in stderr
    assert {path.name: path.read_bytes() for path in out.glob("card*")} == before
    assert not list(out.rglob("*.tmp"))  # no half-written file left behind


def test_an_audit_whose_card_cannot_be_written_keeps_its_complete_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", _no_space)
    with pytest.raises(ConfigError, match=r"cannot write the card \(No space left on device\)"):
        run_audit(_config(tmp_path / "out"), judge=_counting([]), progress=False)
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        run = store.run(1)
    assert run is not None and run["status"] == "complete"


def test_any_other_full_disk_is_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "judges.py").write_text(JUDGES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)

    def full(self: Any, path: Any) -> Path:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(ScoreResult, "write", full)
    args = ("score", *JUDGE, "--limit", "2", "--store", "v.sqlite", "-o", "v.csv")
    assert _run_main(monkeypatch, *args) == 2
    stderr = " ".join(capsys.readouterr().err.split())
    assert stderr.startswith(f"error: v.csv: {os.strerror(errno.ENOSPC)}; free some space")
    assert "Traceback" not in stderr
    with RunStore(tmp_path / "v.sqlite") as store:
        assert store.count() == 2  # the verdicts made are kept
