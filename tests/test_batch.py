"""Batch export and import: an audit's judge calls as OpenAI Batch files, answered elsewhere.

The answers are made by the chat stub of fake_server.py from each exported body, exactly as a
live call with that body is answered, so an audit fed by batch files can be compared with a
live audit against the same stub.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batch_server import BatchServer
from fake_server import serve_in_thread
from judgeprobe._cli.main import app
from judgeprobe.audit.batch_export import export_batch, import_batch
from judgeprobe.audit.config import AuditConfig, parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine import RunStore
from judgeprobe.engine.batch.lines import shard_of
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.judges.openai_compat import OpenAIJudge

PROBES = {"repetition": {"counts": [2]}, "cluster": {"per_cluster": 3, "n_resamples": 200}}


@pytest.fixture(scope="module")
def stub() -> Iterator[BatchServer]:
    with serve_in_thread(BatchServer()) as server:
        yield server


def _config(stub: BatchServer, out: Path, **changes: Any) -> AuditConfig:
    base: dict[str, Any] = {
        "judge": f"openai:stub-judge@{stub.base_url}",
        "rubric": "refusal",
        "data": "demo",
        "limit": 4,
        "probes": PROBES,
        "out": str(out),
        "fail_on": "never",
    }
    return parse_config({**base, **changes})


def _inputs(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("requests-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _answer(stub: BatchServer, line: dict[str, Any], n: int) -> dict[str, Any]:
    """The output line the stub's chat endpoint would give for an input line."""
    key = stub.key_of(json.dumps(line["body"]).encode())
    return {
        "id": f"batch_req_{n}",
        "custom_id": line["custom_id"],
        "response": {
            "status_code": 200,
            "request_id": f"r{n}",
            "body": stub._completion(line["body"], key),
        },
        "error": None,
    }


def _failure(line: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "batch_req_x",
        "custom_id": line["custom_id"],
        "response": {
            "status_code": 500,
            "request_id": "rx",
            "body": {"error": {"message": "boom"}},
        },
        "error": None,
    }


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _verdict_rows(store: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store) as db:
        return sorted(db.execute("SELECT * FROM verdicts").fetchall())


def _findings(outcome: Any) -> dict[str, Any]:
    return {
        (name, f.name, tuple(sorted(f.labels.items()))): (
            f.estimate.estimate,
            f.estimate.n,
            f.status,
        )
        for name, result in outcome.results.items()
        for f in result.findings
    }


def test_export_writes_each_pending_request_with_the_body_the_judge_sends_live(
    stub: BatchServer, tmp_path: Path
) -> None:
    config = _config(stub, tmp_path / "out")
    report = export_batch(config, tmp_path / "batch")
    lines = _inputs(tmp_path / "batch")
    judge = OpenAIJudge(stub.base_url, "stub-judge")
    with RunStore(report.store) as store:
        recorded = store.batch_requests()
    assert report.requests == len(lines) == len(recorded) > 0
    for line in lines:
        assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
        assert line["body"] == judge.body(recorded[line["custom_id"]])
        assert line["body"]["logprobs"] is True and line["body"]["top_logprobs"] == 20
    manifest = json.loads((tmp_path / "batch" / "manifest.json").read_text())
    assert manifest["requests"] == report.requests
    assert (tmp_path / "batch" / manifest["store"]).resolve() == report.store.resolve()


def test_a_new_export_replaces_only_the_files_the_previous_manifest_lists(
    stub: BatchServer, tmp_path: Path
) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    mine = {"requests-mine.jsonl": "my notes\n", "requests-00007.jsonl": "my own batch\n"}
    for name, text in mine.items():
        (folder / name).write_text(text)
    config = _config(stub, tmp_path / "out")

    first = export_batch(config, folder, shards=3)
    second = export_batch(config, folder, shards=1)

    assert len(first.files) == 3 and [p.name for p in second.files] == ["requests-00000.jsonl"]
    left = sorted(p.name for p in folder.glob("requests-*.jsonl"))
    assert left == ["requests-00000.jsonl", "requests-00007.jsonl", "requests-mine.jsonl"]
    assert all((folder / name).read_text() == text for name, text in mine.items())


def test_an_export_refuses_to_overwrite_a_file_no_manifest_lists(
    stub: BatchServer, tmp_path: Path
) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "requests-00000.jsonl").write_text("my own batch\n")

    with pytest.raises(ConfigError, match=r"requests-00000\.jsonl would be overwritten"):
        export_batch(_config(stub, tmp_path / "out"), folder)

    assert (folder / "requests-00000.jsonl").read_text() == "my own batch\n"


def test_shards_split_the_requests_by_key(stub: BatchServer, tmp_path: Path) -> None:
    report = export_batch(_config(stub, tmp_path / "out"), tmp_path / "batch", shards=3)
    assert len(report.files) == 3
    keys = []
    for path in report.files:
        number = int(path.stem.split("-")[1])
        shard = [json.loads(line)["custom_id"] for line in path.read_text().splitlines()]
        assert all(shard_of(key, 3) == number for key in shard)
        keys += shard
    assert len(keys) == len(set(keys)) == report.requests


