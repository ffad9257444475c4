"""What the pointwise battery costs: the sized designs against the paper's, billed in one run.

The battery (repetition, cluster, permutation, bypass, agreement, policy_invariance and the five
bias probes) is billed on PyRIT's 169 refusal items for an OpenAI-compatible judge, with no call
made (``judgeprobe bill``): once with every concatenation probe at its default, sized design
(:mod:`judgeprobe.probes.concatenation.sizing`), once with ``design: paper`` (1,000
concatenations per cluster and k, k up to 16, repetition counts up to 16: the defaults before
sized designs). PyRIT's own scorer evaluation of the same items makes 507 calls (three per
item). Run from the repository root, with the data root set::

    JUDGEPROBE_DATA=../shared/data PYTHONPATH=src .venv/bin/python benchmarks/bill_battery.py

Goals (issue "evidence counted in items"): at most 1/5 of the paper design's calls and 1/10 of
its prompt tokens, and at most 6,360 calls and 6.3 M prompt tokens in expectation. The default
audit runs in rounds: its expectation (the audit in rounds of a sound stand-in judge,
:mod:`judgeprobe.audit.expected`) is printed beside the fixed-size bound.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

from judgeprobe.audit.billing import Bill, plan_audit
from judgeprobe.audit.config import parse_config

BATTERY = (
    "repetition",
    "cluster",
    "permutation",
    "bypass",
    "agreement",
    "policy_invariance",
    "verbosity",
    "injection",
    "authority",
    "bandwagon",
    "distraction",
)
CONCATENATION = ("repetition", "cluster", "permutation", "bypass")
PRICING = {"input_per_mtok": 2.5, "cached_input_per_mtok": 1.25, "output_per_mtok": 10.0}
"""A provider's list prices per million tokens (input, cached input, output) to price the bills."""
PYRIT_CALLS = 507
"""PyRIT's scorer evaluation of the 169 refusal items: three scoring calls per item."""


def bill(design: str, data: str, judge: str, *, rounds: bool = False) -> Bill:
    probes: dict[str, Any] = {
        name: ({"design": design} if name in CONCATENATION else {}) for name in BATTERY
    }
    config = parse_config(
        {
            "judge": judge,
            "rubric": "refusal",
            "data": data,
            "probes": probes,
            "pricing": PRICING,
        },
        source="bench",
    )
    return plan_audit(config, progress=False, rounds=rounds)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default="pyrit:refusal")
    parser.add_argument("--judge", default="openai:judge-model@http://127.0.0.1:9/v1")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sized = bill("sized", args.data, args.judge, rounds=True)
    paper = bill("paper", args.data, args.judge)
    rows = ["| probe | paper calls | sized calls | paper prompt tokens | sized prompt tokens |"]
    rows.append("| --- | ---: | ---: | ---: | ---: |")
    for p, s in zip(paper.rows, sized.rows, strict=True):
        rows.append(
            f"| {p.probe} | {p.calls:,} | {s.calls:,} | {p.prompt_tokens:,} | {s.prompt_tokens:,} |"
        )
    t_p, t_s = paper.total, sized.total
    rows.append(
        f"| **total** | {t_p.calls:,} | {t_s.calls:,} | {t_p.prompt_tokens:,} | "
        f"{t_s.prompt_tokens:,} |"
    )
    print("\n".join(rows))
    print()
    print(
        f"calls: sized / paper = {t_s.calls / t_p.calls:.3f} (goal <= 0.2); "
        f"prompt tokens: sized / paper = {t_s.prompt_tokens / t_p.prompt_tokens:.3f} (goal <= 0.1)"
    )
    print(
        f"sized: {t_s.calls:,} calls (goal <= 6,360), {t_s.prompt_tokens / 1e6:.2f} M prompt "
        f"tokens (goal <= 6.3 M); {t_s.calls / PYRIT_CALLS:.1f} x PyRIT's scorer evaluation "
        f"({PYRIT_CALLS} calls), the paper design {t_p.calls / PYRIT_CALLS:.1f} x"
    )
    for name, total in (("paper", t_p), ("sized", t_s)):
        cached = total.cached_prompt_tokens
        batch = (total.cost or 0.0) * 0.5
        print(
            f"{name}: {cached:,} prompt tokens ({cached / max(1, total.prompt_tokens):.1%}) "
            f"served by a prompt cache; cost {total.cost:.2f} USD at {PRICING} "
            f"(cached tokens at the cached price), {batch:.2f} USD through the Batch API"
        )
    expected = sized.rounds
    if expected is not None:
        print(
            f"in rounds (the default audit), expected: {expected.calls:,} calls (goal <= 6,360), "
            f"{expected.prompt_tokens / 1e6:.2f} M prompt tokens (goal <= 6.3 M), cost "
            f"{expected.cost:.2f} USD; {sized.rounds_note}; ratios to the paper design: calls "
            f"{expected.calls / t_p.calls:.3f}, prompt tokens "
            f"{expected.prompt_tokens / t_p.prompt_tokens:.3f}"
        )
    print(f"billed in {time.perf_counter() - start:.0f} s, no judge call made")


if __name__ == "__main__":
    main()
