"""What an audit refuses and what it never scores: the checks between a config and a judge call.

Values from YAML and the command line (judge options, probe parameters, thresholds, budgets) are
checked before the run, each error one line naming where the value came from; scores a judge
returns are checked before any probe sees them.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from judgeprobe import CallableJudge
from judgeprobe.audit.config import load_config, parse_config, with_engine_options
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.engine import RunStore
from judgeprobe.errors import ConfigError

AUDIT = {
    "judge": "profanity",
    "rubric": "toxicity",
    "data": "demo",
    "probes": {"repetition": {"counts": [1, 2]}, "permutation": {"ks": [4], "n_tuples": 10}},
}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


# -- verdict validity ------------------------------------------------------------------------------
def test_an_audit_with_inf_nan_and_off_scale_scores_completes_and_never_scores_them(
    tmp_path: Path,
) -> None:
    wild = {0: math.inf, 1: math.nan, 2: 7.0}

    def fn(request: Request) -> float:
        return wild.get(len(request.render()) % 6, 2.0)

    config = parse_config(
        {
            **AUDIT,
            "judge": "python:unused:fn",
            "rubric": "harmfulness",
            "limit": 10,
            "out": str(tmp_path),
            "probes": {"repetition": {"counts": [1, 2]}},
        }
    )
    outcome = run_audit(config, judge=CallableJudge(fn, name="wild"), progress=False)
    assert outcome.complete and (tmp_path / "card.json").is_file()
    usage = json.loads((tmp_path / "card.json").read_text())["probes"][0]["usage"]
    assert usage["unparseable"] > 0 and usage["ok"] > 0
    assert usage["unparseable"] == outcome.engine_totals["unparseable"]
    base = outcome.results["repetition"].tables["base"]
    assert base["unparseable"] > 0 and base["scored"] + base["unparseable"] == base["items"]
    with RunStore(outcome.store_path) as store:
        verdicts = [verdict for _, verdict in store.iter_verdicts()]
    assert {v.error for v in verdicts if not v.ok} == {
        "score inf is not finite",
        "score nan is not finite",
        "score 7 outside the rubric's range [1, 5]",
    }
    assert all(v.score is not None and 1.0 <= v.score <= 5.0 for v in verdicts if v.ok)


# -- budgets on the command line -------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["0", "-5"])
def test_max_calls_below_one_on_the_command_line_is_an_error_as_in_a_config_file(
    bad: str, tmp_path: Path
) -> None:
    done = _cli(
        "audit", "--judge", "profanity", "--rubric", "toxicity", "--probes", "repetition",
        "--max-calls", bad, "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert f"--max-calls {bad}: Input should be greater than or equal to 1" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match=r"engine\.max_calls: Input should be greater than or"):
        parse_config({**AUDIT, "engine": {"max_calls": int(bad)}})


def test_command_line_budgets_replace_the_config_files_and_keep_its_other_engine_options() -> None:
    config = parse_config({**AUDIT, "engine": {"concurrency": 3, "max_calls": 100}})
    assert with_engine_options(config, max_calls=None, max_tokens=None) is config
    changed = with_engine_options(config, max_calls=1, max_tokens=None)
    assert (changed.engine.concurrency, changed.engine.max_calls) == (3, 1)
    assert config.engine.max_calls == 100
    with pytest.raises(ConfigError, match=r"^--max-tokens 0: Input should be greater than or"):
        with_engine_options(config, max_calls=None, max_tokens=0)


# -- judge option types ----------------------------------------------------------------------------
def test_a_judge_option_of_the_wrong_type_names_the_option_the_type_and_the_value(
    tmp_path: Path,
) -> None:
    (tmp_path / "kw.py").write_text("def judge(request):\n    return 1.0\n")
    done = _cli(
        "audit", "--judge", "python:kw:judge", "-J", "context_window=abc", "--data", "demo",
        "--rubric", "harmfulness", "--probes", "repetition", "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())  # the console wraps long lines
    assert "judge 'python:kw:judge', option 'context_window': 'abc' (str)" in message
    assert "it must be int | None" in message


def test_judge_options_are_checked_against_the_constructors_annotations() -> None:
    from judgeprobe.judges.registry import build_judge

    with pytest.raises(
        ConfigError,
        match=r"^judge 'transformers:some/model', option 'batch_size': 'many' \(str\): input "
        r"should be a valid integer.*; it must be int$",
    ):
        build_judge("transformers:some/model", batch_size="many")
    with pytest.raises(ConfigError, match=r"option 'pair_inputs': 'maybe' \(str\).*must be bool"):
        build_judge("transformers:some/model", pair_inputs="maybe")
    judge = build_judge("transformers:some/model", batch_size="8", label_index=1)
    assert (judge.batch_size, judge.label_index) == (8, 1)  # type: ignore[attr-defined]


# -- probe parameter types -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("probes", "message"),
    [
        (
            "{repetition: {counts: [1, two]}}",
            r"^audit\.yaml: probe 'repetition', parameter 'counts': item 1 'two' \(str\): input "
            r"should be a valid integer, unable to parse string as an integer; it must be "
            r"tuple\[int, \.\.\.\]$",
        ),
        (
            "{cluster: {ks: 4}}",
            r"^audit\.yaml: probe 'cluster', parameter 'ks': 4 \(int\): input should be a valid "
            r"tuple; it must be tuple\[int, \.\.\.\]$",
        ),
        (
            "{repetition: {join: sideways}}",
            r"parameter 'join': 'sideways' \(str\): input should be 'parallel' or 'dialogue'",
        ),
        ("{repetition: {counts: [0]}}", r"^audit\.yaml: probe 'repetition': counts must be"),
    ],
)
def test_a_probe_parameter_of_the_wrong_type_names_file_probe_parameter_type_and_value(
    probes: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "audit.yaml").write_text(
        f"judge: profanity\nrubric: toxicity\ndata: demo\nout: out\nprobes: {probes}\n"
    )
    monkeypatch.chdir(tmp_path)
    config = load_config("audit.yaml")
    with pytest.raises(ConfigError, match=message):
        run_audit(config, progress=False)


# -- thresholds ------------------------------------------------------------------------------------
def test_a_threshold_for_a_finding_no_selected_probe_reports_lists_the_findings() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^config: thresholds: no selected probe reports a finding 'flip_rat' \(probes: "
        r"repetition, permutation\); .*findings are: decision_flip_excess, decision_flip_rate, "
        r"failed_call_rate, first_part_match, ",
    ):
        parse_config({**AUDIT, "thresholds": {"flip_rat": {"fail": 0.1}}})
    # a finding of a probe that is not selected, or aimed at the wrong probe, is unknown too
    for key in ("position_consistency", "repetition.positional_bias", "cluster.class_flip_rate"):
        with pytest.raises(ConfigError, match=f"reports a finding '{key}'"):
            parse_config({**AUDIT, "thresholds": {key: {"fail": 0.1}}})


def test_thresholds_by_finding_or_probe_and_finding_apply_to_that_finding(tmp_path: Path) -> None:
    config = parse_config(
        {
            **AUDIT,
            "limit": 8,
            "out": str(tmp_path),
            "probes": {"repetition": {"counts": [1, 2]}},
            "thresholds": {
                "mean_shift": {"warn": 10.0},
                "repetition.decision_flip_rate": {"fail": 2.0},
            },
        }
    )
    outcome = run_audit(config, progress=False)
    findings = outcome.results["repetition"].findings
    assert {f.threshold.warn for f in findings if f.name == "mean_shift"} == {10.0}  # type: ignore[union-attr]
    assert {f.threshold.fail for f in findings if f.name == "decision_flip_rate"} == {2.0}  # type: ignore[union-attr]


def test_every_probe_declares_the_names_of_the_findings_it_reports(tmp_path: Path) -> None:
    from judgeprobe.audit.demo import DEMO_PROBES
    from judgeprobe.probes import get_probe_class, probe_names
    from judgeprobe.transforms.bias_edits import BIAS_EDITS

    def fn(request: Request) -> float | str:
        if request.rubric.kind == "generation":  # self_preference's own answers
            return f"an answer of {len(request.render())} characters"
        if request.rubric.kind == "pairwise":
            return "AB"[len(request.render()) % 2]
        return float(len(request.render()) % 5 + 1)

    falsifier = (
        Path(__file__).parents[1] / "benchmarks/falsifiers/length_confound.yaml"
    ).read_text()
    probes = {
        **DEMO_PROBES,
        "policy_invariance": {**DEMO_PROBES["policy_invariance"], "reproduction_trials": 1},
        "policy_invariance_pairwise": {"rubric": "preference", "data": "demo:pairwise"},
        "length_null": {**DEMO_PROBES["length_null"], "falsifier": falsifier},
        **{name: {} for name in BIAS_EDITS},
        **{
            f"{name}_pairwise": {"rubric": "preference", "data": "demo:pairwise"}
            for name in BIAS_EDITS
        },
        "self_preference": {"rubric": "preference", "data": "demo:pairwise"},
        "sensitivity": {},
        "sensitivity_pairwise": {"rubric": "preference", "data": "demo:pairwise"},
        "master_key": {},
        "forged_verdict": {},
        "smuggling": {},
        "master_key_pairwise": {"rubric": "preference", "data": "demo:pairwise"},
        "forged_verdict_pairwise": {"rubric": "preference", "data": "demo:pairwise"},
    }
    assert set(probes) == set(probe_names())
    config = parse_config(
        {"judge": "python:unused:fn", "data": "demo", "out": str(tmp_path), "probes": probes}
    )
    outcome = run_audit(
        config, judge=CallableJudge(fn, name="lengths", generates=True), progress=False
    )
    for name, result in outcome.results.items():
        declared = get_probe_class(name).finding_names
        reported = {f.name for f in result.findings}
        assert declared is not None and reported and reported <= set(declared), name
    assert "falsifier" in {f.name for f in outcome.results["length_null"].findings}


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"fail": float("nan")}, "fail: Input should be a finite number"),
        ({"warn": float("inf")}, "warn: Input should be a finite number"),
        ({"warn": 0.3, "fail": 0.1}, "warn (0.3) is above fail (0.1)"),
        ({"warn": 0.1, "fail": 0.3, "higher_is_worse": False}, "warn (0.1) is below fail (0.3)"),
    ],
)
def test_a_threshold_that_is_not_finite_or_out_of_order_is_refused(
    option: dict[str, object], message: str
) -> None:
    """NaN or inf crashed card writing after every call was made; a warn line beyond the fail
    line could never warn."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config({**AUDIT, "thresholds": {"decision_flip_rate": option}})


def test_a_negative_line_for_a_distance_is_refused() -> None:
    with pytest.raises(ConfigError, match="a distance is never negative"):
        parse_config({**AUDIT, "thresholds": {"wasserstein_to_l1": {"fail": -0.1}}})
