"""Sampling until decided: rounds over a growing seeded prefix, each decided at its own level.

The audits here use planted judges (a :class:`CallableJudge` whose behaviour is known by
construction) on synthetic items of harmfulness level 1 or 5, and the repetition probe with one
repeat (two requests per item), so a round on n items costs at most 2n calls.
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgeprobe.audit.config import AuditConfig, parse_config
from judgeprobe.audit.run import run_audit, with_until_decided
from judgeprobe.audit.sequential import (
    Audited,
    Round,
    Sequential,
    UntilDecided,
    run_until_decided,
    seeded_order,
    settled,
)
from judgeprobe.core.request import Request
from judgeprobe.data.items import PointwiseItem
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes.base import Finding, Threshold
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.report.rounds import card_rounds, rounds_sentence
from judgeprobe.report.schema import validate_card
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import run_blocking
from judgeprobe.stats import InvalidParameterError, proportion
from judgeprobe.stats.sequential import look_alpha, look_level

SRC = Path(__file__).resolve().parents[1] / "src"
N_ITEMS = 400
PROBE = {"repetition": {"counts": [1, 2], "modes": ["response"], "n_resamples": 200}}


def _levels(seed: int, n: int = N_ITEMS) -> list[int]:
    rng = random.Random(seed)
    return [rng.choice((1, 5)) for _ in range(n)]


def _write_items(folder: Path, n: int = N_ITEMS) -> Path:
    path = folder / "items.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "response"])
        for k, level in enumerate(_levels(0, n)):
            writer.writerow([f"prompt {k}", f"reply {k} level {level}"])
    return path


def _uniform(seed: int, text: str) -> float:
    digest = hashlib.blake2b(f"{seed}|{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def _level(request: Request) -> float:
    """The highest level among the response's parts (a repeated response has two)."""
    return max(
        float(part.rsplit(" ", 1)[1]) for part in request.field_map["response"].split("\n\n")
    )


def flipping(p: float, seed: int = 0) -> Callable[[Request], float]:
    """Scores the level; a repeated response's decision flips (6 - level) with probability p."""

    def fn(request: Request) -> float:
        score = _level(request)
        repeated = "\n\n" in request.field_map["response"]
        if repeated and _uniform(seed, request.render()) < p:
            score = 6.0 - score
        return score

    return fn


class Counted:
    """A planted judge function that counts its calls."""

    def __init__(self, fn: Callable[[Request], float]) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, request: Request) -> float:
        self.calls += 1
        return self.fn(request)


def _config(folder: Path, out: str, **until: Any) -> AuditConfig:
    engine: dict[str, Any] = {"until_decided": {"start_items": 25, **until}}
    if "engine_max_calls" in until:
        engine = {
            "max_calls": until.pop("engine_max_calls"),
            "until_decided": {"start_items": 25, **until},
        }
    return parse_config(
        {
            "judge": "planted",
            "rubric": "harmfulness",
            "data": f"table:{_write_items(folder)}",
            "probes": PROBE,
            "out": str(folder / out),
            "engine": engine,
        }
    )


def _audit(
    folder: Path, out: str, fn: Callable[[Request], float], **until: Any
) -> tuple[Any, Counted]:
    counted = Counted(fn)
    judge = CallableJudge(counted, name="planted")
    outcome = run_audit(_config(folder, out, **until), judge=judge, progress=False)
    return outcome, counted


# -- the construction --------------------------------------------------------------------------
def test_the_rounds_levels_spend_at_most_alpha_in_all() -> None:
    spent = sum(look_alpha(0.05, r) for r in range(1, 100_000))
    assert spent <= 0.05
    assert look_level(0.95, 1) == pytest.approx(1 - 0.05 * 6 / np.pi**2)
    assert look_level(0.95, 3) > look_level(0.95, 2) > look_level(0.95, 1) > 0.95
    assert sum(look_alpha(0.05, r, looks=7) for r in range(1, 8)) == pytest.approx(0.05)
    with pytest.raises(InvalidParameterError, match=r"looks must be an integer >= look \(3\)"):
        look_alpha(0.05, 3, looks=2)


