"""When failures follow items: the concatenation probes' intervals and verdicts, simulated.

``simulate_verdicts.py`` plants failures as independent per-request coin flips: every
concatenation flips on its own. Under that plan the unit of resampling makes no difference, so it
cannot see an interval that counts concatenations where the evidence is carried by items. Real
judges fail on items: a long, odd or borderline response derails every request it is part of.
Here a share ``q`` of the population's items is *derailing* (drawn per audit seed and item), and
each family's judge fails on every request that holds a derailing item in a given place:

- ``cluster``: a concatenation holding a derailing part anywhere is scored as the opposite class
  (the population's flip rate at k parts is ``1 - (1 - q)**k``);
- ``permutation``: a tuple whose first part is derailing is scored by that part alone (positional
  bias ``q`` times the share of tuples with parts of both classes);
- ``bypass``: a harmful part among fillers is missed when any part is derailing
  (``1 - (1 - q)**k``).

For each family three judges: the invariant one (no derailing item: the share of audits that
FAIL, goal <= 5 %); one whose population rate is 1.5 times the fail line (the share of audits
that FAIL, goal >= 80 %, and how often the main finding's 95 % interval covers the population
rate, goal 95 +- 2 %); and one whose population rate sits just above the warn line (the share
of audits whose main finding passes, goal <= 5 %). The truth is the rate over the item
population, not over the drawn items: an interval that treats the concatenations as independent
covers it far less often (the ``naive coverage`` column, a Wilson interval over the
concatenations).

Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/simulate_items.py --n-sims 200

``tests/test_simulation_items.py`` runs the same code with fewer audits and looser bounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from judgeprobe.core.request import Request
from judgeprobe.data.items import Item
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Probe
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.concatenation.cluster import ClusterProbe
from judgeprobe.probes.concatenation.permutation import PermutationProbe
from judgeprobe.probes.decisions import FLIP_THRESHOLD
from judgeprobe.stats import proportion


def _load(name: str) -> ModuleType:
    path = Path(__file__).resolve().parent / f"{name}.py"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


verdicts = _load("simulate_verdicts")
SEP = verdicts.SEP
JudgeFn = Callable[[Request], float]
WARN, FAIL = FLIP_THRESHOLD.warn, FLIP_THRESHOLD.fail


def item_of(part: str) -> str:
    """The item number a part's text was made from ("reply 12 level 5", "unsafe reply 3")."""
    words = part.split()
    return words[words.index("reply") + 1]


def derailing(seed: int, q: float, part: str) -> bool:
    """Whether the item behind ``part`` derails: fixed per audit seed and item."""
    return bool(verdicts.uniform(seed, "derailing", item_of(part)) < q)


def cluster_judge(q: float) -> Callable[[int], JudgeFn]:
    """The invariant max judge, except that a concatenation holding a derailing part anywhere
    is scored as the opposite class."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            parts = request.field_map["response"].split(SEP)
            score = max(verdicts.levels(request))
            if len(parts) > 1 and any(derailing(seed, q, p) for p in parts):
                score = 6 - score
            return float(verdicts.jittered(score, seed, request))

        return fn

    return make


def first_part_judge(q: float) -> Callable[[int], JudgeFn]:
    """The invariant max judge, except that a concatenation whose first part is derailing is
    scored by that part alone."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            parts = request.field_map["response"].split(SEP)
            levels = verdicts.levels(request)
            first = len(parts) > 1 and derailing(seed, q, parts[0])
            return float(verdicts.jittered(levels[0] if first else max(levels), seed, request))

        return fn

    return make


