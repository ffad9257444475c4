"""The command line's surface: the same names everywhere, the choices an option takes listed in
its help, the old spellings still read (with a warning), the listings read from the registries,
and the config built once from the file and the options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest
from typer.testing import CliRunner

from judgeprobe import CallableJudge, Engine, EngineConfig, RunStore, builtin_rubric
from judgeprobe._cli import choices
from judgeprobe._cli.choices import values
from judgeprobe._cli.main import app
from judgeprobe._cli.options import build_config
from judgeprobe._version import __version__
from judgeprobe.audit.config import AuditConfig
from judgeprobe.data import load_dataset
from judgeprobe.data.registry import LOADERS
from judgeprobe.engine.executors import EXECUTORS
from judgeprobe.errors import ConfigError
from judgeprobe.judges.repairs import REPAIRS
from judgeprobe.probes import RepetitionProbe

WIDE = {"COLUMNS": "400"}
"""A terminal wide enough that help and tables print each entry on one line."""

AUDIT = ["--judge", "profanity", "--rubric", "toxicity", "--probes", "repetition"]


def _run(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env=WIDE)


# -- choices -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "option", "choices"),
    [
        ("audit", "--fail-on", get_args(AuditConfig.model_fields["fail_on"].annotation)),
        ("audit", "--executor", tuple(EXECUTORS)),
        ("audit", "--loader", tuple(LOADERS)),
        ("score", "--loader", tuple(LOADERS)),
        ("bill", "--loader", tuple(LOADERS)),
        ("card", "--fail-on", ("warn", "fail", "inconclusive", "never")),
        ("demo", "--fail-on", ("warn", "fail", "inconclusive", "never")),
        ("compare", "--fail-on", ("worse", "never")),
    ],
)
def test_help_lists_the_values_an_option_takes_and_another_value_is_a_usage_error(
    command: str, option: str, choices: tuple[str, ...]
) -> None:
    shown = CliRunner().invoke(app, [command, "--help"], env=WIDE)
    assert shown.exit_code == 0
    (line,) = [line for line in shown.output.splitlines() if f" {option} " in line]
    assert f"<{'|'.join(choices)}>" in line
    wrong = CliRunner().invoke(app, [command, option, "nonsense", "x"], env=WIDE)
    assert wrong.exit_code == 2
    assert f"'nonsense' is not one of {', '.join(map(repr, choices))}" in wrong.output


def test_the_gates_fail_on_takes_are_the_configs_own() -> None:
    # one definition: a new gate in the config's FailOn is a new choice on the command line
    assert choices.FailOn == AuditConfig.model_fields["fail_on"].annotation
    assert values(choices.FailOn) == ("warn", "fail", "inconclusive", "never")
    with pytest.raises(
        ConfigError, match=r"^--fail-on 'sometimes': Input should be 'warn', 'fail'"
    ):
        build_config(None, probes="repetition", fail_on="sometimes")


# -- names: bill, budgets, output folders -------------------------------------------------------
def test_bill_prints_the_bill_and_plan_is_its_deprecated_alias(tmp_path: Path) -> None:
    args = [*AUDIT, "--limit", "4", "--out", str(tmp_path / "out"), "--json"]
    bill = CliRunner().invoke(app, ["bill", *args])
    assert bill.exit_code == 0, bill.output
    assert json.loads(bill.stdout)["total"]["calls"] > 0
    assert "deprecated" not in bill.stderr
    plan = CliRunner().invoke(app, ["plan", *args])
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.stdout) == json.loads(bill.stdout)
    assert "warning: `judgeprobe plan` is deprecated; use `judgeprobe bill`" in plan.stderr
    assert " plan " not in CliRunner().invoke(app, ["--help"], env=WIDE).output  # hidden


def test_audit_plan_is_the_deprecated_spelling_of_audit_bill(tmp_path: Path) -> None:
    args = ["audit", *AUDIT, "--limit", "4", "--out", str(tmp_path / "out")]
    new = CliRunner().invoke(app, [*args, "--bill"], env=WIDE)
    old = CliRunner().invoke(app, [*args, "--plan"], env=WIDE)
    assert new.exit_code == old.exit_code == 0, old.output
    assert "the bill of the audit" in new.stdout and new.stdout == old.stdout
    assert "warning: --plan is deprecated; use --bill" in old.stderr
    assert not (tmp_path / "out" / "card.json").exists()  # the bill makes no call


def test_max_calls_is_the_one_call_budget_and_call_budget_its_deprecated_spelling() -> None:
    rounds = build_config(None, probes="repetition", engine={"max_calls": 90}, until_decided=True)
    assert rounds.engine.max_calls == 90
    assert rounds.engine.until_decided is not None
    assert rounds.engine.until_decided.max_calls == 90
    unbudgeted = build_config(None, probes="repetition", until_decided=True)
    assert unbudgeted.engine.until_decided is not None  # the data is the only budget
    assert unbudgeted.engine.until_decided.max_calls is None
    old = CliRunner().invoke(app, ["audit", *AUDIT, "--call-budget", "0", "--bill"])
    assert "warning: --call-budget is deprecated; use --max-calls" in old.stderr
    assert isinstance(old.exception, ConfigError)  # the console entry point: one line, exit 2
    assert str(old.exception) == "--max-calls 0: Input should be greater than or equal to 1"


def test_every_output_folder_is_out_and_every_run_store_is_store() -> None:
    options = {
        "audit": {"--out"},
        "card": {"--out"},
        "compare": {"--out"},
        "demo": {"--out"},
        "bill": {"--out"},
        "score": {"--store", "--output"},  # --output: the one verdicts file
    }
    for command, expected in options.items():
        shown = CliRunner().invoke(app, [command, "--help"], env=WIDE).output
        named = {n for n in ("--out", "--output", "--store") if f" {n} " in shown}
        assert named == expected, command
    export = CliRunner().invoke(app, ["batch", "export", "--help"], env=WIDE).output
    assert " --out " in export and " --store " in export and " --output " not in export
    merged = CliRunner().invoke(app, ["store", "merge", "--help"], env=WIDE).output
    assert " --output " in merged  # one file written


# -- version and listings -----------------------------------------------------------------------
def test_version_prints_the_package_version() -> None:
    done = CliRunner().invoke(app, ["--version"])
    assert done.exit_code == 0
    assert done.stdout.strip() == f"judgeprobe {__version__}"


def _listing(command: str) -> list[dict[str, str]]:
    done = CliRunner().invoke(app, [command, "--json"])
    assert done.exit_code == 0, done.output
    entries: list[dict[str, str]] = json.loads(done.stdout)
    assert all(entry["what"] for entry in entries), entries  # each says what it is for
    return entries


def test_the_repairs_listed_are_the_registrys_each_with_the_failure_it_targets() -> None:
    entries = _listing("repairs")
    assert [e["name"] for e in entries] == list(REPAIRS)
    assert {e["name"]: e["kind"] for e in entries}["chunked"] == "repairs bypass"
    table = CliRunner().invoke(app, ["repairs"], env=WIDE).output
    assert all(f" {name} " in table for name in REPAIRS)


def test_the_datasets_listed_are_the_registrys_loaders_and_short_names() -> None:
    entries = _listing("datasets")
    loaders = [e["name"] for e in entries if e["kind"] == "loader"]
    assert loaders == list(LOADERS)
    short = {e["name"] for e in entries if e["kind"] == "short name"}
    assert {"demo", "demo:pairwise", "pyrit:refusal", "pandalm", "attaq"} <= short
    for name in ("demo", "demo:pairwise"):  # a listed short name loads
        assert len(load_dataset(name)) > 0


def test_the_judges_listed_are_the_registrys_specs() -> None:
    names = [e["name"] for e in _listing("judges")]
    for spec in ("profanity", "openai:MODEL@BASE_URL", "python:MODULE:FUNCTION", "pyrit:SCORER"):
        assert spec in names
    assert len(names) == len(set(names))


# -- the config, built once -----------------------------------------------------------------------
def test_the_config_is_built_once_from_the_file_and_the_options(tmp_path: Path) -> None:
    path = tmp_path / "audit.yaml"
    path.write_text(
        "judge: profanity\nrubric: toxicity\ndata: demo\nprobes: {repetition: {}}\n"
        "judge_options: {name: kept}\ndata_options: {seed: 3}\nrepair: [chunked]\n"
        "engine: {concurrency: 2, max_calls: 500}\n"
    )
    config = build_config(
        path,
        judge_option=["version=7"],
        loader="table",
        engine={"max_calls": 40, "max_tokens": None, "executor": "local"},
        repair=["rubric_ensemble", "chunked"],
        limit=5,
        fail_on=None,
    )
    assert config.source == str(path)
    assert config.judge_options == {"name": "kept", "version": 7}
    assert config.data_options == {"seed": 3, "loader": "table"}
    assert (config.engine.concurrency, config.engine.max_calls) == (2, 40)
    assert list(config.repair) == ["chunked", "rubric_ensemble"]
    assert (config.limit, config.fail_on) == (5, "fail")
    with pytest.raises(ConfigError, match=r"^--max-tokens 0: Input should be greater"):
        build_config(path, engine={"max_tokens": 0})


# -- the Python API: x and x_async -------------------------------------------------------------
def test_run_probe_is_synchronous_and_run_probe_sync_its_deprecated_alias() -> None:
    import judgeprobe

    judge = CallableJudge(lambda request: 1.0, name="one")
    items = list(load_dataset("demo").items[:3])
    rubric = builtin_rubric("harmfulness")
    with RunStore(":memory:") as store:
        engine = Engine(judge, store, EngineConfig())
        result = judgeprobe.run_probe(RepetitionProbe(counts=(1, 2)), items, engine, rubric)
        with pytest.deprecated_call(match="run_probe_sync is deprecated"):
            again = judgeprobe.run_probe_sync(RepetitionProbe(counts=(1, 2)), items, engine, rubric)
    assert [f.name for f in again.findings] == [f.name for f in result.findings]
    assert result.usage["calls"] > 0 and again.usage["calls"] == 0  # from the store


async def test_run_probe_async_is_the_coroutine() -> None:
    from judgeprobe import run_probe_async

    judge = CallableJudge(lambda request: 1.0, name="one")
    items = list(load_dataset("demo").items[:3])
    with RunStore(":memory:") as store:
        engine = Engine(judge, store, EngineConfig())
        result = await run_probe_async(
            RepetitionProbe(counts=(1, 2)), items, engine, builtin_rubric("harmfulness")
        )
    assert result.findings
