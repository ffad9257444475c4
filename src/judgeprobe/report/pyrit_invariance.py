"""The policy-invariance results in the JSONL form agreed for PyRIT's scorer evaluations.

PyRIT's proposal for policy invariance testing of scorers (microsoft/PyRIT issue 2168) settled
its output: a JSONL file of its own, apart from PyRIT's scorer-metrics registry, **keyed by the
policy hash** (invariance is a property of the policy text), with the **scoring configuration
recorded inside each entry as measurement context** (flip rates differ by judge model), and with
**fallback scores flagged** (a blocked or errored call that PyRIT records as ``Score(False)`` must
never read as a flip). judgeprobe writes that file beside the card of every run that ran a
policy-invariance probe, one line per probe:

- ``policy_hash``: the base rubric's hash; ``variants`` each carry their own ``variant_hash``
  (the variant's content hash) and ``policy_hash`` (the hash of the reworded rubric), their flip
  rate against the rerun anchor and its excess over the null (with its test and status), and,
  when the judge made one PyRIT scorer per rubric (``pyrit:rubric``), that scorer's identifier
  hash (``pyrit_scorer_hash``, also given for the base policy);
- ``scoring_config``: the judge's fingerprint and description (for a PyRIT scorer its class,
  PyRIT identifier hash, target and PyRIT version), and the probe's reruns, null and levels;
- ``flagged``: every first-stage call that is not a verdict (error, unparseable, skipped, never
  made), with ``fallback`` naming PyRIT's fallback where the judge recognised one
  (``meta.pyrit_fallback``) and ``reason`` an Inspect scorer's unscored reason; such calls are
  excluded from every flip count already, and listed here so a reader can see which.

Every record is checked against ``pyrit_invariance.schema.json`` (shipped beside this module)
before it is written; the file is built from the run store alone, like the card.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from judgeprobe._util.atomic import write_atomic
from judgeprobe._version import __version__
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import StoreError

FILE_NAME = "policy-invariance.pyrit.jsonl"
FORMAT = "pyrit-policy-invariance"
FORMAT_VERSION = 1
PROBES = ("policy_invariance", "policy_invariance_pairwise")
"""The probes whose results the file holds."""
_INTERVAL = ("estimate", "low", "high")


def invariance_records(store: RunStore, run_id: int | None = None) -> list[dict[str, Any]]:
    """One record per policy-invariance probe of run ``run_id`` (the latest by default)."""
    if run_id is None:
        latest = store.latest_run()
        if latest is None:
            return []
        run_id = latest[0]
    run = store.run(run_id)
    if run is None:
        raise StoreError(f"no run {run_id} in the run store")
    results = store.results(run_id)
    judges = store.judges()
    return [
        _record(store, run_id, run, name, results[name], judges)
        for name in PROBES
        if name in results
    ]


def write_invariance_jsonl(
    store: RunStore | str | os.PathLike[str], out_dir: str | os.PathLike[str], run_id: int | None
) -> Path | None:
    """Write :data:`FILE_NAME` under ``out_dir`` when the run ran a policy-invariance probe;
    its path, or None (and nothing written) when it did not."""
    if not isinstance(store, RunStore):
        with RunStore(Path(store)) as opened:
            return write_invariance_jsonl(opened, out_dir, run_id)
    records = invariance_records(store, run_id)
    if not records:
        return None
    for record in records:
        validate_record(record)
    text = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records)
    return write_atomic(Path(out_dir) / FILE_NAME, text)


@cache
def schema() -> dict[str, Any]:
    """The JSON schema of one line of the file."""
    text = resources.files("judgeprobe.report").joinpath("pyrit_invariance.schema.json")
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded


def validate_record(record: Mapping[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``record`` is one line of the agreed form."""
    import jsonschema

    jsonschema.validate(record, schema())


# -- building ---------------------------------------------------------------------------------
def _record(
    store: RunStore,
    run_id: int,
    run: Mapping[str, Any],
    name: str,
    result: Mapping[str, Any],
    judges: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    tables = result.get("tables") or {}
    key = tables.get("key") or {}
    config = run.get("config") or {}
    findings = list(result.get("findings") or [])
    fingerprint = str(key.get("judge") or config.get("judge_fingerprint") or "")
    variants = {v["name"]: v for v in key.get("variants") or []}
    flagged, scorers = _calls(store, run_id, name)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "policy_hash": str(key.get("rubric", {}).get("hash", "")),
        "policy": dict(key.get("rubric") or {}),
        "probe": name,
        "pyrit_scorer_hash": scorers.get("base"),
        "variants": [
            {
                **_variant(row, variants.get(str(row.get("variant"))), findings, flagged),
                "pyrit_scorer_hash": scorers.get(str(row.get("variant"))),
            }
            for row in tables.get("variants") or []
        ],
        "classes": [_class(row, findings) for row in tables.get("classes") or []],
        "jitter": _jitter(tables.get("noise") or {}),
        "scoring_config": _scoring_config(fingerprint, key, judges, result, config),
        "data": {k: config.get("data", {}).get(k) for k in ("name", "source", "sha256", "n")},
        "flagged": flagged,
        "flagged_counts": _counts(flagged),
        "run": {
            "id": run_id,
            "status": run.get("status"),
            "started": run.get("started"),
            "finished": run.get("finished"),
            "tool": "judgeprobe",
            "tool_version": str(config.get("tool_version") or __version__),
        },
    }


