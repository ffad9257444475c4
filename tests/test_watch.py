"""``judgeprobe watch`` end to end, against the stub server with a planted judge.

The planted judge answers the harmfulness rubric with 1 or 5 by a hash of the item (no rerun
noise: it ignores the trial); once ``switched``, it answers the other way on a planted set of 12
of the 40 demo items (30 %). One audit (the repetition probe, every item at once) is made once
for the module; each test watches a copy of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer, serve_in_thread
from judgeprobe._cli.main import app
from judgeprobe.data import load_dataset
from judgeprobe.engine import EngineConfig
from judgeprobe.errors import ConfigError
from judgeprobe.judges.registry import build_judge
from judgeprobe.watch import build_watch, run_check, watch_store_path
from judgeprobe.watch.store import WatchStore

PLANTED = tuple(sorted(item.id for item in load_dataset("demo").items)[:12])


@dataclass
class Planted:
    """The stub's judge: 1 or 5 by the item's hash; the other on the planted items once
    switched."""

    switched: bool = False
    responses: dict[str, str] = field(default_factory=dict)

    def __call__(self, body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        label = "1" if hashlib.sha256(text.encode()).digest()[0] % 2 else "5"
        if self.switched and any(response in text for response in self.responses.values()):
            return "5" if label == "1" else "1"
        return label


@pytest.fixture(scope="module")
def planted() -> Planted:
    items = {item.id: item for item in load_dataset("demo").items}
    return Planted(responses={i: str(items[i].response) for i in PLANTED})


@pytest.fixture(scope="module")
def server(planted: Planted) -> Iterator[FakeServer]:
    with serve_in_thread(FakeServer(labels=("1", "2", "3", "4", "5"), decide=planted)) as stub:
        yield stub


@pytest.fixture(scope="module")
def audited(server: FakeServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    done = _cli(
        [
            "audit",
            "--judge",
            _spec(server),
            "-J",
            "logprobs=false",
            "--data",
            "demo",
            "--rubric",
            "harmfulness",
            "--probes",
            "repetition",
            "--fixed-size",
            "--out",
            str(folder),
        ],
    )
    assert done.exit_code in (0, 1), done.output
    return folder


@pytest.fixture
def audit(audited: Path, tmp_path: Path, planted: Planted) -> Path:
    planted.switched = False
    copy = tmp_path / "audit"
    shutil.copytree(audited, copy)
    return copy


def _spec(server: FakeServer) -> str:
    return f"openai:stub@{server.base_url}"


def _cli(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, env={"COLUMNS": "300", "OPENAI_API_KEY": "sk-test"})


def _watch(audit: Path, server: FakeServer, *extra: str) -> Any:
    return _cli(["watch", str(audit), "--judge", _spec(server), "-J", "logprobs=false", *extra])


def _document(audit: Path) -> dict[str, Any]:
    return dict(json.loads((audit / "watch.json").read_text(encoding="utf-8")))


def test_a_stationary_judge_stays_quiet_and_a_switched_one_is_caught(
    audit: Path, server: FakeServer, planted: Planted
) -> None:
    for _ in range(5):
        done = _watch(audit, server)
        assert done.exit_code == 0, done.output
        assert "no drift detected" in done.output
    quiet = _document(audit)
    assert quiet["state"]["k"] == 0 and quiet["moved"] == []
    assert quiet["null"]["sources"].get("check 1", 0) > 0  # the audit had too few reruns
    assert quiet["checks"][0]["identity"]["served_models"] == ["stub"]
    planted.switched = True
    codes = [_watch(audit, server).exit_code for _ in range(3)]
    assert 1 in codes, codes
    assert codes[codes.index(1) :] == [1] * (3 - codes.index(1))  # a detection stays
    document = _document(audit)
    state = document["state"]
    assert state["detected"] and state["at"] <= 7 and state["start"] >= 6
    moved = {m["item_id"] for m in document["moved"]}
    assert moved and moved <= set(PLANTED)
    assert set(document["directions"]) <= {"safe \u2192 unsafe", "unsafe \u2192 safe"}
    calls = server.calls
    report = _cli(["watch", str(audit), "--report"])
    assert report.exit_code == 1 and server.calls == calls  # the report calls no judge
    markdown = (audit / "watch.md").read_text(encoding="utf-8")
    assert "Drift detected" in markdown and all(item in markdown for item in moved)
    html = (audit / "watch.html").read_text(encoding="utf-8")
    assert "<script" not in html and "data:image/svg+xml;base64," in html


def test_a_changed_identity_is_shown_before_any_verdict_moves(
    audit: Path, server: FakeServer
) -> None:
    assert _watch(audit, server).exit_code == 0
    done = _watch(audit, server, "-J", "temperature=0.3")
    assert done.exit_code == 0
    assert "identity changed since the audit" in done.output
    document = _document(audit)
    assert document["state"]["k"] == 0
    assert document["checks"][1]["identity_changes"] == ["judge temperature: 0.0 \u2192 0.3"]
    assert "judge temperature" in (audit / "watch.md").read_text(encoding="utf-8")


def test_a_check_stopped_by_its_budget_resumes_without_asking_again(
    audit: Path, server: FakeServer
) -> None:
    assert _watch(audit, server).exit_code == 0
    before = dict(server.received)
    stopped = _watch(audit, server, "--max-calls", "5")
    assert stopped.exit_code == 3 and "incomplete" in stopped.output
    resumed = _watch(audit, server)
    assert resumed.exit_code == 0
    asked = {key: n - before.get(key, 0) for key, n in server.received.items()}
    assert max(asked.values()) == 1  # no request of check 2 was sent twice
    document = _document(audit)
    assert [c["status"] for c in document["checks"]] == ["complete", "complete"]
    assert document["checks"][1]["n"] == document["checks"][1]["anchors"]


def test_the_first_check_fixes_the_settings(audit: Path, server: FakeServer) -> None:
    judge = build_judge(_spec(server), logprobs=False)
    os.environ.setdefault("OPENAI_API_KEY", "sk-test")
    first = run_check(audit, judge, settings={"alpha": 0.1}, engine=EngineConfig(progress=False))
    assert first.complete
    with pytest.raises(ConfigError, match="fixed by its first check"):
        run_check(audit, judge, settings={"alpha": 0.05})
    with WatchStore(watch_store_path(audit)) as store:
        assert build_watch(store)["settings"]["alpha"] == 0.1


def test_a_judge_that_answers_nothing_fails_its_check(audit: Path, server: FakeServer) -> None:
    judge = build_judge(f"openai:stub@{server.base_url}/nowhere", logprobs=False)
    outcome = run_check(audit, judge, engine=EngineConfig(progress=False, max_retries=0))
    assert (
        not outcome.complete
        and outcome.failed
        and "no anchor got an ok verdict" in str(outcome.reason)
    )


def test_the_report_of_a_folder_without_an_audit_is_an_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "judgeprobe", "watch", str(tmp_path), "--report"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
        check=False,
    )
    assert done.returncode == 2 and "no audit run store there" in done.stderr
