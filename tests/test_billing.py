"""The bill before the first call: what ``judgeprobe bill`` counts is what the audit then makes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe import CallableJudge, Request, plan_audit, run_audit
from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config
from judgeprobe.engine import RunStore
from judgeprobe.errors import ConfigError

FEW = {"n_resamples": 20}  # the bill does not depend on the analysis: keep it quick
SINGLE_STAGE = {
    "repetition": {"counts": [1, 2, 4], **FEW},
    "agreement": {"human_scale": [1, 5], **FEW},
}
MULTI_STAGE = {
    "cluster": {"ks": [2, 4], "per_cluster": 10, **FEW},
    "permutation": {"ks": [4], "n_tuples": 10, "sample_sizes": [5, 5, 5], **FEW},
    "bypass": {"ks": [2], "draws": 2, "false_alarm_items": 5, **FEW},
}
REPETITION = {"repetition": SINGLE_STAGE["repetition"]}
PRICING = {"input_per_mtok": 2.0, "output_per_mtok": 8.0}


def _harm(request: Request) -> float:
    """A deterministic judge: a 1-5 harm score from the response's length."""
    return float(1 + len(request.field_map["response"]) % 5)


def _judge() -> CallableJudge:
    return CallableJudge(_harm, name="length-harm")


def _config(out: Path, probes: dict[str, Any], **more: Any) -> Any:
    base = {"judge": "llama", "rubric": "harmfulness", "data": "demo", "out": str(out)}
    return parse_config({**base, "probes": probes, **more})


def test_planned_calls_are_the_calls_made_and_bound_those_of_multi_stage_probes(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, {**SINGLE_STAGE, **MULTI_STAGE})
    bill = plan_audit(config, judge=_judge())
    outcome = run_audit(config, judge=_judge(), progress=False, write_card=False)
    for row in bill.rows:
        made = outcome.results[row.probe].usage["calls"]
        if row.probe == "agreement":
            assert (row.calls, row.bound, row.stages) == (made, False, 1), row.probe
        else:
            # a concatenation probe asks for more reruns of its rerun null only when the first
            # ones differ or a rate needs the null: a later stage drawn from verdicts
            assert row.bound and row.stages >= 2 and row.bound_calls >= made, row.probe
    assert bill.total.bound_calls >= outcome.engine_totals["called"] > 0
    assert bill.total.stored == 0 and bill.total.bound


def test_multi_stage_probes_are_billed_their_expected_calls_within_5_percent_beside_the_bound(
    tmp_path: Path,
) -> None:
    # the judge's scores spread over the 1-5 scale, as the stand-in draws do: the later stages
    # then draw about what the expectation plans, and the bound is at least what they draw
    config = _config(tmp_path, MULTI_STAGE)
    bill = plan_audit(config, judge=_judge())
    outcome = run_audit(config, judge=_judge(), progress=False, write_card=False)
    for row in bill.rows:
        made = outcome.results[row.probe].usage["calls"]
        assert row.bound and row.bound_calls >= max(made, row.calls), row.probe
        assert row.bound_prompt_tokens >= row.prompt_tokens > 0, row.probe
    made = outcome.engine_totals["called"]
    # the stand-ins flip at random between inputs, so they ask for every rerun of the rerun
    # null, where this judge may stop after ten: within 10 %
    assert abs(bill.total.calls - made) <= 0.10 * made, (bill.total.calls, made)
    assert bill.total.bound_calls == sum(row.bound_calls for row in bill.rows)


def _rarely_harmful(request: Request) -> float:
    """A judge like the embedded one on the demo: harmless (1) but for one response in eight."""
    return 5.0 if len(request.field_map["response"]) % 8 == 0 else 1.0


def test_without_a_pilot_a_judge_that_rarely_flags_is_billed_far_from_what_it_draws(
    tmp_path: Path,
) -> None:
    # the stand-ins spread over the scale; this judge calls few items harmful, so the bypass
    # and cluster stages draw fewer concatenations than expected: only the bound holds
    judge = CallableJudge(_rarely_harmful, name="rarely-harmful")
    config = _config(tmp_path, MULTI_STAGE)
    bill = plan_audit(config, judge=judge)
    made = run_audit(config, judge=judge, progress=False, write_card=False).engine_totals["called"]
    assert bill.pilot is None
    assert abs(bill.total.calls - made) > 0.05 * made and bill.total.bound_calls >= made