def test_a_flip_rate_on_its_fail_threshold_fails_in_no_more_than_alpha_of_monitored_audits() -> (
    None
):
    """The worst case of a sound judge: its true flip rate sits on the fail threshold (0.10).

    Looked at after every doubling of the items, a fail at the fixed 95 % level happens on some
    round far more often than 5 %; at the rounds' own levels it stays under 5 %.
    """
    rng = np.random.default_rng(12)
    sizes = UntilDecided(max_calls=1, start_items=25, max_rounds=7).sizes(1600)
    sims = 4000
    flips = np.cumsum(rng.random((sims, sizes[-1])) < 0.10, axis=1)
    fixed = np.zeros(sims, dtype=bool)
    spent = np.zeros(sims, dtype=bool)
    for index, n in enumerate(sizes, start=1):
        k = flips[:, n - 1]
        fixed |= k >= _fewest_flips_that_fail(n, 0.95)
        spent |= k >= _fewest_flips_that_fail(n, look_level(0.95, index, looks=len(sizes)))
    fixed_rate, spending = float(fixed.mean()), float(spent.mean())
    assert spending <= 0.05
    assert fixed_rate > 2 * spending


def _fewest_flips_that_fail(n: int, level: float) -> int:
    """The fewest flips of ``n`` whose interval (the probes' own) lies wholly at or above 0.10;
    the lower end grows with the flips, so a bisection finds it."""

    def fails(k: int) -> bool:
        return proportion(k, n, confidence_level=level).ci.low >= 0.10

    return bisect.bisect_left(range(n + 1), True, key=fails)


def _flip_finding(k: int, n: int) -> Finding:
    return Finding("decision_flip_rate", proportion(k, n), "flips", threshold=Threshold(0.05, 0.10))


def test_a_warn_is_decided_only_once_its_interval_is_short_of_the_fail_threshold() -> None:
    reaching = _flip_finding(4, 25)  # 16 %, 95 % CI about [6 %, 35 %]: at least a warn
    assert reaching.status == "warn" and not settled(reaching)
    between = _flip_finding(300, 4000)  # 7.5 %, CI about [6.7 %, 8.3 %]
    assert between.status == "warn" and settled(between)
    assert settled(_flip_finding(0, 400))  # pass
    assert not settled(_flip_finding(2, 25))  # inconclusive


def test_the_seeded_order_is_fixed_by_the_seed() -> None:
    items = [PointwiseItem(f"i{k}", "p", "r") for k in range(30)]
    assert seeded_order(items, 3) == seeded_order(items, 3)
    assert seeded_order(items, 3) != seeded_order(items, 4)
    assert sorted(i.id for i in seeded_order(items, 3)) == sorted(i.id for i in items)


# -- audits ------------------------------------------------------------------------------------
def test_a_judge_far_from_its_thresholds_is_decided_on_a_prefix(tmp_path: Path) -> None:
    outcome, counted = _audit(tmp_path, "out", flipping(0.0), max_calls=10_000)
    rounds = outcome.rounds
    assert rounds is not None and rounds["stopped"] == "decided"
    last = rounds["rounds"][-1]
    assert last["items"] < N_ITEMS
    # two calls per item (base and repeated), and the reruns of the judge's noise null: a
    # seeded sample of at most 80 requests per round's plan, each judged once
    reruns = counted.calls - 2 * last["items"]
    assert 0 < reruns <= 80 * len(rounds["rounds"]) and counted.calls < 2 * N_ITEMS
    assert counted.calls == sum(r["calls"] for r in rounds["rounds"])
    assert all(
        r["calls"] >= 2 * (r["items"] - before)
        for r, before in zip(
            rounds["rounds"], [0, *[r["items"] for r in rounds["rounds"]][:-1]], strict=True
        )
    )
    statuses = {f.name: f.status for f in outcome.results["repetition"].findings if f.threshold}
    assert set(statuses.values()) == {"pass"}
    assert outcome.complete


