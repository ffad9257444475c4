"""``judgeprobe batch export`` and ``batch import``: an audit's judge calls as files.

:func:`export_batch` writes the requests an audit still needs (what its probes plan, minus
what the run store holds) as OpenAI Batch input files; the user runs them anywhere that takes
that format (the OpenAI Batch API, ``vllm run-batch``) and :func:`import_batch` reads the output
files back into the run store. The audit then answers every request from the store.

A multi-stage probe (cluster, permutation, bypass, policy invariance) plans its later stages
from the verdicts of the earlier ones, so an export holds the current stage of every probe: after
an import, the next export holds the next stage, until an export finds nothing pending.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeprobe.audit.config import AuditConfig
from judgeprobe.audit.run import select_probes
from judgeprobe.core.judge import Judge
from judgeprobe.core.plan import Plan
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus, check_score
from judgeprobe.engine.batch.lines import INPUT_PREFIX, ImportReport, import_outputs, write_shards
from judgeprobe.engine.lock import StoreLock
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.probes.base import Probe
from judgeprobe.runs.probe import probe_context
from judgeprobe.runs.stages import drive, stage_flow, unanswered

MANIFEST = "manifest.json"
"""What an export writes beside its input files: the run store it is for, the counts."""


@dataclass
class ExportReport:
    """What an export wrote: the store it is for, the requests and the input files."""

    store: Path
    requests: int
    files: list[Path] = field(default_factory=list)
    stages: dict[str, int] = field(default_factory=dict)
    """The stage each probe with pending requests is at (1: its first plan)."""


def pending_requests(config: AuditConfig, judge: Judge, store: RunStore) -> dict[str, Any]:
    """The requests ``config``'s audit needs now and ``store`` lacks, with each probe's stage.

    Each probe is planned as an audit plans it; a stage whose requests the store all holds
    (an error verdict counts as missing) is refined into the next, until a stage has missing
    requests or the plan is complete. Requests longer than the judge's context window are left
    out: the audit skips them without a call.
    """
    pending: dict[str, Request] = {}
    stages: dict[str, int] = {}
    for chosen in select_probes(config, judge):
        ctx = probe_context(chosen.probe, judge, chosen.rubric, seed=config.seed)
        plan, missing = _first_pending(chosen.probe, chosen.probe.plan(chosen.items, ctx), store)
        if missing:
            pending.update((r.key, r) for r in missing)
            stages[chosen.name] = plan.stage
    requests = _within_window(judge, list(pending.values()))
    return {"requests": requests, "stages": stages}


def _first_pending(
    probe: Probe, plan: Plan[Any], store: RunStore
) -> tuple[Plan[Any], list[Request]]:
    """The first stage of ``probe`` with requests ``store`` lacks, and those requests (none:
    the final plan, every request stored). Each stage is refined on the store's verdicts."""
    known: dict[str, Verdict] = {}
    missing: list[Request] = []

    def answer(stage: Plan[Any]) -> Mapping[str, Verdict] | None:
        wanted = {r.key: r for r in unanswered(stage, known)}
        for key, verdict in store.get_many(list(wanted)).items():
            if verdict.status is not VerdictStatus.ERROR:
                known[key] = check_score(verdict, wanted[key].rubric.score_range)
        missing.extend(r for key, r in wanted.items() if key not in known)
        return None if missing else known

    return drive(stage_flow(probe, plan), answer), missing


def _within_window(judge: Judge, requests: list[Request]) -> list[Request]:
    window = judge.capabilities.context_window
    if window is None or not requests:
        return requests
    counts = judge.count_tokens_many(requests)
    return [r for r, n in zip(requests, counts, strict=True) if n is None or n <= window]


