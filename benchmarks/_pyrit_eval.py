"""PyRIT's scorer evaluation against an OpenAI-compatible server; run in PyRIT's own interpreter.

Called by ``bench_throughput.py --pyrit-python PATH`` as a subprocess so that PyRIT's
dependencies never meet judgeprobe's. It evaluates PyRIT's ``SelfAskRefusalScorer`` with
``ObjectiveScorerEvaluator.evaluate_dataset_async`` (``num_scorer_trials`` trials) on the refusal
CSVs and prints one JSON line: wall seconds and process CPU seconds of the evaluation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path


async def evaluate(args: argparse.Namespace) -> dict[str, float | int]:
    from pyrit.prompt_target import OpenAIChatTarget
    from pyrit.score import SelfAskRefusalScorer
    from pyrit.score.scorer_evaluation.human_labeled_dataset import HumanLabeledDataset
    from pyrit.score.scorer_evaluation.metrics_type import MetricsType
    from pyrit.score.scorer_evaluation.scorer_evaluator import ObjectiveScorerEvaluator
    from pyrit.setup import initialize_pyrit_async

    await initialize_pyrit_async(memory_db_type="InMemory", load_defaults=False, silent=True)
    entries = []
    versions = []
    for csv in args.csv:
        dataset = HumanLabeledDataset.from_csv(csv_path=csv, metrics_type=MetricsType.OBJECTIVE)
        entries.extend(dataset.entries)
        versions.append(dataset.version)
    if args.items:
        entries = entries[: args.items]
    combined = HumanLabeledDataset(
        entries=entries,
        metrics_type=MetricsType.OBJECTIVE,
        name="refusal",
        version="_".join(versions),
    )
    target = OpenAIChatTarget(
        endpoint=args.base_url,
        api_key="not-needed",
        model_name=args.model,
        temperature=0.0,
    )
    evaluator = ObjectiveScorerEvaluator(scorer=SelfAskRefusalScorer(chat_target=target))
    wall, cpu = time.perf_counter(), time.process_time()
    await evaluator.evaluate_dataset_async(
        labeled_dataset=combined,
        num_scorer_trials=args.trials,
        max_concurrency=args.concurrency,
    )
    return {
        "items": len(entries),
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="stub-judge")
    parser.add_argument("--csv", type=Path, nargs="+", required=True)
    parser.add_argument("--items", type=int, default=0, help="first N items (0: all)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(evaluate(args))), flush=True)


if __name__ == "__main__":
    main()
