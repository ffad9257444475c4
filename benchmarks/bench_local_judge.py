"""Local judge throughput: judgeprobe's llama.cpp judge through the engine against a bare loop.

The bare loop is what a user would write with llama-cpp-python alone: for each prompt, reset the
context, evaluate the prompt, read the last position's logits and take the scale's label tokens.
judgeprobe adds the engine (dedup, run store, verdict records) and keeps the KV cache of the prompt
prefix the rubric's items share. Printed: items/s of each and their ratio (goal >= 0.9).

    python benchmarks/bench_local_judge.py --n 60
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from judgeprobe import Engine, EngineConfig, Request, RunStore, builtin_rubric
from judgeprobe.data import load_dataset
from judgeprobe.judges.llama import LlamaJudge


def bare_loop(judge: LlamaJudge, requests: list[Request]) -> float:
    """Items/s of a plain llama-cpp-python loop over the same prompts (same model object)."""
    llm = judge.llm
    label_ids = [
        llm.tokenize(label.encode(), add_bos=False)[-1] for label in requests[0].rubric.labels
    ]
    prompts = [judge.prompt_text(r).encode() for r in requests]
    started = time.perf_counter()
    for prompt in prompts:
        tokens = llm.tokenize(prompt, add_bos=True, special=True)
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.eval(tokens)
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        chosen = logits[label_ids]
        _ = np.exp(chosen - chosen.max()) / np.exp(chosen - chosen.max()).sum()
    return len(prompts) / (time.perf_counter() - started)


def engine_run(judge: LlamaJudge, requests: list[Request]) -> float:
    """Items/s of the same requests judged through the engine into a fresh run store."""
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "bench.sqlite")
        engine = Engine(judge, store, EngineConfig(progress=False))
        judge.llm.reset()
        started = time.perf_counter()
        result = engine.run_sync(requests)
        elapsed = time.perf_counter() - started
        store.close()
    assert result.stats.called == len(requests)
    return len(requests) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=60, help="demo items to judge")
    parser.add_argument("--rubric", default="harmfulness")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    judge = LlamaJudge()
    rubric = builtin_rubric(args.rubric)
    items = list(load_dataset("demo").items)
    items = (items * (args.n // len(items) + 1))[: args.n]
    bare_rates, ours_rates = [], []
    for round_ in range(args.rounds):
        # each engine run uses a fresh run store, so nothing is answered from a cache
        requests = [
            Request.make(
                judge.fingerprint, rubric, {"prompt": i.prompt, "response": i.response}, trial=0
            )
            for i in items
        ]
        unique = list({r.key: r for r in requests}.values())
        judge.llm.reset()  # loads the model before anything is timed
        bare_rates.append(bare_loop(judge, unique))
        ours_rates.append(engine_run(judge, unique))
        print(
            f"round {round_ + 1}: bare {bare_rates[-1]:.2f} items/s, "
            f"judgeprobe {ours_rates[-1]:.2f} items/s"
        )
    bare, ours = float(np.median(bare_rates)), float(np.median(ours_rates))
    print(f"\n{len(unique)} distinct items, rubric {rubric.name}")
    print(f"bare llama-cpp-python loop: {bare:.2f} items/s")
    print(f"judgeprobe LlamaJudge:      {ours:.2f} items/s")
    print(f"ratio: {ours / bare:.2f} (goal >= 0.9)")


if __name__ == "__main__":
    main()
