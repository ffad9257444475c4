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

``--audited DIR`` keeps the audit: it runs into ``DIR`` once and writes what it made to
``DIR/made.json``; a later run with the same ``DIR`` reads that and only plans again (always on a
fresh store), so a change to the bill is measured in seconds.

``--pilot`` plans with :func:`judgeprobe.plan_audit`'s pilot: the first stages of the multi-stage
probes are judged first (into the plan's own fresh store; their calls are printed), and the later
stages are planned on those verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from judgeprobe import plan_audit, run_audit
from judgeprobe.audit.billing import BillRow
from judgeprobe.audit.config import AuditConfig, parse_config
from judgeprobe.audit.demo import demo_config

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


def _made(config: AuditConfig, kept: Path | None) -> dict[str, Any]:
    """Calls and prompt tokens the audit made, per probe and in total (``kept``: reused)."""
    record = None if kept is None else kept / "made.json"
    if record is not None and record.is_file():
        made: dict[str, Any] = json.loads(record.read_text())
        return made
    started = time.perf_counter()
    outcome = run_audit(config, progress=False, write_card=False)
    made = {
        "seconds": time.perf_counter() - started,
        "probes": {
            name: {"calls": int(r.usage["calls"]), "prompt_tokens": int(r.usage["prompt_tokens"])}
            for name, r in outcome.results.items()
        },
        "total": {
            "calls": outcome.engine_totals["called"],
            "prompt_tokens": outcome.engine_totals["prompt_tokens"],
            "completion_tokens": outcome.engine_totals["completion_tokens"],
        },
    }
    if record is not None:
        record.write_text(json.dumps(made, indent=1))
    return made


def _row(name: str, calls: int, tokens: int, row: BillRow) -> str:
    """Planned (the expectation, and the bound beside it where there is one) against made."""
    bound = f" (bound {row.bound_calls})" if row.bound else ""
    bound_tokens = f" (bound {row.bound_prompt_tokens})" if row.bound else ""
    return (
        f"| {name} | {row.calls}{bound} | {calls} | {_share(row.calls, calls)} | "
        f"{row.prompt_tokens}{bound_tokens} | {tokens} | {_share(row.prompt_tokens, tokens)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", choices=("demo", "pyrit", "pyrit-llama"))
    parser.add_argument("--audited", type=Path, help="audit into this folder once, then reuse it")
    parser.add_argument("--pilot", action="store_true", help="judge the first stages first")
    args = parser.parse_args()
    os.environ.setdefault("JUDGEPROBE_DATA", str(Path("..") / "shared" / "data"))
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        bill = plan_audit(_config(args.audit, Path(folder) / "plan"), pilot=args.pilot)
        planned_s = time.perf_counter() - started
        kept = args.audited
        if kept is not None:
            kept.mkdir(parents=True, exist_ok=True)
        made = _made(_config(args.audit, kept or Path(folder) / "audit"), kept)
    pilot = "" if bill.pilot is None else f" (a pilot of {bill.pilot.calls} calls included)"
    print(
        f"## {args.audit}: planned in {planned_s:.1f} s{pilot}, "
        f"audited in {made['seconds']:.0f} s\n"
    )
    print("| probe | planned calls (exp.) | calls made | diff | planned prompt tokens (exp.) | "
          "prompt tokens made | diff |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for row in bill.rows:
        usage = made["probes"][row.probe]
        print(_row(row.probe, usage["calls"], usage["prompt_tokens"], row))
    totals = made["total"]
    print(_row("**total**", totals["calls"], totals["prompt_tokens"], bill.total))
    total = bill.total
    counted = {True: "counted", False: "estimated", None: "none"}[bill.tokens_counted]
    print(f"\nprompt tokens planned: {counted}; completion tokens planned "
          f"{total.completion_tokens}, made {totals['completion_tokens']}")  # fmt: skip


if __name__ == "__main__":
    main()
