"""The bill against the audit: planned calls and tokens, then the ones the audit made.

Plans an audit with :func:`judgeprobe.plan_audit` (no judge call), runs it into a fresh run
store, and prints a Markdown table per probe and in total: planned calls (``bound`` where a
later stage was planned on stand-in verdicts), calls made, planned prompt tokens, prompt tokens
the judge reported, and the relative differences. The numbers in ``docs/cost.md`` come from
here::

    PYTHONPATH=src python benchmarks/bill_vs_audit.py demo
    PYTHONPATH=src python benchmarks/bill_vs_audit.py pyrit
    PYTHONPATH=src python benchmarks/bill_vs_audit.py pyrit-llama

``demo`` is ``judgeprobe demo``'s audit (the embedded Gemma 3 270M, about 730 calls, minutes on
two cores); ``pyrit`` is the profanity classifier on PyRIT's harm set with the concatenation
probes (seconds; the classifier reports no tokens, so only calls compare); ``pyrit-llama`` is
the embedded judge on 40 of those items with smaller concatenation probes. The data folder is
``$JUDGEPROBE_DATA`` (default ``../shared/data``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from judgeprobe import plan_audit, run_audit
from judgeprobe.audit import AuditConfig, parse_config
from judgeprobe.demo import demo_config

PYRIT: dict[str, Any] = {
    "judge": "profanity",
    "rubric": "toxicity",
    "data": "pyrit:harm",
    "probes": {
        "repetition": {"counts": [1, 2, 4]},
        "cluster": {"ks": [2, 4], "per_cluster": 40},
        "permutation": {"ks": [4], "n_tuples": 30},
    },
    "seed": 0,
}
PYRIT_LLAMA: dict[str, Any] = {
    **PYRIT,
    "judge": "llama",
    "rubric": "harmfulness",
    "limit": 40,
    "probes": {
        "repetition": {"counts": [1, 2]},
        "cluster": {"ks": [2], "per_cluster": 10},
        "permutation": {"ks": [4], "n_tuples": 10, "sample_sizes": [5, 5, 5]},
    },
}


def _config(which: str, out: Path) -> AuditConfig:
    if which == "demo":
        return demo_config(out=str(out))
    base = PYRIT if which == "pyrit" else PYRIT_LLAMA
    return parse_config({**base, "out": str(out)}, source=which)


def _share(planned: int, made: int) -> str:
    return "-" if made == 0 else f"{(planned - made) / made:+.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", choices=("demo", "pyrit", "pyrit-llama"))
    args = parser.parse_args()
    os.environ.setdefault("JUDGEPROBE_DATA", str(Path("..") / "shared" / "data"))
    with tempfile.TemporaryDirectory() as folder:
        config = _config(args.audit, Path(folder))
        started = time.perf_counter()
        bill = plan_audit(config)
        planned_s = time.perf_counter() - started
        started = time.perf_counter()
        outcome = run_audit(config, progress=False, write_card=False)
        audit_s = time.perf_counter() - started
    print(f"## {args.audit}: planned in {planned_s:.1f} s, audited in {audit_s:.0f} s\n")
    print("| probe | planned calls | calls made | diff | planned prompt tokens | "
          "prompt tokens made | diff |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for row in bill.rows:
        usage = outcome.results[row.probe].usage
        calls, tokens = int(usage["calls"]), int(usage["prompt_tokens"])
        mark = " (bound)" if row.bound else ""
        print(
            f"| {row.probe} | {row.calls}{mark} | {calls} | {_share(row.calls, calls)} | "
            f"{row.prompt_tokens} | {tokens} | {_share(row.prompt_tokens, tokens)} |"
        )
    totals = outcome.engine_totals
    calls, tokens = totals["called"], totals["prompt_tokens"]
    total = bill.total
    print(
        f"| **total** | {total.calls}{' (bound)' if total.bound else ''} | {calls} | "
        f"{_share(total.calls, calls)} | {total.prompt_tokens} | {tokens} | "
        f"{_share(total.prompt_tokens, tokens)} |"
    )
    counted = {True: "counted", False: "estimated", None: "none"}[bill.tokens_counted]
    print(f"\nprompt tokens planned: {counted}; completion tokens planned "
          f"{total.completion_tokens}, made {totals['completion_tokens']}")  # fmt: skip


if __name__ == "__main__":
    main()
