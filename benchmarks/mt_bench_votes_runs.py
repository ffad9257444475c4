"""The length-null post's MT-Bench table, recomputed from the released votes (no judge call).

Prints Markdown tables (the MT-Bench votes numbers in ``docs/pairwise.md`` come from here)::

    PYTHONPATH=src python benchmarks/mt_bench_votes_runs.py

The data are ``mt_bench_human_judgments/`` (``human.csv``, ``gpt4_pair.csv`` and the word counts
of ``mtbench_votes.json``) under ``../shared/data`` next to the repository, or
``$JUDGEPROBE_DATA``. GPT-4's recorded verdicts are the judge; lengths are words, the only unit
the files give. Three ways of reading the votes are compared:

- ``post, in words``: the post's join (units keyed by the ordered model pair,
  ``match="ordered"``), its majority (tie votes dropped before the strict majority,
  ``majority_ties="drop"``) and its length measure (both answers of the dialogue,
  ``lengths="dialogue"``), in words;
- ``judged turn, post's join``: the same with the judged turn's answer only;
- ``default``: judgeprobe's defaults (unordered pairs, ties counted in the majority, the judged
  turn's answer).

The length-only null votes tie on equal lengths (``on_equal="tie"``), which drops those
comparisons, as the post's n show it did. The falsifier is
``benchmarks/falsifiers/mt_bench_votes_length_confound.yaml``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgeprobe.core.falsifier import load_falsifier
from judgeprobe.core.plan import ProbeContext
from judgeprobe.data.items import PairwiseItem
from judgeprobe.data.mt_bench_votes import GPT4, LengthScope, Match, load_mt_bench_votes
from judgeprobe.probes import Probe, ProbeResult
from judgeprobe.probes.base import pairwise_items
from judgeprobe.probes.pairwise.human_agreement import HumanAgreementProbe
from judgeprobe.probes.pairwise.length import OnEqual
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.votes import MajorityTies
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import analyze_offline
from judgeprobe.stats import Estimate

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("JUDGEPROBE_DATA", ROOT.parent / "shared" / "data"))
VOTES = DATA / "mt_bench_human_judgments"
FALSIFIER = ROOT / "benchmarks" / "falsifiers" / "mt_bench_votes_length_confound.yaml"
RECORDED = ProbeContext(judge="recorded", rubric=builtin_rubric("preference"), seed=0)


def analyzed(probe: Probe, items: Sequence[PairwiseItem]) -> ProbeResult:
    """``probe``'s result on the recorded votes of ``items`` (its plan asks for no judge call)."""
    return analyze_offline(probe, items, RECORDED.rubric, seed=RECORDED.seed)


BINS = ("<5%", "<10%", "10-30%", ">30%")


@dataclass(frozen=True)
class Reading:
    """One way of reading the votes: the join, the majority rule and the length measure."""

    label: str
    match: Match
    majority_ties: MajorityTies
    lengths: LengthScope


READINGS = (
    Reading("post, in words", "ordered", "drop", "dialogue"),
    Reading("judged turn, post's join", "ordered", "drop", "turn"),
    Reading("default", "unordered", "count", "turn"),
)


def fmt(est: Estimate) -> str:
    """``0.863 [0.835, 0.889]``."""
    return f"{est.estimate:.3f} [{est.ci.low:.3f}, {est.ci.high:.3f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def items(match: Match, lengths: LengthScope = "turn") -> list[PairwiseItem]:
    return pairwise_items(load_mt_bench_votes(VOTES, match=match, lengths=lengths).items)


def loader_summary() -> str:
    rows = []
    for match in ("unordered", "ordered"):
        ds = load_mt_bench_votes(VOTES, match=match)
        m = ds.metadata
        rows.append(
            [
                match,
                m["human_rows"],
                m["gpt4_rows"],
                m["units"],
                m["units_with_human_votes"],
                m["units_with_gpt4_vote"],
                m["units_with_both"],
                m["human_votes_without_gpt4_vote"],
            ]
        )
    return table(
        [
            "match",
            "human votes",
            "GPT-4 verdicts",
            "units",
            "with human votes",
            "with GPT-4 verdict",
            "with both",
            "human votes without GPT-4 verdict",
        ],
        rows,
    )