def test_a_pilot_judges_the_first_stages_and_bills_the_later_ones_exactly(tmp_path: Path) -> None:
    judge = CallableJudge(_rarely_harmful, name="rarely-harmful")
    fresh = run_audit(
        _config(tmp_path / "fresh", MULTI_STAGE), judge=judge, progress=False, write_card=False
    )
    config = _config(tmp_path / "piloted", MULTI_STAGE, pricing=PRICING)
    bill = plan_audit(config, judge=judge, pilot=True, progress=False)
    assert bill.pilot is not None and bill.pilot.calls == 40  # the demo items, judged alone
    assert bill.pilot.cost is not None and bill.pilot.cost > 0
    # the bill is the whole audit's, exact up to the reruns of the rerun null that the
    # concatenations' verdicts decide (the stand-ins ask for every one): bound, per probe and
    # in total
    assert bill.total.bound_calls >= fresh.engine_totals["called"]
    for row in bill.rows:
        assert row.bound_calls >= fresh.results[row.probe].usage["calls"], row.probe
    # the audit then answers the pilot's requests from the store and makes the rest
    outcome = run_audit(config, judge=judge, progress=False, write_card=False)
    assert outcome.engine_totals["called"] == fresh.engine_totals["called"] - bill.pilot.calls
    assert outcome.engine_totals["cached"] >= bill.pilot.calls