def test_a_planted_effect_fails_and_the_card_shows_the_rounds(tmp_path: Path) -> None:
    outcome, _ = _audit(tmp_path, "out", flipping(0.4), max_calls=10_000)
    assert outcome.results["repetition"].finding("decision_flip_excess").status == "fail"
    flip = outcome.results["repetition"].finding("decision_flip_rate")
    # the raw flip rate is information now (its excess over the rerun null is gated): it, like
    # the other findings, is computed at the last round's share of the error level
    assert flip.estimate.ci.level == pytest.approx(outcome.rounds["rounds"][-1]["level"])
    wasserstein = outcome.results["repetition"].finding("wasserstein_to_l1")
    assert wasserstein.estimate.ci.level == pytest.approx(outcome.rounds["rounds"][-1]["level"])
    card = json.loads(outcome.card_paths["json"].read_text(encoding="utf-8"))
    validate_card(card)
    assert card["card_version"] == "1.10"
    assert card["rounds"]["rounds"] == outcome.rounds["rounds"]
    # a decided fail makes the card FAIL whatever else the rounds would show: they stop there
    assert card["rounds"]["stopped"] == "verdict"
    assert "verdict (FAIL) can no longer change" in card["rounds"]["stopped_because"]
    markdown = outcome.card_paths["appendix"].read_text(encoding="utf-8")
    assert "## Rounds" in markdown and "| round | items | new calls | level |" in markdown
    html = outcome.card_paths["html"].read_text(encoding="utf-8")
    assert 'id="rounds"' in html


def test_no_round_is_started_that_would_exceed_the_call_budget(tmp_path: Path) -> None:
    outcome, counted = _audit(tmp_path, "out", flipping(0.10), max_calls=170)
    rounds = outcome.rounds
    assert rounds["stopped"] == "budget"
    assert counted.calls <= 170
    assert counted.calls == sum(r["calls"] for r in rounds["rounds"]) == rounds["calls"]
    assert outcome.complete


def test_a_first_round_over_the_budget_stops_incomplete_within_it(tmp_path: Path) -> None:
    outcome, counted = _audit(tmp_path, "out", flipping(0.0), max_calls=20)
    assert counted.calls <= 20
    assert not outcome.complete
    assert "call budget of 20 reached" in str(outcome.reason)


def test_a_cut_then_resumed_run_pays_no_call_twice(tmp_path: Path) -> None:
    fresh, fresh_calls = _audit(tmp_path, "fresh", flipping(0.10), max_calls=10_000)
    assert fresh.rounds["stopped"] in ("decided", "data")
    # the engine's budget cuts the second round part-way, as a killed run stops
    cut, cut_calls = _audit(
        tmp_path, "resumed", flipping(0.10), max_calls=10_000, engine_max_calls=130
    )
    assert cut.rounds["stopped"] == "budget" and cut.rounds["cut_round"] == 2
    assert cut_calls.calls == 130
    resumed, resumed_calls = _audit(tmp_path, "resumed", flipping(0.10), max_calls=10_000)
    assert resumed_calls.calls == fresh_calls.calls - cut_calls.calls
    assert resumed.rounds["rounds"][0]["calls"] == 0
    assert [r["items"] for r in resumed.rounds["rounds"]] == [
        r["items"] for r in fresh.rounds["rounds"]
    ]


def test_an_invariant_judge_fails_in_no_round_over_many_seeds() -> None:
    rubric = builtin_rubric("harmfulness")
    options = UntilDecided(max_calls=10_000, start_items=20, max_rounds=5)
    failed = 0
    for seed in range(15):
        items = [
            PointwiseItem(f"i{k}", f"prompt {k}", f"reply {k} level {level}")
            for k, level in enumerate(_levels(seed, 160))
        ]
        statuses: list[str] = []

        def seen(results: Any, record: Round, statuses: list[str] = statuses) -> None:
            statuses.extend(f.status for r in results.values() for f in r.findings)

        judge = CallableJudge(
            lambda r, seed=seed: min(5.0, max(1.0, _level(r) + _uniform(seed, r.render()) - 0.5)),
            name="invariant",
            version=str(seed),
        )
        engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
        probe = RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=100)
        run_blocking(
            run_until_decided(
                [Audited("repetition", probe, items, rubric)],
                engine,
                options,
                seed=seed,
                on_round=seen,
            )
        )
        failed += "fail" in statuses
    assert failed == 0


def test_the_rounds_print_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge = CallableJudge(flipping(0.0), name="planted")
    run_audit(_config(tmp_path, "out", max_calls=10_000), judge=judge, write_card=False)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("round ")]
    looks = len(UntilDecided(max_calls=1, start_items=25).sizes(N_ITEMS))
    level = look_level(0.95, 1, looks=looks)
    assert lines[0].startswith(
        f"round 1: 25 items, 60 new calls, level {level:.4f}; gated findings:"
    )
    assert len(lines) >= 2


