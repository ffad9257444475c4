"""Speed-up of the ray executor from 1 to 2 workers against a fixed-latency stub server.

The stub OpenAI-compatible server (``tests/fake_server.py``, in its own process) answers every
call after L = 50 ms. Each worker is capped at ``--cap`` calls in flight, so one worker can at best
judge cap / L calls a second and two workers twice that. For 1 and 2 workers this starts the
workers, warms them up on a few requests (actor start-up is not timed), judges ``--requests``
fresh requests into a fresh run store through the :class:`~judgeprobe.engine.Engine` with the
:class:`~judgeprobe.engine.executors.ray.RayExecutor`, and prints the calls per second, their ratio
to
the physical limit, and the speed-up of 2 workers over 1 (the goal is >= 1.8x). Both runs happen
in one invocation, on one local Ray instance of ``--cpus`` CPUs.

Run from the project root::

    .venv/bin/python benchmarks/bench_ray.py --requests 800 --cap 4
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ray
from bench_throughput import stub_server  # the benchmarks folder is the script's own

from judgeprobe.core.request import Request
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.engine.executors.ray import RayExecutor
from judgeprobe.judges.registry import build_judge
from judgeprobe.rubrics import builtin_rubric

LATENCY_S = 0.05


def _requests(fingerprint: str, tag: str, n: int) -> list[Request]:
    rubric = builtin_rubric("refusal")
    return [
        Request.make(fingerprint, rubric, {"prompt": f"{tag} question {i}", "response": "no"})
        for i in range(n)
    ]


def measure(base_url: str, workers: int, cap: int, n: int, folder: Path) -> float:
    """Calls per second of ``workers`` workers of ``cap`` calls each on ``n`` fresh requests."""
    judge = build_judge(f"openai:stub-judge@{base_url}")
    executor = RayExecutor(judge, workers=workers, max_concurrency_per_worker=cap)
    try:
        with RunStore(folder / f"warm-{workers}.sqlite") as store:
            engine = Engine(judge, store, EngineConfig(progress=False), executor=executor)
            engine.run_sync(_requests(judge.fingerprint, f"warm-{workers}", 2 * workers * cap))
        with RunStore(folder / f"timed-{workers}.sqlite") as store:
            engine = Engine(judge, store, EngineConfig(progress=False), executor=executor)
            started = time.perf_counter()
            result = engine.run_sync(_requests(judge.fingerprint, f"timed-{workers}", n))
            elapsed = time.perf_counter() - started
        if not result.complete or result.stats.ok != n:
            raise RuntimeError(f"{workers} workers: {result.stats} ({result.stopped})")
        return n / elapsed
    finally:
        executor.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--cap", type=int, default=4, help="calls in flight per worker")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    args = parser.parse_args()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        with stub_server(LATENCY_S) as base_url, tempfile.TemporaryDirectory() as folder:
            rates = {w: measure(base_url, w, args.cap, args.requests, Path(folder)) for w in (1, 2)}
    finally:
        ray.shutdown()
    print(f"stub latency L = {LATENCY_S * 1000:.0f} ms, {args.cap} calls in flight per worker")
    print(f"{'workers':>7} {'calls/s':>9} {'of limit':>9}")
    for workers, rate in rates.items():
        limit = workers * args.cap / LATENCY_S
        print(f"{workers:>7} {rate:>9.1f} {rate / limit:>9.2f}")
    print(f"speed-up of 2 workers over 1: {rates[2] / rates[1]:.2f}x (goal >= 1.8x)")


if __name__ == "__main__":
    main()
