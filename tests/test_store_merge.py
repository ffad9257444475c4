"""Merging run stores: by request key, idempotent, commutative, conflicts reported and left out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.engine import RunStore
from judgeprobe.engine.store import SCHEMA_VERSION
from judgeprobe.engine.store_merge import merge_stores
from judgeprobe.errors import StoreError
from judgeprobe.judges import CallableJudge
from judgeprobe.runs.probe import reanalyze


def _audit(out: Path, limit: int, score: Callable[[Request], float] = lambda r: 1.0) -> Path:
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": "demo",
            "limit": limit,
            "out": str(out),
            "probes": {"repetition": {"counts": [2]}},
        }
    )
    run_audit(
        config, judge=CallableJudge(score, name="same-judge"), progress=False, write_card=False
    )
    return out / "run.sqlite"


def _content(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of a store, its rows sorted (sqlite's own bookkeeping left out)."""
    with sqlite3.connect(path) as db:
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {
            name: sorted(db.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in sorted(names)
        }


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Path, Path]:
    return _audit(tmp_path / "a", 3), _audit(tmp_path / "b", 5)


def test_a_merge_holds_every_verdict_and_run_of_both_stores(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = stores
    report = merge_stores(a, b, tmp_path / "c.sqlite")
    with RunStore(a) as sa, RunStore(b) as sb, RunStore(tmp_path / "c.sqlite") as sc:
        keys_a = {record["key"] for record, _ in sa.iter_verdicts()}
        keys_b = {record["key"] for record, _ in sb.iter_verdicts()}
        assert {record["key"] for record, _ in sc.iter_verdicts()} == keys_a | keys_b
        # the 3-item audit's requests are the 5-item one's, but for the reruns each draws from
        # its own items (the rerun null's seeded sample)
        assert {k for k in keys_a if k in keys_b} and report.same == len(keys_a & keys_b)
        assert report.only_second == len(keys_b - keys_a)
        assert sc.run_ids() == [1, 2] and report.runs == 2 and not report.conflicts
        # each run is analysed again from the merged store as from its own
        assert reanalyze(sc, 1, "repetition").to_dict() == reanalyze(sa, 1, "repetition").to_dict()
        assert reanalyze(sc, 2, "repetition").to_dict() == reanalyze(sb, 1, "repetition").to_dict()


def test_merge_is_commutative_in_content(stores: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = stores
    merge_stores(a, b, tmp_path / "ab.sqlite")
    merge_stores(b, a, tmp_path / "ba.sqlite")
    assert _content(tmp_path / "ab.sqlite") == _content(tmp_path / "ba.sqlite")


def test_merging_a_store_with_itself_gives_the_store(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = stores
    merge_stores(a, a, tmp_path / "aa.sqlite")
    assert _content(tmp_path / "aa.sqlite") == _content(a)
    merge_stores(tmp_path / "aa.sqlite", a, tmp_path / "aaa.sqlite")
    assert _content(tmp_path / "aaa.sqlite") == _content(a)


def test_conflicting_verdicts_are_reported_with_both_values_and_left_out(tmp_path: Path) -> None:
    a = _audit(tmp_path / "a", 3, lambda r: 1.0)
    b = _audit(tmp_path / "b", 3, lambda r: 4.0)
    report = merge_stores(a, b, tmp_path / "ab.sqlite")
    swapped = merge_stores(b, a, tmp_path / "ba.sqlite")
    assert report.verdicts == 0 and len(report.conflicts) == len(swapped.conflicts) > 0
    first = report.conflicts[0]
    assert (first["first"]["score"], first["second"]["score"]) == (1.0, 4.0)
    assert _content(tmp_path / "ab.sqlite") == _content(tmp_path / "ba.sqlite")
    result = CliRunner().invoke(
        app, ["store", "merge", str(a), str(b), "-o", str(tmp_path / "cli.sqlite")]
    )
    assert result.exit_code == 1
    assert f"{len(report.conflicts)} conflicting verdicts left out" in result.output
    assert '"score": 1.0' in result.output and '"score": 4.0' in result.output


def test_an_error_verdict_gives_way_to_a_verdict_from_the_other_store(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = stores
    with RunStore(a) as store:
        record, verdict = next(iter(store.iter_verdicts()))
        rubric = store.rubrics()[record["rubric"]]
    request = Request(record["judge"], rubric, tuple(record["fields"].items()), record["trial"])
    assert request.key == record["key"]
    with RunStore(a) as store:
        store.put(request, Verdict.failed("timed out", key=request.key))
    for first, second, out in ((a, b, "ab"), (b, a, "ba")):
        report = merge_stores(first, second, tmp_path / f"{out}.sqlite")
        assert report.errors_replaced == 1 and not report.conflicts
        with RunStore(tmp_path / f"{out}.sqlite") as merged:
            kept = merged.get(request.key)
        assert kept is not None and kept.status is VerdictStatus.OK and kept.score == verdict.score


def test_merge_writes_a_new_store_only(stores: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = stores
    with pytest.raises(StoreError, match="exists; a merge writes a new run store"):
        merge_stores(a, b, b)
    with pytest.raises(StoreError, match="no run store there"):
        merge_stores(a, tmp_path / "missing.sqlite", tmp_path / "c.sqlite")


def test_the_merge_command_says_what_it_merged(stores: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = stores
    result = CliRunner().invoke(
        app, ["store", "merge", str(a), str(b), "-o", str(tmp_path / "c.sqlite")]
    )
    assert result.exit_code == 0, result.output
    with RunStore(a) as sa, RunStore(b) as sb:
        keys_a = {record["key"] for record, _ in sa.iter_verdicts()}
        keys_b = {record["key"] for record, _ in sb.iter_verdicts()}
    said = " ".join(result.output.split())
    assert f"{len(keys_a - keys_b)} from the first store only" in said and "2 runs" in said


def _schema_4(path: Path) -> Path:
    """``path`` rewritten as judgeprobe wrote a store before schema 5: no ``run_meta`` table, the
    run's state a result named ``_status``."""
    with RunStore(path) as store:
        status = store.run_meta(1)["status"]
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TABLE run_meta")
        db.execute("INSERT INTO results VALUES (1, '_status', ?)", (json.dumps(status),))
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_merge_only_reads_its_inputs_and_upgrades_an_older_one_in_its_copy(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = stores
    old = _schema_4(a)
    before = _files(old.parent)
    report = merge_stores(old, b, tmp_path / "c.sqlite")
    assert _files(old.parent) == before  # not upgraded in place, no file added beside it
    assert report.runs == 2 and not report.conflicts
    with RunStore(tmp_path / "c.sqlite") as merged:
        assert merged.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert merged.run_meta(1)["status"]["state"] == "complete"  # upgraded in the merge
        assert "_status" not in merged.results(1)


def test_a_merge_input_that_is_not_a_run_store_is_named(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database")
    with pytest.raises(StoreError, match=r"notes\.sqlite: .*not a database"):
        merge_stores(stores[0], text, tmp_path / "c.sqlite")
    assert text.read_text() == "not a database" and not (tmp_path / "c.sqlite").exists()


def test_a_store_whose_writer_is_still_open_is_merged_with_what_its_log_holds(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = stores
    with RunStore(b) as writer:  # its write-ahead log stays beside it while it is open
        writer.set_meta("written_last", "yes")
        assert b.with_name(b.name + "-wal").exists()
        merge_stores(a, b, tmp_path / "c.sqlite")
        copy = RunStore.read_copy(b)
        assert copy.get_meta("written_last") == "yes"
        copy.close()
    with RunStore(tmp_path / "c.sqlite") as merged, RunStore(b) as sb:
        assert merged.count() == len({r["key"] for r, _ in sb.iter_verdicts()} | _keys(a))


def _keys(path: Path) -> set[str]:
    with RunStore(path) as store:
        return {record["key"] for record, _ in store.iter_verdicts()}
