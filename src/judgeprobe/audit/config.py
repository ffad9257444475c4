"""The audit config: what ``judgeprobe audit CONFIG.yaml`` reads, validated with errors that name
the key.

A rubric or data path in a config file is relative to the file; command-line overrides are relative
to the working directory.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from judgeprobe._util.yaml_files import explain_validation, read_yaml
from judgeprobe.audit.sequential import UntilDecided
from judgeprobe.core.gates import FailOn
from judgeprobe.core.pricing import Pricing
from judgeprobe.engine import Budget, EngineConfig
from judgeprobe.engine.executors import EXECUTORS
from judgeprobe.errors import ConfigError
from judgeprobe.probes import Threshold, get_probe_class, probe_names

_INPUT_KEYS = ("rubric", "data", "data_options", "limit")


class EngineOptions(BaseModel):
    """How the engine calls the judge (see :class:`~judgeprobe.engine.EngineConfig`)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int | None = Field(default=None, ge=1)
    max_retries: int = Field(default=5, ge=0)
    timeout_s: float = Field(default=120.0, gt=0)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    max_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """A budget in money, in the config's ``pricing`` currency (``--budget``): the engine stops
    before the tokens it has spent would cost more (see :meth:`AuditConfig.engine_config`)."""
    executor: str = "local"
    """Who answers the missing requests: ``local``, ``openai-batch`` or ``ray`` (see
    :mod:`judgeprobe.engine.executors`), with ``executor_options`` as its options."""
    executor_options: dict[str, Any] = Field(default_factory=dict)
    until_decided: UntilDecided | None = None
    """Audit in rounds until decided (:mod:`judgeprobe.audit.sequential`); None: every item at
    once, unless the command line's default applies (see ``fixed_size``)."""
    fixed_size: bool = False
    """Audit every item at once, never in rounds: ``judgeprobe audit`` otherwise samples an
    audit whose config sets no ``until_decided`` until decided (``--fixed-size`` sets this)."""

    @model_validator(mode="after")
    def _one_design(self) -> EngineOptions:
        if self.fixed_size and self.until_decided is not None:
            raise ValueError("fixed_size and until_decided exclude each other: choose one")
        return self

    @field_validator("executor")
    @classmethod
    def _known_executor(cls, value: str) -> str:
        if value not in EXECUTORS:
            raise ValueError(f"unknown executor {value!r}; available: {', '.join(EXECUTORS)}")
        return value

    def engine_config(self, *, progress: bool | None) -> EngineConfig:
        max_calls = self.max_calls
        rounds = None if self.until_decided is None else self.until_decided.max_calls
        if rounds is not None:  # the rounds' budget is a hard one too
            max_calls = rounds if max_calls is None else min(max_calls, rounds)
        return EngineConfig(
            concurrency=self.concurrency,
            max_retries=self.max_retries,
            timeout_s=self.timeout_s,
            requests_per_minute=self.requests_per_minute,
            tokens_per_minute=self.tokens_per_minute,
            budget=Budget(max_calls, self.max_tokens),
            progress=progress,
        )


