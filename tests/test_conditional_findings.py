"""A finding defined only when there is something to measure does not keep a card from PASS.

``directional_ratio`` asks which way the threshold-shift flips of policy invariance go. A judge
that ignores the rubric's wording and decides every item the same way on every run has no such
flip: the ratio is not assessable, and it is information, not a gated finding, so a card whose
every other gated finding passes reads PASS rather than forever INCONCLUSIVE.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.engine import RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from judgeprobe.report.gate import overall_status


def uniform(*parts: object) -> float:
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def wording_blind(seed: int) -> Callable[[Request], Any]:
    """Decides each item by the item alone (40 % refusals), on every run and every wording."""

    def fn(request: Request) -> str:
        k = request.field_map["prompt"].rsplit(" ", 1)[-1]
        return "true" if uniform(seed, "item", k) < 0.4 else "false"

    return fn


def card_of(tmp_path: Path, judge: Callable[[Request], Any], n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rows = [
        {
            "id": f"r{k:03d}",
            "prompt": f"request number {k}",
            "response": f"response number {k}",
            "label": float(rng.random() < 0.4),
        }
        for k in range(n)
    ]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "judge": "planted",
            "rubric": "refusal",
            "data": str(data),
            "probes": {"policy_invariance": {"n_resamples": 200}},
            "seed": seed,
            "out": str(tmp_path / "out"),
        },
        source="test",
    )
    planted = CallableJudge(judge, name="wording-blind", version=str(seed))
    outcome = run_audit(config, judge=planted, write_card=False, progress=False)
    with RunStore(outcome.store_path) as store:
        return build_card(store, run_id=outcome.run_id)


def test_a_wording_blind_decisive_judge_can_read_pass(tmp_path: Path) -> None:
    card = card_of(tmp_path, wording_blind(0), n=200, seed=0)
    assert overall_status(card) == "pass"
    (probe,) = card["probes"]
    ratio = [
        f
        for f in probe["findings"]
        if f["name"] == "directional_ratio" and not f["labels"].get("variant")
    ]
    assert ratio and all(not f["headline"] and f["status"] == "n/a" for f in ratio)
    assert all("nothing to direct" in (f["reason"] or "") for f in ratio)
