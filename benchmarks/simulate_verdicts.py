"""How often is the verdict wrong? A simulation study of the probes' statuses.

For each probe family, simulated audits run the probe through the engine (``run_probe``,
an in-memory run store) against synthetic items and a :class:`~judgeprobe.judges.CallableJudge`
whose behaviour is known by construction:

- an invariant (or otherwise sound) judge, with no effect: the probe's overall status (the
  worst decided status of its findings, as the card ranks them) should be ``fail`` in at most
  5 % of audits;
- a judge with a planted effect beyond the fail threshold: ``fail`` in at least 80 %;
- under the planted effect, the 95 % CI of the family's main finding should cover the true
  value (known by construction: a planted flip probability p is a flip rate p) in 95 +- 2 % of
  audits.

Every simulated audit has its own seed: the judge's randomness (a hash of the seed and the
request's text, so one request always gets one answer) and the probe's seed both change with
it. Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/simulate_verdicts.py --n-sims 500

It prints a Markdown table. ``tests/test_simulation.py`` runs the same code with fewer audits
and looser bounds.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgeprobe.core.request import Request
from judgeprobe.data.items import (
    HumanLabel,
    Item,
    PairwiseChoice,
    PairwiseItem,
    PointwiseItem,
    Vote,
)
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.agreement.probe import AgreementProbe
from judgeprobe.probes.base import Finding, Probe
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.concatenation.cluster import ClusterProbe
from judgeprobe.probes.concatenation.permutation import PermutationProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.probes.policy_invariance import PolicyInvarianceProbe
from judgeprobe.report.statuses import worst
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.runs.probe import run_probe

SEP = "\n\n"
"""The separator every concatenation probe joins parts with (their default)."""
RESAMPLES = 200
"""Bootstrap resamples of the resampled intervals: few, to keep 500 audits per family cheap."""

JudgeFn = Callable[[Request], Any]


def uniform(seed: int, salt: str, text: str) -> float:
    """A uniform draw in [0, 1) fixed by the audit's seed, a purpose and a text."""
    digest = hashlib.blake2b(f"{seed}|{salt}|{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def jittered(score: float, seed: int, request: Request, width: float = 0.6) -> float:
    """``score`` with the sampling noise of one call, uniform on ``[-width/2, width/2)`` and
    kept on the 1-5 scale; too small to cross the rubric's neutral band from 1 or 5."""
    noise = width * (uniform(seed, "jitter", request.render()) - 0.5)
    return min(5.0, max(1.0, score + noise))


@dataclass(frozen=True)
class Family:
    """One probe family's simulation: its items, probe, judges and main finding."""

    name: str
    rubric: Rubric
    items: Callable[[int], list[Item]]
    """The synthetic items of the audit with this seed."""
    probe: Callable[[], Probe]
    null_judge: Callable[[int], JudgeFn]
    effect_judge: Callable[[int], JudgeFn]
    main: str
    """The finding whose CI is checked for coverage under the effect."""
    main_labels: dict[str, str]
    truth: Callable[[ProbeResult], float]
    """The main finding's true value under the effect (some depend on the drawn design)."""
    setup: str
    """Items, effect and parameters, for the table."""


def _fixed(value: float) -> Callable[[ProbeResult], float]:
    return lambda _result: value


# -- pointwise concatenation families ---------------------------------------------------------
def level_items(n: int, seed: int, prefix: str = "i") -> list[Item]:
    """Items of harmfulness level 1 or 5 (no neutral band), drawn at random per seed."""
    rng = random.Random(seed)
    return [
        PointwiseItem(f"{prefix}{k:03d}", f"prompt {k}", f"reply {k} level {rng.choice((1, 5))}")
        for k in range(n)
    ]


def levels(request: Request) -> list[float]:
    return [float(part.rsplit(" ", 1)[1]) for part in request.field_map["response"].split(SEP)]


def max_judge(seed: int) -> JudgeFn:
    """Scores the highest level among the parts, with per-call noise: invariant by design."""
    return lambda r: jittered(max(levels(r)), seed, r)


def flip_judge(p: float) -> Callable[[int], JudgeFn]:
    """As :func:`max_judge`, but a concatenation's decision flips (6 - score) with prob. p."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            parts = levels(request)
            score = max(parts)
            if len(parts) > 1 and uniform(seed, "flip", request.render()) < p:
                score = 6 - score
            return jittered(score, seed, request)

        return fn

    return make


def first_part_judge(p: float) -> Callable[[int], JudgeFn]:
    """As :func:`max_judge`, but with probability p it scores only the first part."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            parts = levels(request)
            first = uniform(seed, "first", request.render()) < p
            return jittered(parts[0] if first else max(parts), seed, request)

        return fn

    return make


def permutation_truth(p: float, k: int) -> Callable[[ProbeResult], float]:
    """p times the share of drawn k-tuples with parts of both classes (the others cannot flip)."""

    def truth(result: ProbeResult) -> float:
        assert result.plan is not None
        design = result.plan.design
        level_of = {i.id: i.response.rsplit(" ", 1)[1] for i in design.items}
        tuples = design.tuples[k]
        mixed = sum(len({level_of[i] for i in t.parts}) > 1 for t in tuples)
        return p * mixed / len(tuples)

    return truth


# -- bypass ------------------------------------------------------------------------------------
def bypass_items(seed: int, positives: int, negatives: int) -> list[Item]:
    del seed  # the classes are fixed; the draws of fillers and the judge vary with the seed
    out: list[Item] = []
    for k in range(positives + negatives):
        word = "unsafe" if k < positives else "benign"
        out.append(
            PointwiseItem(
                f"b{k:03d}",
                f"question {k}",
                f"{word} reply {k}",
                labels=(HumanLabel(1.0 if k < positives else 0.0),),
            )
        )
    return out


def any_part_judge(seed: int) -> JudgeFn:
    """Flags (5) any concatenation with a harmful part, else 1: never bypassed."""
    return lambda r: jittered(5.0 if "unsafe" in r.field_map["response"] else 1.0, seed, r)


def missing_judge(p: float) -> Callable[[int], JudgeFn]:
    """Misses the harmful part of a concatenation (scores it 1) with probability p."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            text = request.field_map["response"]
            flagged = "unsafe" in text
            if flagged and SEP in text and uniform(seed, "miss", request.render()) < p:
                flagged = False
            return jittered(5.0 if flagged else 1.0, seed, request)

        return fn

    return make


# -- policy invariance -------------------------------------------------------------------------
def refusal_items(seed: int, n: int) -> list[Item]:
    rng = random.Random(seed)
    return [
        PointwiseItem(
            f"r{k:03d}",
            f"request number {k}",
            f"response number {k}",
            labels=(HumanLabel(float(rng.random() < 0.4), rater="r1"),),
        )
        for k in range(n)
    ]


def item_number(request: Request) -> int:
    return int(request.field_map["prompt"].rsplit(" ", 1)[-1])


def variant_name(request: Request) -> str:
    return request.rubric.name.partition("/")[2] or "base"


def rubric_blind(seed: int) -> JudgeFn:
    """Ignores the rubric's wording: every run draws from the item's own noise (one item in
    five is a coin flip, the others are 97 % stable)."""

    def fn(request: Request) -> str:
        k = item_number(request)
        p_true = 0.5 if k % 5 == 0 else (0.03 if k % 2 else 0.97)
        return "true" if uniform(seed, "run", request.key) < p_true else "false"

    return fn


def lexicon_sensitive(p: float) -> Callable[[int], JudgeFn]:
    """Deterministic on the base wording; under a lexicon rewording the decision flips with
    probability p (per item and wording)."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> str:
            k = item_number(request)
            decision = uniform(seed, "item", str(k)) < 0.4
            variant = variant_name(request)
            if variant.startswith("lexicon") and uniform(seed, "flip", f"{k}|{variant}") < p:
                decision = not decision
            return "true" if decision else "false"

        return fn

    return make


# -- pointwise agreement -----------------------------------------------------------------------
def agreement_items(seed: int, n: int) -> list[Item]:
    rng = random.Random(seed)
    out: list[Item] = []
    for k in range(n):
        truth = int(rng.random() < 0.4)
        size = rng.randint(40, 340)
        votes = [truth, truth, truth]
        if rng.random() < 0.2:
            votes[2] = 1 - truth
        labels = tuple(HumanLabel(float(v), rater=f"human_{r}") for r, v in enumerate(votes))
        response = f"Here is some text {k} truth {truth} " + "x" * size
        out.append(PointwiseItem(f"a{k:03d}", f"prompt {k}", response, labels=labels))
    return out


def accurate_judge(q: float) -> Callable[[int], JudgeFn]:
    """Gives the true class with probability q on every item (so balanced accuracy q)."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> float:
            text = request.field_map["response"]
            truth = int(text.split("truth ")[1][0])
            right = uniform(seed, "right", text) < q
            return float(truth if right else 1 - truth)

        return fn

    return make


# -- pairwise families -------------------------------------------------------------------------
OTHER: dict[PairwiseChoice, PairwiseChoice] = {"A": "B", "B": "A", "tie": "tie"}


def pairwise_items(
    seed: int, n: int, longer_better: float = 0.7, matched: float = 0.0
) -> list[Item]:
    """Pairs whose lengths differ by 20-60 %, the better one longer with ``longer_better``; a
    share ``matched`` of them are length-matched instead (lengths within 10 %).

    Three human votes follow the better response, each right with probability 0.9. Each text
    ends with its quality (1 better, 0 worse), which the synthetic judges read.
    """
    rng = random.Random(seed)
    out: list[Item] = []
    for k in range(n):
        long_n = rng.randint(300, 900)
        is_matched = matched > 0 and rng.random() < matched
        gap = rng.uniform(0.0, 0.1) if is_matched else rng.uniform(0.2, 0.6)
        short_n = round(long_n * (1 - gap))
        a_longer = rng.random() < 0.5
        longer: PairwiseChoice = "A" if a_longer else "B"
        better = longer if rng.random() < longer_better else OTHER[longer]
        votes = tuple(
            Vote(better if rng.random() < 0.9 else OTHER[better], rater=f"h{r}") for r in range(3)
        )
        size_a, size_b = (long_n, short_n) if a_longer else (short_n, long_n)
        text_a = "x" * size_a + f" quality {int(better == 'A')}"
        text_b = "y" * size_b + f" quality {int(better == 'B')}"
        out.append(PairwiseItem(f"p{k:03d}", f"question {k}", text_a, text_b, human_votes=votes))
    return out


def _quality(text: str) -> int:
    return int(text.rsplit(" ", 1)[1])


def consistent_judge(seed: int) -> JudgeFn:
    """Picks the better response with probability 0.8, the same way in both orders."""

    def fn(request: Request) -> str:
        a, b = request.field_map["response_a"], request.field_map["response_b"]
        pair = "|".join(sorted((a, b)))
        pick_better = uniform(seed, "better", pair) < 0.8
        a_better = _quality(a) > _quality(b)
        return "A" if a_better == pick_better else "B"

    return fn


def first_shown_judge(p: float) -> Callable[[int], JudgeFn]:
    """As :func:`consistent_judge`, but picks whichever response is shown first with prob. p
    (drawn per order), so it picks the first-shown one in both orders with probability p."""

    def make(seed: int) -> JudgeFn:
        consistent = consistent_judge(seed)

        def fn(request: Request) -> str:
            if uniform(seed, "first", request.render()) < p:
                return "A"
            return str(consistent(request))

        return fn

    return make


def length_judge(seed: int) -> JudgeFn:
    """Picks the better response with probability 0.9, whatever its length."""

    def fn(request: Request) -> str:
        a, b = request.field_map["response_a"], request.field_map["response_b"]
        right = uniform(seed, "right", a + b) < 0.9
        a_better = _quality(a) > _quality(b)
        return "A" if a_better == right else "B"

    return fn


def longer_judge(q: float) -> Callable[[int], JudgeFn]:
    """Picks the longer response with probability q."""

    def make(seed: int) -> JudgeFn:
        def fn(request: Request) -> str:
            a, b = request.field_map["response_a"], request.field_map["response_b"]
            longer = "A" if len(a) > len(b) else "B"
            return longer if uniform(seed, "longer", a + b) < q else OTHER[longer]

        return fn

    return make


# -- the families ------------------------------------------------------------------------------
HARM = builtin_rubric("harmfulness")
REFUSAL = builtin_rubric("refusal")
PREFERENCE = builtin_rubric("preference")


def families(size: float = 1.0, resamples: int = RESAMPLES) -> tuple[Family, ...]:
    """Every family, its item counts (and the designs that follow them) scaled by ``size``.

    ``size`` 1 is the benchmark's design; the tests use smaller ones, with fewer bootstrap
    ``resamples``, against looser bounds.
    """

    def n(count: int) -> int:
        return max(10, round(count * size))

    items, pairs, tuples = n(60), n(150), n(100)
    positives, policy, agreement = n(60), n(60), n(240)
    return (
        Family(
            "repetition",
            HARM,
            lambda seed: level_items(items, seed),
            lambda: RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=resamples),
            max_judge,
            flip_judge(0.25),
            "decision_flip_rate",
            {},
            _fixed(0.25),
            f"{items} items (levels 1/5), R*2; effect: a repeated response flips with p = 0.25",
        ),
        Family(
            "cluster",
            HARM,
            lambda seed: level_items(items, seed),
            lambda: ClusterProbe(ks=(2,), per_cluster=tuples, n_resamples=resamples),
            max_judge,
            flip_judge(0.25),
            "class_flip_rate",
            {"k": "2"},
            _fixed(0.25),
            f"{items} items, k = 2, {tuples} concatenations per class; effect: a concatenation "
            "flips with p = 0.25",
        ),
        Family(
            "permutation",
            HARM,
            lambda seed: level_items(items, seed),
            lambda: PermutationProbe(
                ks=(4,), n_tuples=tuples, sample_sizes=(20, 1, 20), n_resamples=resamples
            ),
            max_judge,
            first_part_judge(0.3),
            "positional_bias",
            {"k": "4"},
            permutation_truth(0.3, 4),
            f"{items} items, {tuples} 4-tuples of 20 + 20 items, 3 random orders; effect: scores "
            "the first part only with p = 0.3 (true bias 0.3 x share of mixed tuples, ~0.26)",
        ),
        Family(
            "bypass",
            HARM,
            lambda seed: bypass_items(seed, positives, positives),
            lambda: BypassProbe(
                ks=(4,), draws=2, false_alarm_items=positives, n_resamples=resamples
            ),
            any_part_judge,
            missing_judge(0.25),
            "bypass_rate",
            {"k": "4", "position": "first"},
            _fixed(0.25),
            f"{positives} harmful + {positives} benign items, k = 4, 2 draws; effect: a "
            "harmful part in a concatenation is missed with p = 0.25",
        ),
        Family(
            "policy_invariance",
            REFUSAL,
            lambda seed: refusal_items(seed, policy),
            lambda: PolicyInvarianceProbe(n_resamples=resamples),
            rubric_blind,
            lexicon_sensitive(0.2),
            "flip_delta",
            {"class": "lexicon"},
            _fixed(0.2),
            f"{policy} items, built-in refusal wordings, 3 reruns; null: a wording-blind judge "
            "with rerun noise; effect: a lexicon rewording flips with p = 0.2",
        ),
        Family(
            "agreement",
            REFUSAL,
            lambda seed: agreement_items(seed, agreement),
            lambda: AgreementProbe(n_resamples=resamples),
            accurate_judge(0.9),
            accurate_judge(0.45),
            "balanced_accuracy",
            {},
            _fixed(0.45),
            f"{agreement} items; null: right with q = 0.9; effect: q = 0.45, 0.05 below the "
            "trivial baselines (balanced accuracy 0.5)",
        ),
        Family(
            "position",
            PREFERENCE,
            lambda seed: pairwise_items(seed, pairs),
            PositionProbe,
            consistent_judge,
            first_shown_judge(0.35),
            "first_position_bias",
            {},
            _fixed(0.35),
            f"{pairs} pairs; effect: picks the first-shown response with p = 0.35 per order",
        ),
        Family(
            "length_null",
            PREFERENCE,
            lambda seed: pairwise_items(seed, pairs, matched=0.5),
            lambda: LengthNullProbe(compare_units=(), n_resamples=resamples),
            length_judge,
            longer_judge(0.97),
            "null_judge_agreement",
            {},
            _fixed(0.97),
            f"{pairs} pairs (half length-matched, gaps under 10 %; half 20-60 %; the better one "
            "longer in 70 %); null: follows quality (right 90 %); effect: picks the longer with "
            "q = 0.97 (gated: judge minus null on the matched bins)",
        ),
    )


FAMILIES = families()


# -- running -----------------------------------------------------------------------------------
def audit(family: Family, judge: Callable[[int], JudgeFn], seed: int) -> ProbeResult:
    """One simulated audit: a fresh in-memory store, the seed's items, judge and probe seed."""
    engine = Engine(
        CallableJudge(judge(seed), name=f"{family.name}-sim", version=str(seed)),
        RunStore(":memory:"),
        EngineConfig(progress=False),
    )
    return run_probe(family.probe(), family.items(seed), engine, family.rubric, seed=seed)


def overall_status(result: ProbeResult) -> str:
    """The probe's status: the worst decided status of its findings, as the card ranks them."""
    return worst([f.status for f in result.findings])


def main_finding(family: Family, result: ProbeResult) -> Finding:
    return result.finding(family.main, **family.main_labels)


@dataclass
class Outcome:
    """What the simulated audits of one family gave."""

    family: Family
    sims: int
    null_fails: int = 0
    effect_fails: int = 0
    covered: int = 0
    assessed: int = 0
    seconds: float = 0.0
    null_statuses: dict[str, int] = field(default_factory=dict)
    effect_statuses: dict[str, int] = field(default_factory=dict)
    null_fail_findings: dict[str, int] = field(default_factory=dict)
    """The findings that failed in the null audits, by name: what drives a false fail."""

    @property
    def false_fail(self) -> float:
        return self.null_fails / self.sims

    @property
    def power(self) -> float:
        return self.effect_fails / self.sims

    @property
    def coverage(self) -> float:
        return self.covered / self.assessed if self.assessed else float("nan")


def simulate(family: Family, sims: int, *, first_seed: int = 0) -> Outcome:
    """``sims`` audits of ``family`` with the null judge and ``sims`` with the effect."""
    outcome = Outcome(family, sims)
    start = time.perf_counter()
    for seed in range(first_seed, first_seed + sims):
        null = audit(family, family.null_judge, seed)
        status = overall_status(null)
        outcome.null_statuses[status] = outcome.null_statuses.get(status, 0) + 1
        outcome.null_fails += status == "fail"
        for name in sorted({f.name for f in null.findings if f.status == "fail"}):
            outcome.null_fail_findings[name] = outcome.null_fail_findings.get(name, 0) + 1
        result = audit(family, family.effect_judge, seed)
        status = overall_status(result)
        outcome.effect_statuses[status] = outcome.effect_statuses.get(status, 0) + 1
        outcome.effect_fails += status == "fail"
        estimate = main_finding(family, result).estimate
        if estimate.defined:
            outcome.assessed += 1
            outcome.covered += estimate.ci.contains(family.truth(result))
    outcome.seconds = time.perf_counter() - start
    return outcome


def table(outcomes: Sequence[Outcome]) -> str:
    """The Markdown table of ``outcomes``: goals false fail <= 5 %, power >= 80 %, coverage
    95 +- 2 %."""
    lines = [
        "| family | setup | main finding | sims | false fail | null pass | power | CI coverage "
        "| s/audit |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for o in outcomes:
        f = o.family
        lines.append(
            f"| {f.name} | {f.setup} | {f.main} | {o.sims} | {o.false_fail:.1%} "
            f"{_mark(o.false_fail <= 0.05)} | {o.null_statuses.get('pass', 0) / o.sims:.1%} | "
            f"{o.power:.1%} {_mark(o.power >= 0.80)} | "
            f"{o.coverage:.1%} {_mark(round(abs(o.coverage - 0.95), 9) <= 0.02)} | "
            f"{o.seconds / (2 * o.sims):.3f} |"
        )
    return "\n".join(lines)


def _mark(met: bool) -> str:
    return "" if met else "**(missed)**"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n-sims", type=int, default=500, help="audits per family and judge")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--families", nargs="*", default=[f.name for f in FAMILIES], help="families to run"
    )
    args = parser.parse_args(argv)
    chosen = [f for f in FAMILIES if f.name in args.families]
    outcomes = []
    for family in chosen:
        outcome = simulate(family, args.n_sims, first_seed=args.first_seed)
        print(
            f"{family.name}: null {outcome.null_statuses}, effect {outcome.effect_statuses}, "
            f"failed findings under the null {outcome.null_fail_findings}, "
            f"{outcome.seconds:.0f} s",
            flush=True,
        )
        outcomes.append(outcome)
    print()
    print(
        f"{args.n_sims} simulated audits per family and judge, bootstrap n_resamples = {RESAMPLES}"
    )
    print()
    print(table(outcomes))


if __name__ == "__main__":
    main()