def _variant(
    row: Mapping[str, Any],
    described: Mapping[str, Any] | None,
    findings: Iterable[Mapping[str, Any]],
    flagged: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    name = str(row.get("variant"))
    about = dict(described or {})
    delta = _finding(findings, "flip_delta", variant=name)
    return {
        "name": name,
        "transform": about.get("transform", row.get("class")),
        "family": about.get("family"),
        "source": about.get("source"),
        "variant_hash": str(about.get("hash") or row.get("hash") or ""),
        "policy_hash": str(about.get("rubric_hash") or ""),
        "shift": about.get("shift"),
        "n": int(row.get("n") or 0),
        "flips": int(row.get("flips") or 0),
        "flip_rate": _interval(row.get("flip_rate"), row.get("low"), row.get("high")),
        "flip_delta": {
            **_interval(row.get("delta"), row.get("delta_low"), row.get("delta_high")),
            "p_value": _number(row.get("pvalue")),
            "significant": bool(row.get("significant")),
        },
        "status": None if delta is None else delta.get("status"),
        "flagged": sum(1 for f in flagged if f["wording"] == name),
    }


def _class(row: Mapping[str, Any], findings: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    name = str(row.get("class"))
    delta = _finding(findings, "flip_delta", **{"class": name})
    return {
        "class": name,
        "n": int(row.get("n") or 0),
        "flips": int(row.get("flips") or 0),
        "flip_rate": _interval(row.get("flip_rate"), row.get("low"), row.get("high")),
        "flip_delta": {
            **_interval(row.get("delta"), row.get("delta_low"), row.get("delta_high")),
            "p_value": _number(row.get("pvalue")),
            "significant": bool(row.get("significant")),
        },
        "status": None if delta is None else delta.get("status"),
    }


def _jitter(noise: Mapping[str, Any]) -> dict[str, Any]:
    def estimate(value: Any) -> dict[str, Any]:
        value = value if isinstance(value, Mapping) else {}
        ci = value.get("ci") or {}
        return {
            **_interval(value.get("estimate"), ci.get("low"), ci.get("high")),
            "n": value.get("n"),
        }

    return {
        "null": noise.get("null_used"),
        "rerun_disagreement": estimate(noise.get("p_jitter")),
        "null_flip_rate": estimate(noise.get("matched_null")),
    }


def _scoring_config(
    fingerprint: str,
    key: Mapping[str, Any],
    judges: Mapping[str, Mapping[str, Any]],
    result: Mapping[str, Any],
    config: Mapping[str, Any],
) -> dict[str, Any]:
    described = dict(judges.get(fingerprint) or {})
    params = result.get("params") or {}
    return {
        "judge_fingerprint": fingerprint,
        "judge_name": key.get("judge_name"),
        "backend": described.get("backend"),
        "judge": described,
        "pyrit_identifier_hash": described.get("identifier_hash"),
        "pyrit_version": described.get("pyrit_version"),
        "reruns": params.get("reruns"),
        "reproduction_trials": params.get("reproduction_trials"),
        "null": params.get("null"),
        "alpha": params.get("alpha"),
        "confidence_level": params.get("confidence_level"),
        "seed": config.get("seed"),
    }


def _calls(store: RunStore, run_id: int, name: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every call of the stored plan that is not an ``ok`` verdict; and per wording, the PyRIT
    scorer identity its verdicts name (a judge that makes one scorer per rubric says which)."""
    plan = store.plan(run_id, name)
    if plan is None:
        return [], {}
    verdicts = store.get_many([r.key for r in plan.requests.values()])
    out: list[dict[str, Any]] = []
    scorers: dict[str, str] = {}
    for role, request in plan.requests.items():
        if role[0] == "base":
            wording, item_id, trial = "base", str(role[1]), 0
        elif role[0] == "wording":
            wording, item_id, trial = str(role[1]), str(role[2]), int(role[3])
        else:
            continue
        verdict = verdicts.get(request.key)
        if verdict is not None and "pyrit_scorer_hash" in verdict.meta:
            scorers.setdefault(wording, str(verdict.meta["pyrit_scorer_hash"]))
        if verdict is not None and verdict.status is VerdictStatus.OK:
            continue
        meta = verdict.meta if verdict is not None else {}
        fallback = meta.get("pyrit_fallback")
        out.append(
            {
                "item_id": item_id,
                "wording": wording,
                "policy_hash": request.rubric.hash,
                "trial": trial,
                "status": "missing" if verdict is None else verdict.status.value,
                "fallback": None if fallback is None else str(fallback),
                "reason": meta.get("inspect_reason") or (verdict.error if verdict else None),
            }
        )
    return out, scorers


def _counts(flagged: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(("fallback", "error", "unparseable", "skipped", "missing"), 0)
    for entry in flagged:
        counts[entry["status"]] += 1
        if entry["fallback"] is not None:
            counts["fallback"] += 1
    return counts


def _finding(
    findings: Iterable[Mapping[str, Any]], name: str, **labels: str
) -> Mapping[str, Any] | None:
    for finding in findings:
        have = finding.get("labels") or {}
        same = finding.get("name") == name and all(have.get(k) == v for k, v in labels.items())
        if same and ("variant" in labels or "variant" not in have):  # a class's own finding
            return finding
    return None


def _interval(estimate: Any, low: Any, high: Any) -> dict[str, float | None]:
    return dict(zip(_INTERVAL, (_number(estimate), _number(low), _number(high)), strict=True))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None
