"""How often the Judge Card's overall verdict is wrong: whole audits of planted judges.

``simulate_verdicts.py`` and ``simulate_items.py`` check each probe's findings. A user reads the
card's overall verdict first (PASS, WARN, FAIL, INCONCLUSIVE, N/A) and CI gates on it, so this
study audits planted judges end to end (``run_audit`` into a run store, the card built from it,
:func:`judgeprobe.report.gate.overall_status`) and counts, per family and judge:

- ``invariant``: a judge without the defect (per-call jitter that never crosses the rubric's
  neutral band). Goal: the card reads FAIL in at most 5 % of audits;
- ``noisy``: the same judge sampled at a temperature, its decision flipping on 5 % of calls at
  random, whatever the input. The probes read invariance against the judge's own rerun noise.
  Goal: FAIL in at most 5 %;
- ``request`` and ``item``: the defect planted at the warn line, per request (each concatenation,
  repeated input, swapped pair or reworded rubric on its own) or per item (a share of the items
  derails every request that holds them). Goal: PASS in at most 5 % (a card must not pass a judge
  whose defect reaches the warn line);
- ``failing``: a judge whose calls fail 30 % of the time. Goal: PASS in at most 5 %.

Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/simulate_cards.py --n-sims 100
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item
from judgeprobe.engine import RunStore
from judgeprobe.errors import RetryableJudgeError
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from judgeprobe.report.gate import overall_status


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


verdicts = _load("simulate_verdicts")
items_study = _load("simulate_items")
JudgeFn = Callable[[Request], Any]
Maker = Callable[[int], JudgeFn]
WARN = 0.05
"""The warn line of the flip thresholds every planted family here is gated on."""


def noisy(judge: Maker, p: float = 0.05) -> Maker:
    """``judge`` whose decision flips (6 - score on the 1-5 scale) on a share ``p`` of calls,
    whatever the input: sampling noise, drawn per call (the request and its trial)."""

    def make(seed: int) -> JudgeFn:
        inner = judge(seed)
        calls: dict[str, int] = {}

        def fn(request: Request) -> Any:
            score = inner(request)
            key = request.render() + f"|{request.trial}"
            calls[key] = calls.get(key, 0) + 1
            if verdicts.uniform(seed, f"noise{calls[key]}", key) < p:
                return 6.0 - float(score)
            return score

        return fn

    return make


def failing(judge: Maker, p: float = 0.3) -> Maker:
    """``judge`` whose calls fail (a retryable error, every attempt) on a share ``p`` of
    requests."""

    def make(seed: int) -> JudgeFn:
        inner = judge(seed)

        def fn(request: Request) -> Any:
            if verdicts.uniform(seed, "fails", request.render()) < p:
                raise RetryableJudgeError("planted failure")
            return inner(request)

        return fn

    return make


@dataclass(frozen=True)
class CardFamily:
    """One probe audited end to end, with its judges by kind."""

    name: str
    rubric: str
    items: Callable[[int], list[Item]]
    probes: dict[str, dict[str, Any]]
    judges: dict[str, Maker]


def families(size: float = 1.0) -> tuple[CardFamily, ...]:
    n = max(20, round(120 * size))
    level = verdicts.level_items
    return (
        CardFamily(
            "repetition",
            "harmfulness",
            lambda seed: level(n, seed),
            {"repetition": {"counts": [1, 2], "modes": ["response"]}},
            {
                "invariant": verdicts.max_judge,
                "noisy": noisy(verdicts.max_judge),
                "request": verdicts.flip_judge(WARN),
                "item": items_study.cluster_judge(WARN),
                "failing": failing(verdicts.max_judge),
            },
        ),
        CardFamily(
            "cluster",
            "harmfulness",
            lambda seed: level(n, seed),
            {"cluster": {"ks": [2]}},
            {
                "invariant": verdicts.max_judge,
                "noisy": noisy(verdicts.max_judge),
                "request": verdicts.flip_judge(WARN),
                "item": items_study.cluster_judge(items_study.any_of(2, WARN)),
                "failing": failing(verdicts.max_judge),
            },
        ),
        CardFamily(
            "permutation",
            "harmfulness",
            lambda seed: level(n, seed),
            {"permutation": {"ks": [4]}},
            {
                "invariant": verdicts.max_judge,
                "noisy": noisy(verdicts.max_judge),
                "request": verdicts.first_part_judge(WARN / items_study.MIXED_4),
                "item": items_study.first_part_judge(WARN / items_study.MIXED_4),
                "failing": failing(verdicts.max_judge),
            },
        ),
    )


@dataclass
class CardOutcome:
    family: CardFamily
    sims: int
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def share(self, judge: str, verdict: str) -> float:
        seen = self.verdicts.get(judge, {})
        return seen.get(verdict, 0) / max(1, sum(seen.values()))


def card_verdict(family: CardFamily, judge: Maker, seed: int, folder: Path) -> str:
    """One audit of ``family`` by ``judge`` with ``seed``, read as the card reads it."""
    out = folder / f"{family.name}-{seed}-{id(judge)}"
    out.mkdir(parents=True)
    data = out / "items.jsonl"
    rows = [{"id": i.id, "prompt": i.prompt, "response": i.response} for i in family.items(seed)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "judge": "planted",
            "rubric": family.rubric,
            "data": str(data),
            "probes": family.probes,
            "seed": seed,
            "out": str(out),
            "engine": {"max_retries": 0},
        },
        source="simulation",
    )
    planted = CallableJudge(judge(seed), name=f"{family.name}-planted", version=str(seed))
    outcome = run_audit(config, judge=planted, write_card=False, progress=False)
    with RunStore(outcome.store_path) as store:
        card = build_card(store, run_id=outcome.run_id)
    return overall_status(card)


def simulate(family: CardFamily, sims: int, *, first_seed: int = 0) -> CardOutcome:
    outcome = CardOutcome(family, sims)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for kind, judge in family.judges.items():
            seen = outcome.verdicts.setdefault(kind, {})
            for seed in range(first_seed, first_seed + sims):
                verdict = card_verdict(family, judge, seed, Path(tmp))
                seen[verdict] = seen.get(verdict, 0) + 1
    outcome.seconds = time.perf_counter() - start
    return outcome


GOALS = {"invariant": ("fail", 0.05), "noisy": ("fail", 0.05)}
"""Per judge: the verdict that must be rare, and how rare; every other judge must rarely PASS."""


def table(outcomes: Sequence[CardOutcome]) -> str:
    kinds = ["invariant", "noisy", "request", "item", "failing"]
    lines = [
        "| family | sims | "
        + " | ".join(f"{k}: {'FAIL' if k in GOALS else 'PASS'}" for k in kinds)
        + " | verdicts |",
        "| --- | ---: | " + " | ".join("---:" for _ in kinds) + " | --- |",
    ]
    for o in outcomes:
        cells = []
        for kind in kinds:
            verdict, goal = GOALS.get(kind, ("pass", 0.05))
            share = o.share(kind, verdict)
            cells.append(f"{share:.1%} {verdicts._mark(share <= goal)}")
        detail = "; ".join(f"{k} {v}" for k, v in o.verdicts.items())
        lines.append(f"| {o.family.name} | {o.sims} | " + " | ".join(cells) + f" | {detail} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n-sims", type=int, default=100)
    parser.add_argument("--size", type=float, default=1.0)
    parser.add_argument("--families", nargs="*", default=None)
    args = parser.parse_args(argv)
    chosen = [f for f in families(args.size) if args.families is None or f.name in args.families]
    outcomes = []
    for family in chosen:
        outcome = simulate(family, args.n_sims)
        print(f"{family.name}: {outcome.verdicts}, {outcome.seconds:.0f} s", flush=True)
        outcomes.append(outcome)
    print()
    print(table(outcomes))


if __name__ == "__main__":
    main()
