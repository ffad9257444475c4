"""How the command line reads an audit's config: a config file (or options alone) with the
overrides given on the command line, and ``-J KEY=VALUE`` judge options. ``judgeprobe audit``,
``judgeprobe plan`` and ``judgeprobe score`` read them the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from judgeprobe.errors import ConfigError

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
    str | None,
    typer.Option(
        help="Load the --data path with this loader, whatever its name and columns: table, "
        "pyrit, llmbar, pandalm, hh-rlhf, judgebench, evalbiasbench, attaq, mt-bench-human or "
        "mt-bench-votes. "
        "Overrides the config's data_options.loader.",
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


def config_from_options(
    config_path: Path | None,
    *,
    judge_option: list[str] | None,
    loader: str | None,
    probes: str | None,
    **overrides: Any,
) -> Any:
    """The audit config of a config file (or of options alone) with the command line's
    overrides, read as ``judgeprobe audit`` reads them."""
    from judgeprobe.audit.config import load_config, parse_config

    if probes:
        overrides["probes"] = [p.strip() for p in probes.split(",") if p.strip()]
    if config_path is not None:
        config = load_config(config_path, **overrides)
    else:
        if not probes and not overrides.get("judge"):
            raise typer.BadParameter("give a CONFIG.yaml, or --judge (with --rubric and --data)")
        config = parse_config(
            {k: v for k, v in overrides.items() if v is not None}, source="options"
        )
    config.judge_options.update(parse_judge_options(judge_option))
    if loader is not None:
        config.data_options["loader"] = loader
    return config


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
