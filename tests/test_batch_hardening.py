"""Batch output a careless or hostile provider writes: bad lines, strangers, echoed keys, big files.

The ``openai-batch`` executor imports what it can of a batch and says what it could not: a bad
line no longer fails every rerun on the same stored batch. ``batch import`` redacts the judge's
key as a live run does, reads a file a line at a time, and never reports success for a folder
it imported nothing from.
"""

from __future__ import annotations

import json
import sqlite3
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batch_server import BatchServer
from fake_server import serve_in_thread
from judgeprobe._cli.main import app
from judgeprobe.audit.batch_export import export_batch, import_batch
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.engine.executors.openai_batch import BatchImportWarning, OpenAIBatchExecutor
from judgeprobe.errors import DataError
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import builtin_rubric
from test_batch import _config

REFUSAL = builtin_rubric("refusal")


class Tampered(BatchServer):
    """A batch stub whose output file is edited once the batch ends: ``edit(lines)`` returns the
    output file's new lines (text)."""

    def __init__(self, edit: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.edit = edit

    def _finish(self, job: dict[str, Any]) -> None:
        super()._finish(job)
        file_id = job["output_file_id"]
        if file_id is not None and self.edit is not None:
            lines = self.files[file_id].decode().splitlines()
            self.files[file_id] = ("\n".join(self.edit(lines)) + "\n").encode()
            self.edit = None  # the next batch is answered as it should be


async def _no_wait(seconds: float) -> None:
    return None


def _requests(judge: OpenAIJudge, n: int = 6) -> list[Request]:
    return [
        Request.make(judge.fingerprint, REFUSAL, {"prompt": f"q {i}", "response": f"a {i}"})
        for i in range(n)
    ]


def _run(judge: OpenAIJudge, store: RunStore, requests: list[Request]) -> Any:
    executor = OpenAIBatchExecutor(judge, poll_s=1, max_poll_s=1, sleep=_no_wait)
    engine = Engine(judge, store, EngineConfig(progress=False), executor=executor)
    return engine.run_sync(requests)


# -- item 17: the executor imports what it can and says what it could not ------------------------
def test_a_bad_output_line_is_an_error_verdict_or_stays_pending_and_the_rerun_gets_past_it() -> (
    None
):
    def corrupt(lines: list[str]) -> list[str]:
        return [lines[0][:60], "<html>gateway error</html>", *lines[2:]]  # cut short; garbage

    server = Tampered(corrupt)
    with serve_in_thread(server), RunStore(":memory:") as store:
        judge = OpenAIJudge(server.base_url, "stub-judge")
        requests = _requests(judge)
        with pytest.warns(BatchImportWarning, match=r"2 bad lines: batch batch_1 output file, "):
            first = _run(judge, store, requests)
        cut = first.verdicts[requests[0].key]  # its custom_id could still be read
        assert cut.status is VerdictStatus.ERROR
        assert "output file, line 1: not a JSON line" in (cut.error or "")
        assert len(first.verdicts) == 5 and first.stats.ok == 4  # line 2 named no request
        assert first.stopped is not None and "1 left pending; run again" in first.stopped
        second = _run(judge, store, requests)  # before: the same DataError on every rerun
    assert second.complete and second.stats.ok == 2 and server.created == 2


def test_unknown_and_conflicting_answers_of_a_batch_are_reported_not_dropped_silently() -> None:
    def add(lines: list[str]) -> list[str]:
        stranger = {**json.loads(lines[0]), "custom_id": "nobody-asked"}
        twin = json.loads(lines[1])
        choice = twin["response"]["body"]["choices"][0]
        choice.pop("logprobs", None)
        label = choice["message"]["content"]
        choice["message"]["content"] = "false" if "true" in label else "true"
        return [*lines, json.dumps(stranger), json.dumps(twin)]

    server = Tampered(add)
    with serve_in_thread(server), RunStore(":memory:") as store:
        judge = OpenAIJudge(server.base_url, "stub-judge")
        requests = _requests(judge)
        with pytest.warns(BatchImportWarning) as caught:
            result = _run(judge, store, requests)
    message = str(caught[0].message)
    assert "1 answers to requests not in the batch: nobody-asked" in message
    assert "1 answers that differ from the verdict stored (kept)" in message
    assert result.complete and result.stats.ok == 6


# -- item 18: batch import -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stub() -> Iterator[BatchServer]:
    server = BatchServer()
    with serve_in_thread(server):
        yield server


def _answers(stub: BatchServer, folder: Path, echo: str = "", pad: int = 0) -> list[str]:
    """The output lines the stub would write for the input files in ``folder``."""
    lines = []
    for path in sorted(folder.glob("requests-*.jsonl")):
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines()):
            line = json.loads(text)
            body = stub._completion(line["body"], stub.key_of(json.dumps(line["body"]).encode()))
            body["choices"][0]["message"]["content"] += echo
            answer = {
                "id": f"batch_req_{n}",
                "custom_id": line["custom_id"],
                "response": {"status_code": 200, "request_id": f"r{n}", "body": body},
                "error": None,
            }
            if pad:
                answer["padding"] = "x" * pad
            lines.append(json.dumps(answer))
    return lines


