"""Throughput of judgeprobe's engine and OpenAI-compatible backend against a fixed-latency server.

A stub OpenAI-compatible server (``tests/fake_server.py``, in its own process so that its CPU is not
counted) answers every call after a fixed latency L with ample capacity, so C calls in flight can at
best complete C / L calls per second. For each client concurrency C this prints, per client, the
calls per second it reached, their ratio to C / L, and the client's CPU time per call
(``time.process_time`` of the client process):

* ``aiohttp`` -- a bare aiohttp loop posting prebuilt bodies: the practical ceiling of the machine;
* ``judgeprobe`` -- :class:`~judgeprobe.engine.Engine` with
  :class:`~judgeprobe.judges.openai_compat.OpenAIJudge` and a run store file, on the refusal items
  (every call parsed, stored in its own transaction);
* ``pyrit`` -- PyRIT's ``evaluate_dataset_async`` with its refusal scorer (3 trials), run by
  ``--pyrit-python`` in PyRIT's own environment (skipped with a reason when not given).

It then judges 10 trials over the same items into one growing run store and prints the CPU cost of
the 10th trial relative to the first. Printed figures are ratios, not pass/fail tests.

Run from the project root::

    .venv/bin/python benchmarks/bench_throughput.py --data ../shared/data \\
        --pyrit-python /path/to/pyrit-venv/bin/python
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from judgeprobe.core.request import Request
from judgeprobe.data import load_pyrit_csv
from judgeprobe.data.items import PointwiseItem
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import builtin_rubric

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fake_server.py"
PYRIT_WORKER = Path(__file__).resolve().parent / "_pyrit_eval.py"
REFUSAL_FILES = ("refusal.csv", "refusal_extra.csv")
MODEL = "stub-judge"


@dataclass
class Row:
    client: str
    concurrency: int
    latency_s: float
    calls: int
    wall_s: float
    cpu_s: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.calls / self.wall_s

    @property
    def ratio(self) -> float:
        return self.rate / (self.concurrency / self.latency_s)

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu_s / self.calls


# -- the server ---------------------------------------------------------------------------------
@contextmanager
def stub_server(latency_s: float) -> Iterator[str]:
    """The stub server in a subprocess; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--latency", str(latency_s), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().split()
        if len(line) != 2 or line[0] != "READY":
            raise RuntimeError(f"the stub server did not start: {line}")
        yield line[1]
    finally:
        process.terminate()
        process.wait(10)


def server_calls(base_url: str) -> int:
    """Calls the server has received so far (counted at the server)."""
    stats_url = base_url.removesuffix("/v1") + "/stats"
    with urllib.request.urlopen(stats_url, timeout=10) as response:
        return int(json.load(response)["calls"])


# -- the clients --------------------------------------------------------------------------------
def requests_for(judge: OpenAIJudge, items: Sequence[PointwiseItem], trials: int) -> list[Request]:
    rubric = builtin_rubric("refusal")
    return [
        Request.make(
            judge.fingerprint, rubric, {"prompt": i.prompt, "response": i.response}, trial=t
        )
        for t in range(trials)
        for i in items
    ]


async def bare_aiohttp(base_url: str, bodies: list[bytes], concurrency: int) -> tuple[float, float]:
    """C workers posting prebuilt bodies and decoding the JSON answers; (wall s, cpu s)."""
    url = f"{base_url}/chat/completions"
    headers = {"Content-Type": "application/json"}
    queue = list(reversed(bodies))
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            while queue:
                body = queue.pop()
                async with session.post(url, data=body, headers=headers) as response:
                    json.loads(await response.read())

        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - wall, time.process_time() - cpu


async def judgeprobe_run(
    base_url: str,
    items: Sequence[PointwiseItem],
    trials: int,
    concurrency: int,
    store: RunStore,
) -> tuple[int, float, float]:
    """Build the requests and judge them through the engine; (verdicts, wall s, cpu s)."""
    wall, cpu = time.perf_counter(), time.process_time()
    judge = OpenAIJudge(base_url, MODEL, max_concurrency=concurrency)
    engine = Engine(judge, store, EngineConfig(concurrency=concurrency, progress=False))
    result = await engine.run(requests_for(judge, items, trials))
    await judge.aclose()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if result.stats.called != len(result.verdicts) or result.stats.ok != result.stats.called:
        raise RuntimeError(f"unexpected run: {result.stats}")
    return result.stats.called, wall, cpu


