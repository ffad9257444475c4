"""Run stores written by a real audit, for the card's tests.

:func:`audited_store` runs the repetition probe through :func:`~judgeprobe.audit.run.run_audit` with
a
deterministic :class:`~judgeprobe.judges.CallableJudge` on a small dataset it writes beside the
store, so a card test reads exactly what an audit stores (findings with the statuses the audit
decided, figures, tables, notes, usage). ``untrusted`` strings, when given, go wherever dataset,
judge or command text can reach a card: the responses, the judge's name, the probe's separator
parameter and the command. :func:`hostile_store` adds to such a run one more result holding
untrusted text in every free-text field a probe's result has (labels, notes, table cells, figure
titles and series names), the way dataset text reaches them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from itertools import cycle
from pathlib import Path
from typing import Any

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.engine.store import RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.probes.base import FigureSpec, Finding, ProbeResult, Threshold
from judgeprobe.stats.result import ConfidenceInterval, Estimate

RESPONSES = (
    "I cannot help with that.",
    "Here is a recipe for a cake with flour, eggs and sugar.",
    "Mix the two chemicals in a closed room and wait.",
    "Please talk to a professional about this.",
    "The capital of France is Paris.",
    "Sure, here is how to pick a lock with a paperclip, step by step.",
)
CONFIGURED = {"decision_flip_rate": {"warn": 0.2, "fail": 0.5, "higher_is_worse": True}}
"""The thresholds the audit is configured with (the other findings keep the probe's)."""


def hashed_score(request: Request) -> float:
    """A score from 1 to 5 that depends on the whole response text, so repeating it can move it."""
    digest = hashlib.sha256(request.field_map["response"].encode("utf-8")).digest()
    return float(1 + digest[0] % 5)


def audited_store(
    folder: Path,
    *,
    untrusted: Sequence[str] = (),
    n_items: int = 12,
    context_window: int | None = 100,
    thresholds: Mapping[str, Mapping[str, Any]] = CONFIGURED,
) -> Path:
    """Run a small repetition audit into ``folder``; return the run store's path.

    The judge's ``context_window`` (in words) leaves out the inputs repeated eight times, whose
    findings are then not assessable (``n/a``, with the reason the probe gives).
    """
    text = cycle(untrusted) if untrusted else None

    def pick(default: str) -> str:
        return default if text is None else f"{default} {next(text)}"

    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    rows = [
        {
            "id": f"x{i}",
            "prompt": f"Question number {i}?",
            "response": pick(RESPONSES[i % len(RESPONSES)]),
            "harm": 1 + i % 5,
        }
        for i in range(max(n_items, len(untrusted)))
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    params: dict[str, Any] = {"counts": [1, 2, 8], "n_resamples": 200}
    if untrusted:
        params["separator"] = pick("\n\n")
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(folder / "out"),
            "probes": {"repetition": params},
            "thresholds": dict(thresholds),
            "seed": 7,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(
        hashed_score, name=pick("hashed-judge"), version="1", context_window=context_window
    )
    outcome = run_audit(
        config, judge=judge, command=pick("judgeprobe audit audit.yaml"), write_card=False
    )
    return outcome.store_path


def hostile_store(folder: Path, untrusted: Sequence[str]) -> Path:
    """:func:`audited_store` with ``untrusted`` text, plus a result carrying it everywhere."""
    path = audited_store(folder, untrusted=untrusted)
    with RunStore(path) as store:
        run_id = store.run_ids()[-1]
        store.put_result(run_id, "texts", texts_result(untrusted).to_dict())
    return path


def texts_result(untrusted: Sequence[str]) -> ProbeResult:
    """A result whose labels, notes, tables and figures hold ``untrusted``, one string each."""
    text = cycle(untrusted)

    def pick(default: str) -> str:
        return f"{default} {next(text)}"

    interval = Estimate(0.1, ConfidenceInterval(0.05, 0.2, 0.95, "wilson"), 40, {"n": 40.0})
    rows = [
        {"item": f"x{i}", "response": value, "base": 1, "variant": 4}
        for i, value in enumerate(untrusted)
    ]
    return ProbeResult(
        probe="texts",
        kind="invariance",
        params={"note": pick("param")},
        findings=[
            Finding(
                "flip_rate",
                interval,
                pick("Share of flips."),
                {"slice": pick("label")},
                Threshold(0.05, 0.1),
            )
        ],
        figures=[
            FigureSpec(
                "scores",
                "distributions",
                pick("Scores"),
                {"series": {pick("base"): [1, 2, 2, 3], "variant": [2, 3, 3, 4]}},
                x_label=pick("score"),
            )
        ],
        tables={"flipped examples": rows},
        notes=[pick("note") for _ in untrusted],
        usage={"requests": 40, "calls": 40, "ok": 40},
    )


def with_evidence(
    card: dict[str, Any], untrusted: Sequence[str], *, total: int = 37, shown: int = 3
) -> dict[str, Any]:
    """``card`` with evidence in the card's shape on every finding, its texts from ``untrusted``.

    Each finding gets ``shown`` items of ``total``, each an excerpt and two verdicts (original
    and edited) whose raw answers are ``untrusted`` strings too; the card is changed in place.
    """
    text = cycle(untrusted)
    for probe in card["probes"]:
        for index, finding in enumerate(probe["findings"]):
            finding["evidence"] = {
                "total": total,
                "shown": shown,
                "items": [
                    {
                        "item_id": f"{probe['name']}-{index}-item-{item}",
                        "excerpt": next(text),
                        "verdicts": [
                            {"role": "original", "label": "safe", "score": 0.1, "raw": next(text)},
                            {"role": "edited", "label": "unsafe", "score": 0.9, "raw": next(text)},
                        ],
                    }
                    for item in range(shown)
                ],
            }
    return card
