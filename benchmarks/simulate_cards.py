"""How often the Judge Card's overall verdict is wrong: whole audits of planted judges.

``simulate_verdicts.py`` and ``simulate_items.py`` check each probe's findings. A user reads the
card's overall verdict first (PASS, WARN, FAIL, INCONCLUSIVE, N/A) and CI gates on it, so this
study audits planted judges end to end (``run_audit`` into a run store, the card built from it,
:func:`judgeprobe.report.gate.overall_status`) and counts, per family and judge:

- ``invariant``: a judge without the defect. Goal: the card reads FAIL in at most 5 % of audits;
- ``noisy 5%`` and ``noisy 10%``: the same judge sampled at a temperature, its decision flipping
  on 5 % (10 %) of calls at random, whatever the input. The probes read invariance against the
  judge's own rerun noise. Goal: FAIL in at most 5 %;
- ``request`` and ``item``: the defect planted at the warn line of the family's gated finding,
  per request (each repeated input, swapped pair or reworded rubric on its own) or per item (a
  share of the items derails every request that holds them). Goal: PASS in at most 5 % (a card
  must not pass a judge whose defect reaches the warn line);
  For the ``sensitivity`` family (a directional probe) the judge without the defect is one that
  follows every meaning-changing edit, and the defect is a share of edits it ignores;
- ``failing 30%`` and ``failing 50%``: the invariant judge with that share of its calls failing.
  Goal: PASS in at most 5 %.

Each share comes with its Wilson 95 % interval over the audits. Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/simulate_cards.py --n-sims 100
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
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
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.engine import RunStore
from judgeprobe.errors import RetryableJudgeError
from judgeprobe.judges import CallableJudge
from judgeprobe.report import build_card
from judgeprobe.report.gate import overall_status
from judgeprobe.stats import proportion


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


OPPOSITE = {"A": "B", "B": "A", "true": "false", "false": "true"}


def opposite(answer: Any) -> Any:
    """The other decision: A for B, false for true, 6 - score on the 1-5 scale."""
    if isinstance(answer, str):
        return OPPOSITE.get(answer, answer)
    return 6.0 - float(answer)


def noisy(judge: Maker, p: float = 0.05) -> Maker:
    """``judge`` whose decision flips (:func:`opposite`) on a share ``p`` of calls, whatever the
    input: sampling noise, drawn per call (the request and its trial)."""

    def make(seed: int) -> JudgeFn:
        inner = judge(seed)
        calls: dict[str, int] = {}

        def fn(request: Request) -> Any:
            score = inner(request)
            key = request.render() + f"|{request.trial}"
            calls[key] = calls.get(key, 0) + 1
            if verdicts.uniform(seed, f"noise{calls[key]}", key) < p:
                return opposite(score)
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
    rows: Callable[[int], list[dict[str, Any]]]
    """The data file's rows of the audit with this seed."""
    probes: dict[str, dict[str, Any]]
    judges: dict[str, Maker]
    setup: str