def test_the_python_api_takes_the_rounds_in_one_call(tmp_path: Path) -> None:
    config = _config(tmp_path, "out", max_calls=10_000).model_copy(
        update={"engine": AuditConfig().engine}
    )
    assert config.engine.until_decided is None
    judge = CallableJudge(flipping(0.0), name="planted")
    outcome = run_audit(
        config,
        judge=judge,
        progress=False,
        write_card=False,
        until_decided={"max_calls": 1000, "start_items": 25},
    )
    assert outcome.rounds is not None and outcome.rounds["max_calls"] == 1000


# -- options -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_calls": 100, "growth": 1.0}, r"engine\.until_decided\.growth: .*greater than 1"),
        ({"max_calls": 0}, r"engine\.until_decided\.max_calls: .*greater than or equal to 1"),
        ({"max_calls": "100"}, r"engine\.until_decided\.max_calls: Input should be a valid int"),
        ({"max_calls": 100, "start": 5}, r"engine\.until_decided\.start: Extra inputs"),
        ({"stop": "later"}, r"engine\.until_decided\.stop: Input should be 'verdict' or"),
    ],
)
def test_a_bad_option_is_named(options: dict[str, Any], message: str) -> None:
    data = {"judge": "profanity", "probes": ["repetition"], "engine": {"until_decided": options}}
    with pytest.raises(ConfigError, match=message):
        parse_config(data, source="audit.yaml")
    config = parse_config({"judge": "profanity", "probes": ["repetition"]})
    with pytest.raises(ConfigError, match=message):
        with_until_decided(config, options)


