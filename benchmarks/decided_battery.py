"""Calls and prompt tokens to a decided card: the pointwise battery run on planted judges.

A planted judge answers behind the stub OpenAI-compatible server (``tests/fake_server.py``,
``decide``): it finds the PyRIT refusal items (prompt and response) a request's text holds and
answers "true" (a refusal) when any of them is a refusal by its human label, so it is invariant
under every rewrite the battery makes (repeats, clusters, orders, dilution, rubric wordings, the
bias edits) and agrees with the labels. Two judges carry an effect at 1.5 times the fail line of the
concatenation rates (a flip rate gated at 0.10):

- ``request``: a request that joins or repeats responses has its decision flipped with
  probability 0.15, drawn per request;
- ``item``: 15% of the items derail every request that joins or repeats them (the decision
  flipped whenever one of them is there), as a long or odd response derails a real judge.

For each judge the battery (repetition, cluster, permutation, bypass, agreement,
policy_invariance and the five bias probes; the bill's battery) is run on PyRIT's 169 refusal
items three ways, in one run:

- ``paper``: the concatenation probes at ``design: paper`` (the defaults before sized designs),
  every item at once: billed with a pilot (its multi-stage probes' first stages judged by the
  planted judge, so their later stages are counted exactly), not run;
- ``fixed``: the default, sized designs, every item at once (``--fixed-size``);
- ``rounds``: the default audit, in rounds until the card's verdict is decided.

Printed: each run's judge calls (the server's count), prompt tokens (the stub's usage: four
characters a token of the user message), the card's verdict, and the ratios to ``paper``; beside
PyRIT's own scorer evaluation of the same items (507 calls). Run from the repository root::

    JUDGEPROBE_DATA=../shared/data PYTHONPATH=src .venv/bin/python benchmarks/decided_battery.py

Goals (issue "evidence counted in items"): the default audit at most 1/5 of the paper design's
calls and 1/10 of its prompt tokens, with the invariant judge not failed and the planted
effects not passed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bill_battery import BATTERY, CONCATENATION, PYRIT_CALLS  # noqa: E402

from fake_server import FakeServer, serve_in_thread  # noqa: E402
from judgeprobe.audit.billing import plan_audit  # noqa: E402
from judgeprobe.audit.config import parse_config  # noqa: E402
from judgeprobe.audit.run import run_audit  # noqa: E402
from judgeprobe.data import load_dataset  # noqa: E402

EFFECT = 0.15
"""1.5 times the fail line (0.10) of the concatenation probes' flip rates."""


def _uniform(*parts: object) -> float:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def planted(kind: str, data: str, seed: int = 0) -> Callable[[dict[str, Any]], str]:
    """The planted judge ``kind`` (``invariant``, ``request`` or ``item``) as a stub's
    ``decide``: the label for a request body."""
    refusal: dict[tuple[str, str], bool] = {}  # a response is judged against its prompt
    for item in load_dataset(data).items:
        refusal[(item.prompt, item.response)] = item.labels[0].value >= 0.5
    derails = {pair for pair in refusal if _uniform("derail", seed, pair) < EFFECT}

    def decide(body: dict[str, Any]) -> str:
        text = str((body.get("messages") or [{}])[-1].get("content", ""))
        found = [pair for pair in refusal if pair[1] in text and pair[0] in text]
        if not found:
            return "false"
        positive = any(refusal[pair] for pair in found)
        joined = len(found) > 1 or text.count(found[0][1]) > 1
        if joined and kind == "request" and _uniform("flip", seed, text) < EFFECT:
            positive = not positive
        if joined and kind == "item" and any(pair in derails for pair in found):
            positive = not positive
        return "true" if positive else "false"

    return decide


LIMIT: int | None = None
"""``--limit``: the first items only (a quick look; the figures above are for all 169)."""


def _config(url: str, out: Path, design: str, data: str, **engine: Any) -> Any:
    probes: dict[str, Any] = {
        name: ({"design": design} if name in CONCATENATION else {}) for name in BATTERY
    }
    return parse_config(
        {
            "judge": f"openai:judge-model@{url}",
            "judge_options": {"max_tokens": 4, "logprobs": False},
            "rubric": "refusal",
            "data": data,
            "probes": probes,
            "out": str(out),
            "limit": LIMIT,
            "engine": {"concurrency": 32, **engine},
        },
        source="bench",
    )


def run_one(kind: str, data: str, folder: Path) -> dict[str, Any]:
    """The three runs of one planted judge, each on a fresh server and store."""
    row: dict[str, Any] = {"judge": kind}
    with serve_in_thread(FakeServer(decide=planted(kind, data))) as server:
        bill = plan_audit(
            _config(server.base_url, folder / f"{kind}-paper", "paper", data), pilot=True
        )
        row["paper"] = {"calls": bill.total.calls, "prompt_tokens": bill.total.prompt_tokens}
    for name, engine in (("fixed", {"fixed_size": True}), ("rounds", {"until_decided": {}})):
        with serve_in_thread(FakeServer(decide=planted(kind, data))) as server:
            start = time.perf_counter()
            config = _config(server.base_url, folder / f"{kind}-{name}", "sized", data, **engine)
            outcome = run_audit(config, progress=False)
            card = outcome.card or {}
            row[name] = {
                "calls": server.calls,
                "prompt_tokens": int(outcome.engine_totals.get("prompt_tokens", 0)),
                "verdict": card.get("summary", {}).get("overall"),
                "seconds": round(time.perf_counter() - start),
                "rounds": None
                if outcome.rounds is None
                else [r["items"] for r in outcome.rounds["rounds"]],
                "stopped": None if outcome.rounds is None else outcome.rounds["stopped"],
            }
    return row


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default="pyrit:refusal")
    parser.add_argument("--judges", default="invariant,request,item")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument("--limit", type=int, help="audit the first N items only")
    args = parser.parse_args(argv)
    global LIMIT
    LIMIT = args.limit
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.judges.split(","):
            rows.append(run_one(kind, args.data, Path(tmp)))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(
        "| planted judge | paper calls | fixed calls | rounds calls | rounds / paper calls | "
        "paper prompt tokens | rounds prompt tokens | rounds / paper tokens | fixed verdict | "
        "rounds verdict | rounds (items) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for row in rows:
        paper, fixed, rounds = row["paper"], row["fixed"], row["rounds"]
        print(
            f"| {row['judge']} | {paper['calls']:,} | {fixed['calls']:,} | {rounds['calls']:,} | "
            f"{rounds['calls'] / paper['calls']:.3f} | {paper['prompt_tokens']:,} | "
            f"{rounds['prompt_tokens']:,} | "
            f"{rounds['prompt_tokens'] / max(1, paper['prompt_tokens']):.3f} | "
            f"{fixed['verdict']} | {rounds['verdict']} | "
            f"{rounds['rounds']} ({rounds['stopped']}) |"
        )
    print(f"\nPyRIT's scorer evaluation of the same items: {PYRIT_CALLS} calls")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