def test_exported_and_imported_by_stage_the_audit_makes_no_call_and_finds_what_live_finds(
    stub: BatchServer, tmp_path: Path
) -> None:
    live = run_audit(_config(stub, tmp_path / "live"), progress=False, write_card=False)
    config = _config(stub, tmp_path / "out")
    folder = tmp_path / "batch"
    exported = []
    for stage in range(5):
        report = export_batch(config, folder)
        exported.append(report.requests)
        if not report.requests:
            break
        lines = _inputs(folder)
        failed, rest = lines[:2], lines[2:]
        # a first output file: two lines failed, a duplicate and an unknown custom_id
        unknown = {**_answer(stub, rest[0], 0), "custom_id": "f" * 32}
        first = [_failure(line) for line in failed] + [
            _answer(stub, line, n) for n, line in enumerate(rest)
        ]
        _write(folder / f"output-{stage}a.jsonl", [*first, first[-1], unknown])
        # a second file, as a retry batch would give: the two failed lines answered
        _write(
            folder / f"output-{stage}b.jsonl",
            [_answer(stub, line, n) for n, line in enumerate(failed)],
        )
        imported = import_batch([folder])
        assert imported.unknown == ["f" * 32] * (
            stage + 1
        )  # every output file of the folder is read
    assert exported[0] > 0 and exported[1] > 0 and exported[-1] == 0  # the cluster's 2nd stage
    calls = stub.calls
    batched = run_audit(config, progress=False, write_card=False)
    assert stub.calls == calls and batched.engine_totals["called"] == 0
    assert batched.complete and _findings(batched) == _findings(live)


def test_importing_the_same_files_twice_changes_nothing(stub: BatchServer, tmp_path: Path) -> None:
    report = export_batch(_config(stub, tmp_path / "out"), tmp_path / "batch")
    lines = _inputs(tmp_path / "batch")
    _write(
        tmp_path / "batch" / "output.jsonl",
        [_failure(lines[0])] + [_answer(stub, line, n) for n, line in enumerate(lines[1:])],
    )
    first = import_batch([tmp_path / "batch"])
    rows = _verdict_rows(report.store)
    second = import_batch([tmp_path / "batch"])
    assert _verdict_rows(report.store) == rows
    assert (first.imported, first.errors) == (len(lines), 1)
    assert (second.imported, second.unchanged) == (0, len(lines))


def test_a_failed_line_is_an_error_verdict_and_its_request_is_exported_again(
    stub: BatchServer, tmp_path: Path
) -> None:
    config = _config(stub, tmp_path / "out", probes={"repetition": {"counts": [2]}})
    report = export_batch(config, tmp_path / "batch")
    lines = _inputs(tmp_path / "batch")
    _write(
        tmp_path / "batch" / "output.jsonl",
        [
            _failure(lines[0]),
            {
                "custom_id": lines[1]["custom_id"],
                "response": None,
                "error": {"code": "x", "message": "expired"},
            },
        ]
        + [_answer(stub, line, n) for n, line in enumerate(lines[2:])],
    )
    import_batch([tmp_path / "batch"])
    with RunStore(report.store) as store:
        failed = [store.get(line["custom_id"]) for line in lines[:2]]
    assert [v.status for v in failed if v is not None] == [VerdictStatus.ERROR] * 2
    assert "HTTP 500: boom" in str(failed[0] and failed[0].error)
    assert "expired" in str(failed[1] and failed[1].error)
    again = export_batch(config, tmp_path / "batch")
    assert sorted(line["custom_id"] for line in _inputs(tmp_path / "batch")) == sorted(
        line["custom_id"] for line in lines[:2]
    )
    assert again.requests == 2


def test_a_vllm_run_batch_line_is_read_as_an_openai_one(stub: BatchServer, tmp_path: Path) -> None:
    """vllm run-batch writes the same line; an error line may carry a string error, no body."""
    report = export_batch(
        _config(stub, tmp_path / "out", probes={"repetition": {"counts": [2]}}), tmp_path / "b"
    )
    lines = _inputs(tmp_path / "b")
    answered = _answer(stub, lines[0], 0)
    vllm_ok = {
        "id": "vllm-1",
        "custom_id": lines[0]["custom_id"],
        "response": {
            "status_code": 200,
            "request_id": "vllm-batch-1",
            "body": answered["response"]["body"],
        },
        "error": None,
    }
    vllm_error = {
        "id": "vllm-2",
        "custom_id": lines[1]["custom_id"],
        "response": {"status_code": 400, "request_id": "vllm-batch-2", "body": None},
        "error": "context length exceeded",
    }
    _write(tmp_path / "b" / "vllm.jsonl", [vllm_ok, vllm_error])
    import_batch([tmp_path / "b" / "vllm.jsonl"], store=report.store)
    with RunStore(report.store) as store:
        ok, error = store.get(lines[0]["custom_id"]), store.get(lines[1]["custom_id"])
    label = stub.label_for(stub.key_of(json.dumps(lines[0]["body"]).encode()))
    assert ok is not None and ok.status is VerdictStatus.OK
    # a first trial is the answer's most likely label; a rerun (the noise null's trial 1) is a
    # label drawn from the answer's distribution, seeded by the request
    assert ok.label == label if ok.trial == 0 else ok.label in (ok.distribution or {})
    assert ok.distribution is not None  # read from the logprobs, as a live answer is
    assert error is not None and "context length exceeded" in str(error.error)