def bypass_judge(q: float) -> Callable[[int], JudgeFn]:
    """Flags any concatenation with a harmful part, except one holding a derailing part."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            text = request.field_map["response"]
            parts = text.split(SEP)
            flagged = "unsafe" in text
            if flagged and len(parts) > 1 and any(derailing(seed, q, p) for p in parts):
                flagged = False
            return float(verdicts.jittered(5.0 if flagged else 1.0, seed, request))

        return fn

    return make


def any_of(k: int, rate: float) -> float:
    """The share ``q`` of derailing items at which ``1 - (1 - q)**k`` is ``rate``."""
    return float(1 - (1 - rate) ** (1 / k))


@dataclass(frozen=True)
class ItemFamily:
    """One concatenation probe under item-driven failures."""

    name: str
    items: Callable[[int], list[Item]]
    probe: Callable[[], Probe]
    judge: Callable[[float], Callable[[int], JudgeFn]]
    null_judge: Callable[[int], JudgeFn]
    q_for: Callable[[float, ProbeResult | None], float]
    """The share of derailing items that gives a population rate (some need the design)."""
    truth: Callable[[float, ProbeResult], float]
    """The population rate at a share ``q`` (some depend on the drawn design's classes)."""
    main: str
    """The gated finding: the rate's excess over the judge's rerun null."""
    main_labels: dict[str, str]
    setup: str

    @property
    def raw(self) -> str:
        """The raw rate behind :attr:`main`, whose interval is the item-level one."""
        raws = {excess: raw for raw, excess in self.probe().excess_findings.items()}
        return raws[self.main]


def _mixed_share(result: ProbeResult, k: int) -> float:
    assert result.plan is not None
    design = result.plan.design
    level_of = {i.id: i.response.rsplit(" ", 1)[1] for i in design.items}
    tuples = design.tuples[k]
    return sum(len({level_of[i] for i in t.parts}) > 1 for t in tuples) / len(tuples)


MIXED_4 = 0.87
"""About the share of 4-tuples of 20 low and 20 high items with parts of both classes."""


def families(size: float = 1.0, resamples: int = verdicts.RESAMPLES) -> tuple[ItemFamily, ...]:
    """The three families, item counts scaled by ``size``."""

    def n(count: int) -> int:
        return max(10, round(count * size))

    items, positives = n(800), n(300)
    return (
        ItemFamily(
            "cluster",
            lambda seed: verdicts.level_items(items, seed),
            lambda: ClusterProbe(ks=(2,), per_cluster=items, n_resamples=resamples),
            cluster_judge,
            verdicts.max_judge,
            lambda rate, _: any_of(2, rate),
            lambda q, _: 1 - (1 - q) ** 2,
            "class_flip_excess",
            {"k": "2", "cluster": "unsafe"},
            f"{items} items (levels 1/5), k = 2, {items} concatenations per class",
        ),
        ItemFamily(
            "permutation",
            lambda seed: verdicts.level_items(items, seed),
            lambda: PermutationProbe(
                ks=(4,),
                n_tuples=items // 2,
                sample_sizes=(items // 4, 1, items // 4),
                n_resamples=resamples,
            ),
            first_part_judge,
            verdicts.max_judge,
            lambda rate, _: rate / MIXED_4,
            lambda q, result: q * _mixed_share(result, 4),
            "positional_bias_excess",
            {"k": "4"},
            f"{items} items, {items // 2} 4-tuples of {items // 4} + {items // 4} items",
        ),
        ItemFamily(
            "bypass",
            lambda seed: verdicts.bypass_items(seed, positives, positives),
            lambda: BypassProbe(
                ks=(2,),
                positions=("last",),
                draws=2,
                false_alarm_items=positives,
                n_resamples=resamples,
            ),
            bypass_judge,
            verdicts.any_part_judge,
            lambda rate, _: any_of(2, rate),
            lambda q, _: 1 - (1 - q) ** 2,
            "bypass_excess",
            {"k": "2", "position": "last"},
            f"{positives} harmful + {positives} benign items, k = 2, 2 draws",
        ),
    )


FAMILIES = families()


@dataclass
class ItemOutcome(verdicts.Outcome):
    """What the simulated audits of one family gave: the per-request study's counts (false fail,
    power, coverage), plus the naive interval's coverage and the passes just past the warn line."""

    naive_covered: int = 0
    warn_passes: int = 0
    statuses: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, judge: str, status: str) -> None:
        seen = self.statuses.setdefault(judge, {})
        seen[status] = seen.get(status, 0) + 1

    @property
    def naive_coverage(self) -> float:
        return self.naive_covered / self.assessed if self.assessed else float("nan")

    @property
    def pass_above_warn(self) -> float:
        return self.warn_passes / self.sims


def _audit(family: ItemFamily, judge: Callable[[int], JudgeFn], seed: int) -> ProbeResult:
    proxy = verdicts.Family(
        family.name,
        verdicts.HARM,
        family.items,
        family.probe,
        judge,
        judge,
        family.main,
        family.main_labels,
        verdicts._fixed(0.0),
        family.setup,
    )
    result: ProbeResult = verdicts.audit(proxy, judge, seed)
    return result


def simulate(family: ItemFamily, sims: int, *, first_seed: int = 0) -> ItemOutcome:
    """``sims`` audits of ``family`` with each of its three judges."""
    outcome = ItemOutcome(family, sims)
    start = time.perf_counter()
    effect_q = family.q_for(1.5 * FAIL, None)
    warn_q = family.q_for(WARN + 0.01, None)
    for seed in range(first_seed, first_seed + sims):
        null = verdicts.overall_status(_audit(family, family.null_judge, seed))
        outcome.count("null", null)
        outcome.null_fails += null == "fail"
        result = _audit(family, family.judge(effect_q), seed)
        status = verdicts.overall_status(result)
        outcome.count("effect", status)
        outcome.effect_fails += status == "fail"
        estimate = result.finding(family.raw, **family.main_labels).estimate
        if estimate.defined:
            truth = family.truth(effect_q, result)
            outcome.assessed += 1
            outcome.covered += estimate.ci.contains(truth)
            units = int(estimate.counts.get("units", estimate.counts.get("concatenations", 0)))
            k = round(float(estimate.estimate) * units)
            outcome.naive_covered += proportion(k, units).ci.contains(truth)
        at_warn = _audit(family, family.judge(warn_q), seed)
        outcome.count("warn", verdicts.overall_status(at_warn))
        outcome.warn_passes += at_warn.finding(family.main, **family.main_labels).status == "pass"
    outcome.seconds = time.perf_counter() - start
    return outcome


def table(outcomes: Sequence[ItemOutcome]) -> str:
    lines = [
        "| family | setup | main finding | sims | false fail | power at 1.5x fail | CI coverage "
        "| naive coverage | pass above warn | s/audit |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for o in outcomes:
        f = o.family
        lines.append(
            f"| {f.name} | {f.setup} | {f.main} | {o.sims} | {o.false_fail:.1%} "
            f"{verdicts._mark(o.false_fail <= 0.05)} | {o.power:.1%} "
            f"{verdicts._mark(o.power >= 0.80)} | {o.coverage:.1%} "
            f"{verdicts._mark(round(abs(o.coverage - 0.95), 9) <= 0.02)} | "
            f"{o.naive_coverage:.1%} | "
            f"{o.pass_above_warn:.1%} {verdicts._mark(o.pass_above_warn <= 0.05)} | "
            f"{o.seconds / (3 * o.sims):.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n-sims", type=int, default=200, help="audits per family and judge")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--size", type=float, default=1.0, help="scale of the item counts")
    parser.add_argument(
        "--families", nargs="*", default=[f.name for f in FAMILIES], help="families to run"
    )
    args = parser.parse_args(argv)
    chosen = [f for f in families(args.size) if f.name in args.families]
    outcomes = []
    for family in chosen:
        outcome = simulate(family, args.n_sims, first_seed=args.first_seed)
        print(f"{family.name}: {outcome.statuses}, {outcome.seconds:.0f} s", flush=True)
        outcomes.append(outcome)
    print()
    print(f"{args.n_sims} simulated audits per family and judge, items scaled by {args.size}")
    print()
    print(table(outcomes))


if __name__ == "__main__":
    main()
