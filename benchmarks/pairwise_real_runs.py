"""Real runs of the pairwise probes on the published human-labeled pairwise sets.

Prints Markdown tables (the numbers in ``docs/pairwise.md`` come from here)::

    PYTHONPATH=src python benchmarks/pairwise_real_runs.py recorded
    PYTHONPATH=src python benchmarks/pairwise_real_runs.py live --n 50 --store live.sqlite

``recorded`` uses votes shipped with the data (PandaLM's GPT-3.5 and PandaLM-7B verdicts) and the
length-only null on LLMBar, HH-RLHF harmless-base and EvalBiasBench; it makes no judge call.
``live`` judges a seeded sample of LLMBar pairs (a third each from the MT-Bench subset, Natural
and Adversarial) in both orders with the local LLM judge (Gemma 3 270M on the CPU) and the
built-in ``preference`` rubric.
The data folder is ``../shared/data`` next to the repository, or ``$JUDGEPROBE_DATA``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from judgeprobe.core.falsifier import load_falsifier
from judgeprobe.core.plan import ProbeContext
from judgeprobe.data.items import PairwiseItem
from judgeprobe.data.pairwise_sets import (
    load_evalbiasbench,
    load_hh_rlhf,
    load_llmbar,
    load_pandalm,
)
from judgeprobe.probes import Probe, ProbeResult
from judgeprobe.probes.base import pairwise_items
from judgeprobe.probes.pairwise.human_agreement import HumanAgreementProbe
from judgeprobe.probes.pairwise.length_control import LengthControlledWinRateProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import analyze_offline, run_probe
from judgeprobe.stats import Estimate

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("JUDGEPROBE_DATA", ROOT.parent / "shared" / "data"))
FALSIFIER = ROOT / "benchmarks" / "falsifiers" / "length_confound.yaml"
LLMBAR = DATA / "llmbar" / "Dataset"
LLMBAR_SETS = (
    "Processed/MT-Bench",
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)
RECORDED = ProbeContext(judge="recorded", rubric=builtin_rubric("preference"), seed=0)


def analyzed(probe: Probe, items: Sequence[PairwiseItem]) -> ProbeResult:
    """``probe``'s result on the recorded votes of ``items`` (its plan asks for no judge call)."""
    return analyze_offline(probe, items, RECORDED.rubric, seed=RECORDED.seed)


def fmt(est: Estimate) -> str:
    """``0.815 [0.780, 0.848]``."""
    return f"{est.estimate:.3f} [{est.ci.low:.3f}, {est.ci.high:.3f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def pandalm_tables(judge: str) -> str:
    """The MT-Bench study's two tables, for one recorded PandaLM-test-set judge."""
    items = list(load_pandalm(DATA / "pandalm_testset").items)
    agreement = analyzed(HumanAgreementProbe(judge_source=judge, by=()), items)
    null_probe = LengthNullProbe(judge_source=judge, by=(), falsifier=load_falsifier(FALSIFIER))
    null = analyzed(null_probe, items)
    lc = analyzed(LengthControlledWinRateProbe(judge_source=judge), items)

    def row(label: str, what: str, result: ProbeResult, name: str, **labels: str) -> list[object]:
        est = result.finding(name, **labels).estimate
        return [label, what, fmt(est), est.n]

    first: list[list[object]] = [
        row(judge, "human majority", agreement, "judge_human_majority_agreement"),
        row(judge, "human majority (kappa)", agreement, "judge_human_majority_kappa"),
        row(judge, "individual human votes", agreement, "judge_human_vote_agreement"),
        row("human", "another human's vote (ceiling)", agreement, "human_human_agreement"),
        row(
            "null (chars)",
            "individual human votes",
            null,
            "null_human_vote_agreement",
            unit="chars",
        ),
        row(
            "null (words)",
            "individual human votes",
            null,
            "null_human_vote_agreement",
            unit="words",
        ),
        row(
            "null (tokens)",
            "individual human votes",
            null,
            "null_human_vote_agreement",
            unit="tokens",
        ),
        row("null (chars)", "human majority", null, "null_human_majority_agreement", unit="chars"),
        row("null (chars)", f"{judge}'s own votes", null, "null_judge_agreement", unit="chars"),
        ["chance", "-", "0.5", "-"],
    ]
    bins: list[list[object]] = []
    for label in ("<5%", "<10%", "10-30%", ">30%"):
        judge_est = null.finding("bin_judge_agreement", bin=label).estimate
        null_est = null.finding("bin_null_agreement", bin=label).estimate
        diff = null.finding("bin_judge_minus_null", bin=label).estimate
        bins.append([label, judge_est.n, fmt(judge_est), fmt(null_est), fmt(diff)])
    lc_rows = [
        [
            f.labels["rater"],
            fmt(f.estimate),
            fmt(lc.finding("raw_win_rate", **f.labels).estimate),
            f.estimate.n,
        ]
        for f in lc.findings
        if f.name == "lc_win_rate"
    ]
    excluded = agreement.tables["excluded"]
    return "\n\n".join(
        [
            f"### PandaLM test set, recorded judge `{judge}`",
            "Ties excluded; 95% CIs clustered by prompt.",
            table(["judge", "agreement with", "estimate [95% CI]", "n"], first),
            table(
                [
                    "length gap",
                    "n",
                    "judge vs human majority",
                    "null vs human majority",
                    "judge - null",
                ],
                bins,
            ),
            "Falsifier: " + null.notes[-1],
            table(["rater", "LC win rate of response A", "raw win rate of A", "n"], lc_rows),
            f"Excluded: {excluded}",
        ]
    )