def test_a_malformed_output_line_is_a_data_error_naming_the_file_and_line(
    stub: BatchServer, tmp_path: Path
) -> None:
    report = export_batch(_config(stub, tmp_path / "out"), tmp_path / "batch")
    line = _answer(stub, _inputs(tmp_path / "batch")[0], 0)
    (tmp_path / "batch" / "output.jsonl").write_text(json.dumps(line) + "\n\n{not json\n")
    with pytest.raises(DataError, match=r"output\.jsonl, row 3: not a JSON line"):
        import_batch([tmp_path / "batch"], store=report.store)
    (tmp_path / "batch" / "output.jsonl").write_text('{"response": {}}\n')
    with pytest.raises(DataError, match=r"output\.jsonl, row 1: not a batch output line"):
        import_batch([tmp_path / "batch"], store=report.store)


def test_export_needs_an_openai_compatible_judge(tmp_path: Path) -> None:
    config = parse_config(
        {
            "judge": "profanity",
            "rubric": "toxicity",
            "data": "demo",
            "probes": ["repetition"],
            "out": str(tmp_path),
        }
    )
    with pytest.raises(ConfigError, match="batch export needs an OpenAI-compatible judge"):
        export_batch(config, tmp_path / "batch")


def test_export_refuses_to_write_a_credential_of_the_request_body(
    stub: BatchServer, tmp_path: Path
) -> None:
    config = _config(
        stub, tmp_path / "out", judge_options={"extra_body": {"api_key": "sk-in-body-123"}}
    )
    with pytest.raises(ConfigError, match="extra_body holds a credential"):
        export_batch(config, tmp_path / "batch")
    assert not (tmp_path / "batch").exists()


def test_import_without_a_manifest_or_store_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "output.jsonl").write_text("")
    with pytest.raises(ConfigError, match=r"no export manifest\.json"):
        import_batch([tmp_path])


def test_the_cli_exports_and_imports_and_lists_unknown_custom_ids(
    stub: BatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "audit.yaml"
    config.write_text(
        f"judge: openai:stub-judge@{stub.base_url}\nrubric: refusal\ndata: demo\nlimit: 4\n"
        "probes: {repetition: {counts: [2]}}\nout: out\n"
    )
    runner = CliRunner()
    exported = runner.invoke(
        app, ["batch", "export", str(config), "--out", "batch", "--shards", "2"]
    )
    assert exported.exit_code == 0, exported.output
    assert "pending requests: 26 (repetition stage 1)" in exported.output
    lines = _inputs(tmp_path / "batch")
    _write(
        tmp_path / "batch" / "output.jsonl",
        [_answer(stub, line, n) for n, line in enumerate(lines)]
        + [{"custom_id": "nobody", "response": None, "error": "x"}],
    )
    imported = runner.invoke(app, ["batch", "import", "batch"])
    assert imported.exit_code == 0, imported.output
    assert (
        "imported: 26 (errors: 0)" in imported.output
        and "unknown custom_id: nobody" in imported.output
    )
    again = runner.invoke(app, ["batch", "export", str(config), "--out", "batch"])
    if "(repetition stage 2)" in again.output:
        # the stub's answers differ between reruns: the rerun null asks for the rest of its sample
        lines = _inputs(tmp_path / "batch")
        _write(
            tmp_path / "batch" / "output.jsonl",
            [_answer(stub, line, n) for n, line in enumerate(lines)],
        )
        assert runner.invoke(app, ["batch", "import", "batch"]).exit_code == 0
        again = runner.invoke(app, ["batch", "export", str(config), "--out", "batch"])
    assert "pending requests: 0; nothing to export" in again.output
    store = ["--store", str(tmp_path / "out" / "run.sqlite")]
    assert (
        "pending requests: 0"
        in runner.invoke(app, ["batch", "export", str(config), "--out", "batch", *store]).output
    )
    # the old spellings: -o for the batch folder, and with it --out for the audit's folder
    old = runner.invoke(app, ["batch", "export", str(config), "-o", "batch", "--out", "out"])
    assert old.exit_code == 0, old.output
    assert "pending requests: 0; nothing to export" in old.stdout
    assert "warning: batch export -o is deprecated; use --out" in old.stderr
    assert "use --store DIR/run.sqlite" in old.stderr
    elsewhere = runner.invoke(
        app, ["batch", "export", str(config), "--out", "b2", "--store", "x.db"]
    )
    assert elsewhere.exit_code == 2 and "OUT/run.sqlite" in elsewhere.output