def test_import_redacts_the_judges_key_echoed_in_the_answers(
    stub: BatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 7-character key in a variable whose name does not look secret: only the judge says it
    is one. Before, the import opened the store without it and stored every echo verbatim."""
    monkeypatch.setenv("MY_JUDGE_SERVICE", "tok1234")
    config = _config(stub, tmp_path / "out", judge_options={"api_key_env": "MY_JUDGE_SERVICE"})
    report = export_batch(config, tmp_path / "batch")
    outputs = _answers(stub, tmp_path / "batch", echo=" (your key: tok1234)")
    (tmp_path / "batch" / "output.jsonl").write_text("\n".join(outputs) + "\n")
    done = CliRunner().invoke(app, ["batch", "import", str(tmp_path / "batch")])
    assert done.exit_code == 0, done.output
    assert f"imported: {len(outputs)}" in done.output
    stored = report.store.read_bytes()
    assert b"tok1234" not in stored and b"[redacted]" in stored


def test_import_reads_a_large_output_file_a_line_at_a_time(
    stub: BatchServer, tmp_path: Path
) -> None:
    """26 answers padded to 0.8 MB each: a 21 MB file. Before, the whole text and every parsed
    line were held at once (about twice the file)."""
    report = export_batch(_config(stub, tmp_path / "out"), tmp_path / "batch")
    outputs = _answers(stub, tmp_path / "batch", pad=800_000)
    path = tmp_path / "batch" / "output.jsonl"
    path.write_text("\n".join(outputs) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        imported = import_batch([tmp_path / "batch"], store=report.store)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert imported.imported == len(outputs) == 26 and size > 20e6
    assert peak < size / 4, (peak, size)


def test_outputs_named_like_the_export_inputs_are_imported_and_a_folder_of_inputs_is_refused(
    stub: BatchServer, tmp_path: Path
) -> None:
    report = export_batch(_config(stub, tmp_path / "out"), tmp_path / "batch")
    outputs = _answers(stub, tmp_path / "batch")
    answered = tmp_path / "answered"  # e.g. vllm run-batch -o answered/requests-00000.jsonl
    answered.mkdir()
    (answered / "requests-00000.jsonl").write_text("\n".join(outputs) + "\n")
    runner = CliRunner()
    store = ["--store", str(report.store)]
    done = runner.invoke(app, ["batch", "import", str(answered), *store])
    assert done.exit_code == 0, done.output
    assert f"imported: {len(outputs)} (errors: 0)" in done.output  # before: files: 0, exit 0
    with pytest.raises(DataError, match=r"batch: no batch output file in this folder"):
        import_batch([tmp_path / "batch"], store=report.store)
    assert runner.invoke(app, ["batch", "import", str(tmp_path / "batch")]).exit_code != 0
    with sqlite3.connect(report.store) as db:
        assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == len(outputs)


def test_a_bad_line_stops_the_import_of_its_file_naming_the_line_and_the_way_out(
    stub: BatchServer, tmp_path: Path
) -> None:
    report = export_batch(_config(stub, tmp_path / "out"), tmp_path / "batch")
    outputs = _answers(stub, tmp_path / "batch")
    path = tmp_path / "batch" / "output.jsonl"
    path.write_text("\n".join([*outputs[:3], "{cut", *outputs[3:]]) + "\n")
    with pytest.raises(DataError, match=r"output\.jsonl, row 4: not a JSON line") as raised:
        import_batch([tmp_path / "batch"], store=report.store)
    assert "nothing of this file was imported: fix or delete that line" in str(raised.value)
    with sqlite3.connect(report.store) as db:
        assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 0
