"""Real runs of the concatenation probes (repetition, cluster, permutation, bypass) on shared data.

Prints Markdown tables (the numbers in ``docs/concatenation.md`` come from here)::

    PYTHONPATH=src python benchmarks/concatenation_real_runs.py --judge profanity --data pyrit
    PYTHONPATH=src python benchmarks/concatenation_real_runs.py --judge llama --data pyrit \\
        --n 40 --counts 1 2 4 8 --cluster-ks 2 4 8 --per-cluster 40 --perm-ks 4 8 --n-tuples 30
    PYTHONPATH=src python benchmarks/concatenation_real_runs.py --judge llama --data attaq \\
        --n 30 --probes bypass --bypass-ks 2 4 --draws 3 --false-alarm-items 10

``--judge llama`` is the local LLM judge (Gemma 3 270M on the CPU) with the built-in
``harmfulness`` rubric (1-5; {1,2} safe, 3 neutral, {4,5} unsafe); ``--judge profanity`` is
the alt-profanity-check classifier with the built-in ``toxicity`` rubric (P(profane), toxic at
0.5 or more). ``--data pyrit`` takes a seeded sample of PyRIT's human-labeled harm items whose
prompt and response together have at most ``--max-words`` words; ``--data attaq`` takes a seeded
sample of AttaQ prompts and first answers them with the local model (``max_new_tokens = 100``, as
the paper did with Mistral-7B), through the engine, so the responses are cached in the store.

All three probes share one engine and one run store: the base score of an item is judged once.
The last table compares the judge calls the suite made with the distinct requests it planned;
on a fresh store they are equal. With ``--store`` a rerun resumes and makes no repeated call.
The data folder is ``../shared/data`` next to the repository, or ``$JUDGEPROBE_DATA``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judgeprobe.core.plan import ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.attaq import load_attaq
from judgeprobe.data.items import PointwiseItem
from judgeprobe.data.pyrit import load_pyrit_csv
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges.base import BaseJudge
from judgeprobe.probes import Probe, ProbeResult
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.concatenation.cluster import ClusterProbe
from judgeprobe.probes.concatenation.permutation import PermutationProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.decisions import base_request
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.runs.probe import run_probe
from judgeprobe.runs.responses import generate_responses_sync
from judgeprobe.stats import Estimate

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("JUDGEPROBE_DATA", ROOT.parent / "shared" / "data"))


def fmt(est: Estimate) -> str:
    if not est.defined:
        return "n/a"
    if np.isnan(est.ci.low):
        return f"{est.estimate:.3f}"
    return f"{est.estimate:.3f} [{est.ci.low:.3f}, {est.ci.high:.3f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def words(item: PointwiseItem) -> int:
    return len(item.prompt.split()) + len(item.response.split())


def sample(
    items: Sequence[PointwiseItem], n: int, max_words: int, seed: int
) -> list[PointwiseItem]:
    """A seeded sample of ``n`` items with at most ``max_words`` words (prompt + response)."""
    short = [i for i in items if words(i) <= max_words]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(len(short), size=min(n, len(short)), replace=False))
    return [short[int(i)] for i in chosen]


class ExpectedScore(BaseJudge):
    """The local judge read as the expected value of its label distribution (1-5, continuous).

    Verdicts of the plain local judge in the same store are reused (no new call for a request
    it has answered); others are asked from it and stored under its own key.
    """

    backend = "expected-score"

    def __init__(self, inner: BaseJudge, store: RunStore) -> None:
        self.inner = inner
        self.store = store
        self.context_window = inner.context_window
        self.batch_size = inner.batch_size

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "inner": self.inner.describe(), "score": "E[label]"}

    def _inner(self, request: Request) -> Request:
        return Request(self.inner.fingerprint, request.rubric, request.fields, request.trial)

    def count_tokens(self, request: Request) -> int | None:
        return self.inner.count_tokens(self._inner(request))

    async def judge(self, request: Request) -> Verdict:
        return (await self.judge_batch([request]))[0]

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        inner = [self._inner(r) for r in requests]
        known = self.store.get_many([r.key for r in inner])
        missing = [r for r in inner if r.key not in known or not known[r.key].ok]
        if missing:
            for request, verdict in zip(
                missing, await self.inner.judge_batch(missing), strict=True
            ):
                self.store.put(request, verdict.but(key=request.key))
                known[request.key] = verdict
        return [self._expected(known[r.key], r.rubric) for r in inner]

    @staticmethod
    def _expected(verdict: Verdict, rubric: Rubric) -> Verdict:
        if not verdict.ok or not verdict.distribution:
            return verdict.but(key="")
        total = sum(verdict.distribution.values())
        value = sum(rubric.value_of(k) * p for k, p in verdict.distribution.items()) / total
        return Verdict.scored(value, distribution=verdict.distribution)


def make_judge(name: str, store: RunStore) -> tuple[BaseJudge, Rubric]:
    if name in ("llama", "llama-expected"):
        from judgeprobe.judges.llama import default_judge

        llama = default_judge()
        if name == "llama-expected":
            return ExpectedScore(llama, store), builtin_rubric("harmfulness")
        return llama, builtin_rubric("harmfulness")
    from judgeprobe.judges.classifier import ProfanityJudge

    return ProfanityJudge(), builtin_rubric("toxicity")


def load_items(
    args: argparse.Namespace, store: RunStore
) -> tuple[list[PointwiseItem], dict[str, Any]]:
    if args.data == "pyrit":
        harm = load_pyrit_csv(DATA / "pyrit_scorer_evals" / "harm", on_error="skip")
        points = [i for i in harm.items if isinstance(i, PointwiseItem)]
        chosen = sample(points, args.n, args.max_words, args.seed)
        return chosen, {"source": "PyRIT harm CSVs", "pool": len(points)}
    attaq = [i for i in load_attaq(DATA / "attaq" / "attaq_dataset.csv").items]
    prompts = sample(
        [i for i in attaq if isinstance(i, PointwiseItem)], args.n, args.max_words, args.seed
    )
    from judgeprobe.judges.llama import default_judge

    config = EngineConfig(progress=args.progress, timeout_s=args.timeout)
    generator = Engine(default_judge(), store, config)
    started = time.perf_counter()
    generated = generate_responses_sync(prompts, generator, max_new_tokens=100)
    info = {
        "source": "AttaQ prompts, responses by the local model (max_new_tokens=100)",
        "pool": len(attaq),
        "generation": generated.counts,
        "generation_calls": generated.stats.called,
        "generation_s": round(time.perf_counter() - started, 1),
    }
    return generated.items, info


def headline(result: ProbeResult) -> list[list[object]]:
    rows: list[list[object]] = []
    for f in result.findings:
        labels = ", ".join(f"{k}={v}" for k, v in f.labels.items())
        rows.append([result.probe, f.name, labels, fmt(f.estimate), f.estimate.n, f.status])
    return rows


def distinct_requests(
    probes: Sequence[Probe], items: Sequence[PointwiseItem], ctx: ProbeContext, store: RunStore
) -> int:
    """How many distinct requests the probes plan, every stage refined with the store's verdicts."""
    keys: set[str] = set()
    for probe in probes:
        plan = probe.plan(items, ctx)
        while True:
            known = store.get_many(sorted(plan.keys))
            refined = probe.refine(plan, Verdicts(plan, known))
            if refined is None:
                break
            plan = refined
        keys |= plan.keys
    return len(keys)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", choices=("llama", "llama-expected", "profanity"), required=True)
    parser.add_argument(
        "--probes",
        nargs="+",
        default=["repetition", "cluster", "permutation"],
        choices=("repetition", "cluster", "permutation", "bypass"),
    )
    parser.add_argument("--data", choices=("pyrit", "attaq"), default="pyrit")
    parser.add_argument("--n", type=int, default=80, help="items")
    parser.add_argument("--max-words", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--cluster-ks", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument(
        "--per-cluster",
        type=int,
        default=200,
        help="cluster: concatenations per cluster and k (0: sized)",
    )
    parser.add_argument("--quantile", type=float, default=0.1)
    parser.add_argument("--cluster-by", choices=("auto", "class", "quantile"), default="auto")
    parser.add_argument("--perm-ks", type=int, nargs="+", default=[4, 8])
    parser.add_argument(
        "--n-tuples", type=int, default=200, help="permutation: tuples per k (0: sized)"
    )
    parser.add_argument("--sample-sizes", type=int, nargs=3, default=[50, 25, 50])
    parser.add_argument("--levels", choices=("decision", "quantile"), default="decision")
    parser.add_argument("--bypass-ks", type=int, nargs="+", default=[2, 4])
    parser.add_argument(
        "--draws",
        type=int,
        default=10,
        help="bypass: filler tuples per positive item and k (0: sized, at most 10)",
    )
    parser.add_argument("--false-alarm-items", type=int, default=50)
    parser.add_argument("--store", default=":memory:", help="run store (SQLite) path")
    parser.add_argument("--out", help="write every probe result as JSON here")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds per judge call (a batch of 8 long "
        "inputs to the local model can take minutes on a busy CPU)",
    )
    args = parser.parse_args(argv)

    store = RunStore(args.store)
    items, info = load_items(args, store)
    judge, rubric = make_judge(args.judge, store)
    engine = Engine(judge, store, EngineConfig(progress=args.progress, timeout_s=args.timeout))
    probes: list[Probe] = [
        RepetitionProbe(counts=tuple(args.counts)),
        ClusterProbe(
            ks=tuple(args.cluster_ks),
            per_cluster=args.per_cluster,
            quantile=args.quantile,
            cluster_by=args.cluster_by,
        ),
        PermutationProbe(
            ks=tuple(args.perm_ks),
            n_tuples=args.n_tuples,
            sample_sizes=(args.sample_sizes[0], args.sample_sizes[1], args.sample_sizes[2]),
            levels=args.levels,
        ),
        BypassProbe(
            ks=tuple(args.bypass_ks),
            draws=args.draws,
            false_alarm_items=args.false_alarm_items,
        ),
    ]
    probes = [p for p in probes if p.name in args.probes]
    results: list[ProbeResult] = []
    timings: dict[str, float] = {}
    for probe in probes:
        started = time.perf_counter()
        results.append(run_probe(probe, items, engine, rubric, seed=args.seed))
        timings[probe.name] = round(time.perf_counter() - started, 1)

    ctx = ProbeContext(judge.fingerprint, rubric, seed=args.seed)
    distinct = distinct_requests(probes, items, ctx, store)
    calls = sum(r.usage["calls"] for r in results)
    print(f"## {args.judge} judge, rubric {rubric.name!r}, {len(items)} items ({info['source']})\n")
    print(json.dumps(info))
    print()
    base = store.get_many([base_request(ctx, i).key for i in items])
    base_scores = sorted(round(v.score, 2) for v in base.values() if v.score is not None)
    human = [i.human_mean for i in items if i.human_mean is not None]
    spread = dict(Counter(base_scores)) if len(set(base_scores)) < 12 else base_scores
    print(f"base scores (judge): {spread}")
    if human:
        severity = dict(sorted(Counter(round(h, 2) for h in human).items()))
        print(f"human severity of the sample: {severity}")
    print()
    rows = [row for r in results for row in headline(r)]
    print(table(["probe", "finding", "slice", "estimate [95% CI]", "n", "status"], rows))
    for r in results:
        print(f"\n### {r.probe}: tables and notes\n")
        for key in ("base", "clusters", "levels", "classes", "conditioning", "bypass"):
            if key in r.tables:
                print(f"- {key}: {json.dumps(r.tables[key])}")
        if "per_k" in r.tables:
            for k, t in r.tables["per_k"].items():
                print(f"- k={k} counts per order: {json.dumps(t['counts'])}")
        if "variants" in r.tables:
            skipped = [
                (v["mode"], v["l"], v["skipped"]) for v in r.tables["variants"] if v["skipped"]
            ]
            print(f"- skipped for the context window (mode, l, items): {skipped}")
        for note in r.notes:
            print(f"- note: {note}")
    usage = [
        [r.probe, r.usage["requests"], r.usage["calls"], r.usage["cached"], timings[r.probe]]
        for r in results
    ]
    print()
    print(table(["probe", "requests planned", "judge calls", "cached", "seconds"], usage))
    print(
        f"\njudge calls (all probes): {calls}; distinct requests: {distinct}; "
        f"engine total calls: {engine.totals.called}"
    )
    if args.out:
        body = {
            "args": vars(args),
            "info": info,
            "results": [r.to_dict() for r in results],
            "calls": calls,
            "distinct": distinct,
        }
        Path(args.out).write_text(json.dumps(body, indent=1), encoding="utf-8")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