def export_batch(
    config: AuditConfig, folder: str | Path, *, shards: int = 1, judge: Judge | None = None
) -> ExportReport:
    """Write the pending requests of ``config``'s audit as OpenAI Batch input files.

    The files (``requests-00000.jsonl``...) go to ``folder`` with a ``manifest.json`` naming the
    run store (``config.out``/run.sqlite), which records every exported request so that
    :func:`import_batch` needs nothing but the store. Input files of an earlier export in
    ``folder`` (those its manifest lists) are replaced; any other file is left alone, and one
    this export would overwrite is a ConfigError.
    """
    if shards < 1:
        raise ConfigError(f"--shards must be >= 1, not {shards}")
    judge = judge if judge is not None else build_judge(config.judge, **config.judge_options)
    if not isinstance(judge, OpenAIJudge):
        raise ConfigError(
            f"judge {config.judge!r}: batch export needs an OpenAI-compatible judge "
            "(openai:MODEL@URL), whose request body the batch lines hold"
        )
    _check_no_secret_in_body(judge)
    out = Path(folder)
    previous = _previous_files(out, shards)
    store_path = Path(config.out) / "run.sqlite"
    store_path.parent.mkdir(parents=True, exist_ok=True)
    with StoreLock(store_path), RunStore(store_path, secrets=judge.secrets()) as store:
        store.register_judge(judge.fingerprint, judge.describe())
        found = pending_requests(config, judge, store)
        requests: list[Request] = found["requests"]
        store.put_batch_requests(requests)
    out.mkdir(parents=True, exist_ok=True)
    for stale in previous:
        (out / stale).unlink(missing_ok=True)
    files = write_shards(judge, requests, out, shards)
    manifest = {
        "format": "judgeprobe-batch-export/1",
        "store": os.path.relpath(store_path, out),
        "requests": len(requests),
        "files": [p.name for p in files],
        "stages": found["stages"],
        "api_key_env": judge.api_key_env,  # the name of the variable, never its value
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return ExportReport(store_path, len(requests), files, dict(found["stages"]))


def _previous_files(out: Path, shards: int) -> list[str]:
    """The input files an earlier export wrote to ``out``, as its manifest lists them (only
    ``requests-NNNNN.jsonl`` names: a manifest is a file anyone may have edited).

    ConfigError when a file this export may write (one per shard) is there but not listed:
    it is the user's, not ours to replace.
    """
    listed: list[str] = []
    try:
        files = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("files", [])
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        files = []
    if isinstance(files, list):
        listed = [name for name in files if isinstance(name, str) and _INPUT.fullmatch(name)]
    ours = set(listed)
    theirs = [
        name
        for name in (f"{INPUT_PREFIX}{number:05d}.jsonl" for number in range(shards))
        if name not in ours and os.path.lexists(out / name)
    ]
    if theirs:
        raise ConfigError(
            f"{out}: {', '.join(theirs)} would be overwritten but no earlier export's "
            f"{MANIFEST} lists them; move them or export to another folder"
        )
    return listed


_INPUT = re.compile(rf"{re.escape(INPUT_PREFIX)}\d{{5}}\.jsonl")


def _check_no_secret_in_body(judge: OpenAIJudge) -> None:
    """Refuse to write a credential of the request body (in ``extra_body``) into a file."""
    body = json.dumps(judge.extra_body)
    if any(secret and secret in body for secret in judge.secrets()):
        raise ConfigError(
            "judge_options.extra_body holds a credential, which every batch line would write "
            "to disk; send it as the API key (api_key_env) instead"
        )


def store_of(paths: Sequence[str | Path]) -> Path:
    """The run store named by the manifest of the first folder in ``paths`` that has one."""
    for given in paths:
        manifest = Path(given) / MANIFEST
        if Path(given).is_dir() and manifest.is_file():
            try:
                value = json.loads(manifest.read_text(encoding="utf-8"))["store"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise DataError(f"not an export manifest ({exc})", path=str(manifest)) from exc
            return Path(given) / str(value)
    raise ConfigError(
        "no export manifest.json among the folders given; name the run store with --store"
    )


def import_batch(
    paths: Iterable[str | Path],
    *,
    store: str | Path | None = None,
    config: AuditConfig | None = None,
) -> ImportReport:
    """Import batch output files (files, or folders of ``*.jsonl``) into the run store.

    ``store`` defaults to the one named by an export's manifest among ``paths``. Idempotent:
    importing the same files again changes nothing. The store redacts the judge's secrets from
    what it writes, as a live run does (a server may echo the key in its answers):
    those of ``config``'s judge when given, else the API key in the environment variable the
    export's manifest names (and ``OPENAI_API_KEY``).
    """
    given = list(paths)
    store_path = Path(store) if store is not None else store_of(given)
    if not store_path.is_file():
        raise ConfigError(f"--store {store_path}: no run store there (export first)")
    secrets = import_secrets(given, config)
    with StoreLock(store_path), RunStore(store_path, secrets=secrets) as run_store:
        return import_outputs(run_store, given)


def import_secrets(paths: Sequence[str | Path], config: AuditConfig | None = None) -> list[str]:
    """The judge's secrets an import redacts (see :func:`import_batch`)."""
    if config is not None:
        return list(build_judge(config.judge, **config.judge_options).secrets())
    names = {"OPENAI_API_KEY"}
    for given in paths:
        manifest = Path(given) / MANIFEST
        try:
            name = json.loads(manifest.read_text(encoding="utf-8")).get("api_key_env")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            continue
        if isinstance(name, str) and name:
            names.add(name)
    return [value for name in sorted(names) if (value := os.environ.get(name))]