def test_a_probe_that_cannot_spend_a_rounds_level_is_refused() -> None:
    class Levelless:
        name = "levelless"

    with pytest.raises(ConfigError, match="probe 'plugin' has no confidence_level parameter"):
        run_blocking(
            run_until_decided(
                [Audited("plugin", Levelless(), [], builtin_rubric("harmfulness"))],  # type: ignore[arg-type]
                Engine(CallableJudge(flipping(0.0)), RunStore(":memory:")),
                UntilDecided(max_calls=10),
            )
        )


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "500"
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_command_line_samples_until_decided_within_its_call_budget(tmp_path: Path) -> None:
    (tmp_path / "judges.py").write_text(
        "def level(request):\n"
        "    parts = request.field_map['response'].split('\\n\\n')\n"
        "    return max(float(p.rsplit(' ', 1)[1]) for p in parts)\n"
    )
    data = _write_items(tmp_path, 200)
    config = {"judge": "python:judges:level", "rubric": "harmfulness", "data": f"table:{data}",
              "probes": PROBE, "out": "out"}  # fmt: skip
    (tmp_path / "audit.yaml").write_text(json.dumps(config), encoding="utf-8")
    common = ("audit", "audit.yaml")
    done = _cli(*common, "--until-decided", "--max-calls", "5000", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "round 1: 20 items, " in done.stderr  # the default first round
    card = json.loads((tmp_path / "out" / "card.json").read_text(encoding="utf-8"))
    assert card["rounds"]["max_calls"] == 5000 and card["rounds"]["stopped"] == "decided"
    assert "Traceback" not in done.stderr
    unbudgeted = _cli(*common, "--until-decided", "--out", "free", cwd=tmp_path)
    assert unbudgeted.returncode == 0, unbudgeted.stderr
    card = json.loads((tmp_path / "free" / "card.json").read_text(encoding="utf-8"))
    assert card["rounds"]["max_calls"] is None and card["rounds"]["stopped"] == "decided"
    assert "of a budget of" not in (tmp_path / "free" / "card.md").read_text(encoding="utf-8")


def _lexicon_flipper(request: Request) -> str:
    """Refuses every item under the base wording; under variant lexicon-1 it complies on every
    third item in one run of two (a flip that reproduces as an alternation, not a change)."""
    k = int(request.field_map["prompt"].rsplit(" ", 1)[-1])
    variant = request.rubric.name.partition("/")[2]
    if variant == "lexicon-1" and k % 3 == 0:
        draw = hashlib.blake2b(request.key.encode(), digest_size=8).digest()
        return "false" if draw[0] % 2 else "true"
    return "true"


def test_rounds_add_reproduction_trials_while_the_trial_findings_are_undecided() -> None:
    from judgeprobe.probes.policy_invariance import PolicyInvarianceProbe

    rubric = builtin_rubric("refusal")
    items = [PointwiseItem(f"i{k}", f"request number {k}", f"response number {k}")
             for k in range(90)]  # fmt: skip
    share = Threshold(warn=0.5, fail=0.9)

    def prepare(result: Any) -> Any:
        return dataclasses.replace(
            result,
            findings=[
                f.with_threshold(share if f.name == "deterministic_share" else None)
                for f in result.findings
            ],
        )

    probe = PolicyInvarianceProbe(reproduction_trials=1, n_resamples=50)
    engine = Engine(CallableJudge(_lexicon_flipper, name="flipper"), RunStore(":memory:"),
                    EngineConfig(progress=False))  # fmt: skip
    options = UntilDecided(max_calls=100_000, start_items=20, growth=2.0, max_trials=3)
    seen: list[tuple[Round, list[Finding]]] = []
    outcome = run_blocking(
        run_until_decided(
            [Audited("policy", probe, items, rubric)],
            engine,
            options,
            prepare=prepare,
            on_round=lambda results, record: seen.append((record, results["policy"].findings)),
        )
    )
    trials = [record.trials["policy"] for record in outcome.rounds]
    assert trials[:3] == [1, 2, 3]  # x2 while undecided, capped at max_trials
    assert [record.items for record in outcome.rounds][:2] == [20, 40]
    assert "policy 2 trials" in outcome.rounds[1].line()
    # the trial count is chosen from the data, so round r spends 1/r of its share
    for record, findings in seen:
        gated = [f for f in findings if f.threshold is not None and f.estimate.defined]
        assert gated
        expected = 1 - look_alpha(0.05, record.round, looks=len(options.sizes(90))) / record.round
        assert gated[0].estimate.ci.level == pytest.approx(expected)
    assert "trials" in outcome.rounds[0].to_dict()
    stored = {"rounds": Sequential.to_dict(outcome)}
    sentence = rounds_sentence(card_rounds(stored) or {})
    assert (
        f"Reproduction trials of policy, round by round: {', '.join(map(str, trials))}." in sentence
    )


def test_a_run_cut_by_the_budget_in_its_first_round_says_budget_not_data(tmp_path: Path) -> None:
    """It said "stopped because the data is exhausted" with nothing decided."""
    cut, calls = _audit(tmp_path, "cut", flipping(0.10), max_calls=10_000, engine_max_calls=20)
    assert cut.rounds["stopped"] == "budget" and cut.rounds["cut_round"] == 1
    assert cut.rounds["stopped_because"] != "the data is exhausted"
    assert calls.calls == 20 and not cut.complete


def test_stopping_at_findings_runs_past_a_decided_fail_until_the_rest_are_decided(
    tmp_path: Path,
) -> None:
    at_verdict, verdict_calls = _audit(tmp_path, "verdict", flipping(0.4), max_calls=10_000)
    at_findings, findings_calls = _audit(
        tmp_path, "findings", flipping(0.4), max_calls=10_000, stop="findings"
    )
    assert at_verdict.rounds["stopped"] == "verdict"
    assert at_findings.rounds["stopped"] in ("decided", "data")
    assert len(at_findings.rounds["rounds"]) > len(at_verdict.rounds["rounds"])
    assert findings_calls.calls > verdict_calls.calls
    for outcome in (at_verdict, at_findings):
        assert outcome.results["repetition"].finding("decision_flip_excess").status == "fail"


def _lettered(letter: str, n: int) -> list[PointwiseItem]:
    return [
        PointwiseItem(f"{letter}{k}", f"prompt {letter} {k}", f"reply {k} level {level}")
        for k, level in enumerate(_levels(7, n))
    ]


def test_a_probe_whose_gated_findings_are_decided_is_not_run_in_later_rounds() -> None:
    """Two audited probes: one on items the judge never flips (decided pass on a short prefix),
    one on items whose repeats flip near the fail line (undecided for longer). Later rounds run
    the second only; the first keeps the results of the round that decided it."""
    rubric = builtin_rubric("harmfulness")
    steady, shaky = flipping(0.0), flipping(0.12, seed=3)

    def judge_fn(request: Request) -> float:
        shaky_item = request.field_map["prompt"].startswith("prompt b")
        return (shaky if shaky_item else steady)(request)

    probe = RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=100)
    audited = [
        Audited("steady", probe, _lettered("a", 300), rubric),
        Audited("shaky", probe, _lettered("b", 300), rubric),
    ]
    engine = Engine(CallableJudge(judge_fn, name="two"), RunStore(":memory:"), EngineConfig())
    outcome = run_blocking(
        run_until_decided(audited, engine, UntilDecided(start_items=25, stop="findings"))
    )
    ran = [record.audited for record in outcome.rounds]
    assert ran[0] == ["steady", "shaky"]
    assert ["shaky"] in ran[1:], ran  # the steady probe was decided and left out
    first_left_out = next(i for i, names in enumerate(ran) if names == ["shaky"])
    steady = outcome.results["steady"]
    assert {f.status for f in steady.findings if f.threshold is not None} == {"pass"}
    assert steady.finding("decision_flip_rate").estimate.counts["n"] < 300
    assert (
        outcome.rounds[first_left_out - 1].items
        == steady.finding("decision_flip_rate").estimate.counts["n"]
    )


