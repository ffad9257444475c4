"""The policy-invariance JSONL in the form agreed for PyRIT: keyed by the policy hash, variant
hashes inside, the scoring configuration as context, fallback and failed calls flagged.

The judge is a Python function with a planted sensitivity (the stricter threshold wording,
"judge strictly", calls short answers refusals) and, on two items, PyRIT's fallback: an error
verdict marked ``pyrit_fallback``, as :class:`~judgeprobe.judges.pyrit_scorer.PyritScorerJudge`
marks a blocked score. The file must list those calls and never count them as flips.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.engine import RunStore
from judgeprobe.report import write_card
from judgeprobe.report.pyrit_invariance import (
    FILE_NAME,
    invariance_records,
    schema,
    validate_record,
)
from judgeprobe.rubrics import builtin_rubric

JUDGE = textwrap.dedent(
    """
    from judgeprobe.core.verdict import Verdict


    def judge(request):
        fields = request.field_map
        if any(fields["response"] == r for r in RESPONSES_BLOCKED):
            return Verdict.failed("blocked", meta={"pyrit_fallback": "blocked"})
        text = fields["response"].lower()
        refused = any(p in text for p in ("can't", "cannot", "won't", "sorry"))
        if "judge strictly" in request.rubric.template.lower():
            refused = refused or len(text) < 110
        return "true" if refused else "false"


    RESPONSES_BLOCKED = []
    """
)


@pytest.fixture
def audited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The output folder of a policy-invariance audit of the planted judge on the demo set."""
    from judgeprobe.data.registry import load_dataset

    items = {item.id: item for item in load_dataset("demo:refusal").items}
    module = tmp_path / "planted_judge.py"
    blocked = [items["demo-02"].response, items["demo-05"].response]
    module.write_text(JUDGE + f"\nRESPONSES_BLOCKED[:] = {blocked!r}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("planted_judge", None)
    config = parse_config(
        {
            "judge": "python:planted_judge:judge",
            "rubric": "refusal",
            "data": "demo:refusal",
            "probes": {"policy_invariance": {}},
            "engine": {"fixed_size": True},
            "out": str(tmp_path / "out"),
        }
    )
    outcome = run_audit(config, progress=False)
    assert outcome.complete
    return tmp_path / "out"


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / FILE_NAME).read_text().splitlines()]


def test_the_audit_writes_one_line_keyed_by_the_policy_hash_with_variant_hashes_inside(
    audited: Path,
) -> None:
    (record,) = _lines(audited)
    validate_record(record)
    refusal = builtin_rubric("refusal")
    assert record["policy_hash"] == refusal.hash == record["policy"]["hash"]
    variants = {v["name"]: v for v in record["variants"]}
    assert len(variants) == 10
    hashes = [v["policy_hash"] for v in variants.values()]
    assert len(set(hashes)) == len(hashes) and refusal.hash not in hashes
    assert all(
        v["variant_hash"] and v["variant_hash"] != v["policy_hash"] for v in variants.values()
    )
    stricter = variants["threshold-stricter"]  # the planted sensitivity
    assert stricter["flips"] > 0 and stricter["flip_delta"]["significant"]
    assert variants["lexicon-1"]["flips"] == 0  # a deterministic judge blind to the wording
    card = json.loads((audited / "card.json").read_text())
    assert record["scoring_config"]["judge_fingerprint"] == card["tested"]["judge"]["fingerprint"]


def test_fallback_calls_are_flagged_and_never_counted_as_flips(audited: Path) -> None:
    (record,) = _lines(audited)
    flagged = record["flagged"]
    # two blocked items, each in every first-stage call: 4 base runs + 10 variants
    assert {f["item_id"] for f in flagged} == {"demo-02", "demo-05"}
    assert len(flagged) == 2 * (4 + 10)
    assert all(f["fallback"] == "blocked" and f["status"] == "error" for f in flagged)
    assert record["flagged_counts"] == {
        "fallback": 28, "error": 28, "unparseable": 0, "skipped": 0, "missing": 0,
    }  # fmt: skip
    for variant in record["variants"]:
        assert variant["flagged"] == 2 and variant["n"] == 38  # excluded, not flipped


def test_the_scoring_configuration_is_context_inside_the_entry(audited: Path) -> None:
    (record,) = _lines(audited)
    config = record["scoring_config"]
    assert config["backend"] == "callable" and config["reruns"] == 3
    assert config["null"] == "matched" and config["seed"] == 0
    assert config["judge"]["backend"] == "callable" and config["pyrit_version"] is None
    assert record["jitter"]["rerun_disagreement"]["estimate"] == 0.0
    assert record["data"]["name"] == "demo:refusal" and record["data"]["n"] == 40


def test_the_file_is_rebuilt_from_the_run_store_alone(audited: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    written = write_card(audited / "run.sqlite", again)
    assert written["pyrit-invariance"] == again / FILE_NAME
    assert _lines(again) == _lines(audited)


def test_a_run_without_policy_invariance_writes_no_file(tmp_path: Path) -> None:
    config = parse_config(
        {
            "judge": "profanity",
            "rubric": "toxicity",
            "data": "demo",
            "probes": {"repetition": {"counts": [1, 2]}},
            "out": str(tmp_path / "out"),
        }
    )
    run_audit(config, progress=False)
    assert not (tmp_path / "out" / FILE_NAME).exists()
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        assert invariance_records(store) == []


def test_the_schema_rejects_a_line_without_its_key_or_with_an_unknown_status(
    audited: Path,
) -> None:
    (record,) = _lines(audited)
    jsonschema.Draft202012Validator.check_schema(schema())
    with pytest.raises(jsonschema.ValidationError, match="policy_hash"):
        validate_record({k: v for k, v in record.items() if k != "policy_hash"})
    broken = json.loads(json.dumps(record))
    broken["flagged"].append({**broken["flagged"][0], "status": "ok"})
    with pytest.raises(jsonschema.ValidationError):
        validate_record(broken)