def pyrit_run(
    python: str, base_url: str, csvs: Sequence[Path], concurrency: int, trials: int
) -> tuple[int, float, float]:
    before = server_calls(base_url)
    command = [
        python,
        str(PYRIT_WORKER),
        "--base-url",
        base_url,
        "--model",
        MODEL,
        "--trials",
        str(trials),
        "--concurrency",
        str(concurrency),
        "--csv",
        *map(str, csvs),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"PyRIT's evaluation failed:\n{done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return server_calls(base_url) - before, figures["wall_s"], figures["cpu_s"]


# -- the experiments ----------------------------------------------------------------------------
def throughput(
    base_url: str,
    items: Sequence[PointwiseItem],
    csvs: Sequence[Path],
    args: argparse.Namespace,
    workdir: Path,
) -> tuple[list[Row], dict[int, tuple[Row, Row | None]]]:
    rows: list[Row] = []
    versus: dict[int, tuple[Row, Row | None]] = {}
    probe = OpenAIJudge(base_url, MODEL)
    latency = args.latency
    for concurrency in args.concurrency:
        trials = max(args.trials, math.ceil(args.calls_per_worker * concurrency / len(items)))
        requests = requests_for(probe, items, trials)
        bodies = [json.dumps(probe.body(r)).encode() for r in requests]

        asyncio.run(bare_aiohttp(base_url, bodies[: 2 * concurrency], concurrency))  # warm-up
        before = server_calls(base_url)
        wall, cpu = asyncio.run(bare_aiohttp(base_url, bodies, concurrency))
        rows.append(
            Row("aiohttp", concurrency, latency, server_calls(base_url) - before, wall, cpu)
        )

        store_path = workdir / f"throughput-{concurrency}.sqlite"
        with RunStore(store_path) as store:
            before = server_calls(base_url)
            calls, wall, cpu = asyncio.run(
                judgeprobe_run(base_url, items, trials, concurrency, store)
            )
        served = server_calls(base_url) - before
        if served != calls:
            raise RuntimeError(f"server counted {served} calls, the engine {calls}")
        note = f"{len(items)} items x {trials} trials"
        rows.append(Row("judgeprobe", concurrency, latency, calls, wall, cpu, note))

        # the same workload as PyRIT's: the items, ``--trials`` trials, a fresh store
        with RunStore(workdir / f"same-{concurrency}.sqlite") as store:
            calls, wall, cpu = asyncio.run(
                judgeprobe_run(base_url, items, args.trials, concurrency, store)
            )
        ours = Row(
            "judgeprobe", concurrency, latency, calls, wall, cpu, f"PyRIT's workload ({calls})"
        )
        rows.append(ours)
        theirs: Row | None = None
        if args.pyrit_python:
            calls, wall, cpu = pyrit_run(
                args.pyrit_python, base_url, csvs, concurrency, args.trials
            )
            theirs = Row("pyrit", concurrency, latency, calls, wall, cpu, f"{args.trials} trials")
            rows.append(theirs)
        versus[concurrency] = (ours, theirs)
    return rows, versus


def growth(
    base_url: str,
    items: Sequence[PointwiseItem],
    args: argparse.Namespace,
    workdir: Path,
) -> list[list[float]]:
    """CPU ms per call of each of the trials into one growing store, for each repetition."""
    concurrency = max(args.concurrency)
    return [
        asyncio.run(
            _trials(base_url, items, args.growth_trials, concurrency, workdir / f"g{rep}.sqlite")
        )
        for rep in range(args.repetitions)
    ]


async def _trials(
    base_url: str, items: Sequence[PointwiseItem], trials: int, concurrency: int, path: Path
) -> list[float]:
    """Judge ``trials`` trials one after another into the store at ``path``, as one run would."""
    judge = OpenAIJudge(base_url, MODEL, max_concurrency=concurrency)
    config = EngineConfig(concurrency=concurrency, progress=False)
    with RunStore(":memory:") as scratch:  # warm up: connections, imports, caches
        await Engine(judge, scratch, config).run(requests_for(judge, items, 1))
    costs = []
    with RunStore(path) as store:
        engine = Engine(judge, store, config)
        rubric = builtin_rubric("refusal")
        for trial in range(trials):
            cpu = time.process_time()
            requests = [
                Request.make(
                    judge.fingerprint,
                    rubric,
                    {"prompt": i.prompt, "response": i.response},
                    trial=trial,
                )
                for i in items
            ]
            result = await engine.run(requests)
            costs.append(1000 * (time.process_time() - cpu) / result.stats.called)
    await judge.aclose()
    return costs


# -- output -------------------------------------------------------------------------------------
def print_table(rows: Sequence[Row]) -> None:
    header = (
        f"{'client':<11} {'C':>3} {'L ms':>5} {'calls':>6} {'calls/s':>8} "
        f"{'of C/L':>7} {'CPU ms/call':>12}  note"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.client:<11} {row.concurrency:>3} {1000 * row.latency_s:>5.0f} {row.calls:>6} "
            f"{row.rate:>8.1f} {row.ratio:>7.3f} {row.cpu_ms:>12.3f}  {row.note}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--latency", type=float, default=0.05, help="server latency L, seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 64])
    parser.add_argument("--trials", type=int, default=3, help="trials of PyRIT's workload")
    parser.add_argument(
        "--calls-per-worker", type=int, default=80, help="throughput run length per worker"
    )
    parser.add_argument("--growth-trials", type=int, default=10)
    parser.add_argument("--repetitions", type=int, default=5, help="of the growth experiment")
    parser.add_argument("--pyrit-python", help="interpreter of an environment with pyrit")
    args = parser.parse_args(argv)

    folder = args.data / "pyrit_scorer_evals" / "refusal_scorer"
    csvs = [folder / name for name in REFUSAL_FILES]
    missing = [str(p) for p in csvs if not p.exists()]
    if missing:
        raise SystemExit(f"refusal data not found ({', '.join(missing)}); pass --data")
    items = [i for i in load_pyrit_csv(csvs).items if isinstance(i, PointwiseItem)]
    if not args.pyrit_python:
        print("PyRIT: skipped (pass --pyrit-python with an interpreter that has pyrit)\n")

    with tempfile.TemporaryDirectory() as tmp, stub_server(args.latency) as base_url:
        workdir = Path(tmp)
        print(f"stub server: L = {1000 * args.latency:.0f} ms, {len(items)} refusal items\n")
        rows, versus = throughput(base_url, items, csvs, args, workdir)
        print_table(rows)
        print()
        for concurrency, (ours, theirs) in versus.items():
            if theirs is not None:
                print(
                    f"C = {concurrency:>2}: judgeprobe / PyRIT calls/s = "
                    f"{ours.rate / theirs.rate:.1f}x, CPU per call "
                    f"{theirs.cpu_ms / ours.cpu_ms:.0f}x less (same {ours.calls}-call workload)"
                )
        costs = growth(base_url, items, args, workdir)
    medians = [statistics.median(c[t] for c in costs) for t in range(args.growth_trials)]
    print(
        f"\nstore growth: {args.growth_trials} trials x {len(items)} items into one run store, "
        f"C = {max(args.concurrency)}, median of {args.repetitions} repetitions"
    )
    print("CPU ms/call by trial: " + " ".join(f"{m:.3f}" for m in medians))
    last = args.growth_trials
    print(f"trial {last} / trial 1 CPU per call = {medians[-1] / medians[0]:.3f}")
    if args.growth_trials > 2:
        print(
            f"trial {last} / trial 2 CPU per call = {medians[-1] / medians[1]:.3f} "
            "(trials after the first sample from the label distribution, trial 1 takes its argmax)"
        )


if __name__ == "__main__":
    main()