def agreement_table() -> str:
    rows = []
    for match in ("ordered", "unordered"):
        pairs = items(match)
        for ties in ("drop", "count"):
            probe = HumanAgreementProbe(judge_source=GPT4, majority_ties=ties, by=())
            result = analyzed(probe, pairs)
            majority = result.finding("judge_human_majority_agreement").estimate
            kappa = result.finding("judge_human_majority_kappa").estimate
            votes = result.finding("judge_human_vote_agreement").estimate
            humans = result.finding("human_human_agreement").estimate
            rows.append(
                [
                    match,
                    ties,
                    fmt(majority),
                    majority.n,
                    fmt(kappa),
                    f"{fmt(votes)} (n={votes.n})",
                    f"{fmt(humans)} (n={humans.n})",
                ]
            )
    return table(
        [
            "match",
            "majority ties",
            "GPT-4 vs human majority",
            "n",
            "kappa",
            "GPT-4 vs each human vote",
            "human vs human",
        ],
        rows,
    )


def null_result(reading: Reading, on_equal: OnEqual = "tie") -> ProbeResult:
    probe = LengthNullProbe(
        judge_source=GPT4,
        unit="words",
        compare_units=(),
        on_equal=on_equal,
        majority_ties=reading.majority_ties,
        falsifier=load_falsifier(FALSIFIER),
        by=(),
    )
    return analyzed(probe, items(reading.match, reading.lengths))


def null_tables() -> str:
    parts = []
    overall = []
    for reading in READINGS:
        result = null_result(reading)

        def cell(name: str, res: ProbeResult = result) -> str:
            est = res.finding(name, unit="words").estimate
            return f"{fmt(est)} (n={est.n})"

        judge = result.finding("judge_human_majority_agreement").estimate
        overall.append(
            [
                reading.label,
                f"{fmt(judge)} (n={judge.n})",
                cell("null_human_vote_agreement"),
                cell("null_human_majority_agreement"),
                cell("null_judge_agreement"),
            ]
        )
        bins = []
        for label in BINS:
            j = result.finding("bin_judge_agreement", bin=label).estimate
            n = result.finding("bin_null_agreement", bin=label).estimate
            d = result.finding("bin_judge_minus_null", bin=label).estimate
            bins.append([label, j.n, fmt(j), f"{fmt(n)} (n={n.n})", fmt(d)])
        parts.append(
            "\n\n".join(
                [
                    f"#### Length-gap bins, {reading.label} (match={reading.match}, "
                    f"majority_ties={reading.majority_ties}, lengths={reading.lengths})",
                    table(
                        [
                            "length gap (words)",
                            "n",
                            "GPT-4 vs human majority",
                            "null vs human majority",
                            "GPT-4 - null",
                        ],
                        bins,
                    ),
                    "Falsifier: " + result.notes[-1],
                ]
            )
        )
    head = table(
        [
            "reading",
            "GPT-4 vs human majority",
            "null vs human votes",
            "null vs human majority",
            "null vs GPT-4's votes",
        ],
        overall,
    )
    return "\n\n".join(["#### Length-only null (words, equal lengths dropped)", head, *parts])


def falsifier_table() -> str:
    """The declared falsifier under each reading, with equal lengths dropped or coin-flipped."""
    rows = []
    for reading in READINGS:
        row: list[object] = [reading.label]
        for on_equal in ("tie", "random"):
            verdict = null_result(reading, on_equal).tables["falsifier"]
            ci = verdict["ci"]
            row.append(
                f"{verdict['outcome']}: {verdict['estimate']:.3f} "
                f"[{ci['low']:.3f}, {ci['high']:.3f}] (n={verdict['n']})"
            )
        rows.append(row)
    return "\n\n".join(
        [
            "#### Falsifier (GPT-4 - null on <10% pairs, threshold 0.10), by equal-length rule",
            table(["reading", "equal lengths dropped (tie)", "equal lengths: coin flip"], rows),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    if not VOTES.is_dir():
        print(f"data folder not found: {VOTES} (set JUDGEPROBE_DATA)", file=sys.stderr)
        return 2
    print("### MT-Bench released votes (recorded GPT-4 verdicts, no judge call)")
    print()
    print(loader_summary())
    print()
    print("#### GPT-4 vs humans, by matching and majority rule (ties excluded)")
    print()
    print(agreement_table())
    print()
    print(null_tables())
    print()
    print(falsifier_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