def test_the_rounds_need_no_call_budget() -> None:
    assert UntilDecided().max_calls is None
    config = parse_config({"judge": "profanity", "probes": ["repetition"], "engine": {
        "until_decided": {}}})  # fmt: skip
    assert config.engine.until_decided is not None
    assert config.engine.engine_config(progress=False).budget.max_calls is None


def test_the_command_line_audits_in_rounds_by_default_and_at_a_fixed_size_when_asked(
    tmp_path: Path,
) -> None:
    (tmp_path / "judges.py").write_text(
        "def level(request):\n"
        "    parts = request.field_map['response'].split('\\n\\n')\n"
        "    return max(float(p.rsplit(' ', 1)[1]) for p in parts)\n"
    )
    data = _write_items(tmp_path, 200)
    common = ("audit", "--judge", "python:judges:level", "--rubric", "harmfulness", "--data",
              f"table:{data}", "--probes", "repetition")  # fmt: skip
    default = _cli(*common, "--out", "default", cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    assert "round 1: 20 items" in default.stderr
    card = json.loads((tmp_path / "default" / "card.json").read_text(encoding="utf-8"))
    assert card["rounds"]["stopped"] in ("decided", "verdict")
    assert card["rounds"]["rounds"][-1]["items"] < 200  # a sound judge decided on a prefix
    fixed = _cli(*common, "--fixed-size", "--out", "fixed", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "round 1" not in fixed.stderr
    card = json.loads((tmp_path / "fixed" / "card.json").read_text(encoding="utf-8"))
    assert "rounds" not in card
    config = {"judge": "python:judges:level", "rubric": "harmfulness", "data": f"table:{data}",
              "probes": ["repetition"], "out": "configured",
              "engine": {"fixed_size": True}}  # fmt: skip
    (tmp_path / "fixed.yaml").write_text(json.dumps(config), encoding="utf-8")
    configured = _cli("audit", "fixed.yaml", cwd=tmp_path)
    assert configured.returncode == 0, configured.stderr
    assert "round 1" not in configured.stderr


def test_an_audit_that_cannot_run_in_rounds_says_why_it_reads_every_item() -> None:
    from judgeprobe.audit.run import sampled_by_default

    base = {"judge": "profanity", "rubric": "toxicity", "probes": ["repetition"]}
    sampled, why = sampled_by_default(parse_config(base))
    assert why is None and sampled.engine.until_decided is not None
    for more, reason in (
        ({"engine": {"executor": "openai-batch"}}, "openai-batch executor"),
        ({"engine": {"fixed_size": True}}, "fixed_size is set"),
        ({"repair": ["chunked"]}, "repaired judges"),
    ):
        config, why = sampled_by_default(parse_config({**base, **more}))
        assert config.engine.until_decided is None
        assert why is not None and reason in why
    with pytest.raises(ConfigError, match="fixed_size and until_decided exclude each other"):
        parse_config({**base, "engine": {"fixed_size": True, "until_decided": {}}})


def test_a_probe_s_usage_counts_the_calls_of_every_round_it_ran(tmp_path: Path) -> None:
    outcome, counted = _audit(tmp_path, "out", flipping(0.05), max_calls=10_000, stop="findings")
    assert len(outcome.rounds["rounds"]) > 1
    usage = outcome.results["repetition"].usage
    assert usage["calls"] == counted.calls  # one probe: every call of the audit is its own
    assert usage["cached"] == max(0, usage["requests"] - usage["calls"])