def pointwise_rows(items: Sequence[Item]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        assert isinstance(item, PointwiseItem)
        row: dict[str, Any] = {"id": item.id, "prompt": item.prompt, "response": item.response}
        if item.labels:
            row["label"] = item.labels[0].value
        rows.append(row)
    return rows


def pairwise_rows(items: Sequence[Item]) -> list[dict[str, Any]]:
    return [
        {"id": i.id, "prompt": i.prompt, "response_a": i.response_a, "response_b": i.response_b}
        for i in items
        if isinstance(i, PairwiseItem)
    ]


def derailed_pair_judge(q: float) -> Maker:
    """As the consistent judge, but a share ``q`` of the pairs (drawn per audit and pair) are
    judged by position alone: the first-shown response, in both orders."""

    def make(seed: int) -> JudgeFn:
        consistent = verdicts.consistent_judge(seed)

        def fn(request: Request) -> Any:
            a, b = request.field_map["response_a"], request.field_map["response_b"]
            if verdicts.uniform(seed, "derail", "|".join(sorted((a, b)))) < q:
                return "A"
            return consistent(request)

        return fn

    return make


def wording_blind(seed: int) -> JudgeFn:
    """Decides each item by the item alone (40 % positive), on every run and every wording."""

    def fn(request: Request) -> str:
        k = verdicts.item_number(request)
        return "true" if verdicts.uniform(seed, "item", str(k)) < 0.4 else "false"

    return fn


def lexicon_items(q: float) -> Maker:
    """As :func:`wording_blind`, but a share ``q`` of the items (drawn per audit) flip under
    every lexicon rewording of the rubric."""

    def make(seed: int) -> JudgeFn:
        blind = wording_blind(seed)

        def fn(request: Request) -> str:
            answer = str(blind(request))
            derailed = verdicts.uniform(seed, "derail", str(verdicts.item_number(request))) < q
            if derailed and verdicts.variant_name(request).startswith("lexicon"):
                return OPPOSITE[answer]
            return answer

        return fn

    return make


AUTHORITY = ("Harlow and Mendes", "board-certified", "Okafor")
"""Words of the ``authority`` edit's three forms, which the planted judges read."""


def level_of(request: Request) -> float:
    """The highest harm level among the response's parts, wherever an edit put its text."""
    return level_of_text(request.field_map["response"])


def authority_blind(seed: int) -> JudgeFn:
    """Scores the harm level, with per-call jitter; a cited authority changes nothing."""
    return lambda r: verdicts.jittered(level_of(r), seed, r)


def authority_swayed(q: float, per: str) -> Maker:
    """As :func:`authority_blind`, but a response citing an authority is scored safe (1) with
    probability ``q``, drawn per request (``per="request"``) or per item (``"item"``)."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            text = request.field_map["response"]
            cited = any(word in text for word in AUTHORITY)
            draw = request.render() if per == "request" else request.field_map["prompt"]
            if cited and verdicts.uniform(seed, "sway", draw) < q:
                return verdicts.jittered(1.0, seed, request)
            return verdicts.jittered(level_of(request), seed, request)

        return fn

    return make


def sensitivity_rows(n: int, seed: int) -> list[dict[str, Any]]:
    """Items of harm level 1 or 5, the level first in the response, so that any span of two or
    more words the sensitivity probe inserts carries it."""
    rng = random.Random(seed)
    return [
        {"id": f"s{k:03d}", "prompt": f"prompt {k}", "response": f"level {rng.choice((1, 5))} "
         f"reply {k}"}
        for k in range(n)
    ]  # fmt: skip


def reads_text(seed: int) -> JudgeFn:
    """Scores the highest harm level in the response, with per-call jitter: it follows every
    meaning-changing edit (a sensitive judge)."""
    return lambda r: verdicts.jittered(level_of(r), seed, r)


def reads_prompt(q: float, per: str, n: int) -> Maker:
    """As :func:`reads_text`, but with probability ``q`` it scores the level the item's own
    response had, read from the prompt (which no edit changes): drawn per request
    (``per="request"``) or per item (``"item"``). Its base decisions are those of
    :func:`reads_text`; its edited ones stay put, so its sensitivity rate is near ``1 - q``."""

    def make(seed: int) -> JudgeFn:
        own = {row["prompt"]: level_of_text(row["response"]) for row in sensitivity_rows(n, seed)}

        def fn(request: Request) -> float:
            prompt = request.field_map["prompt"]
            draw = request.render() if per == "request" else prompt
            if verdicts.uniform(seed, "deaf", draw) < q:
                return verdicts.jittered(own[prompt], seed, request)
            return verdicts.jittered(level_of(request), seed, request)

        return fn

    return make


def level_of_text(text: str) -> float:
    return max(float(m) for m in re.findall(r"level (\d)", text))


def judges(invariant: Maker, request: Maker, item: Maker) -> dict[str, Maker]:
    return {
        "invariant": invariant,
        "noisy 5%": noisy(invariant, 0.05),
        "noisy 10%": noisy(invariant, 0.10),
        "request": request,
        "item": item,
        "failing 30%": failing(invariant, 0.3),
        "failing 50%": failing(invariant, 0.5),
    }


def families(size: float = 1.0) -> tuple[CardFamily, ...]:
    n = max(20, round(120 * size))
    pairs = max(20, round(150 * size))
    policy = max(20, round(120 * size))
    level = verdicts.level_items
    return (
        CardFamily(
            "repetition",
            "harmfulness",
            lambda seed: pointwise_rows(level(n, seed)),
            {"repetition": {"counts": [1, 2], "modes": ["response"], "n_resamples": 200}},
            judges(
                verdicts.max_judge,
                verdicts.flip_judge(WARN),
                items_study.cluster_judge(WARN),
            ),
            f"{n} items; decision_flip_rate, warn line 0.05",
        ),
        CardFamily(
            "cluster",
            "harmfulness",
            lambda seed: pointwise_rows(level(n, seed)),
            {"cluster": {"ks": [2], "n_resamples": 200}},
            judges(
                verdicts.max_judge,
                verdicts.flip_judge(WARN),
                items_study.cluster_judge(items_study.any_of(2, WARN)),
            ),
            f"{n} items, k = 2; class_flip_rate, warn line 0.05",
        ),
        CardFamily(
            "position",
            "preference",
            lambda seed: pairwise_rows(verdicts.pairwise_items(seed, pairs)),
            {"position": {}},
            judges(
                verdicts.consistent_judge,
                verdicts.first_shown_judge(POSITION_WARN),
                derailed_pair_judge(POSITION_WARN),
            ),
            f"{pairs} pairs; swap_flip_excess, warn line 0.10",
        ),
        CardFamily(
            "policy_invariance",
            "refusal",
            lambda seed: pointwise_rows(verdicts.refusal_items(seed, policy)),
            {"policy_invariance": {"n_resamples": 200}},
            judges(
                wording_blind,
                verdicts.lexicon_sensitive(POLICY_WARN),
                lexicon_items(POLICY_WARN),
            ),
            f"{policy} items, built-in refusal wordings; flip_delta, warn line 0.02",
        ),
        CardFamily(
            "bias (authority)",
            "harmfulness",
            lambda seed: pointwise_rows(level(n, seed)),
            {"authority": {}},
            judges(
                authority_blind,
                authority_swayed(WARN, "request"),
                authority_swayed(WARN, "item"),
            ),
            f"{n} items; excess_move_rate, warn line 0.05",
        ),
        CardFamily(
            "sensitivity",
            "harmfulness",
            lambda seed: sensitivity_rows(n, seed),
            {"sensitivity": {}},
            judges(
                reads_text,
                reads_prompt(SENSITIVITY_WARN, "request", n),
                reads_prompt(SENSITIVITY_WARN, "item", n),
            ),
            f"{n} items; sensitivity_rate, warn line 0.80 (higher is better)",
        ),
    )


POSITION_WARN = 0.10
"""The warn line of ``swap_flip_excess``: a judge that picks the first-shown response with
probability p in each order flips a share p of the pairs."""
SENSITIVITY_WARN = 0.20
"""The share of edits a planted judge ignores at the warn line of ``sensitivity_rate`` (0.8)."""
POLICY_WARN = 0.02
"""The warn line of ``flip_delta``: the lexicon rewordings flip a share p of the items."""


@dataclass
class CardOutcome:
    family: CardFamily
    sims: int
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def share(self, judge: str, verdict: str) -> tuple[int, int]:
        """How many audits of ``judge`` read ``verdict``, of how many."""
        seen = self.verdicts.get(judge, {})
        return seen.get(verdict, 0), sum(seen.values())


def card_verdict(family: CardFamily, judge: Maker, seed: int, folder: Path) -> str:
    """One audit of ``family`` by ``judge`` with ``seed``, read as the card reads it."""
    out = folder / f"{family.name}-{seed}-{id(judge)}"
    out.mkdir(parents=True)
    data = out / "items.jsonl"
    rows = family.rows(seed)
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = parse_config(
        {
            "judge": "planted",
            "rubric": family.rubric,
            "data": str(data),
            "data_options": {"kind": "pairwise" if "response_a" in rows[0] else "pointwise"},
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


def simulate(
    family: CardFamily, sims: int, *, first_seed: int = 0, tmp: str | None = None
) -> CardOutcome:
    outcome = CardOutcome(family, sims)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=tmp) as folder:
        for kind, judge in family.judges.items():
            seen = outcome.verdicts.setdefault(kind, {})
            for seed in range(first_seed, first_seed + sims):
                verdict = card_verdict(family, judge, seed, Path(folder))
                seen[verdict] = seen.get(verdict, 0) + 1
    outcome.seconds = time.perf_counter() - start
    return outcome


def goal(judge: str) -> str:
    """The verdict that must be rare for ``judge``: FAIL for a judge without the defect (the
    invariant and noisy ones), PASS for every other."""
    return "fail" if judge == "invariant" or judge.startswith("noisy") else "pass"


GOAL = 0.05
"""At most this share of audits may read the verdict :func:`goal` names."""


def cell(k: int, n: int) -> str:
    """``1.0% [0.2, 5.4]`` with a mark when the share misses the goal."""
    rate = proportion(k, n)
    missed = "" if rate.estimate <= GOAL else " **(missed)**"
    return f"{rate.estimate:.1%} [{rate.ci.low:.1%}, {rate.ci.high:.1%}]{missed}"


def table(outcomes: Sequence[CardOutcome]) -> str:
    kinds = list(outcomes[0].family.judges) if outcomes else []
    lines = [
        "| family | setup | audits | "
        + " | ".join(f"{k}: {goal(k).upper()}" for k in kinds)
        + " | s/audit |",
        "| --- | --- | ---: | " + " | ".join("---:" for _ in kinds) + " | ---: |",
    ]
    for o in outcomes:
        cells = [cell(*o.share(kind, goal(kind))) for kind in kinds]
        per_audit = o.seconds / max(1, o.sims * len(kinds))
        lines.append(
            f"| {o.family.name} | {o.family.setup} | {o.sims} | "
            + " | ".join(cells)
            + f" | {per_audit:.2f} |"
        )
    lines.append("")
    lines.append("Verdicts per family and judge:")
    lines.append("")
    for o in outcomes:
        detail = "; ".join(
            f"{k}: " + ", ".join(f"{v} {n}" for v, n in sorted(c.items()))
            for k, c in o.verdicts.items()
        )
        lines.append(f"- {o.family.name}: {detail}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n-sims", type=int, default=100)
    parser.add_argument("--size", type=float, default=1.0)
    parser.add_argument("--families", nargs="*", default=None)
    parser.add_argument(
        "--tmp", default=None, help="folder for the run stores (a RAM disk spares the fsyncs)"
    )
    args = parser.parse_args(argv)
    chosen = [f for f in families(args.size) if args.families is None or f.name in args.families]
    outcomes = []
    for family in chosen:
        outcome = simulate(family, args.n_sims, tmp=args.tmp)
        print(f"{family.name}: {outcome.verdicts}, {outcome.seconds:.0f} s", flush=True)
        outcomes.append(outcome)
    print()
    print(table(outcomes))


if __name__ == "__main__":
    main()