def test_plan_pilot_prints_the_pilot_s_calls_and_stores_them(tmp_path: Path) -> None:
    probes = {"bypass": {"ks": [2], "draws": 1, "false_alarm_items": 2, **FEW}}
    config = str(_config_file(tmp_path, probes=probes))
    result = CliRunner().invoke(app, ["bill", config, "--pilot"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "pilot: 40 calls made" in result.stdout and "40 pilot calls made" in result.stdout
    # the concatenations are known once the first stage is; the reruns beyond the first ten
    # depend on their verdicts, so the bill stays a bound
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        assert len(list(store.iter_verdicts())) == 40
    again = json.loads(CliRunner().invoke(app, ["bill", config, "--pilot", "--json"]).stdout)
    assert again["pilot"]["calls"] == 0 and again["pilot"]["stored"] == 40


def test_reproduction_trials_are_expected_for_no_flip_and_bounded_for_every_flip(
    tmp_path: Path,
) -> None:
    # the judge scores the response alone, so no rubric wording flips a verdict: the audit runs
    # no reproduction trial, as the expectation plans; the bound reruns stand-in flips
    probes = {
        "policy_invariance": {
            "limit": 20, "human_scale": [1, 5], "human_threshold": 0.75,
            "reproduction_trials": 2, **FEW,
        }
    }  # fmt: skip
    config = _config(tmp_path, probes)
    row = plan_audit(config, judge=_judge()).rows[0]
    outcome = run_audit(config, judge=_judge(), progress=False, write_card=False)
    assert row.bound and row.calls == outcome.results["policy_invariance"].usage["calls"]
    assert row.bound_calls > row.calls


def test_a_second_plan_finds_every_request_in_the_store_and_bills_nothing(tmp_path: Path) -> None:
    config = _config(tmp_path, {**SINGLE_STAGE, "cluster": MULTI_STAGE["cluster"]})
    run_audit(config, judge=_judge(), progress=False, write_card=False)
    bill = plan_audit(config, judge=_judge())
    # the later stages are drawn from the stored verdicts: exact, no longer a bound
    assert not bill.total.bound
    assert bill.total.calls == 0 and bill.total.stored == bill.total.distinct > 0
    assert bill.total.seconds == 0.0 and bill.tokens_counted is None


def test_a_request_two_probes_share_is_billed_once_to_the_first(tmp_path: Path) -> None:
    # repetition's count 1 is the base score S(P, R) the cluster probe also asks for
    config = _config(tmp_path, {"repetition": {"counts": [1]}, **MULTI_STAGE})
    bill = plan_audit(config, judge=_judge())
    repetition, cluster = bill.rows[0], bill.rows[1]
    assert repetition.calls == repetition.distinct
    assert cluster.calls == cluster.distinct - repetition.distinct  # its base is repetition's
    assert bill.total.calls == sum(row.calls for row in bill.rows)
    assert bill.total.distinct < sum(row.distinct for row in bill.rows)


def test_the_cost_is_the_priced_tokens_and_is_unpriced_without_a_price_table(
    tmp_path: Path,
) -> None:
    priced = plan_audit(_config(tmp_path, SINGLE_STAGE, pricing=PRICING), judge=_judge())
    total = priced.total
    assert total.cost == pytest.approx(
        (total.prompt_tokens * 2.0 + total.completion_tokens * 8.0) / 1e6
    )
    assert priced.tokens_counted is False  # a plain function has no tokenizer: estimated
    assert total.prompt_tokens > 0 and total.completion_tokens == 0
    assert plan_audit(_config(tmp_path, SINGLE_STAGE), judge=_judge()).cost is None


def test_a_price_table_with_an_unknown_key_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"pricing.*input_per_token"):
        _config(tmp_path, SINGLE_STAGE, pricing={"input_per_token": 1.0})


def test_the_time_is_the_stored_mean_latency_over_the_concurrency_within_the_rate_limit(
    tmp_path: Path,
) -> None:
    first = _config(tmp_path, {"repetition": {"counts": [1]}})
    assert plan_audit(first, judge=_judge()).total.seconds is None  # nothing timed yet
    run_audit(first, judge=_judge(), progress=False, write_card=False)
    config = _config(
        tmp_path,
        {"repetition": {"counts": [1, 2]}},
        engine={"concurrency": 2, "requests_per_minute": 6},
    )
    bill = plan_audit(config, judge=_judge())
    assert bill.mean_latency_s is not None and bill.mean_latency_s > 0
    calls = bill.total.calls
    assert calls > 6
    # 6 calls a minute, the first minute's allowance at once
    assert bill.total.seconds == pytest.approx((calls - 6) / 6 * 60)
    assert "6 requests a minute" in bill.time_note


# -- the command line ---------------------------------------------------------------------------
def _config_file(tmp_path: Path, **more: Any) -> Path:
    path = tmp_path / "audit.yaml"
    body = {
        "judge": "profanity",
        "rubric": "toxicity",
        "data": "demo",
        "probes": {"repetition": {"counts": [1, 2]}},
        "out": str(tmp_path / "out"),
        **more,
    }
    path.write_text(json.dumps(body), encoding="utf-8")  # JSON is YAML
    return path


def test_plan_prints_the_bill_as_json_and_makes_no_call(tmp_path: Path) -> None:
    config = str(_config_file(tmp_path, pricing=PRICING))
    result = CliRunner().invoke(app, ["bill", config, "--json"])
    assert result.exit_code == 0, result.output
    bill = json.loads(result.stdout)
    # 40 demo items x 2 counts, and up to 40 + 40 reruns: the stand-ins ask for every one
    assert bill["total"]["calls"] == bill["total"]["distinct"] == 160
    assert bill["probes"][0]["probe"] == "repetition"
    assert bill["prompt_tokens"] == "estimated" and bill["total"]["cost"] > 0
    assert not (tmp_path / "out" / "run.sqlite").exists()


def test_audit_plan_prints_the_bill_table_and_makes_no_call(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["audit", str(_config_file(tmp_path)), "--bill"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"repetition\s*│\s*160\s*│\s*160\s*│\s*0\s*│\s*160", result.stdout)
    assert "prompt tokens: estimated" in result.stdout
    assert not (tmp_path / "out" / "run.sqlite").exists()


def test_plan_shows_a_multi_stage_probe_s_expectation_with_its_bound_beside_it(
    tmp_path: Path,
) -> None:
    probes = {"cluster": {"ks": [2], "per_cluster": 10, **FEW}}
    config = str(_config_file(tmp_path, probes=probes))
    table = CliRunner().invoke(app, ["bill", config], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert re.search(r"cluster\s*│.*│\s*\d+ \(bound \d+\)\s*│\s*\d+ \(bound \d+\)", table.stdout)
    assert "the figure is its expectation" in table.stdout
    row = json.loads(CliRunner().invoke(app, ["bill", config, "--json"]).stdout)["probes"][0]
    assert row["bound"] and row["bound_calls"] >= row["calls"] > 0


def test_confirm_over_without_a_terminal_refuses_naming_the_cost_and_yes(tmp_path: Path) -> None:
    config = str(_config_file(tmp_path, pricing=PRICING))
    result = CliRunner().invoke(app, ["audit", config, "--confirm-over", "0.000001"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)
    message = str(result.exception)
    cost = r"planned cost \d+\.\d{4} USD (\(expected; up to \d+ calls\) )?exceeds"
    assert re.search(cost + r" --confirm-over 1e-06", message)
    assert "--yes" in message
    assert not (tmp_path / "out" / "run.sqlite").exists()


def test_confirm_over_with_yes_or_under_the_amount_runs_the_audit(tmp_path: Path) -> None:
    config = str(_config_file(tmp_path, pricing=PRICING))
    result = CliRunner().invoke(
        app,
        ["audit", config, "--confirm-over", "0.000001", "--yes", "--fail-on", "never",
         "--fixed-size"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # 80 and the ten reruns of the rerun null, which match and ask for no more
    assert "judge calls: 90" in result.stdout
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        assert store.count() == 90
    again = CliRunner().invoke(app, ["audit", config, "--confirm-over", "1", "--fail-on", "never"])
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize(("answer", "runs"), [("y", True), ("n", False)])
def test_confirm_over_on_a_terminal_asks_and_runs_only_on_yes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, runs: bool
) -> None:
    monkeypatch.setattr("judgeprobe._cli.bill.on_terminal", lambda: True)
    config = str(_config_file(tmp_path, pricing=PRICING))
    result = CliRunner().invoke(
        app, ["audit", config, "--confirm-over", "0.000001", "--fail-on", "never"], input=answer
    )
    assert "exceeds --confirm-over 1e-06 (160 judge calls); run the audit?" in result.stdout
    assert (tmp_path / "out" / "run.sqlite").exists() is runs
    if not runs:
        assert isinstance(result.exception, ConfigError)
        assert "not confirmed, no judge call made" in str(result.exception)


def test_confirm_over_without_a_price_table_says_to_add_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["audit", str(_config_file(tmp_path)), "--confirm-over", "5"])
    assert isinstance(result.exception, ConfigError)
    assert "needs a price table" in str(result.exception)


@pytest.mark.llm
def test_the_llama_judge_s_prompt_tokens_are_counted_as_its_verdicts_report_them(
    tmp_path: Path,
) -> None:
    from judgeprobe.judges.llama import LlamaJudge

    config = _config(tmp_path, {"repetition": {"counts": [1]}}, limit=3)
    judge = LlamaJudge(n_ctx=1024)
    bill = plan_audit(config, judge=judge)
    outcome = run_audit(config, judge=judge, progress=False, write_card=False)
    assert bill.tokens_counted is True
    assert bill.total.calls == outcome.engine_totals["called"] == 6  # 3 items and 3 reruns
    assert bill.total.prompt_tokens == outcome.engine_totals["prompt_tokens"]
    assert bill.total.completion_tokens == outcome.engine_totals["completion_tokens"] == 6


def _long_system_rubric(tmp_path: Path) -> str:
    """A binary rubric whose system text (about 1,500 estimated tokens) opens every prompt."""
    path = tmp_path / "long.yaml"
    system = "Read the policy below before you decide. " * 150
    path.write_text(
        "name: long\nkind: binary\ninputs: [prompt, response]\nlabels: ['true', 'false']\n"
        "values: {'true': 1, 'false': 0}\n"
        "decision: {positive: harmful, positive_at: 1, negative: safe, negative_at: 0}\n"
        f"system: {json.dumps(system)}\n"
        "template: 'Is the response harmful?\\n{prompt}\\n{response}\\nAnswer true or false.'\n"
    )
    return str(path)


def test_a_prefix_every_prompt_shares_is_billed_at_the_cached_price_from_the_cache_minimum(
    tmp_path: Path,
) -> None:
    rubric = _long_system_rubric(tmp_path)
    cached_price = {**PRICING, "cached_input_per_mtok": 0.5}
    bill = plan_audit(
        _config(tmp_path, REPETITION, rubric=rubric, pricing=cached_price), judge=_judge()
    )
    repetition = next(row for row in bill.rows if row.probe == "repetition")
    # every call after the first shares the system text (> 1,024 tokens): whole 128-token blocks
    assert repetition.calls > 2
    assert repetition.cached_prompt_tokens >= (repetition.calls - 1) * 1024
    assert repetition.cached_prompt_tokens < repetition.prompt_tokens
    assert repetition.cached_prompt_tokens % 128 == 0
    total = bill.total
    assert total.cost == pytest.approx(
        (
            (total.prompt_tokens - total.cached_prompt_tokens) * 2.0
            + total.cached_prompt_tokens * 0.5
            + total.completion_tokens * 8.0
        )
        / 1e6
    )
    listed = plan_audit(
        _config(tmp_path, REPETITION, rubric=rubric, pricing=PRICING), judge=_judge()
    )
    assert listed.total.cached_prompt_tokens == total.cached_prompt_tokens  # counted, not priced
    assert listed.total.cost == pytest.approx(total.prompt_tokens * 2.0 / 1e6)
    unshared = plan_audit(
        _config(tmp_path, SINGLE_STAGE, pricing={**cached_price, "cache_min_tokens": 10**6}),
        judge=_judge(),
    )
    assert unshared.total.cached_prompt_tokens == 0


def test_the_built_in_rubrics_put_their_static_text_before_the_item() -> None:
    """A provider's prompt cache serves a shared opening: every built-in rubric that instructs
    a judge gives most of its instructions before the first field of the item."""
    import re as regex

    from judgeprobe.rubrics import builtin_rubric, builtin_rubric_names

    instructing = 0
    for name in builtin_rubric_names():
        template = builtin_rubric(name).template
        static = regex.sub(r"\{[a-z_]+\}", "", template)
        if len(static.strip()) < 20:
            continue  # a classifier's or reward model's input: the item alone
        instructing += 1
        opening = template.split("{", 1)[0]
        assert len(opening) >= len(static) / 2, name
    assert instructing >= 3


def test_an_audit_through_the_batch_api_is_billed_at_its_price_factor(tmp_path: Path) -> None:
    plain = plan_audit(_config(tmp_path, SINGLE_STAGE, pricing=PRICING), judge=_judge())
    batch = plan_audit(
        _config(tmp_path, SINGLE_STAGE, pricing=PRICING, engine={"executor": "openai-batch"}),
        judge=_judge(),
    )
    assert batch.total.cost == pytest.approx(plain.total.cost * 0.5)


def test_a_money_budget_stops_the_audit_before_it_costs_more(tmp_path: Path) -> None:
    """``--budget`` at the config's prices: a token budget at the dearer price, so the tokens
    spent never cost more than it; without a price table it is refused."""
    config = _config(
        tmp_path, REPETITION, pricing=PRICING, engine={"max_cost": 0.01, "fixed_size": True}
    )
    assert config.engine_config(progress=False).budget.max_tokens == 1250  # 0.01 USD at 8 / M
    outcome = run_audit(config, judge=_judge(), progress=False, write_card=False)
    assert not outcome.complete and "token budget of 1250" in str(outcome.reason)
    full = plan_audit(_config(tmp_path / "full", REPETITION, pricing=PRICING), judge=_judge())
    assert 0 < outcome.engine_totals["called"] < full.total.calls
    with pytest.raises(ConfigError, match=r"max_cost \(--budget\) is a budget in money"):
        _config(tmp_path, REPETITION, engine={"max_cost": 0.01})
    result = CliRunner().invoke(
        app, ["audit", str(_config_file(tmp_path)), "--budget", "0.01", "--bill"]
    )
    assert isinstance(result.exception, ConfigError)  # no price table in that config
