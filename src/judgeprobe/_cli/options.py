"""How the command line reads an audit's config: a config file (or options alone) with the
overrides given on the command line, and ``-J KEY=VALUE`` judge options. ``judgeprobe audit``,
``judgeprobe bill``, ``judgeprobe batch export`` and ``judgeprobe score`` read them the same way."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from judgeprobe._cli.choices import LoaderName
from judgeprobe.errors import ConfigError

if TYPE_CHECKING:  # the audit is imported when a command reads a config, not at start-up
    from judgeprobe.audit.config import AuditConfig

JudgeOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--judge-option",
        "-J",
        help="A judge option as KEY=VALUE, VALUE read as YAML (repeatable), e.g. "
        "-J pair_inputs=false -J context_window=1024. Overrides the config's judge_options.",
    ),
]


DataLoader = Annotated[
    LoaderName | None,
    typer.Option(
        help="Load the --data path with this loader, whatever its name and columns "
        "(`judgeprobe datasets` says what each reads). Overrides the config's data_options.loader.",
    ),
]


JudgeSpec = Annotated[
    str | None, typer.Option(help="Judge spec, e.g. llama, profanity, openai:MODEL@URL.")
]
DataSpec = Annotated[
    str | None, typer.Option(help="Dataset: a short name (demo, pyrit:refusal, ...) or a path.")
]
RubricSpec = Annotated[str | None, typer.Option(help="Rubric: a built-in name or a YAML path.")]
ProbeNames = Annotated[
    str | None, typer.Option(help="Comma-separated probe names (see `judgeprobe probes`).")
]
Limit = Annotated[int | None, typer.Option(help="Use only the first N items.")]
Seed = Annotated[int | None, typer.Option(help="Seed for every sampled plan.")]


_ENGINE_OPTIONS = {
    "max_calls": "--max-calls",
    "max_tokens": "--max-tokens",
    "executor": "--executor",
    "fixed_size": "--fixed-size",
    "max_cost": "--budget",
}
"""The engine keys the command line sets, and the option that sets each."""


def build_config(
    config_path: Path | None,
    *,
    judge_option: list[str] | None = None,
    loader: str | None = None,
    probes: str | None = None,
    engine: Mapping[str, Any] | None = None,
    until_decided: bool = False,
    repair: list[str] | None = None,
    **overrides: Any,
) -> AuditConfig:
    """The audit config of a config file (or of options alone) with the command line's options,
    built once and validated once, as every command that takes an audit's config reads it.

    ``overrides`` replace the file's top-level keys (None: not given); ``judge_option``
    (``KEY=VALUE``) and ``loader`` are added to its ``judge_options`` and ``data_options``;
    ``engine`` (``max_calls``, ``max_tokens``, ``executor``) replaces its engine options;
    ``until_decided`` samples the audit in rounds, whose call budget ``--max-calls`` sets;
    ``repair`` adds repaired judges to its ``repair``. A bad value set by an option is an error
    naming the option (``--max-calls 0: ...``).
    """
    from judgeprobe.audit.config import parse_config, read_config_file

    data: dict[str, Any] = {} if config_path is None else read_config_file(config_path)
    if probes:
        overrides["probes"] = [p.strip() for p in probes.split(",") if p.strip()]
    elif config_path is None and not overrides.get("judge"):
        raise typer.BadParameter("give a CONFIG.yaml, or --judge (with --rubric and --data)")
    given = {key: value for key, value in overrides.items() if value is not None}
    data.update(given)
    named: dict[tuple[str, ...], str] = {(key,): "--" + key.replace("_", "-") for key in given}
    if judge_option:
        data["judge_options"] = {
            **_mapping(data.get("judge_options")),
            **parse_judge_options(judge_option),
        }
    if loader is not None:
        data["data_options"] = {**_mapping(data.get("data_options")), "loader": loader}
    engine_given = {key: value for key, value in (engine or {}).items() if value is not None}
    if engine_given or until_decided:
        section = _mapping(data.get("engine"))
        section.update(engine_given)
        named.update({("engine", key): _ENGINE_OPTIONS[key] for key in engine_given})
        _set_rounds(section, until_decided=until_decided, max_calls=engine_given.get("max_calls"))
        if "max_calls" in engine_given:
            named[("engine", "until_decided", "max_calls")] = "--max-calls"
        data["engine"] = section
    if repair:
        from judgeprobe.audit.repair import repair_specs

        chosen = repair_specs(data.get("repair"))
        added = repair_specs(repair)
        data["repair"] = {**chosen, **{k: v for k, v in added.items() if k not in chosen}}
    source = "options" if config_path is None else str(config_path)
    return parse_config(data, source=source, options=named)


def _set_rounds(section: dict[str, Any], *, until_decided: bool, max_calls: int | None) -> None:
    """``section`` (the config's engine options) sampled until decided when ``until_decided``
    or the config says so, with ``max_calls`` (``--max-calls``) as the rounds' call budget."""
    configured = section.get("until_decided")
    if not until_decided and configured is None:
        return
    rounds = _mapping(configured)
    if max_calls is not None:
        rounds["max_calls"] = max_calls
    section["until_decided"] = rounds


def _mapping(value: Any) -> dict[str, Any]:
    """A copy of a config section (an absent one is empty)."""
    return dict(value) if isinstance(value, Mapping) else {}


def parse_judge_options(pairs: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as judge options, each value read as a YAML scalar (as for audit)."""
    from judgeprobe._util.yaml_files import parse_yaml

    options: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--judge-option {pair!r}: write KEY=VALUE, e.g. context_window=1024")
        options[key.strip()] = parse_yaml(value, source=f"--judge-option {key}", error=ConfigError)
    return options
