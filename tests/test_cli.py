"""The CLI and the audit: one command audits a judge, a rerun costs nothing, CI can gate."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import data_root
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.engine import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.probes import probe_names
from judgeprobe.report import build_card


def _cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=None if env is None else {**os.environ, **env},
    )


TERMINAL = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "400"}
"""Makes rich print to a pipe as it would to a colour terminal (styles, hyperlinks), on one line."""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
MARKUP = ["[/]", "[link=http://x]click me[/link]", "[bold red]loud[/]"]


AUDIT = {
    "judge": "profanity",
    "rubric": "toxicity",
    "data": "demo",
    "probes": {"repetition": {"counts": [1, 2]}, "permutation": {"ks": [4], "n_tuples": 10}},
}


def test_a_config_with_an_unknown_key_is_rejected_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="judg_options"):
        parse_config({**AUDIT, "judg_options": {}})


def test_an_unknown_probe_parameter_is_rejected_naming_probe_and_parameter(tmp_path: Path) -> None:
    config = parse_config(
        {**AUDIT, "out": str(tmp_path), "probes": {"repetition": {"countz": [1]}}}
    )
    with pytest.raises(ConfigError, match=r"probes\.repetition.*countz"):
        run_audit(config, progress=False)


def test_a_pairwise_probe_on_pointwise_data_says_what_to_give_it(tmp_path: Path) -> None:
    config = parse_config({**AUDIT, "out": str(tmp_path), "probes": {"position": {}}})
    with pytest.raises(ConfigError, match="pairwise"):
        run_audit(config, progress=False)


def test_an_audit_writes_the_card_and_a_rerun_makes_no_judge_call(tmp_path: Path) -> None:
    config = parse_config({**AUDIT, "out": str(tmp_path)})
    first = run_audit(config, progress=False)
    assert first.complete
    assert first.engine_totals["called"] > 0
    assert {"json", "md", "html"} <= set(first.card_paths)
    second = run_audit(config, progress=False)
    assert second.engine_totals["called"] == 0
    assert second.engine_totals["cached"] == second.engine_totals["distinct"]
    card = build_card(second.store_path)
    assert {p["name"] for p in card["probes"]} == {"repetition", "permutation"}


def test_the_base_score_is_one_request_shared_by_every_probe(tmp_path: Path) -> None:
    outcome = run_audit(parse_config({**AUDIT, "out": str(tmp_path)}), progress=False)
    with RunStore(outcome.store_path) as store:
        distinct_requests = store.count()
    assert outcome.engine_totals["called"] == distinct_requests
    # the permutation probe ran second: its 40 base scores came from the store
    assert outcome.results["permutation"].usage["cached"] >= 40


def test_a_budget_stops_cleanly_and_the_next_run_resumes(tmp_path: Path) -> None:
    limited = parse_config({**AUDIT, "out": str(tmp_path), "engine": {"max_calls": 30}})
    stopped = run_audit(limited, progress=False)
    assert not stopped.complete
    assert "budget" in (stopped.reason or "")
    resumed = run_audit(parse_config({**AUDIT, "out": str(tmp_path)}), progress=False)
    assert resumed.complete
    assert resumed.engine_totals["cached"] >= 30


def test_cli_audit_card_and_score_work_end_to_end(tmp_path: Path) -> None:
    audit = _cli(
        "audit", "--judge", "profanity", "--rubric", "toxicity", "--data", "demo",
        "--probes", "repetition", "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    # no headline finding of this judge on the demo data fails, so the default gate lets it
    # through; half are undecided at 12 items, so the card does not pass
    assert audit.returncode == 0, audit.stderr
    written = json.loads((tmp_path / "out" / "card.json").read_text())
    gated = [f for p in written["probes"] for f in p["findings"] if f["headline"]]
    assert written["summary"]["headline"].startswith(f"INCONCLUSIVE: of {len(gated)} findings")
    assert "card (html)" in audit.stdout
    card = _cli("card", "out/run.sqlite", "--out", "again", cwd=tmp_path)
    assert card.returncode == 0, card.stderr
    assert json.loads((tmp_path / "again" / "card.json").read_text())["probes"]
    scored = _cli(
        "score", "--judge", "profanity", "--rubric", "toxicity", "--data", "demo",
        "--store", "s.sqlite", "-o", "v.csv", cwd=tmp_path,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert len((tmp_path / "v.csv").read_text().splitlines()) == 41


DATA = data_root()
MINI_HATE = DATA / "pyrit_scorer_evals" / "harm" / "mini_hate_speech.csv"


def test_score_on_labelled_data_prints_the_agreement_with_cis_and_the_best_baseline(
    tmp_path: Path,
) -> None:
    if not MINI_HATE.exists():
        pytest.skip(f"shared data not found: {MINI_HATE} (set JUDGEPROBE_DATA to the data folder)")
    args = ["score", "--judge", "profanity", "--rubric", "toxicity", "--data", str(MINI_HATE)]
    done = _cli(*args, "--store", "s.sqlite", cwd=tmp_path, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    assert "agreement with human labels: 15 items, 15 with a human decision (trial 0)" in shown
    for metric in ("accuracy", "balanced_accuracy", "kappa", "mcc", "f1", "mae", "rmse"):
        assert re.search(rf"│ {metric} +│", shown), metric
    # the 15 items share 8 prompts: fewer clusters than a bootstrap can resample, so the
    # interval is exact over the clusters and n counts them
    assert re.search(r"│ accuracy +│ 0\.600 +│ 95% \[0\.\d{3}, 0\.\d{3}\] +│ 8 +│", shown)
    assert re.search(r"│ spearman +│ -?0\.\d{3} ", shown)
    assert "best trivial baseline: response_length" in shown


def test_score_on_unlabelled_data_prints_no_agreement(tmp_path: Path) -> None:
    (tmp_path / "plain.csv").write_text("prompt,response\nhi,there\n", encoding="utf-8")
    args = ["score", "--judge", "profanity", "--rubric", "toxicity", "--data", "plain.csv"]
    done = _cli(*args, "--store", "s.sqlite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "agreement with human labels" not in done.stdout


def test_score_refuses_a_verdicts_file_it_cannot_write_before_judging(tmp_path: Path) -> None:
    """``score -o v.txt`` was refused only after every item was judged."""
    (tmp_path / "plain.csv").write_text("prompt,response\nhi,there\n", encoding="utf-8")
    args = ["score", "--judge", "profanity", "--rubric", "toxicity", "--data", "plain.csv"]
    done = _cli(*args, "--store", "s.sqlite", "-o", "v.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot write v.txt: use a .csv or .jsonl file name" in done.stderr
    assert not (tmp_path / "s.sqlite").exists()  # no store opened, no call made


def test_an_agreement_audit_of_a_probability_judge_draws_its_reliability_diagram(
    tmp_path: Path,
) -> None:
    if not MINI_HATE.exists():
        pytest.skip(f"shared data not found: {MINI_HATE} (set JUDGEPROBE_DATA to the data folder)")
    audit = _cli(
        "audit", "--judge", "profanity", "--rubric", "toxicity", "--data", str(MINI_HATE),
        "--probes", "agreement", "--out", "out", "--fail-on", "never", cwd=tmp_path,
    )  # fmt: skip
    assert audit.returncode == 0, audit.stderr
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    (agreement,) = [p for p in card["probes"] if p["name"] == "agreement"]
    (figure,) = [f for f in agreement["figures"] if f["name"] == "agreement_reliability"]
    assert (tmp_path / "out" / f"{figure['file']}.png").read_bytes().startswith(b"\x89PNG")


def test_cli_user_errors_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    result = _cli("audit", "--judge", "nonsense", "--probes", "repetition", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown judge" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("column", MARKUP)
def test_data_text_in_an_error_is_printed_as_written_never_as_terminal_markup(
    column: str, tmp_path: Path
) -> None:
    (tmp_path / "hostile.csv").write_text(f"prompt,{column}\nhi,there\n", encoding="utf-8")
    args = ["score", "--judge", "profanity", "--rubric", "toxicity", "--data", "hostile.csv"]
    done = _cli(*args, "--store", "s.sqlite", cwd=tmp_path, env=TERMINAL)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    shown = ANSI.sub("", done.stderr)
    assert "missing required column for 'response'" in shown
    assert f"available columns: 'prompt', {column!r}" in shown
    assert "\x1b]8;" not in done.stderr  # no live terminal hyperlink


def test_data_and_file_names_in_the_score_summary_are_printed_as_written(tmp_path: Path) -> None:
    name = "[bold]x[link=x]y"
    (tmp_path / f"{name}.csv").write_text("prompt,response\nhi,there\nhow,now\n", encoding="utf-8")
    args = ["score", "--judge", "profanity", "--rubric", "toxicity", "--data", f"{name}.csv"]
    done = _cli(*args, "--store", "s.sqlite", "-o", f"{name}.jsonl", cwd=tmp_path, env=TERMINAL)
    assert done.returncode == 0, done.stderr
    shown = " ".join(ANSI.sub("", done.stdout).split())  # the title wraps to the table's width
    assert f"2 items of {name} x 1 trial(s)" in shown
    assert f"verdicts: {name}.jsonl" in shown
    assert "\x1b]8;" not in done.stdout


def test_fail_on_warn_turns_a_warning_into_a_failing_exit_code(tmp_path: Path) -> None:
    config = {**AUDIT, "out": "out", "thresholds": {"decision_flip_rate": {"warn": -1.0}}}
    (tmp_path / "audit.yaml").write_text(json.dumps(config))
    never = _cli("audit", "audit.yaml", "--fail-on", "never", cwd=tmp_path)
    assert never.returncode == 0, never.stderr
    warn = _cli("audit", "audit.yaml", "--fail-on", "warn", cwd=tmp_path)
    assert warn.returncode == 1, warn.stdout


def test_an_api_key_in_the_environment_never_reaches_the_run_store_or_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    config = parse_config(
        {**AUDIT, "out": str(tmp_path), "probes": {"repetition": {"counts": [1]}}}
    )
    outcome = run_audit(config, command=f"judgeprobe audit --header 'Bearer {secret}'")
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("run.sqlite*"))
    assert secret.encode() not in stored
    for path in outcome.card_paths.values():
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8")
    assert "[redacted]" in (tmp_path / "card.json").read_text(encoding="utf-8")


def test_judge_options_on_the_command_line_reach_the_judge(tmp_path: Path) -> None:
    (tmp_path / "keyword_judge.py").write_text(
        "def judge(request):\n    return 5.0 if 'bomb' in request.render() else 1.0\n"
    )
    args = ["audit", "--judge", "python:keyword_judge:judge", "-J", "name=kw", "-J", "version=7"]
    args += ["--data", "demo", "--rubric", "harmfulness", "--probes", "repetition"]
    done = _cli(*args, "--limit", "5", "--out", "out", "--fail-on", "never", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["tested"]["judge"]["description"] == {
        "backend": "callable",
        "name": "kw",
        "version": "7",  # YAML reads a number; the judge's version is a string
        "params": {},
    }


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("bogus=1", "judge 'profanity' takes no option 'bogus'; its options: none"),
        ("novalue", "write KEY=VALUE"),
    ],
)
def test_a_judge_option_the_judge_does_not_take_is_an_error_naming_it(
    option: str, message: str, tmp_path: Path
) -> None:
    done = _cli("score", "--judge", "profanity", "--rubric", "toxicity", "-J", option, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_mistyped_transformers_option_lists_the_options_it_takes() -> None:
    from judgeprobe.judges.registry import build_judge

    with pytest.raises(ConfigError, match=r"no option 'pair_input'; its options: .*pair_inputs"):
        build_judge("transformers:some/model", pair_input=False)
    assert build_judge("transformers:some/model", pair_inputs=False).pair_inputs is False  # type: ignore[attr-defined]


def test_rubric_and_data_paths_in_a_config_file_are_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgeprobe.audit.config import load_config
    from judgeprobe.rubrics import builtin_rubric, get_rubric

    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "mine.yaml").write_text(builtin_rubric("toxicity").model_dump_json())
    config_file = folder / "audit.yaml"
    config_file.write_text(
        "judge: profanity\nrubric: mine.yaml\ndata: demo\n"
        "probes:\n  repetition: {rubric: mine.yaml}\n  permutation: {rubric: toxicity}\n"
    )
    monkeypatch.chdir(tmp_path)
    config = load_config("configs/audit.yaml")
    assert config.rubric == str(Path("configs") / "mine.yaml")
    assert get_rubric(config.rubric).name == "toxicity"
    assert config.probes["repetition"]["rubric"] == config.rubric
    assert (config.data, config.probes["permutation"]["rubric"]) == ("demo", "toxicity")  # names
    # The command line's paths are the working directory's.
    assert load_config("configs/audit.yaml", rubric="mine.yaml").rubric == "mine.yaml"


def test_the_documented_reward_model_audit_config_is_valid() -> None:
    from judgeprobe.audit.config import load_config
    from judgeprobe.rubrics import get_rubric

    example = Path(__file__).parents[1] / "docs" / "examples" / "reward-audit.yaml"
    config = load_config(example)
    assert config.judge.startswith("transformers:OpenAssistant/")
    assert config.judge_options == {"pair_inputs": False, "context_window": 1024}
    rubric = get_rubric(config.rubric)
    assert (rubric.decide(-1.5), rubric.decide(-1.0), rubric.decide(0.0)) == (
        "unsafe",
        "unsafe",
        "safe",
    )
    assert rubric.render({"prompt": "p", "response": "r"}).startswith("<|prompter|>p<|endoftext|>")
    assert set(config.probes) == {"repetition", "cluster", "permutation"}


def _one_line(text: str) -> str:
    """Terminal output with its soft line breaks undone."""
    return " ".join(text.split())


BAD_ROWS = "id,prompt,response,label\n1,a,fine,0\n2,b,ok,maybe\n3,c,good,0\n4,d,e,f,1\n5,e,nice,\n"


def test_rows_left_out_of_the_data_are_kept_in_the_store_and_listed_in_the_card(
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.csv").write_text(BAD_ROWS)
    config = {
        "judge": "profanity",
        "rubric": "toxicity",
        "data": "bad.csv",
        "data_options": {"on_error": "skip"},
        "probes": {"repetition": {"counts": [1, 2]}},
        "out": "out",
    }
    (tmp_path / "audit.yaml").write_text(json.dumps(config))
    done = _cli("audit", "audit.yaml", "--fail-on", "never", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "data rows left out: 3 (listed in the card, with why)" in _one_line(done.stderr)
    expected = [
        {"row": 2, "column": "label", "reason": "label 'maybe' is not a number (line 3)"},
        {"row": 4, "column": None, "reason": "has 5 fields but the header has 4 (line 5)"},
        {"row": 5, "column": "label", "reason": "missing human label (line 6)"},
    ]
    with RunStore(tmp_path / "out" / "run.sqlite") as store:
        run = store.latest_run()
        assert run is not None
        stored = store.skipped_rows(run[0])
    assert stored == [{"dataset": "bad", "path": "bad.csv", **row} for row in expected]
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["tested"]["data"]["skipped"] == 3
    assert card["tested"]["skipped_rows"] == {"count": 3, "rows": stored, "left_out": 0}
    markdown = (tmp_path / "out" / "card-appendix.md").read_text()
    assert "### Rows left out of the data" in markdown
    assert "3 data rows could not be loaded and were left out:" in markdown
    assert r"| bad | bad.csv | 4 |  | has 5 fields but the header has 4 \(line 5\) |" in markdown
    html = (tmp_path / "out" / "card.html").read_text()
    assert '<table class="data" id="skipped-rows">' in html
    assert "missing human label (line 6)" in html


def test_a_misspelt_data_option_in_a_config_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text(BAD_ROWS)
    config = {**AUDIT, "data": "bad.csv", "data_options": {"on_eror": "skip"}, "out": "out"}
    (tmp_path / "audit.yaml").write_text(json.dumps(config))
    done = _cli("audit", "audit.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        "error: data option 'on_eror' is not one the table loader takes; did you mean "
        "'on_error'? it takes: columns, kind, loader, name, on_error, root"
    ) in _one_line(done.stderr)


def test_the_loader_flag_picks_the_loader_of_the_data_path(tmp_path: Path) -> None:
    (tmp_path / "looks.csv").write_text(
        "objective,assistant_response,human_score,prompt,response\no,a,1,p,r\n"
    )
    args = ["score", "--judge", "profanity", "--rubric", "toxicity", "--data", "looks.csv"]
    as_table = _cli(*args, "--loader", "table", "--store", "s.sqlite", cwd=tmp_path)
    assert as_table.returncode == 0, as_table.stderr
    assert "1 items of looks x 1 trial(s)" in _one_line(as_table.stdout)
    typo = _cli(
        "audit", "--judge", "profanity", "--rubric", "toxicity", "--data", "looks.csv",
        "--loader", "tabel", "--probes", "repetition", "--out", "out", cwd=tmp_path,
        env={"COLUMNS": "400"},
    )  # fmt: skip
    assert typo.returncode == 2  # a usage error naming the loaders, before any work
    assert "'tabel' is not one of 'table', 'pyrit'," in _one_line(typo.stderr)


# -- the default probe set -------------------------------------------------------------------------
def test_an_audit_without_probes_runs_those_that_apply_and_lists_the_others_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from judgeprobe._cli.main import app

    monkeypatch.chdir(tmp_path)
    args = ["--judge", "profanity", "--rubric", "toxicity", "--data", "demo"]
    done = CliRunner().invoke(
        app, ["audit", *args, "--limit", "10", "--fail-on", "never", "--out", "out"]
    )
    assert done.exit_code == 0, done.output
    card = json.loads((tmp_path / "out" / "card.json").read_text(encoding="utf-8"))
    ran = {p["name"] for p in card["probes"]}
    left_out = card["tested"]["not_applicable"]
    assert {"repetition", "cluster", "permutation", "bypass", "agreement", "verbosity"} <= ran
    assert not ran & set(left_out)
    assert ran | set(left_out) == set(probe_names())
    assert left_out["position"] == (
        "probe 'position' needs a pairwise rubric, not the continuous rubric 'toxicity'"
    )
    assert "rubric 'toxicity' gives none" in left_out["policy_invariance"]
    appendix = (tmp_path / "out" / "card-appendix.md").read_text(encoding="utf-8")
    assert "- position: probe 'position' needs a pairwise rubric" in appendix


def test_the_probes_command_says_which_probes_apply_and_why_the_others_do_not() -> None:
    from typer.testing import CliRunner

    from judgeprobe._cli.main import app

    args = ["probes", "--judge", "profanity", "--rubric", "toxicity", "--data", "demo"]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    rows = {line.split("│")[1].strip(): line for line in done.output.splitlines() if "│" in line}
    assert "│ yes" in rows["repetition"] and "│ yes" in rows["agreement"]
    assert "│ no" in rows["position"]
    assert "needs a pairwise rubric, not the continuous rubric 'toxicity'" in rows["position"]
    assert "gives none" in rows["policy_invariance"]
    assert (
        f"of {len(probe_names())} probes apply to judge profanity, rubric toxicity" in done.output
    )
    listing = CliRunner().invoke(app, ["probes"], env={"COLUMNS": "400"})
    assert listing.exit_code == 0 and "rubric kinds" in listing.output


BROKEN_ANALYSIS = """
import sys
from judgeprobe._cli.main import main
from judgeprobe.probes import get_probe_class

def broken(self, plan, verdicts):
    raise ValueError("each sample must contain two or more observations")

get_probe_class("repetition").analyze = broken
sys.argv = ["judgeprobe", *sys.argv[1:]]
main()
"""


def test_an_exception_in_a_probes_analysis_exits_2_in_one_line_never_the_gates_1(
    tmp_path: Path,
) -> None:
    """Exit 1 says the card failed its gate; a probe that breaks while analysing says so in one
    line and exits 2, so a crash never passes for a failing judge."""
    args = ["--judge", "profanity", "--rubric", "toxicity", "--data", "demo", "--limit", "4"]
    result = subprocess.run(
        [sys.executable, "-c", BROKEN_ANALYSIS, "audit", *args, "--probes", "repetition"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "probe 'repetition' could not analyse its verdicts (ValueError: each sample" in (
        " ".join(result.stderr.split())
    )