def null_row(name: str, items: Sequence[PairwiseItem]) -> list[object]:
    probe = LengthNullProbe(by=(), cluster="prompt", compare_units=("words",))
    result = analyzed(probe, items)
    chars = result.finding("null_human_majority_agreement", unit="chars").estimate
    words = result.finding("null_human_majority_agreement", unit="words").estimate
    return [name, chars.n, fmt(chars), fmt(words)]


def length_null_per_set() -> str:
    rows = []
    adversarial: list[PairwiseItem] = []
    for subset in LLMBAR_SETS:
        items = pairwise_items(load_llmbar(LLMBAR / subset / "dataset.json").items)
        rows.append(null_row(f"LLMBar {subset}", items))
        if "Adversarial" in subset:
            adversarial.extend(items)
    rows.append(null_row("LLMBar Adversarial (all four)", adversarial))
    hh = pairwise_items(load_hh_rlhf(DATA / "hh_rlhf" / "harmless-base" / "test.jsonl.gz").items)
    rows.append(null_row("HH-RLHF harmless-base test", hh))
    ebb = pairwise_items(
        load_evalbiasbench(DATA / "offsetbias_evalbiasbench" / "biasbench.json").items
    )
    rows.append(null_row("EvalBiasBench (order randomised)", ebb))
    return "\n\n".join(
        [
            "### Length-only null vs the reference label, per set (95% CI clustered by prompt)",
            table(["set", "n", "null (chars)", "null (words)"], rows),
        ]
    )


def recorded() -> None:
    print(pandalm_tables("gpt-3.5-turbo"))
    print()
    print(pandalm_tables("pandalm-7b"))
    print()
    print(length_null_per_set())


def live_sample(n: int, seed: int) -> list[PairwiseItem]:
    """``n`` LLMBar pairs: a third each from the MT-Bench subset, Natural and Adversarial."""
    rng = random.Random(seed)

    def load(*subsets: str) -> list[PairwiseItem]:
        return [
            item
            for subset in subsets
            for item in pairwise_items(load_llmbar(LLMBAR / subset / "dataset.json").items)
        ]

    adversarial = load(*(s for s in LLMBAR_SETS if "Adversarial" in s))
    third = n // 3
    return (
        rng.sample(load("Processed/MT-Bench"), third)
        + rng.sample(load("LLMBar/Natural"), third)
        + rng.sample(adversarial, n - 2 * third)
    )


def live(n: int, store: str, seed: int) -> None:
    from judgeprobe.engine import Engine, EngineConfig, RunStore
    from judgeprobe.judges.llama import default_judge

    items = live_sample(n, seed)
    engine = Engine(default_judge(), RunStore(store), EngineConfig(progress=False))
    rubric = builtin_rubric("preference")
    start = time.perf_counter()
    position = run_probe(PositionProbe(by=(), cluster="prompt"), items, engine, rubric, seed=seed)
    swap = run_probe(
        HumanAgreementProbe(orders="both", include_ties=True, by=(), cluster="prompt"),
        items,
        engine,
        rubric,
        seed=seed,
    )
    single = run_probe(
        HumanAgreementProbe(by=("category",), cluster="prompt", min_slice_items=1),
        items,
        engine,
        rubric,
        seed=seed,
    )
    null = run_probe(
        LengthNullProbe(by=(), cluster="prompt", compare_units=()), items, engine, rubric, seed=seed
    )
    elapsed = time.perf_counter() - start
    rows = [[f.name, fmt(f.estimate), f.estimate.n] for f in position.findings]
    rows += [
        [
            "gold agreement, original order",
            fmt(single.finding("judge_human_majority_agreement").estimate),
            single.finding("judge_human_majority_agreement").estimate.n,
        ],
        [
            "gold agreement, both orders (inconsistent = tie = disagreement)",
            fmt(swap.finding("judge_human_vote_agreement").estimate),
            swap.finding("judge_human_vote_agreement").estimate.n,
        ],
        [
            "judge vs length null (chars)",
            fmt(null.finding("null_judge_agreement", unit="chars").estimate),
            null.finding("null_judge_agreement", unit="chars").estimate.n,
        ],
        [
            "null vs gold (chars)",
            fmt(null.finding("null_human_majority_agreement", unit="chars").estimate),
            null.finding("null_human_majority_agreement", unit="chars").estimate.n,
        ],
    ]
    print(f"### Live local judge on {len(items)} LLMBar pairs (seed {seed}), both orders")
    print()
    print(table(["finding", "estimate [95% CI]", "n"], rows))
    print()
    print(f"Swap table (original vs swapped, mapped back): {position.tables['swap_table']}")
    print(f"Calls: {position.usage}; wall {elapsed:.0f} s")
    print(
        "Per category (original order): "
        + "; ".join(
            f"{f.labels['category']}: {fmt(f.estimate)} n={f.estimate.n}"
            for f in single.findings
            if f.name == "judge_human_majority_agreement" and f.labels
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("recorded", help="recorded votes and length nulls (no judge calls)")
    run = sub.add_parser("live", help="local LLM judge, both orders, on a sample of LLMBar")
    run.add_argument("--n", type=int, default=50)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--store", default=":memory:", help="run store (SQLite path) to cache calls")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"data folder not found: {DATA} (set JUDGEPROBE_DATA)", file=sys.stderr)
        return 2
    if args.what == "recorded":
        recorded()
    else:
        live(args.n, args.store, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