class ThresholdOption(BaseModel):
    """A pass/warn/fail threshold for every finding of one name.

    The one check of a configured threshold: the audit applies it to the findings
    (:func:`_apply_thresholds`) and stores it with each of them, with the status it decides; the
    card shows what was stored. Strict: ``warn: "0.1"`` or ``higher_is_worse: "yes"`` is an
    error, not a guess.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    warn: float | None = Field(default=None, allow_inf_nan=False)
    fail: float | None = Field(default=None, allow_inf_nan=False)
    higher_is_worse: bool = True

    @model_validator(mode="after")
    def _in_order(self) -> ThresholdOption:
        """A warn line beyond the fail line could never warn: the card would jump from pass to
        fail. Where both are given, warn comes first in the direction that is worse."""
        if self.warn is not None and self.fail is not None:
            beyond = self.warn > self.fail if self.higher_is_worse else self.warn < self.fail
            if beyond:
                side = "above" if self.higher_is_worse else "below"
                raise ValueError(
                    f"warn ({self.warn:g}) is {side} fail ({self.fail:g}): with higher_is_worse "
                    f"{self.higher_is_worse}, a value reaches warn before fail"
                )
        return self

    def threshold(self) -> Threshold:
        return Threshold(self.warn, self.fail, self.higher_is_worse)


class AuditConfig(BaseModel):
    """An audit: which judge, rubric and data; which probes with which parameters; where to write.

    A probe's entry holds its parameters, plus optional ``rubric``, ``data``, ``data_options`` and
    ``limit`` that override the audit's own for that probe (pairwise probes need pairwise data and
    a pairwise rubric).

    Examples
    --------
    >>> AuditConfig.model_validate({"judge": "profanity", "rubric": "toxicity", "data": "demo",
    ...                             "probes": {"repetition": {}}}).judge
    'profanity'
    """

    model_config = ConfigDict(extra="forbid")

    judge: str = "llama"
    judge_options: dict[str, Any] = Field(default_factory=dict)
    rubric: str = "harmfulness"
    data: str = "demo"
    data_options: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(default=None, ge=1)
    probes: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """The probes to run, each with its parameters; none: every probe that applies to the
    judge, the rubric and the data (:func:`judgeprobe.audit.run.with_default_probes`)."""
    thresholds: dict[str, ThresholdOption] = Field(default_factory=dict)
    seed: int = 0
    out: str = "judgeprobe-out"
    engine: EngineOptions = Field(default_factory=EngineOptions)
    fail_on: FailOn = "fail"
    pricing: Pricing | None = None
    """Price per million tokens, for the bill of ``judgeprobe plan``
    (:mod:`judgeprobe.audit.billing`).
    """
    repair: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Repaired judges to audit next to this one (:mod:`judgeprobe.audit.repair`): names, or
    names with options."""
    not_applicable: dict[str, str] = Field(default_factory=dict)
    """Probes left out because they do not apply to this judge or rubric, each with why; the
    run store records them and the card lists them (a classifier has no pairwise mode)."""
    _source: str = PrivateAttr(default="config")

    @property
    def source(self) -> str:
        """Where the config came from (its file), for error messages."""
        return self._source

    @model_validator(mode="after")
    def _priced_budget(self) -> AuditConfig:
        if self.engine.max_cost is not None and self.pricing is None:
            raise ValueError(
                "engine.max_cost (--budget) is a budget in money: add 'pricing: "
                "{input_per_mtok: ..., output_per_mtok: ...}' to price the tokens"
            )
        return self

    def engine_config(self, *, progress: bool | None) -> EngineConfig:
        """The engine's configuration, its budget with ``engine.max_cost`` as tokens.

        A money budget becomes a token budget at the dearer of the input and output prices (the
        engine counts prompt and completion tokens together, and a cached prefix's discount is
        not counted on): the audit never spends more than ``max_cost``, and may stop a little
        short of it.

        >>> config = AuditConfig.model_validate({"engine": {"max_cost": 2.0},
        ...     "pricing": {"input_per_mtok": 0.5, "output_per_mtok": 2.0}})
        >>> config.engine_config(progress=False).budget.max_tokens
        1000000
        """
        engine = self.engine.engine_config(progress=progress)
        cost, pricing = self.engine.max_cost, self.pricing
        if cost is None or pricing is None:
            return engine
        dearest = max(pricing.input_per_mtok, pricing.output_per_mtok)
        if dearest <= 0:
            return engine  # nothing costs anything: the money budget binds nothing
        tokens = max(1, int(cost * 1e6 / dearest))
        held = engine.budget.max_tokens
        budget = Budget(engine.budget.max_calls, tokens if held is None else min(held, tokens))
        return dataclasses.replace(engine, budget=budget)

    @field_validator("probes", mode="before")
    @classmethod
    def _probe_list(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return {str(name): {} for name in value}
        if isinstance(value, Mapping):
            return {k: ({} if v is None else v) for k, v in value.items()}
        return value

    @field_validator("repair", mode="before")
    @classmethod
    def _repair_list(cls, value: Any) -> Any:
        from judgeprobe.judges.repairs import repair_options

        try:
            return repair_options(value)
        except ValueError as exc:  # without pydantic's "Value error," in front
            raise PydanticCustomError("unknown_repair", "{reason}", {"reason": str(exc)}) from exc

    @field_validator("probes")
    @classmethod
    def _known_probes(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        known = probe_names()
        for name in value:
            if name not in known:
                raise ValueError(f"unknown probe {name!r}; available: {', '.join(known)}")
        return value

    @field_validator("not_applicable")
    @classmethod
    def _known_left_out(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        """A probe left out is a known probe, and not one that also runs."""
        known, probes = probe_names(), info.data.get("probes") or {}
        for name in value:
            if name not in known:
                raise ValueError(f"unknown probe {name!r}; available: {', '.join(known)}")
            if name in probes:
                raise ValueError(f"probe {name!r} is both selected and listed as not applicable")
        return value

    @field_validator("thresholds")
    @classmethod
    def _known_findings(
        cls, value: dict[str, ThresholdOption], info: ValidationInfo
    ) -> dict[str, ThresholdOption]:
        """A threshold key must name a finding of a selected probe (``name`` or ``probe.name``);
        of any probe when none is selected (the audit then runs every probe that applies)."""
        for key, option in value.items():
            lines = [v for v in (option.warn, option.fail) if v is not None]
            if "wasserstein" in key and any(v < 0 for v in lines):
                raise PydanticCustomError(
                    "negative_distance",
                    "{key}: a distance is never negative, so a line below 0 fails every judge",
                    {"key": key},
                )
        probes = info.data.get("probes")
        if value and isinstance(probes, dict):
            try:
                check_threshold_keys(value, list(probes) or probe_names())
            except ValueError as exc:  # without pydantic's "Value error," in front
                raise PydanticCustomError(
                    "unknown_finding", "{reason}", {"reason": str(exc)}
                ) from exc
        return value


def check_threshold_keys(keys: Iterable[str], probes: Iterable[str]) -> None:
    """ValueError unless every key is ``finding`` or ``probe.finding`` of one of ``probes``.

    A key no probe reports would be listed in the card as configured, yet judge nothing. Probes
    that do not declare their :attr:`~judgeprobe.probes.Probe.finding_names` (plugins) leave
    the keys aimed at them unchecked.
    """
    declared = {name: get_probe_class(name).finding_names for name in probes}
    known = sorted({f for names in declared.values() if names is not None for f in names})
    open_ended = any(names is None for names in declared.values())
    unknown = []
    for key in keys:
        probe, dot, finding = key.rpartition(".")
        if dot and probe in declared:
            names = declared[probe]
            if names is not None and finding not in names:
                unknown.append(key)
        elif dot or (key not in known and not open_ended):
            unknown.append(key)
    if unknown:
        selected = ", ".join(declared) or "none"
        raise ValueError(
            f"no selected probe reports a finding {', '.join(map(repr, unknown))} (probes: "
            f"{selected}); a key is a finding name or probe.finding, and the findings are: "
            f"{', '.join(known) or 'none'}"
        )


def load_config(path: str | Path, **overrides: Any) -> AuditConfig:
    """Read an audit config from YAML; errors name the file and the bad key.

    A rubric or data path in the file is relative to the file, as in most tools' config files:
    ``rubric: my-rubric.yaml`` names the file beside the config, whatever the working directory
    (a name such as ``harmfulness`` or ``pyrit:refusal`` is left alone). ``overrides`` (from the
    command line) are relative to the working directory.
    """
    data = read_config_file(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return parse_config(data, source=str(path))


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The mapping of an audit config file, not yet validated, its rubric and data paths
    located as :func:`load_config` locates them (for a caller that adds to it first)."""
    path = Path(path)
    data = read_yaml(path, what="config", error=ConfigError) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: an audit config must be a mapping of keys to values")
    _locate_inputs(data, path.parent)
    probes = data.get("probes")
    if isinstance(probes, dict):
        for params in probes.values():
            if isinstance(params, dict):
                _locate_inputs(params, path.parent)
    return data


def _locate_inputs(section: dict[str, Any], base: Path) -> None:
    """Rewrite ``rubric`` and ``data`` paths that name files beside the config file."""
    for key in ("rubric", "data"):
        value = section.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            beside = base / value
            if beside.exists():
                section[key] = os.path.relpath(beside)


def parse_config(
    data: Mapping[str, Any],
    *,
    source: str = "config",
    options: Mapping[tuple[str, ...], str] | None = None,
) -> AuditConfig:
    """Validate a config mapping; a bad key raises :class:`ConfigError` naming it.

    ``options`` names the command-line option that set a key (``("engine", "max_calls")`` ->
    ``--max-calls``): when every error is in such a key, the error names the option and the
    value given (``--max-calls 0: ...``) instead of the key.
    """
    try:
        config = AuditConfig.model_validate(dict(data))
    except ValidationError as exc:
        named = _option_errors(exc, data, options or {})
        if named is not None:
            raise ConfigError(named) from exc
        raise ConfigError(f"{source}: {explain_validation(exc, root='config')}") from exc
    config._source = source
    return config


def _option_errors(
    exc: ValidationError, data: Mapping[str, Any], options: Mapping[tuple[str, ...], str]
) -> str | None:
    """The errors of ``exc`` as the options that set their keys, or None when one is not."""
    problems = []
    for error in exc.errors():
        loc = tuple(str(part) for part in error["loc"])
        option = options.get(loc)
        if option is None:
            return None
        value: Any = data
        for part in loc:
            value = value.get(part) if isinstance(value, Mapping) else None
        problems.append(f"{option} {value!r}: {error['msg']}")
    return "; ".join(problems) or None


def with_engine_options(config: AuditConfig, **options: Any) -> AuditConfig:
    """``config`` with engine options from the command line (None: not given), checked as in a
    config file: ``--max-calls 0`` is the error ``engine: max_calls: 0`` would be."""
    given = {key: value for key, value in options.items() if value is not None}
    if not given:
        return config
    try:
        engine = EngineOptions.model_validate({**config.engine.model_dump(), **given})
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = str(error["loc"][0]) if error["loc"] else ""
            option = f"--{key.replace('_', '-')} {given.get(key)!r}" if key in given else key
            problems.append(f"{option}: {error['msg']}")
        raise ConfigError("; ".join(problems)) from exc
    updated = config.model_copy(update={"engine": engine})
    updated._source = config.source
    return updated
